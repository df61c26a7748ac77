"""Fixtures: real data (the bundled seeds, ../shared/data), graphs loaded from it, and an
``execute`` that runs a query through the real schema and returns the client's JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cachegraph.graph import CacheGraph, load
from cachegraph.schema import schema
from cachegraph.schema.context import Context
from graphql import parse

from cachegraph.execution import compiled
from tests.remote import (  # the real servers tests publish mirrors on (session fixtures)
    http_server,
    https_server,
    oci_bearer,
    oci_registry,
    private_s3_server,
    publish_http,
    publish_https,
    publish_oci,
    publish_s3,
    s3_server,
    self_signed_server,
    test_ca,
)

__all__ = [
    "http_server",
    "https_server",
    "oci_bearer",
    "oci_registry",
    "private_s3_server",
    "publish_http",
    "publish_https",
    "publish_oci",
    "publish_s3",
    "s3_server",
    "self_signed_server",
    "test_ca",
]

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds" / "pages"
SHARED = ROOT.parent / "shared"
SHARED_DATA = SHARED / "data"
SHARED_MIRRORS = SHARED / "mirrors"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data, beside the project in sessions and CI, not on a user's machine."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent: the shared sample data is not on this machine")
    return SHARED_DATA


@pytest.fixture(scope="session")
def shared_mirrors() -> Path:
    """../shared/mirrors: real Spack build-cache metadata, beside the project in sessions and CI."""
    if not SHARED_MIRRORS.is_dir():
        pytest.skip(f"{SHARED_MIRRORS} is absent: the shared mirrors are not on this machine")
    return SHARED_MIRRORS


@pytest.fixture(scope="session")
def seeds_graph() -> CacheGraph:
    graph, report = load([SEEDS])
    assert report.problems == []
    return graph


@pytest.fixture(scope="session")
def data_graph(shared_data: Path) -> CacheGraph:
    return load([shared_data])[0]


def execute(
    graph: CacheGraph, query: str, variables: dict | None = None, admin: bool = False
) -> dict:
    """The JSON a client gets: data, errors as messages, and extensions when there are any.

    Every query also goes through the direct path (``cachegraph.execution.compiled``) when it
    has a Plan, which must give the same data, or no answer when there are errors.
    """
    context = Context(graph, admin=admin)
    result = schema.execute_sync(query, variable_values=variables, context_value=context)
    if not result.errors or any(e.path for e in result.errors):  # valid: executed
        plan = compiled.plan(schema, parse(query), None)
        if plan is not None:
            assert plan.answer(variables, context) == (None if result.errors else result.data)
    body: dict = {"data": result.data}
    if result.errors:
        body["errors"] = [e.message for e in result.errors]
    if result.extensions:
        body["extensions"] = result.extensions
    # Through JSON, as a client sees it.
    return json.loads(json.dumps(body))


def break_records(graph: CacheGraph) -> None:
    """Make every row the graph gives fail as a missing record would: an unexpected fault."""

    def broken(ranks) -> list:
        missing = None
        return [missing.hash for _ in ranks]

    graph.store.records = broken
    graph.store.field_values = lambda _name, ranks: broken(ranks)  # a page's columns


@pytest.fixture
def run(seeds_graph: CacheGraph):
    """Execute a query on the seeds."""
    return lambda query, variables=None: execute(seeds_graph, query, variables)
