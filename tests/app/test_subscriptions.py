"""The change subscription over a real WebSocket (graphql-transport-ws, read by the
``websockets`` client) from a real server (``cachegraph serve``): a pushed index is one
event with exactly its added, removed and replaced specs; the protocol's rules and the
query limits hold; a client holds few sockets."""

from __future__ import annotations

import contextlib
import json

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from cachegraph.settings import Settings
from tests.app.test_changes import ADDED, NEW, NEW_LIBDWARF, OLD, OLD_LIBDWARF, REMOVED, TEST, _push
from tests.browser import serving

pytestmark = pytest.mark.slow

PROTOCOL = "graphql-transport-ws"
FOLLOW = """subscription($package: String) { changes(package: $package) {
  id mirror tag stack atStart addedCount removedCount replacedCount
  added { hash } removed { hash } replaced { old { hash } new { hash spec { hash } } } } }"""


def _socket(origin: str):
    return connect(origin.replace("http://", "ws://") + "/graphql", subprotocols=[PROTOCOL],
                   open_timeout=30)  # fmt: skip


def _said(ws, timeout: float = 60) -> dict:
    return json.loads(ws.recv(timeout=timeout))


def _ready(ws) -> None:
    ws.send(json.dumps({"type": "connection_init"}))
    assert _said(ws) == {"type": "connection_ack"}


@pytest.fixture
def watched(http_server, tmp_path):
    url = http_server.publish(TEST)
    name = url.rsplit("/", 1)[1]
    _push(http_server, name, OLD)
    arguments = ("--mirror", f"develop:test={url}", "--refresh", "0.2",
                 "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    with serving(*arguments) as origin:
        yield origin, lambda: _push(http_server, name, NEW)


def test_a_pushed_index_is_one_event_over_the_subscription(watched):
    origin, push = watched
    with _socket(origin) as ws, _socket(origin) as other:
        assert ws.subprotocol == PROTOCOL
        _ready(ws)
        _ready(other)
        ws.send(json.dumps({"type": "subscribe", "id": "1", "payload": {"query": FOLLOW}}))
        # a package none of the changes names: nothing for this one
        other.send(json.dumps({"id": "a", "type": "subscribe", "payload": {
            "query": FOLLOW, "variables": {"package": "zlib"}}}))  # fmt: skip
        ws.send(json.dumps({"type": "ping"}))
        assert _said(ws) == {"type": "pong"}
        push()
        event = _said(ws)
        ws.send(json.dumps({"type": "complete", "id": "1"}))
        other.send(json.dumps({"type": "ping"}))
        assert _said(other) == {"type": "pong"}  # before any event for zlib
    assert event == {
        "type": "next",
        "id": "1",
        "payload": {"data": {"changes": {
            "id": "1", "mirror": "develop/test", "tag": "develop", "stack": "test",
            "atStart": False, "addedCount": 1, "removedCount": 1, "replacedCount": 1,
            "added": [{"hash": ADDED}], "removed": [{"hash": REMOVED}],
            "replaced": [{"old": {"hash": OLD_LIBDWARF},
                          "new": {"hash": NEW_LIBDWARF, "spec": {"hash": NEW_LIBDWARF}}}],
        }}},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ({"query": "subscription { changes { nope } }"},
         "Cannot query field 'nope' on type 'ChangeEvent'."),
        ({"query": "{ stats { specCount } }"},
         "a query goes over HTTP (POST /graphql); a WebSocket carries subscriptions only"),
        ({"query": "subscription {"}, "Syntax Error: Expected Name, found <EOF>."),
        ({"query": "subscription { " + " ".join(f"a{i}: changes {{ id }}" for i in range(101))
          + " }"}, "the query uses 101 aliases (limit max_aliases = 100)"),
        ({"query": FOLLOW, "variables": {"package": 3}},
         "Variable '$package' has invalid value: String cannot represent a non string "
         "value: 3"),
    ],
)  # fmt: skip
def test_a_bad_subscription_is_an_error_the_socket_stays(watched, payload, said):
    origin, _ = watched
    with _socket(origin) as ws:
        _ready(ws)
        ws.send(json.dumps({"type": "subscribe", "id": "x", "payload": payload}))
        answer = _said(ws)
        assert (answer["type"], answer["id"]) == ("error", "x")
        assert [e["message"] for e in answer["payload"]] == [said]
        ws.send(json.dumps({"type": "ping"}))
        assert _said(ws) == {"type": "pong"}


@pytest.mark.parametrize(
    ("messages", "code", "reason"),
    [
        ([{"type": "subscribe", "id": "1", "payload": {"query": FOLLOW}}],
         4401, "Unauthorized: send connection_init first"),
        (["not json"], 4400, "a message must be a JSON object"),
        ([{"type": "connection_init"}, {"type": "connection_init"}],
         4429, "Too many initialisation requests"),
        ([{"type": "connection_init"},
          {"type": "subscribe", "id": "1", "payload": {"query": FOLLOW}},
          {"type": "subscribe", "id": "1", "payload": {"query": FOLLOW}}],
         4409, "Subscriber for 1 already exists"),
    ],
)  # fmt: skip
def test_a_broken_protocol_closes_the_socket_saying_why(watched, messages, code, reason):
    origin, _ = watched
    with _socket(origin) as ws:
        for message in messages:
            ws.send(message if isinstance(message, str) else json.dumps(message))
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                ws.recv(timeout=30)
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (code, reason)


def test_a_client_holds_few_sockets_and_must_offer_the_protocol(watched):
    origin, _ = watched
    per_client = Settings().followers_per_client
    url = origin.replace("http://", "ws://") + "/graphql"
    with connect(url, open_timeout=30) as plain, pytest.raises(ConnectionClosed) as closed:
        plain.recv(timeout=30)
    assert closed.value.rcvd.code == 4406
    with contextlib.ExitStack() as held:
        for _ in range(per_client):
            _ready(held.enter_context(_socket(origin)))
        with _socket(origin) as refused, pytest.raises(ConnectionClosed) as closed:
            refused.recv(timeout=30)
    assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (
        4429, f"at most {per_client} change followers per client"
    )  # fmt: skip


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_subscription_over_http_is_refused_saying_where_it_goes(method):
    from starlette.testclient import TestClient

    from cachegraph.app import create_app

    query = {"query": "subscription { changes { id } }"}
    with TestClient(create_app(settings=Settings())) as client:
        answer = (
            client.get("/graphql", params=query)
            if method == "GET"
            else client.post("/graphql", json=query)
        )
    assert (answer.status_code, answer.json()) == (400, {"errors": [{"message": (
        "a subscription goes over WebSocket at /graphql (the graphql-transport-ws protocol), "
        "or follow /changes/stream (Server-Sent Events); HTTP carries queries"
    )}]})  # fmt: skip
