"""Connections that hold the server without finishing a request are closed: headers that
never end (or never begin, or trickle in), and kept-alive connections left idle."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.app.test_serve import free_port, wait_healthy

pytestmark = pytest.mark.slow

TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\n"


#: how the server is started: as installed (httptools and uvloop), or as where neither has
#: a wheel (their imports made to fail before the server starts: the h11 fallback)
STACKS = {
    "httptools-uvloop": [],
    "h11-asyncio": [
        "-c",
        "import sys; sys.modules['httptools'] = sys.modules['uvloop'] = None;"
        "from cachegraph.cli import main; sys.exit(main())",
    ],
}


@pytest.fixture(scope="module", params=list(STACKS))
def started(request, tmp_path_factory):
    """(port, the server's log) of a server on each stack."""
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "stderr.log"
    command = STACKS[request.param] or ["-m", "cachegraph.cli"]
    with log.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, *command, "serve", "--port", str(port),
             "--header-timeout", "1", "--keep-alive-timeout", "1"],
            stdout=subprocess.DEVNULL, stderr=err,
        )  # fmt: skip
    wait_healthy(port, process)
    yield port, request.param, log
    process.terminate()
    process.wait(30)


@pytest.fixture
def port(started) -> int:
    return started[0]


def connect(port: int) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    return conn


def read_to_end(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (socket.timeout after
    30 s of silence: the server kept the connection open)."""
    got = b""
    while chunk := conn.recv(65536):
        got += chunk
    return got


def test_connections_whose_headers_never_end_are_answered_408_and_closed(port):
    silent = connect(port)  # sends nothing at all
    partial = [connect(port) for _ in range(20)]
    for conn in partial:
        conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # no blank line: never ends
    # Before, all of them stayed open: each recv below waited its 30 s and failed.
    for conn in [silent, *partial]:
        assert read_to_end(conn).startswith(TIMED_OUT)
        conn.close()


def test_headers_sent_a_byte_at_a_time_are_cut_off_at_the_same_limit(port):
    conn = connect(port)
    request = b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 200 + b"\r\n\r\n"
    closed = False
    for byte in request:  # about 7 s of bytes for a 1 s limit
        try:
            conn.sendall(bytes([byte]))
        except OSError:
            closed = True
            break
        time.sleep(0.03)
    got = read_to_end(conn) if not closed else b""
    assert closed or got.startswith(TIMED_OUT)
    conn.close()


def test_a_later_request_on_a_kept_alive_connection_has_the_same_limit(port):
    conn = connect(port)
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    first = b""
    while not first.endswith(b"}"):
        first += conn.recv(65536)
    assert first.startswith(b"HTTP/1.1 200 OK\r\n") and first.endswith(b'{"status":"alive"}')
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the second never ends
    assert read_to_end(conn).startswith(TIMED_OUT)
    conn.close()


def test_an_idle_kept_alive_connection_is_closed(port):
    conn = connect(port)
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_to_end(conn).endswith(b'{"status":"alive"}')  # then closed, idle
    conn.close()


def test_a_request_that_finishes_its_headers_in_time_is_answered(port):
    conn = connect(port)
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    got = read_to_end(conn)
    assert got.startswith(b"HTTP/1.1 200 OK\r\n") and got.endswith(b'{"status":"alive"}')
    conn.close()


def test_a_request_line_and_headers_past_16_kib_are_refused_at_once(port):
    """As h11's ``h11_max_incomplete_event_size`` (16 KiB) refuses them, on either stack: a
    header that never ends is cut at the limit, not held until the header timeout."""
    conn = connect(port)
    conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * (17 * 1024))
    got = read_to_end(conn)
    assert got.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert got.endswith(b"Invalid HTTP request received.")
    conn.close()


def test_headers_within_the_limit_and_a_large_body_are_answered(port):
    body = json.dumps({"query": "{ stats { specCount } }", "pad": "x" * 200_000}).encode()
    conn = connect(port)
    conn.sendall(
        b"POST /graphql HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nX-Pad: " + b"a" * (12 * 1024) + b"\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    got = read_to_end(conn)
    assert got.startswith(b"HTTP/1.1 200 OK\r\n")
    # the bundled data: 454 page specs and the mirrors' 42 more (tests/app/test_cli_usage.py)
    assert got.endswith(b'{"data":{"stats":{"specCount":496}}}')
    conn.close()


def test_the_stack_is_said_in_the_log_and_in_metrics(started):
    port, stack, log = started
    parser, loop = stack.split("-")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        metrics = answer.read().decode()
    said = [line for line in metrics.splitlines() if line.startswith("cachegraph_http_stack")]
    assert said == [f'cachegraph_http_stack_info{{loop="{loop}",parser="{parser}"}} 1.0']
    logged = log.read_text()
    if parser == "h11":
        assert (
            "serving HTTP on h11 and asyncio: no httptools or uvloop wheel here (slower: "
            "pip install httptools uvloop where the platform has them)"
        ) in logged
    else:
        assert "serving HTTP on httptools and uvloop" in logged
