"""The explorer's operations: each validates against the committed schema.graphql, and each
answers without errors on real data through the real schema."""

from __future__ import annotations

from pathlib import Path

import pytest
from cachegraph.graph import load
from graphql import build_schema, parse, validate
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.ui import QUERIES, ui_operations, ui_page
from tests.conftest import ROOT, SEEDS, execute
from tests.mirrors import shared_sources

COMMITTED = build_schema((ROOT / "schema.graphql").read_text())


def problems(text: str) -> list[str]:
    return [e.message for e in validate(COMMITTED, parse(text))]


def test_every_query_file_is_an_operation_the_page_carries():
    files = sorted(p.stem for p in QUERIES.glob("*.graphql") if p.stem != "fragments")
    assert sorted(ui_operations()) == files


@pytest.mark.parametrize("name", sorted(ui_operations()))
def test_each_operation_validates_against_the_committed_schema(name):
    assert problems(ui_operations()[name]) == []


def test_the_check_fails_on_a_query_the_schema_does_not_have():
    text = ui_operations()["Tags"].replace("specCount", "specTotal")
    assert problems(text) == [
        "Cannot query field 'specTotal' on type 'Tag'. Did you mean 'specCount'?"
    ]


@pytest.fixture(scope="module")
def real_graph(shared_data: Path, shared_mirrors: Path):
    graph, _ = load([SEEDS, shared_data], shared_sources(shared_mirrors), processes=1)
    return graph


#: a spec of the shared mirrors with dependencies (zlib's dependent, in tag "test")
def _hash_with_dependencies(graph) -> str:
    return next(s.hash for s in graph.all_specs() if graph.store.edge_count and any(
        k for k in graph.succ["spec", s.hash] if k[0] == "spec"
    ))  # fmt: skip


def variables(name: str, graph) -> dict:
    spec = _hash_with_dependencies(graph)
    other = next(s.hash for s in graph.all_specs() if s.hash != spec)
    return {
        "Home": {"tag": None},
        "Tags": {},
        "Search": {"filter": {"satisfies": "zlib %gcc", "stacks": ["unsigned"]}, "tag": "test"},
        "HashLookup": {"hash": spec[:7]},
        "Package": {"name": "zlib", "tag": None},
        "Lookalikes": {"name": "zlib", "tag": None},
        "Spec": {"hash": spec},
        "Dag": {"hash": spec},
        "DagLevels": {"hash": spec},
        "Neighbours": {"hash": spec, "dependents": f"^/{spec}", "after": None},
        "SpecDiff": {"a": spec, "b": other},
        "TagDiff": {"from": "v0.21.0", "to": "develop"},
        "Understand": {"word": "keras"},
        "Providers": {"word": "mpi"},
        "Packages": {
            "scope": {"nameContains": "z", "tag": None},
            "filter": {"nameContains": "z", "tag": None, "namePrefix": "z"},
            "first": 100,
            "after": None,
            "tag": None,
        },
        "SpecsExport": {"filter": {"satisfies": "zlib"}, "tag": None, "first": 500, "after": None},
        "Status": {"severity": None, "under": None, "offset": 0},
        "Changes": {"since": "2026-01-01T00:00:00Z", "mirror": None},
        "ChangesDay": {
            "since": "2026-01-01T00:00:00Z",
            "until": "2026-01-02T00:00:00Z",
            "mirror": "develop/test",
            "after": None,
        },
        "Recent": {"since": "2026-01-01T00:00:00Z", "tag": "develop"},
        "ChangeHistory": {},
        "Coverage": {
            "lockfile": {"_meta": {"lockfile-version": 5}, "roots": [], "concrete_specs": {}},
            "tag": None,
        },
    }[name]


@pytest.mark.parametrize("name", sorted(ui_operations()))
def test_each_operation_answers_on_real_data(name, real_graph):
    answer = execute(real_graph, ui_operations()[name], variables(name, real_graph))
    assert answer.get("errors") is None
    if name == "Status":  # a graph loaded here, not by a server: no load status
        assert answer["data"]["loadStatus"] is None and answer["data"]["mirrors"]
        return
    if name == "Understand":  # what a word is: most of its questions answer null by design
        assert answer["data"]["packages"]["nodes"] == [{"name": "py-keras", "specCount": 130}]
        return
    assert answer["data"] and all(v is not None for v in answer["data"].values())


def test_the_page_carries_its_operations_and_names_only_this_servers_assets(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings()), root_path="/cache") as client:
        for path in ("/", "/ui", "/ui/spec/abc", "/ui/search"):
            page = client.get(path, headers={"accept": "text/html"})
            assert (path, page.status_code, page.text) == (path, 200, ui_page("/cache"))
        assert "http://" not in page.text and "https://" not in page.text
        assert client.get("/", headers={"accept": "application/json"}, follow_redirects=False
                          ).headers["location"] == "/cache/graphql"  # fmt: skip
        for asset in ("app.js", "style.css", "vendor/preact.mjs", "vendor/dagre.esm.js"):
            assert client.get(f"/cache/static/ui/{asset}").status_code == 200


def test_the_explorer_can_be_turned_off(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings(ui=False))) as client:
        assert client.get("/ui/search", headers={"accept": "text/html"}).status_code == 404
        home = client.get("/", headers={"accept": "text/html"}, follow_redirects=False)
        assert home.headers["location"] == "/graphql"
