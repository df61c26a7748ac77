"""Hostile requests: each is refused with an error naming the limit, and the server then
answers an ordinary query correctly."""

from __future__ import annotations

import pytest
from cachegraph.schema import build_schema, schema
from graphql import get_introspection_query
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.execution import Executor, Limits, schema_extensions
from cachegraph.execution.prepared import Prepared

STATS = {"query": "{ stats { packageCount specCount } }"}
STATS_ANSWER = {"data": {"stats": {"packageCount": 4, "specCount": 454}}}


def nested(levels: int) -> str:
    """spec → package → specs → nodes → package → ...: the cycle a depth bomb rides."""
    inner = "name"
    for _ in range(levels):
        inner = f"package {{ specs(first: 1) {{ nodes {{ hash {inner} }} }} }}"
    return f'{{ spec(hash: "22xqlomma") {{ {inner.replace("name", "hash", 1)} }} }}'


def refusal(limit: str, value: int | float, message: str) -> dict:
    return {
        "data": None,
        "errors": [
            {
                "message": f"{message} (limit {limit} = {value})",
                "extensions": {"code": "LIMIT_EXCEEDED", "limit": limit, "value": value},
            }
        ],
    }


@pytest.fixture(scope="module")
def client(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings())) as client:
        yield client


@pytest.fixture
def then_still_serves(client):
    yield
    response = client.post("/graphql", json=STATS)
    assert (response.status_code, response.json()) == (200, STATS_ANSWER)


@pytest.mark.usefixtures("then_still_serves")
@pytest.mark.parametrize(
    ("query", "answer"),
    [
        pytest.param(
            nested(5), refusal("max_depth", 15, "the query nests 17 fields deep"), id="depth bomb"
        ),
        pytest.param(
            "{" + "a{" * 5000 + "b" + "}" * 5000 + "}",
            refusal("max_depth", 15, "the query nests 33 levels deep"),
            id="5000 nested braces",
        ),
        pytest.param(
            "{ " + " ".join(f"a{i}: stats {{ specCount }}" for i in range(1000)) + " }",
            refusal("max_aliases", 100, "the query uses 1000 aliases"),
            id="1000 aliases",
        ),
        pytest.param(
            "{ specs(first: 1000000000) { nodes { hash } } }",
            refusal("first", 1000, "'first' must be between 0 and 1000, got 1000000000"),
            id="first: 1000000000",
        ),
        pytest.param(
            "{ packages(first: 1000) { nodes { specs(first: 1000) { nodes { hash dependents"
            " { hash } } } } } }",
            refusal(
                "max_cost",
                100000,
                "the query may return up to 103,002,001 fields: nested page sizes multiply; "
                "ask for smaller pages or fewer nested lists",
            ),
            id="cost bomb",
        ),
        pytest.param(
            "{ stats { specCount } }" + "#" * 2_000_000,
            refusal("max_query_bytes", 100000, "the query document is 2,000,023 bytes"),
            id="2 MB of comments",
        ),
        pytest.param(
            "{ " + "stats { specCount } " * 4000 + "}",
            refusal("max_tokens", 10000, "the query has more than 10000 tokens"),
            id="token bomb",
        ),
        pytest.param(
            "{ "
            + " ".join(f"s{i}: __schema {{ types {{ ...T }} }}" for i in range(98))
            + " } fragment T on __Type { name fields { name type { ...R } } }"
            " fragment R on __Type { kind name ofType { kind name ofType { kind name } } }",
            refusal("max_introspection", 1, "the query introspects the whole schema 98 times"),
            id="98 introspections of the schema",
        ),
        pytest.param(
            "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }",
            {
                "data": None,
                "errors": [
                    {
                        "message": "Cannot spread fragment 'A' within itself via 'B'.",
                        "locations": [
                            {"line": 1, "column": 32},
                            {"line": 1, "column": 61},
                        ],
                    }
                ],
            },
            id="fragment cycle",
        ),
    ],
)
def test_a_hostile_query_is_refused_by_name(client, query, answer):
    response = client.post("/graphql", json={"query": query})
    assert (response.status_code, response.json()) == (200, answer)


def test_fragments_are_measured_once_each_and_count_every_use(client):
    # Ten fragments each spreading the next twice: 2**10 copies of one page.
    fragments = " ".join(f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}" for i in range(10))
    query = (
        "{ ...F0 } " + fragments + " fragment F10 on Query { specs(first: 100) { nodes { hash } } }"
    )
    response = client.post("/graphql", json={"query": query})
    assert response.json()["errors"][0]["extensions"]["limit"] == "max_cost"


@pytest.mark.usefixtures("then_still_serves")
@pytest.mark.parametrize(
    ("kwargs", "status", "message"),
    [
        pytest.param(
            {"json": {"query": "{ stats { specCount } }" + " " * 5_000_000}},
            413,
            "the request body is larger than 4194304 bytes (limit max_body_bytes = 4194304)",
            id="5 MB query",
        ),
        pytest.param(
            {
                "content": (b" " * 65536 for _ in range(80)),
                "headers": {"content-type": "application/json"},
            },
            413,
            "the request body is larger than 4194304 bytes (limit max_body_bytes = 4194304)",
            id="5 MB streamed without a length",
        ),
        pytest.param(
            {"json": [STATS] * 1000},
            400,
            "the batch holds 1000 operations (limit max_batch = 10)",
            id="1000-operation batch",
        ),
        pytest.param(
            {"content": b'{"query": "{ stats', "headers": {"content-type": "application/json"}},
            400,
            "Unable to parse request body as JSON",
            id="malformed JSON",
        ),
        pytest.param(
            {"content": b"{ stats { specCount } }", "headers": {"content-type": "text/plain"}},
            400,
            "Unsupported content type",
            id="text/plain",
        ),
        pytest.param(
            {"content": b"<q/>", "headers": {"content-type": "application/xml"}},
            400,
            "Unsupported content type",
            id="application/xml",
        ),
    ],
)
def test_a_hostile_request_is_refused(client, kwargs, status, message):
    response = client.post("/graphql", **kwargs)
    assert response.status_code == status
    errors = response.json()["errors"]
    assert [e["message"] for e in errors] == [message]


