"""The HTTP stack ``cachegraph serve`` runs: Uvicorn's httptools protocol on uvloop, with a
time limit and a size limit on a request's headers; Uvicorn's h11 protocol on asyncio where
the httptools or uvloop wheel is missing (said at start and in ``/metrics``).

Uvicorn closes a kept-alive connection that stays idle ``timeout_keep_alive`` seconds
after a response (our ``keep_alive_timeout`` setting), but it has no limit at all on a
connection that never finishes its headers: neither the first request's (a client that
connects and sends nothing, or a byte now and then), nor those of a later request once
its first bytes arrived. 2,000 such connections stayed open past 60 s, and at 1,024 open
files they made the server refuse everyone, ``/healthz`` too. Nor does its httptools
protocol bound a header's bytes (its h11 protocol does: ``h11_max_incomplete_event_size``,
16 KiB).

So each protocol here is Uvicorn's own with a header timer: it starts when a connection
opens, and again when the first bytes of a later request arrive on it; it stops when the
request's headers are complete (its body has ``body_timeout`` of its own, in
``observe.RequestMiddleware``). At the limit the server answers ``408 Request Timeout`` and
closes the connection. It does not restart on each byte: a client that trickles its headers
a byte at a time is closed at the same limit. The httptools protocol also counts a request's
bytes until its headers are complete: past ``MAX_HEADER_BYTES`` (h11's 16 KiB) it is refused
as h11 refuses it (``400 Invalid HTTP request received.``, closed).

Why httptools and uvloop (Uvicorn's ``standard`` extra) and not another server: measured on
one keep-alive client, 2,000 requests of a bare Starlette route returning 190 bytes
(``bench/benchmark.py --http-stacks``; docs/benchmarks.md, "HTTP stack"), h11 with this
timer on asyncio took p50 0.28 ms, httptools on asyncio 0.16 ms, httptools on uvloop 0.16 ms
(the issue's machine: 0.55, 0.39 and 0.29 ms; Granian 0.39 ms there). Uvicorn is what every
deployment starts (the Dockerfile, the compose file and the manifests run ``cachegraph
serve``), and the timer is the same few lines on either of its protocols, where another
server would change every deployment and bring timeouts of its own to test again.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import resource
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client may take to send a request's headers; the server sets it from its
#: ``header_timeout`` setting at start (each worker process too: ``app_from_environment``).
HEADER_TIMEOUT = 10.0
#: Bytes of a request line and its headers: h11's ``DEFAULT_MAX_INCOMPLETE_EVENT_SIZE``,
#: what the h11 protocol allows, so both stacks refuse the same requests.
MAX_HEADER_BYTES = 16 * 1024

_MESSAGE = b'{"errors":[{"message":"the request headers did not arrive in time"}]}'
_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_MESSAGE), _MESSAGE)
)


def stack() -> tuple[str, str]:
    """(parser, loop) ``cachegraph serve`` runs on: ``httptools`` and ``uvloop`` where their
    wheels are installed, else ``h11`` and ``asyncio``, each apart."""
    parser = "httptools" if _importable("httptools") else "h11"
    loop = "uvloop" if _importable("uvloop") else "asyncio"
    return parser, loop


def _importable(name: str) -> bool:
    try:  # imported, not only found: a wheel built for another platform fails here
        importlib.import_module(name)
    except ImportError:
        return False
    return True


#: Bytes of a request body the server waits for before it gives the request to the app as
#: ASGI messages: no larger body is answered at once (the executor's ``INLINE_BODY_BYTES``).
AT_ONCE_BODY_BYTES = 64 * 1024

#: the largest WebSocket message a client may send (a subscription document is small)
WS_MESSAGE_BYTES = 64 * 1024


def uvicorn_options() -> dict[str, Any]:
    """Uvicorn's ``http`` and ``loop`` options for ``stack()``, and its WebSocket protocol:
    websockets' sans-I/O one (the ``websockets`` dependency: subscriptions), which answers
    pings and closes a peer that stops answering them; a client's message at most
    ``WS_MESSAGE_BYTES``."""
    parser, loop = stack()
    protocol = "HttpToolsHeaderTimeout" if parser == "httptools" else "HeaderTimeoutProtocol"
    return {
        "http": f"cachegraph.server:{protocol}",
        "loop": loop,
        "ws": "websockets-sansio",
        "ws_max_size": WS_MESSAGE_BYTES,
    }


def log_stack() -> None:
    """Say in the log which stack serves, and why when it is the slower one."""
    parser, loop = stack()
    missing = [name for name, had in (("httptools", parser == "httptools"),
                                      ("uvloop", loop == "uvloop")) if not had]  # fmt: skip
    log = logging.getLogger("cachegraph")
    if missing:
        log.warning(
            "serving HTTP on %s and %s: no %s wheel here (slower: "
            "pip install httptools uvloop where the platform has them)",
            parser, loop, " or ".join(missing),
        )  # fmt: skip
    else:
        log.info("serving HTTP on %s and %s", parser, loop)


class _HeaderTimer:
    """The header timer both protocols share; ``_waiting()`` says whether headers are due."""

    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    logger: Any
    _header_timer: asyncio.TimerHandle | None = None

    def _waiting(self) -> bool:
        raise NotImplementedError

    def _wait_for_headers(self) -> None:
        self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._headers_late)

    def _headers_arrived(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self._waiting() and not self.transport.is_closing():
            self.logger.info("closed a connection whose headers took over %g s", HEADER_TIMEOUT)
            with contextlib.suppress(OSError):
                self.transport.write(_TIMED_OUT)
            self.transport.close()


class HeaderTimeoutProtocol(_HeaderTimer, H11Protocol):
    """Uvicorn's h11 protocol, closing connections whose headers take over HEADER_TIMEOUT
    (the fallback where httptools has no wheel)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_timer = None
        super().connection_made(transport)
        self._wait_for_headers()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self.conn.their_state is h11.IDLE:
            self._wait_for_headers()  # a new request on a kept-alive connection
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._headers_arrived()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_arrived()
        super().connection_lost(exc)

    def _waiting(self) -> bool:
        return self.conn.their_state is h11.IDLE


