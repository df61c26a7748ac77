"""Queries generated from the schema itself: every answer is GraphQL (data or errors),
never a server error."""

from __future__ import annotations

import pytest
from cachegraph.schema import schema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_graphql import from_schema
from starlette.testclient import TestClient

from cachegraph import Settings, create_app


@pytest.fixture(scope="module")
def client(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings())) as client:
        yield client


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=from_schema(schema.as_str()))
def test_every_generated_query_gets_a_graphql_answer(client, query):
    response = client.post("/graphql", json={"query": query})
    assert response.status_code == 200, (query, response.text)
    body = response.json()
    assert "data" in body or "errors" in body
    for error in body.get("errors", []):
        assert error.get("extensions", {}).get("code") != "INTERNAL_SERVER_ERROR", (query, error)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)
TYPED = {
    "String!": "spec(hash: $v) { hash }",
    "Int": "specs(first: $v) { totalCount }",
    "[String!]!": "sharedSpecs(stacks: $v) { totalCount }",
    "SpecFilter": "specs(filter: $v) { totalCount }",
}


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(kind=st.sampled_from(sorted(TYPED)), value=JSON)
def test_any_variable_value_is_answered_as_data_or_a_client_error(client, kind, value):
    query = f"query($v: {kind}) {{ {TYPED[kind]} }}"
    response = client.post("/graphql", json={"query": query, "variables": {"v": value}})
    assert response.status_code == 200, (query, value, response.text)
    for error in response.json().get("errors", []):
        assert error.get("extensions", {}).get("code") != "INTERNAL_SERVER_ERROR", (value, error)
