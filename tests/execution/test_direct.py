"""The direct path over HTTP: an operation seen before is answered from its compiled
plan (``cachegraph.execution.compiled``), sparing Strawberry's layers, with the same JSON."""

from __future__ import annotations

import re

import pytest
from cachegraph.graph import CacheGraph
from cachegraph.schema import build_schema
from cachegraph.schema.context import Context
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.execution import Executor, Limits, Operation, schema_extensions
from tests.conftest import execute

POINT = "query($h: String!) { spec(hash: $h) { hash version compiler { name } } }"
HASH = "drrds2oxjpmqdoamsywhkl7us3fa3kor"  # py-ml-dtypes 0.4.0 in the seeds
# Costs more than runs on the event loop: answered in a thread, under the time limit.
PAGE = """query($s: String!) { specs(filter: {stacks: [$s]}, first: 1000) {
  nodes { hash shortHash package { name } version compiler { name } os platform
          target { name } variants versions } } }"""


def executions(client: TestClient) -> dict[str, float]:
    text = client.get("/metrics").text
    found = re.findall(r'cachegraph_executions_total\{path="(\w+)"\} (\S+)', text)
    return {path: float(n) for path, n in found}


@pytest.fixture
def client(seeds_graph: CacheGraph):
    app = create_app(graph=seeds_graph, settings=Settings(response_cache=0))
    with TestClient(app) as client:
        yield client


def test_a_point_query_seen_before_is_answered_directly(client):
    body = {"query": POINT, "variables": {"h": HASH}}
    answers = [client.post("/graphql", json=body) for _ in range(2)]
    expected = {
        "data": {"spec": {"hash": HASH, "version": "0.4.0", "compiler": {"name": "gcc@13.2.0"}}}
    }
    assert [a.json() for a in answers] == [expected, expected]
    assert [a.headers["content-type"] for a in answers] == ["application/json"] * 2
    assert executions(client) == {"standard": 1.0, "direct": 1.0}


def test_a_large_page_is_answered_directly_with_the_standard_answer(client, seeds_graph):
    body = {"query": PAGE, "variables": {"s": "root"}}
    answers = [client.post("/graphql", json=body).json() for _ in range(2)]
    expected = execute(seeds_graph, PAGE, {"s": "root"})
    assert len(expected["data"]["specs"]["nodes"]) == 454
    assert answers == [expected, expected]
    assert executions(client) == {"standard": 1.0, "direct": 1.0}


def test_a_fault_on_the_direct_path_is_reported_by_the_standard_one(client):
    body = {"query": POINT, "variables": {"h": "ab"}}
    answers = [client.post("/graphql", json=body).json() for _ in range(2)]
    expected = {
        "data": {"spec": None},
        "errors": [
            {
                "message": "hash prefix 'ab' is 2 characters; give at least 7",
                "locations": [{"line": 1, "column": 22}],
                "path": ["spec"],
            }
        ],
    }
    assert answers == [expected, expected]
    assert executions(client) == {"standard": 2.0}


WALKING = "{ specs(first: 5) { totalCount nodes { hash } } }"


@pytest.mark.parametrize(
    ("query", "latest", "inline"),
    [
        (PAGE, 0.0005, True),
        (PAGE, 0.5, False),
        (WALKING, 0.0005, False),
    ],
    ids=["fast last time", "slow last time", "may walk every spec"],
)
def test_an_operation_runs_on_the_event_loop_only_when_fast_the_last_time(
    seeds_graph, query, latest, inline
):
    executor = Executor(build_schema(schema_extensions(Limits())))
    op = Operation(query, {"s": "root"})
    assert executor.runs_inline(op) is False  # not seen: the standard path, in a thread
    answers = [executor.run(op, Context(seeds_graph)) for _ in range(2)]
    assert answers[0] == answers[1]
    executor.prepared.get(query).plans[None].latest = latest
    assert executor.runs_inline(op) is inline


def test_introspection_never_runs_on_the_event_loop(seeds_graph):
    executor = Executor(build_schema(schema_extensions(Limits())))
    op = Operation("{ __schema { queryType { name } } }")
    for _ in range(3):
        assert executor.run(op, Context(seeds_graph)) == {
            "data": {"__schema": {"queryType": {"name": "Query"}}}
        }
    assert executor.runs_inline(op) is False