def test_a_small_batch_is_answered_in_order(client):
    second = {"query": '{ spec(hash: "22xqlom") { shortHash } }'}
    response = client.post("/graphql", json=[STATS, second])
    assert response.json() == [STATS_ANSWER, {"data": {"spec": {"shortHash": "22xqlom"}}}]


def test_limits_come_from_the_settings(seeds_graph):
    settings = Settings(max_depth=3, max_aliases=1, max_cost=10)
    with TestClient(create_app(seeds_graph, settings=settings)) as client:

        def ask(query: str) -> dict:
            return client.post("/graphql", json={"query": query}).json()

        assert ask(nested(1))["errors"][0]["extensions"]["limit"] == "max_depth"
        assert ask("{ a: stats { specCount } b: stats { specCount } }")["errors"][0][
            "extensions"
        ] == {"code": "LIMIT_EXCEEDED", "limit": "max_aliases", "value": 1}
        assert (
            ask("{ specs(first: 20) { nodes { hash } } }")["errors"][0]["extensions"]["limit"]
            == "max_cost"
        )


def test_a_query_past_the_time_limit_is_refused(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings(timeout=1e-9))) as client:
        response = client.post("/graphql", json=STATS)
    assert response.json() == refusal("timeout", 1e-9, "the query ran longer than 1e-09 seconds")


def test_introspection_can_be_turned_off(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings(introspection=False))) as client:
        answer = client.post("/graphql", json={"query": "{ __schema { queryType { name } } }"})
        assert answer.json()["errors"][0]["message"] == (
            "GraphQL introspection has been disabled, but the requested query contained "
            "the field '__schema'."
        )
        assert client.post("/graphql", json=STATS).json() == STATS_ANSWER


def test_graphiql_introspection_passes_the_default_limits(client):
    response = client.post("/graphql", json={"query": get_introspection_query()})
    assert "errors" not in response.json()
    assert response.json()["data"]["__schema"]["queryType"] == {"name": "Query", "kind": "OBJECT"}


def test_a_variable_default_counts_as_if_written_in_place(client):
    # Issue 18's first attack: 19 aliases of pages of 1000 within pages of 1000, their size
    # given as a variable's default and the variable not sent.
    alias = (
        "b{i}: specs(first: {n}) {{ nodes {{ target {{ specs(first: {n}) "
        "{{ nodes {{ hash }} }} }} }} }}"
    )
    body = " ".join(alias.format(i=i, n="$n") for i in range(19))
    by_default = client.post("/graphql", json={"query": f"query($n: Int = 1000) {{ {body} }}"})
    literal = " ".join(alias.format(i=i, n="1000") for i in range(19))
    written = client.post("/graphql", json={"query": f"{{ {literal} }}"})
    assert by_default.status_code == written.status_code == 200
    assert by_default.json() == written.json()
    assert written.json()["errors"][0]["extensions"] == {
        "code": "LIMIT_EXCEEDED", "limit": "max_cost", "value": 100_000
    }  # fmt: skip
    # Sent, the variable wins over its default: small pages are answered.
    sent = client.post(
        "/graphql",
        json={"query": f"query($n: Int = 1000) {{ {body} }}", "variables": {"n": 1}},
    )
    assert "errors" not in sent.json()


def leaves(value) -> int:
    """How many leaf values a JSON answer holds."""
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(leaves(v) for v in value)
    return 1


def test_introspection_is_admitted_once_and_counted_near_its_size(client):
    query = get_introspection_query()
    response = client.post("/graphql", json={"query": query}).json()
    assert "errors" not in response
    assert len(response["data"]["__schema"]["types"]) == len(schema._schema.type_map)
    executor = Executor(build_schema(schema_extensions(Limits())))
    measured = Prepared.of(query, Limits()).measure(executor.costs, Limits(), None, None)
    # The cost is an estimate from this schema's mean list lengths: near the real size.
    assert leaves(response["data"]) / 3 <= measured.cost <= leaves(response["data"]) * 3
    assert not measured.walks


def test_the_introspection_limit_is_a_setting(seeds_graph):
    query = "{ a: __schema { queryType { name } } b: __schema { queryType { name } } }"
    with TestClient(create_app(seeds_graph, settings=Settings(max_introspection=2))) as client:
        answer = client.post("/graphql", json={"query": query}).json()
    assert answer == {
        "data": {"a": {"queryType": {"name": "Query"}}, "b": {"queryType": {"name": "Query"}}}
    }
    with TestClient(create_app(seeds_graph, settings=Settings())) as client:
        answer = client.post("/graphql", json={"query": query}).json()
    assert answer == refusal(
        "max_introspection", 1, "the query introspects the whole schema 2 times"
    )
