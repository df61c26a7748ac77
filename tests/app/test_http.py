"""The HTTP app: GraphQL over POST and GET, GraphiQL, health, and requests that are not GraphQL."""

from __future__ import annotations

import pytest
from cachegraph.graph import load
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.testclient import TestClient

from cachegraph import DataSources, Settings, create_app
from cachegraph.app import GraphQLFirst
from tests.conftest import SEEDS, break_records

STATS = "{ stats { packageCount specCount } }"
BODY_SHAPE = "the body must be a JSON object, or an array of them (a batch)"


@pytest.fixture(scope="module")
def client(seeds_graph):
    with TestClient(create_app(seeds_graph)) as client:
        yield client


def test_post_json(client):
    response = client.post("/graphql", json={"query": STATS})
    assert response.status_code == 200
    assert response.json() == {"data": {"stats": {"packageCount": 4, "specCount": 454}}}


def test_post_with_variables_and_operation_name(client):
    response = client.post(
        "/graphql",
        json={
            "query": "query A($h: String!) { spec(hash: $h) { shortHash } } "
            "query B { tags { name } }",
            "variables": {"h": "22xqlomma"},
            "operationName": "A",
        },
    )
    assert response.json() == {"data": {"spec": {"shortHash": "22xqlom"}}}


def test_get_with_query_parameters(client):
    response = client.get("/graphql", params={"query": STATS})
    assert response.status_code == 200
    assert response.json() == {"data": {"stats": {"packageCount": 4, "specCount": 454}}}


def test_a_browser_gets_graphiql(client):
    response = client.get("/graphql", headers={"accept": "text/html"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "graphiql" in response.text.lower()


def test_the_root_leads_to_graphiql(client):
    response = client.get("/", follow_redirects=False)
    assert (response.status_code, response.headers["location"]) == (307, "/graphql")


def test_alive_and_ready_once_loaded(client):
    assert (client.get("/healthz").status_code, client.get("/healthz").json()) == (
        200,
        {"status": "alive"},
    )
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "package_count": 4,
        "spec_count": 454,
        "stack_count": 11,
        "compiler_count": 3,
        "target_count": 4,
        "tag_count": 1,
        "last_load": {"ok": True, "finished": 0.0, "summary": "graph given", "problem_count": 0},
    }


def test_a_bad_argument_is_a_graphql_error_with_http_200(client):
    response = client.post("/graphql", json={"query": '{ spec(hash: "abc") { hash } }'})
    assert response.status_code == 200
    assert response.json() == {
        "data": {"spec": None},
        "errors": [
            {
                "message": "hash prefix 'abc' is 3 characters; give at least 7",
                "locations": [{"line": 1, "column": 3}],
                "path": ["spec"],
            }
        ],
    }


def test_an_invalid_query_is_a_graphql_error(client):
    response = client.post("/graphql", json={"query": "{ specs { nodes { colour } } }"})
    assert response.status_code == 200
    assert response.json() == {
        "data": None,
        "errors": [
            {
                "message": "Cannot query field 'colour' on type 'Spec'.",
                "locations": [{"line": 1, "column": 19}],
            }
        ],
    }


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"content": b"{not json", "headers": {"content-type": "application/json"}},
            "Unable to parse request body as JSON",
        ),
        (
            {"content": b"hello", "headers": {"content-type": "text/plain"}},
            "Unsupported content type",
        ),
        ({"json": {"variables": {}}}, "No GraphQL query found in the request"),
        ({"json": []}, "the batch is empty: send at least one operation"),
        ({"json": "{ stats { specCount } }"}, BODY_SHAPE),
        ({"json": [1, 2]}, BODY_SHAPE),
        (
            {"json": {"query": 5}},
            "The GraphQL operation's `query` must be a string or null, if provided.",
        ),
    ],
)
def test_a_request_that_is_not_graphql_is_400(client, kwargs, message):
    response = client.post("/graphql", **kwargs)
    assert response.status_code == 400
    assert response.json() == {"errors": [{"message": message}]}


def test_a_get_without_a_query_is_400(client):
    response = client.get("/graphql", headers={"accept": "application/json"})
    assert response.status_code == 400
    assert response.json() == {"errors": [{"message": "No GraphQL query found in the request"}]}


def test_the_app_loads_its_data_in_the_lifespan(tmp_path):
    sources = DataSources(paths=[str(SEEDS)])
    app = create_app(sources=sources)
    with TestClient(app) as client:
        assert client.post("/graphql", json={"query": STATS}).json() == {
            "data": {"stats": {"packageCount": 4, "specCount": 454}}
        }


def test_before_data_is_loaded_the_server_says_so():
    app = create_app(sources=DataSources(paths=[str(SEEDS)]))
    client = TestClient(app)  # no lifespan: nothing loaded
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").json() == {"status": "loading"}
    assert client.get("/readyz").status_code == 503
    response = client.post("/graphql", json={"query": STATS})
    assert (response.status_code, response.json()) == (
        503,
        {"errors": [{"message": "the data is still loading; try again shortly"}]},
    )


