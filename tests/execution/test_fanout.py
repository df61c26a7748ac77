"""What data-sized lists return counts against ``max_cost``: a spec's transitive dependents
are declared 100 before running and may be 25,000 (45 aliases once returned 49.5 MB)."""

from __future__ import annotations

import networkx as nx
import pytest
from cachegraph.graph import load
from cachegraph.graph.sources.mirrors import mirrors_file
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.synthmirror import synthesize_mirrors

BUDGET = 500


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    out = tmp_path_factory.mktemp("fanout")
    synthesize_mirrors(out, 1000, tags=1, seed=5)
    graph, report = load([], mirrors_file(out / "mirrors.yaml"))
    assert report.problems == []
    return graph


def above(graph, hash: str) -> list[str]:
    """The specs that depend on ``hash`` through any chain: networkx's ancestors."""
    return sorted(h for kind, h in nx.ancestors(graph, ("spec", hash)) if kind == "spec")


def query(hash: str, aliases: int) -> str:
    fields = " ".join(
        f'a{i}: spec(hash: "{hash}") {{ dependents(transitive: true) {{ hash }} }}'
        for i in range(aliases)
    )
    return "{ " + fields + " }"


def test_transitive_dependents_past_max_cost_are_refused_whatever_was_declared(graph):
    # the spec most depended on: 281 specs above it, in a data of 1,000
    hash = max((s.hash for s in graph.all_specs()), key=lambda h: len(above(graph, h)))
    wanted = above(graph, hash)
    assert BUDGET // 2 < len(wanted) <= BUDGET
    refusal = {
        "data": None,
        "errors": [
            {
                "message": f"the query's lists returned more than {BUDGET} objects (dependents "
                "and dependencies, transitive most of all, fan out with the data): ask about "
                f"fewer specs, or for direct ones (limit max_cost = {BUDGET})",
                "extensions": {"code": "LIMIT_EXCEEDED", "limit": "max_cost", "value": BUDGET},
            }
        ],
    }
    settings = Settings(max_cost=BUDGET, response_cache=0)
    with TestClient(create_app(graph, settings=settings)) as client:
        for path in ("standard", "direct"):  # the first time validates; then the plan runs
            one = client.post("/graphql", json={"query": query(hash, 1)}).json()
            got = sorted(s["hash"] for s in one["data"]["a0"]["dependents"])
            assert got == wanted, path
            # Declared, two cost 2 x 101 fields, well within the budget: before, answered.
            two = client.post("/graphql", json={"query": query(hash, 2)}).json()
            assert two == refusal, path
