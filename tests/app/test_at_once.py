"""Requests answered at once (``CacheGraphApp.answer_now``, asked by the server's httptools
protocol before it makes a request ASGI messages): the same answer as the whole way, byte
for byte but for the request's id and timing; every other request the whole way."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from cachegraph.schema import schema
from hypothesis import HealthCheck, given, settings
from hypothesis_graphql import from_schema
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.observe import Metrics, RequestMiddleware, request_id
from tests.app.test_connections import STACKS, read_to_end
from tests.app.test_serve import free_port, wait_healthy

TYPENAME = {"query": "{ __typename }"}
POINT = {
    "query": "query($h: String!) { spec(hash: $h) { hash version compiler { name } "
    "target { name } stacks { name } } }",
    "variables": {"h": "22xqlomma"},
}
SCOPED = {
    "query": "query($p: String!) { specs(filter: {package: $p}, first: 3) "
    "{ nodes { hash version } } }",
    "variables": {"p": "keras"},
}
#: a filter on a compiler no spec has: an empty page and a warning beside it
WARNED = {"query": '{ specs(filter: {compiler: "gcc@1.0"}, first: 1) { nodes { hash } } }'}
JSON_TYPE = [(b"content-type", b"application/json")]
#: what differs between two answers of one request: its id and the time it took
OWN = {"x-request-id", "server-timing", "date"}


@pytest.fixture(scope="module")
def served(seeds_graph):
    """The app on the seeds (response cache off: every answer executed) and its client."""
    app = create_app(seeds_graph, settings=Settings(response_cache=0))
    with TestClient(app) as client:
        yield app, client


def whole_way(client, body: bytes, headers: list) -> tuple[int, list, bytes]:
    """The answer through the ASGI app, as every request was answered before."""
    given = {k.decode(): v.decode() for k, v in headers}
    response = client.post("/graphql", content=body, headers=given)
    return response.status_code, response.headers.multi_items(), response.content


def comparable(headers: list) -> list[tuple[str, str]]:
    pairs = [(k.decode(), v.decode()) if isinstance(k, bytes) else (k, v) for k, v in headers]
    return [(k, "" if k in OWN else v) for k, v in pairs]


@pytest.mark.parametrize(
    ("given", "headers"),
    [
        (TYPENAME, JSON_TYPE),
        (POINT, JSON_TYPE),
        (SCOPED, JSON_TYPE),
        (WARNED, JSON_TYPE),
        (POINT, [*JSON_TYPE, (b"accept", b"application/graphql-response+json")]),
        (POINT, [(b"content-type", b"application/json; charset=utf-8"), (b"x-request-id", b"r-1")]),
    ],
    ids=["typename", "point", "scoped", "warned", "graphql-response", "charset-and-id"],
)
def test_an_answer_at_once_is_the_whole_ways_answer(served, given, headers):
    app, client = served
    body = json.dumps(given).encode()
    status, _, answer = whole_way(client, body, headers)
    whole = whole_way(client, body, headers)  # run fast once: now answered at once
    at_once = app.answer_now(headers, body)
    assert at_once is not None
    assert (at_once[0], comparable(at_once[1]), at_once[2]) == (
        whole[0], comparable(whole[1]), whole[2]
    )  # fmt: skip
    assert (status, answer) == (whole[0], whole[2])
    rid = dict(at_once[1])[b"x-request-id"].decode()
    if (b"x-request-id", b"r-1") in headers:
        assert rid == "r-1"  # the client's id, as the middleware keeps it
    else:
        assert re.fullmatch("[0-9a-f]{16}", rid)


def test_a_text_is_answered_at_once_once_it_has_run_fast(served):
    app, client = served
    body = json.dumps({"query": "{ tags { name } }"}).encode()
    ready = []
    for _ in range(3):  # validated the standard way, then run (and timed) on the direct path
        ready.append(app.answer_now(JSON_TYPE, body) is not None)
        whole_way(client, body, JSON_TYPE)
    assert ready == [False, False, True]


def test_a_client_holding_the_etag_gets_304_at_once(served):
    app, client = served
    body = json.dumps(POINT).encode()
    whole_way(client, body, JSON_TYPE)
    tag = dict(whole_way(client, body, JSON_TYPE)[1])["etag"]
    asked = [*JSON_TYPE, (b"if-none-match", tag.encode())]
    status, headers, answer = app.answer_now(asked, body)
    whole = whole_way(client, body, asked)
    assert (status, answer, comparable(headers)) == (304, b"", comparable(whole[1]))
    assert whole[0] == 304


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (TYPENAME, [*JSON_TYPE, (b"origin", b"https://example.org")]),  # CORS: the whole way
        ([TYPENAME, TYPENAME], JSON_TYPE),  # a batch
        (TYPENAME, [(b"content-type", b"text/plain")]),
        ({**TYPENAME, "extensions": {"persistedQuery": {"version": 1}}}, JSON_TYPE),
        ({"query": "{ __typename }", "variables": []}, JSON_TYPE),  # refused: variables
        ("{ __typename", JSON_TYPE),  # not JSON
    ],
    ids=["origin", "batch", "not-json-type", "persisted", "bad-variables", "not-json"],
)
def test_other_requests_go_the_whole_way(served, body, headers):
    app, client = served
    typename = json.dumps(TYPENAME).encode()
    for _ in range(2):  # the text has run fast: a plain request of it is answered at once
        whole_way(client, typename, JSON_TYPE)
    assert app.answer_now(JSON_TYPE, typename) is not None
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    assert app.answer_now(headers, raw) is None


def test_a_body_over_the_limits_goes_the_whole_way(seeds_graph):
    app = create_app(seeds_graph, settings=Settings(max_body_bytes=30, response_cache=0))
    with TestClient(app) as client:
        body = json.dumps(TYPENAME).encode()  # 27 bytes
        padded = json.dumps({**TYPENAME, "pad": "x"}).encode()  # 38: refused, 413
        for _ in range(2):
            whole_way(client, body, JSON_TYPE)
        assert app.answer_now(JSON_TYPE, body) is not None
        assert app.answer_now(JSON_TYPE, padded) is None
        assert whole_way(client, padded, JSON_TYPE)[0] == 413


def test_an_answer_kept_is_given_at_once(seeds_graph):
    app = create_app(seeds_graph, settings=Settings(response_cache=1_000_000))
    with TestClient(app) as client:
        body = json.dumps(SCOPED).encode()
        first = whole_way(client, body, JSON_TYPE)  # run the standard way, then kept
        assert app.answer_now(JSON_TYPE, body) is not None  # never run on the direct path
        registry = app.service.metrics.registry
        before = registry.get_sample_value("cachegraph_response_cache_total", {"result": "hit"})
        status, headers, answer = app.answer_now(JSON_TYPE, body)
        assert (status, comparable(headers), answer) == (
            first[0], comparable(first[1]), first[2]
        )  # fmt: skip
        after = registry.get_sample_value("cachegraph_response_cache_total", {"result": "hit"})
        assert after - before == 1  # counted once, as the whole way counts it


def test_a_crash_answering_at_once_is_the_json_500_with_the_request_id():
    middleware = RequestMiddleware(None, Metrics(), max_body_bytes=100)

    def crash():
        raise RuntimeError("a fault")

    status, headers, body = middleware.answer_now("POST", "/graphql", JSON_TYPE, 40, crash)
    rid = dict(headers)[b"x-request-id"].decode()
    assert (status, json.loads(body)) == (
        500,
        {
            "errors": [
                {
                    "message": f"Internal server error (request id {rid}).",
                    "extensions": {"code": "INTERNAL_SERVER_ERROR", "requestId": rid},
                }
            ]
        },
    )
    assert middleware.in_flight == 0 and request_id.get() is None  # reset
    counted = middleware.metrics.registry.get_sample_value
    assert counted("cachegraph_requests_total", {"route": "/graphql", "status": "500"}) == 1
    assert counted("cachegraph_http_answered_at_once_total") == 1


# -- over HTTP, on the server's own stack -------------------------------------------------


@pytest.fixture(scope="module", params=list(STACKS))
def server(request):  # slow: only the slow tests below ask for it
    """(port, stack) of ``cachegraph serve`` on the bundled data, on each stack."""
    port = free_port()
    command = STACKS[request.param] or ["-m", "cachegraph.cli"]
    process = subprocess.Popen(
        [sys.executable, *command, "serve", "--port", str(port), "--keep-alive-timeout", "1",
         "--response-cache", "0", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_healthy(port, process)
    yield port, request.param
    process.terminate()
    process.wait(30)


def post(body: bytes, *extra: bytes) -> bytes:
    head = b"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    return head + b"".join(extra) + b"Content-Length: %d\r\n\r\n" % len(body) + body


def answers(conn: socket.socket, n: int) -> list[tuple[bytes, dict, bytes]]:
    """The next ``n`` answers on the connection: status line, headers, body."""
    got, found = b"", []
    while len(found) < n:
        chunk = conn.recv(65536)
        assert chunk, f"closed after {len(found)} answers: {got!r}"
        got += chunk
        while b"\r\n\r\n" in got:
            head, rest = got.split(b"\r\n\r\n", 1)
            lines = head.split(b"\r\n")
            headers = dict(line.decode().lower().split(": ", 1) for line in lines[1:])
            length = int(headers.get("content-length", 0))
            if len(rest) < length:
                break
            found.append((lines[0], headers, rest[:length]))
            got = rest[length:]
    return found


def at_once_count(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    return float(re.search(r"^cachegraph_http_answered_at_once_total (\S+)$", text, re.M)[1])


@pytest.mark.slow
def test_over_http_an_answer_at_once_is_the_whole_ways(server):
    port, stack = server
    body = json.dumps(POINT).encode()
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    for _ in range(2):  # the text run once the whole way, fast
        conn.sendall(post(body))
        answers(conn, 1)
    before = at_once_count(port)
    conn.sendall(post(body))  # headers and body in one read: at once
    [at_once] = answers(conn, 1)
    conn.sendall(post(body)[:-10])  # its body's end in a later read: the whole way
    time.sleep(0.2)
    conn.sendall(post(body)[-10:])
    [whole] = answers(conn, 1)
    conn.close()
    assert at_once_count(port) - before == (1 if stack == "httptools-uvloop" else 0)
    assert at_once[0] == whole[0] == b"HTTP/1.1 200 OK"
    assert at_once[2] == whole[2] and json.loads(at_once[2])["data"]["spec"]["hash"]
    assert comparable(list(at_once[1].items())) == comparable(list(whole[1].items()))


@pytest.mark.slow
def test_pipelined_requests_are_answered_in_order(server):
    port, _ = server
    body = json.dumps(TYPENAME).encode()
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    for _ in range(2):
        conn.sendall(post(body))
        answers(conn, 1)
    health = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    conn.sendall(post(body) + health + post(body) + health)
    got = answers(conn, 4)
    assert [a[2] for a in got] == [b'{"data":{"__typename":"Query"}}', b'{"status":"alive"}'] * 2
    conn.close()


@pytest.mark.slow
def test_a_connection_answered_at_once_closes_when_asked_or_idle(server):
    port, _ = server
    body = json.dumps(TYPENAME).encode()
    for closing in (b"Connection: close\r\n", b""):  # closed at once; idle 1 s, then closed
        conn = socket.create_connection(("127.0.0.1", port), timeout=30)
        for _ in range(2):
            conn.sendall(post(body))
            answers(conn, 1)
        started = time.monotonic()
        conn.sendall(post(body, closing))
        got = read_to_end(conn)
        assert got.endswith(b'\r\n\r\n{"data":{"__typename":"Query"}}')
        assert (b"connection: close\r\n" in got.lower()) == bool(closing)
        assert time.monotonic() - started < 20  # the keep-alive timeout is 1 s
        conn.close()


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=from_schema(schema.as_str()))
def test_every_generated_query_answered_at_once_is_answered_as_the_whole_way(served, query):
    app, client = served
    body = json.dumps({"query": query}).encode()
    for _ in range(2):  # validated, then run on the compiled path if it has one
        whole_way(client, body, JSON_TYPE)
    at_once = app.answer_now(JSON_TYPE, body)
    whole = whole_way(client, body, JSON_TYPE)
    if at_once is not None:
        assert (at_once[0], comparable(at_once[1]), at_once[2]) == (
            whole[0], comparable(whole[1]), whole[2]
        ), query  # fmt: skip
