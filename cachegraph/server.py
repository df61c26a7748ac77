"""Uvicorn's HTTP/1.1 protocol (h11) with a time limit on a request's headers.

Uvicorn closes a kept-alive connection that stays idle ``timeout_keep_alive`` seconds
after a response (our ``keep_alive_timeout`` setting), but it has no limit at all on a
connection that never finishes its headers: neither the first request's (a client that
connects and sends nothing, or a byte now and then), nor those of a later request once
its first bytes arrived. 2,000 such connections stayed open past 60 s, and at 1,024 open
files they made the server refuse everyone, ``/healthz`` too.

Why a subclass of Uvicorn's h11 protocol rather than another server: Uvicorn is what
the server runs and is deployed with (the Dockerfile, the compose file and the manifests
start ``cachegraph serve``), its h11 protocol is a small asyncio ``Protocol`` with a
keep-alive timer already, and the missing timer is a few lines beside it. Hypercorn has
a header timeout of its own, but moving to it would change every deployment to close
one gap. h11 (pure Python, always installed with Uvicorn) rather than httptools: the
same protocol everywhere, and ``h11_max_incomplete_event_size`` bounds a header's bytes
(Uvicorn's default, 16 kB), so a header is bounded in both time and size.

The timer starts when a connection opens, and again when the first bytes of a later
request arrive on it; it stops when the request's headers are complete (its body has
``body_timeout`` of its own, in ``observe.RequestMiddleware``). At the limit the server
answers ``408 Request Timeout`` and closes the connection. It does not restart on each
byte: a client that trickles its headers a byte at a time is closed at the same limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

#: Seconds a client may take to send a request's headers; the server sets it from its
#: ``header_timeout`` setting at start (each worker process too: ``app_from_environment``).
HEADER_TIMEOUT = 10.0
PROTOCOL = "cachegraph.server:HeaderTimeoutProtocol"

_MESSAGE = b'{"errors":[{"message":"the request headers did not arrive in time"}]}'
_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_MESSAGE), _MESSAGE)
)


class HeaderTimeoutProtocol(H11Protocol):
    """Uvicorn's h11 protocol, closing connections whose headers take over HEADER_TIMEOUT."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_timer: asyncio.TimerHandle | None = None
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

    def _wait_for_headers(self) -> None:
        self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._headers_late)

    def _headers_arrived(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.logger.info("closed a connection whose headers took over %g s", HEADER_TIMEOUT)
            with contextlib.suppress(OSError):
                self.transport.write(_TIMED_OUT)
            self.transport.close()


def raise_open_file_limit() -> tuple[int, int]:
    """Raise this process's soft limit on open files to its hard limit (each connection is
    one): the soft limit is often 1,024 where the hard one is far higher. (soft, hard) after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2**20 if hard == resource.RLIM_INFINITY else hard
    if soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)