class _Kept:
    """A stand-in for a transport that keeps what is written to it: a response's head."""

    __slots__ = ("data", "transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport, self.data = transport, b""

    def write(self, data: bytes) -> None:
        self.data += data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class _Prefixed:
    """A stand-in for a transport whose next write goes out after ``head``, in one write."""

    __slots__ = ("head", "transport")

    def __init__(self, transport: asyncio.Transport, head: bytes) -> None:
        self.transport, self.head = transport, head

    def write(self, data: bytes) -> None:
        head, self.head = self.head, b""
        self.transport.write(head + data if head else data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


if _importable("httptools"):
    from uvicorn.protocols.http.httptools_impl import (
        STATUS_LINE,
        HttpToolsProtocol,
        RequestResponseCycle,
    )
    from uvicorn.protocols.utils import get_client_addr

    class OneWriteCycle(RequestResponseCycle):
        """Uvicorn's response cycle, writing a response of known length (``content-length``)
        in one write, its head with the first part of its body, where Uvicorn writes twice.

        Each write is a system call, and on a kept-alive connection the two wake the client
        twice: a py-spy profile of ``{ __typename }`` had the two at 19% of the server's
        time, the point query's under 16 clients at 31% (issue 43). A head is kept only
        when its body follows at once: a streamed answer (chunked: ``/changes/stream``),
        a HEAD request's, or one whose body never comes (an app failing between the two:
        Uvicorn then closes the connection) is written as soon as it is made, as before.
        """

        _head = b""

        async def send(self, message: Any) -> None:
            transport = self.transport
            if message["type"] == "http.response.start" and not self.response_started:
                self.transport = kept = _Kept(transport)  # type: ignore[assignment]
                try:
                    await super().send(message)
                finally:
                    self.transport = transport
                if self.chunked_encoding is False and self.scope["method"] != "HEAD":
                    self._head = kept.data  # written with the body
                elif kept.data:
                    transport.write(kept.data)
                return
            head = self._head
            if not head or message["type"] != "http.response.body":
                await super().send(message)
                return
            self._head = b""
            self.transport = prefixed = _Prefixed(transport, head)  # type: ignore[assignment]
            try:
                await super().send(message)
            finally:
                self.transport = transport
                if prefixed.head and not transport.is_closing():
                    transport.write(prefixed.head)  # refused (too long): the head as before

    class HttpToolsHeaderTimeout(_HeaderTimer, HttpToolsProtocol):
        """Uvicorn's httptools protocol, closing connections whose headers take over
        HEADER_TIMEOUT, refusing a request line and headers over MAX_HEADER_BYTES, and
        answering at once what the app answers at once.

        The bytes are counted as they arrive, not in the parser's callbacks: httptools keeps
        a header's value until the header ends, so a header that never ends would grow in it.
        A chunk that completes the headers is not held against them (its body may follow in
        it), so what is held is at most the limit and one read.

        **Answered at once.** Uvicorn makes every request a scope, a task and ASGI messages
        through each middleware: for a bare Starlette route that is about 80 of the 110 µs
        of processor time the server spends on a request (one client; the same answer
        written by this protocol alone takes 30), more than executing a small answer
        (docs/benchmarks.md, "Answered at once"). So a ``POST /graphql`` whose headers
        and whole body arrive in one read is first offered to the app's ``answer_now``
        (``CacheGraphApp.answer_now``), which answers it as its middleware and view would
        when the executor can at once (one small operation run on the event loop), and
        writes nothing otherwise. Anything else -- another route or method, a body still
        arriving, an ``Expect``, pipelined behind a request not yet answered, a write
        buffer full -- and any request the app does not answer at once goes the whole way,
        as before, its body given to the ASGI app as it came.
        """

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._header_timer = None
            self._header_bytes = 0
            self._in_body = False
            #: the parts of a body to answer at once, while it arrives (None: none is)
            self._whole: list[bytes] | None = None
            self._whole_bytes = 0
            self._keep_alive = True
            self._answered = False
            self._answer_now = _answerer(self.app)
            super().connection_made(transport)
            self._wait_for_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._headers_arrived()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if not self._in_body:
                self._header_bytes += len(data)
            super().data_received(data)
            if self._whole is not None:  # its body did not come whole in this read
                parts, self._whole = self._whole, None
                if not self.transport.is_closing():  # else the rest could not be parsed
                    self._hand_over(b"".join(parts))
            if self._answered:
                self._answered = False
                self._idle()
            if (not self._in_body and self._header_bytes > MAX_HEADER_BYTES
                    and not self.transport.is_closing()):  # fmt: skip
                self._headers_arrived()
                self.logger.warning("Invalid HTTP request received.")  # as h11's refusal
                self.send_400_response("Invalid HTTP request received.")

        # httptools' callbacks, as the parser meets a request's parts
        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._header_timer is None:
                self._wait_for_headers()  # a new request on a kept-alive connection

        def on_headers_complete(self) -> None:
            self._headers_arrived()
            self._in_body = True
            if self._at_once():
                self._whole, self._whole_bytes = [], 0
                self._keep_alive = self.parser.should_keep_alive()
                return
            self._start_cycle()

        def on_body(self, body: bytes) -> None:
            if self._whole is None:
                super().on_body(body)
                return
            self._whole.append(body)
            self._whole_bytes += len(body)
            if self._whole_bytes > AT_ONCE_BODY_BYTES:
                parts, self._whole = self._whole, None
                self._hand_over(b"".join(parts))

        def on_message_complete(self) -> None:
            self._in_body = False
            self._header_bytes = 0
            if self._whole is None:
                super().on_message_complete()
                return
            body = b"".join(self._whole)
            self._whole = None
            try:
                answered = self._answer_now(self.headers, body)
            except Exception:  # the app's fault, before it answered: the whole way
                self.logger.exception("answering a request at once failed")
                answered = None
            if answered is None:
                self._hand_over(body)
                super().on_message_complete()  # the body complete
                return
            self._write(*answered)

        def _at_once(self) -> bool:
            """Whether the request may be answered at once (its headers just parsed)."""
            return (
                self._answer_now is not None
                and self.url == b"/graphql"
                and self.parser.get_method() == b"POST"
                and self.parser.get_http_version() == "1.1"
                and not self.expect_100_continue
                and not self.parser.should_upgrade()
                and (self.cycle is None or self.cycle.response_complete)
                and self.limit_concurrency is None
                and not self.flow.write_paused
            )

        def _start_cycle(self) -> None:
            """Uvicorn's handling of complete headers: the request's cycle, and its task."""
            before = self.cycle
            super().on_headers_complete()
            if self.cycle is not before:  # a request's cycle, not yet run: one write each
                self.cycle.__class__ = OneWriteCycle

        def _hand_over(self, body: bytes) -> None:
            """The request, its body so far, given to the ASGI app as Uvicorn gives it."""
            self._start_cycle()
            if body:
                self.cycle.body = body
                self.cycle.message_event.set()

        def _write(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
            """An answer written as Uvicorn's cycle writes it (``OneWriteCycle``): head and body
            in one write, Uvicorn's own headers first, the connection closed after when the
            request asked."""
            content = [STATUS_LINE[status]]
            for name, value in (*self.server_state.default_headers, *headers):
                content += [name, b": ", value, b"\r\n"]
            if not self._keep_alive:
                content.append(b"connection: close\r\n")
            content += [b"\r\n", body]
            if self.access_log:
                self.access_logger.info(
                    '%s - "%s %s HTTP/%s" %d', get_client_addr(self.scope), "POST", "/graphql",
                    "1.1", status,
                )  # fmt: skip
            self.transport.write(b"".join(content))
            self.server_state.total_requests += 1
            if self._keep_alive:
                self._answered = True  # the keep-alive timer, once this read is parsed
            else:
                self.transport.close()

        def _idle(self) -> None:
            """After answers given at once: the keep-alive timer, as Uvicorn sets it once a
            response is complete, unless a request is still being answered."""
            busy = self.cycle is not None and not self.cycle.response_complete
            if busy or self.transport.is_closing() or self.timeout_keep_alive_task is not None:
                return
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )

        def _waiting(self) -> bool:
            return True  # the timer runs only until the headers are complete


def _answerer(app: Any) -> Any:
    """The ``answer_now`` of the app Uvicorn serves, under its own wrappers; None when the
    app has none."""
    for _ in range(8):
        found = getattr(app, "answer_now", None)
        if found is not None or getattr(app, "app", None) is None:
            return found
        app = app.app
    return None


def raise_open_file_limit() -> tuple[int, int]:
    """Raise this process's soft limit on open files to its hard limit (each connection is
    one): the soft limit is often 1,024 where the hard one is far higher. (soft, hard) after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2**20 if hard == resource.RLIM_INFINITY else hard
    if soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)