def test_no_error_carries_a_stack_trace(client):
    for body in [
        {"query": "{"},
        {"query": '{ node(id: "%%") { id } }'},
        {"query": "{ specs(first: 99999) { totalCount } }"},
    ]:
        text = client.post("/graphql", json=body).text
        assert "Traceback" not in text and 'File "' not in text


def test_a_server_fault_is_masked(seeds_graph):
    graph = load([SEEDS])[0]
    break_records(graph)  # resolvers will fail unexpectedly
    with TestClient(create_app(graph)) as client:
        response = client.post("/graphql", json={"query": "{ specs(first: 1) { nodes { hash } } }"})
    request_id = response.headers["x-request-id"]
    assert response.status_code == 200
    assert response.json() == {
        "data": None,
        "errors": [
            {
                "message": f"Internal server error (request id {request_id}).",
                "locations": [{"line": 1, "column": 21}],
                "path": ["specs", "nodes"],
                "extensions": {"code": "INTERNAL_SERVER_ERROR", "requestId": request_id},
            }
        ],
    }


@pytest.mark.parametrize(
    ("query", "variables", "message"),
    [
        ("query($h: String!) { spec(hash: $h) { hash } }", {"h": 5},
         "Variable '$h' has invalid value: String cannot represent a non string value: 5"),
        ("query($h: String!) { spec(hash: $h) { hash } }", None,
         "Variable '$h' has invalid value: "
         "Expected a value of non-null type 'String!' to be provided."),
        ("query($n: Int) { specs(first: $n) { totalCount } }", {"n": "10"},
         "Variable '$n' has invalid value: Int cannot represent non-integer value: '10'"),
        ("query($n: Int) { specs(first: $n) { totalCount } }", {"n": 1.5},
         "Variable '$n' has invalid value: Int cannot represent non-integer value: 1.5"),
        ("query($n: Int) { specs(first: $n) { totalCount } }", {"n": True},
         "Variable '$n' has invalid value: Int cannot represent non-integer value: True"),
        ("query($n: Int) { specs(first: $n) { totalCount } }", {"n": 1e30},
         "Variable '$n' has invalid value: "
         "Int cannot represent non 32-bit signed integer value: 1e+30"),
    ],
)  # fmt: skip
def test_a_bad_variable_is_the_clients_error_not_the_servers(
    seeds_graph, caplog, query, variables, message
):
    with TestClient(create_app(seeds_graph, settings=Settings())) as client:
        body = {"query": query} | ({"variables": variables} if variables is not None else {})
        response = client.post("/graphql", json=body)
        assert (response.status_code, response.json()) == (
            200,
            {
                "data": None,
                "errors": [
                    {
                        "message": message,
                        "locations": [{"line": 1, "column": 7}],
                        "extensions": {"code": "BAD_USER_INPUT"},
                    }
                ],
            },
        )
        counted = [
            line for line in client.get("/metrics").text.splitlines()
            if line.startswith("cachegraph_graphql_errors_total")
        ]  # fmt: skip
        assert counted == ['cachegraph_graphql_errors_total{kind="client"} 1.0']
        # The server still answers, and logged no error of its own.
        assert client.post("/graphql", json={"query": "{ stats { specCount } }"}).json() == {
            "data": {"stats": {"specCount": 454}}
        }
    assert [r for r in caplog.records if r.levelname == "ERROR"] == []


def test_a_question_the_data_cannot_answer_says_so_in_extensions(client):
    """Pages hold no DAGs: '^dep' matches nothing, and every path of the answer says why."""
    body = {"query": '{ specs(filter: {satisfies: "py-keras ^python"}) { totalCount } }'}
    expected = {
        "data": {"specs": {"totalCount": 0}},
        "extensions": {
            "warnings": [
                "'^' asks about dependencies, but the loaded data has none (cache pages list no "
                "dependency DAGs), so 'py-keras ^python' matches nothing; load a mirror "
                "(--mirror) to ask it"
            ]
        },
    }
    # the first time the standard way; then the direct path; then the response cache
    for _ in range(3):
        assert client.post("/graphql", json=body).json() == expected
    assert client.get("/graphql", params=body).json() == expected


def test_graphql_requests_go_past_the_router_and_the_rest_through_it(client):
    """``CacheGraphApp.build_middleware_stack`` puts ``GraphQLFirst`` right above Starlette's
    ExceptionMiddleware, found by walking Starlette's middleware chain (an internal, pinned in
    pyproject.toml): an upgrade that changes the chain fails here, not at a server's start."""
    chain, app = [], client.app.middleware_stack
    while app is not None:
        chain.append(type(app).__name__)
        app = app.rest if isinstance(app, GraphQLFirst) else getattr(app, "app", None)
        if isinstance(app, ExceptionMiddleware):
            chain.append("ExceptionMiddleware")
            break
    assert chain[-2:] == ["GraphQLFirst", "ExceptionMiddleware"]
    assert client.post("/graphql", json={"query": STATS}).status_code == 200
    assert client.get("/no-such-route").status_code == 404  # the router's answer, as before
