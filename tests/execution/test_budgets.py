"""Caches keyed by what clients send hold no more than their byte budgets, measured by
what the process really keeps (tracemalloc), not only by what the caches count."""

from __future__ import annotations

import gc
import tracemalloc

import pytest
from cachegraph.graph import load
from cachegraph.schema import build_schema
from cachegraph.schema.context import Context

from cachegraph.execution import Budgets, Executor, Limits, Operation, schema_extensions
from tests.conftest import SEEDS

MB = 2**20


@pytest.fixture
def graph():
    """A graph of its own: what it keeps is measured."""
    return load([SEEDS])[0]


def kept_while(run) -> int:
    """Bytes still allocated after ``run()``, once garbage is collected."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        run()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("make", "cache"),
    [
        # distinct 100 kB query texts (a long comment each)
        (lambda n: Operation("{ stats { specCount } }\n#" + f"{n:05}" * 20_000), "queries"),
        # distinct 100 kB variables, each a stack name the graph keeps a count for
        (
            lambda n: Operation(
                "query($s: String!) { specs(filter: {excludeStacks: [$s]}) { totalCount } }",
                {"s": f"{n:05}" * 20_000},
            ),
            "answers",
        ),
    ],
    ids=["query texts", "variables"],
)
def test_distinct_large_inputs_stay_within_the_budget(graph, make, cache):
    budget = 2 * MB  # an entry over 256 kB is not kept
    graph.kept_answers.budget = budget
    executor = Executor(
        build_schema(schema_extensions(Limits())),
        limits=Limits(max_query_bytes=MB),  # texts of 100 kB, at the default limit's edge
        budgets=Budgets(queries=budget, responses=0),
    )
    caches = {"queries": executor.prepared, "answers": graph.kept_answers}

    def run() -> None:
        for n in range(40):  # 4 MB sent
            body = executor.run(make(n), Context(graph))
            assert "errors" not in body

    grown = kept_while(run)
    assert 0 < caches[cache].bytes <= budget
    assert caches[cache].evictions > 0
    # What the process really kept: the budget, give or take the estimate's error.
    assert grown <= 1.5 * budget
