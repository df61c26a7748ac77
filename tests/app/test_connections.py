"""Connections that hold the server without finishing a request are closed: headers that
never end (or never begin, or trickle in), and kept-alive connections left idle."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from tests.app.test_serve import free_port, wait_healthy

pytestmark = pytest.mark.slow

TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\n"


@pytest.fixture(scope="module")
def port():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
         "--header-timeout", "1", "--keep-alive-timeout", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_healthy(port, process)
    yield port
    process.terminate()
    process.wait(30)


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
