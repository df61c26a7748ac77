"""Request ids, JSON log lines and Prometheus metrics, and the middleware that ties them.

Every request gets an id (the client's ``X-Request-ID`` when it is sane), which
comes back in the response header, in every log line the request causes, and
in the message of any error the server masks.
"""

from __future__ import annotations

import asyncio
import bisect
import contextvars
import gc
import itertools
import json
import logging
import math
import os
import re
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import anyio
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from starlette.responses import Response

from cachegraph import server
from cachegraph.graph.bounded import BoundedCache

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

_CLIENT_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
ROUTES = ("/graphql", "/healthz", "/readyz", "/metrics", "/admin/reload", "/")

log = logging.getLogger("cachegraph.http")


def stamp_request_ids() -> None:
    """Give every log record the id of the request it was logged in (None outside one)."""
    make = logging.getLogRecordFactory()
    if getattr(make, "stamps_request_ids", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        record.request_id = request_id.get()
        return record

    factory.stamps_request_ids = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, request id, extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if rid := getattr(record, "request_id", None):
            entry["request_id"] = rid
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


JsonFormatter.converter = time.gmtime


#: Bytes of log lines waiting for the writer; past it, lines are dropped (and counted).
LOG_QUEUE_BYTES = 4 * 2**20
#: A line longer than this is cut (a traceback of a deep recursion can be megabytes).
LOG_LINE_BYTES = 64 * 2**10


class QueuedHandler(logging.Handler):
    """Log lines formatted by the caller, written to a file descriptor by a thread of their own.

    Writing to stderr blocks when nobody reads it (a full pipe, a stalled log collector):
    written by the thread that logs, every request would wait, ``/healthz`` too. Here a
    request only appends its line to a queue bounded by bytes; when the queue is full the
    line is dropped and counted (``cachegraph_log_lines_dropped_total`` in ``/metrics``),
    and the writer thread alone waits for the reader. At exit, lines still queued get
    ``FLUSH_SECONDS`` to be written, no more: a stuck reader cannot hold a shutdown.
    """

    FLUSH_SECONDS = 1.0

    def __init__(self, fd: int | None = None, capacity: int = LOG_QUEUE_BYTES) -> None:
        super().__init__()
        self.fd = sys.stderr.fileno() if fd is None else fd
        self.capacity = capacity
        self.dropped = 0
        self.queued = 0  # bytes waiting
        self._lines: deque[bytes] = deque()
        self._ready = threading.Condition(threading.Lock())
        self._closed = False
        self._writer = threading.Thread(target=self._write, name="cachegraph-log", daemon=True)
        self._writer.start()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record).encode("utf-8", "backslashreplace")
        except Exception:
            self.dropped += 1
            return
        if len(line) > LOG_LINE_BYTES:
            line = line[: LOG_LINE_BYTES - 20] + b" ... (line cut)"
        line += b"\n"
        with self._ready:
            if self._closed or self.queued + len(line) > self.capacity:
                self.dropped += 1
                return
            self._lines.append(line)
            self.queued += len(line)
            self._ready.notify()

    def _write(self) -> None:
        while True:
            with self._ready:
                while not self._lines and not self._closed:
                    self._ready.wait()
                if not self._lines:
                    return
                chunk = b"".join(self._lines)
                self._lines.clear()
            view = memoryview(chunk)
            try:
                while view:  # blocks here, in this thread only, while nobody reads
                    view = view[os.write(self.fd, view) :]
            except OSError:
                pass  # a closed stderr: the lines are lost, the server goes on
            with self._ready:
                self.queued -= len(chunk)
                self._ready.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout``, by default FLUSH_SECONDS) until every line is written."""
        give = self.FLUSH_SECONDS if timeout is None else timeout
        deadline = time.monotonic() + give
        with self._ready:
            while self.queued and (left := deadline - time.monotonic()) > 0:
                self._ready.wait(left)
            return not self.queued

    def close(self) -> None:
        self.flush()
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        super().close()


def dropped_log_lines() -> int:
    """Lines the root logger's queued handlers dropped since they were made."""
    return sum(h.dropped for h in logging.getLogger().handlers if isinstance(h, QueuedHandler))


def configure_logging(level: str = "info", form: str = "json") -> None:
    """Send every logger (ours and Uvicorn's) to stderr in one format, never blocking."""
    handler = QueuedHandler()
    if form == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in root.handlers:
        if isinstance(old, QueuedHandler):
            old.close()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


class _DroppedLines:
    """``cachegraph_log_lines_dropped_total``, read from the handlers when scraped."""

    def collect(self) -> list[CounterMetricFamily]:
        return [
            CounterMetricFamily(
                "cachegraph_log_lines_dropped",
                "log lines dropped because the log's reader fell behind (the queue was full)",
                value=dropped_log_lines(),
            )
        ]


class _CollectorPauses:
    """``cachegraph_gc_pause_seconds``: how long each run of Python's cyclic garbage collector
    held the interpreter, by generation. Nothing else answers while it runs (the event loop
    included), and a full collection's time grows with every object alive in every thread.

    One per process (``gc.callbacks`` is the interpreter's: ``COLLECTOR_PAUSES``), read by
    every app's registry when scraped.
    """

    BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

    def __init__(self) -> None:
        self.counts = [[0] * (len(self.BUCKETS) + 1) for _ in range(3)]
        self.sums = [0.0, 0.0, 0.0]
        self._started = 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict[str, int]) -> None:
        now = time.perf_counter()
        if phase == "start":
            self._started = now
            return
        spent, generation = now - self._started, info["generation"]
        self.counts[generation][bisect.bisect_left(self.BUCKETS, spent)] += 1
        self.sums[generation] += spent

    def collect(self) -> list[HistogramMetricFamily]:
        family = HistogramMetricFamily(
            "cachegraph_gc_pause_seconds",
            "time each run of the cyclic garbage collector held the interpreter",
            labels=["generation"],
        )
        bounds = [*map(str, self.BUCKETS), "+Inf"]
        for generation, counts in enumerate(self.counts):
            running = list(itertools.accumulate(counts))
            family.add_metric([str(generation)], list(zip(bounds, running, strict=True)),
                              self.sums[generation])  # fmt: skip
        return [family]


COLLECTOR_PAUSES = _CollectorPauses()


class _RemoteMirrors:
    """Per remote mirror, read from its ``MirrorWatch`` (``graph.sources.remote``) when
    scraped: what its checks took and met since the server started."""

    def __init__(self) -> None:
        #: name -> MirrorWatch: the server's, set once it has one
        self.watches: Mapping[str, Any] = {}

    def collect(self) -> list:
        now, labels = time.time(), ["mirror"]
        seconds = GaugeMetricFamily(
            "cachegraph_mirror_fetch_seconds",
            "seconds the last check of a remote mirror took (its fetch, if it changed)",
            labels=labels,
        )
        since = GaugeMetricFamily(
            "cachegraph_mirror_seconds_since_success",
            "seconds since the last successful check of a remote mirror (+Inf: none since "
            "the server started)",
            labels=labels,
        )
        stale = GaugeMetricFamily(
            "cachegraph_mirror_stale",
            "1 when a remote mirror's last check failed, or the load of its new index was "
            "refused: its last good data is served",
            labels=labels,
        )
        fetched = CounterMetricFamily(
            "cachegraph_mirror_fetched_bytes",
            "bytes fetched from a remote mirror since the server started",
            labels=labels,
        )
        failures = CounterMetricFamily(
            "cachegraph_mirror_fetch_failures",
            "checks of a remote mirror that failed since the server started",
            labels=labels,
        )
        for name, w in list(self.watches.items()):
            seconds.add_metric([name], w.seconds)
            since.add_metric([name], now - w.last_success if w.last_success else math.inf)
            stale.add_metric([name], 1 if w.stale else 0)
            fetched.add_metric([name], w.fetched_bytes)
            failures.add_metric([name], w.failures)
        return [seconds, since, stale, fetched, failures]


class Metrics:
    """The server's metrics, in a registry of its own (one per app)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._children: dict[tuple, Any] = {}
        r = self.registry
        r.register(_DroppedLines())
        r.register(COLLECTOR_PAUSES)
        self.requests = Counter(
            "cachegraph_requests", "HTTP requests answered", ["route", "status"], registry=r
        )
        self.latency = Histogram(
            "cachegraph_request_duration_seconds",
            "time to answer a request",
            ["route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=r,
        )
        self.errors = Counter(
            "cachegraph_graphql_errors", "GraphQL errors returned", ["kind"], registry=r
        )
        self.rejections = Counter(
            "cachegraph_rejections", "requests refused by a limit", ["limit"], registry=r
        )
        self.cached = Counter(
            "cachegraph_response_cache",
            "operations answered from the response cache (hit) or executed (miss)",
            ["result"],
            registry=r,
        )
        self.executed = Counter(
            "cachegraph_executions",
            "operations executed, by path: direct (a compiled plan) or standard (graphql-core)",
            ["path"],
            registry=r,
        )
        self.graph_size = Gauge(
            "cachegraph_graph_objects", "objects in the graph being served", ["kind"], registry=r
        )
        self.reload_time = Gauge(
            "cachegraph_last_reload_timestamp_seconds",
            "when the last load or reload finished (Unix time)",
            registry=r,
        )
        self.reload_ok = Gauge(
            "cachegraph_last_reload_success", "1 when the last load or reload succeeded", registry=r
        )
        self.reloads = Counter(
            "cachegraph_reloads", "loads and reloads by result", ["result"], registry=r
        )
        self.in_flight = Gauge(
            "cachegraph_body_bytes_in_flight",
            "bytes of request bodies held by the requests being answered",
            registry=r,
        )
        self.cache_bytes = Gauge(
            "cachegraph_cache_bytes", "bytes each cache holds (estimated)", ["cache"], registry=r
        )
        self.http_stack = Gauge(
            "cachegraph_http_stack_info",
            "the HTTP parser and event loop `cachegraph serve` runs on (h11 and asyncio: a "
            "wheel of httptools or uvloop is missing)",
            ["parser", "loop"],
            registry=r,
        )
        self.http_stack.labels(*server.stack()).set(1)
        self.at_once = Counter(
            "cachegraph_http_answered_at_once",
            "POST /graphql requests the server's protocol answered at once, without making "
            "them ASGI messages (one small operation run on the event loop; also in requests)",
            registry=r,
        )
        self.remote_mirrors = _RemoteMirrors()
        r.register(self.remote_mirrors)
        self.cache_budget = Gauge(
            "cachegraph_cache_budget_bytes", "bytes each cache may hold", ["cache"], registry=r
        )
        self.cache_entries = Gauge(
            "cachegraph_cache_entries", "entries each cache holds", ["cache"], registry=r
        )
        self.cache_evictions = Gauge(
            "cachegraph_cache_evictions",
            "entries each cache dropped to stay within its budget (since it was made: the "
            "graph's answers are a new cache after each reload)",
            ["cache"],
            registry=r,
        )

    def child(self, metric: Any, *labels: str) -> Any:
        """``metric.labels(*labels)``, kept: ``labels`` takes a lock and builds its key on
        every call (3% of a small answer's time for the three a request made). As many are
        kept as the registry keeps children: the label values are the server's own (routes
        known or "other", statuses, paths, cache results), never a client's text."""
        key = (id(metric), labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*labels)
        return found

    def caches(self, caches: Mapping[str, BoundedCache]) -> None:
        """Show each cache's bytes, budget, entries and evictions."""
        for name, cache in caches.items():
            self.cache_bytes.labels(name).set(cache.bytes)
            self.cache_budget.labels(name).set(cache.budget)
            self.cache_entries.labels(name).set(len(cache))
            self.cache_evictions.labels(name).set(cache.evictions)


def _header(scope: dict, name: bytes) -> str | None:
    return _named(scope.get("headers", ()), name)


def _named(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


async def send_json(send: Callable, status: int, body: dict, headers: list | None = None) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def error_body(message: str, **extensions: Any) -> dict:
    error: dict[str, Any] = {"message": message}
    if extensions:
        error["extensions"] = extensions
    return {"errors": [error]}


class _BodyRefused(Exception):
    """A request body over one of its limits: the HTTP status, the limit and what happened."""

    def __init__(self, status: int, limit: str, value: float, what: str) -> None:
        shown = int(value) if value == int(value) else value  # 1048576, 30, 0.5
        super().__init__(f"{what} (limit {limit} = {shown})")
        self.status, self.limit = status, limit


_ids: tuple[str, Iterator[int]] | None = None


def _new_ids() -> None:
    global _ids
    _ids = None  # drawn again on first use: a forked worker must not repeat its parent's


os.register_at_fork(after_in_child=_new_ids)


def new_request_id() -> str:
    """16 hex digits naming a request: 8 random ones drawn once per process, then a count.
    Unique across processes and replicas as ``uuid4`` was, without a system call for 16
    random bytes on every request (3% of a small answer's time), nor one asking the
    process's id (a fork draws new digits).

    >>> a, b = new_request_id(), new_request_id()
    >>> len(a), a[:8] == b[:8], int(b[8:], 16) - int(a[8:], 16)
    (16, True, 1)
    """
    global _ids
    if _ids is None:
        _ids = (uuid.uuid4().hex[:8], itertools.count())
    return f"{_ids[0]}{next(_ids[1]) & 0xFFFFFFFF:08x}"


class BodyDeadlines:
    """Requests waiting for their body's next part, each until the time its body is due, with
    one timer for all: a sweep every ``period`` seconds while any waits, cancelling those
    past their time. A timer of each request's own (anyio's cancel scope around each
    ``receive``) cost 8-9 µs a request, 5-8% of a small answer's time in the app (issue 43),
    for a body nearly always there already. A body is refused at most ``period`` late."""

    def __init__(self, period: float) -> None:
        self.period = period
        self.waiting: dict[asyncio.Task, float] = {}
        self.late: set[asyncio.Task] = set()
        #: the loop whose sweep runs (None: none runs); an app a test client served on a
        #: loop now closed gets a sweep on the next loop that serves it
        self._swept: asyncio.AbstractEventLoop | None = None

    async def receive(self, receive: Callable, due: float) -> dict | None:
        """``receive()``'s message; None when it did not come by ``due`` (monotonic)."""
        try:
            task = asyncio.current_task()
        except RuntimeError:  # not asyncio's loop: a cancel scope of its own
            task = None
        if task is None:
            with anyio.move_on_after(due - time.monotonic()):
                return await receive()
            return None
        self.waiting[task] = due
        loop = task.get_loop()
        if self._swept is not loop:
            self._swept = loop
            loop.call_later(self.period, self._sweep, loop)
        try:
            return await receive()
        except asyncio.CancelledError:
            # The sweep cancels a task only while it waits here: the error comes out here.
            if task not in self.late:
                raise
            self.late.discard(task)
            task.uncancel()
            return None
        finally:
            del self.waiting[task]

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        now, waits = time.monotonic(), False
        for task, due in list(self.waiting.items()):
            if task.get_loop() is not loop:  # another loop's task: its own sweep's
                continue
            waits = True
            if due <= now and task not in self.late:
                self.late.add(task)
                task.cancel()
        if waits:
            loop.call_later(self.period, self._sweep, loop)
        elif self._swept is loop:
            self._swept = None


class RequestMiddleware:
    """Request id, body size and time limits, access log, metrics, and a JSON 500 for any crash."""

    def __init__(
        self,
        app: Callable,
        metrics: Metrics,
        max_body_bytes: int,
        body_timeout: float = 30.0,
        body_bytes_in_flight: int | None = None,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        #: bytes of request bodies all requests being answered may hold at once (a body is
        #: held, and parsed, until its answer is sent); None: no limit
        self.body_bytes_in_flight = body_bytes_in_flight
        #: bytes of bodies held now (counted on the event loop: no lock needed)
        self.in_flight = 0
        self.deadlines = BodyDeadlines(min(0.1, body_timeout / 10))
        metrics.in_flight.set_function(lambda: self.in_flight)

    def _too_large(self) -> _BodyRefused:
        n = self.max_body_bytes
        return _BodyRefused(413, "max_body_bytes", n, f"the request body is larger than {n} bytes")

    def _too_many(self) -> _BodyRefused:
        n = self.body_bytes_in_flight
        return _BodyRefused(
            503,
            "body_bytes_in_flight",
            n,
            f"the server holds {n} bytes of request bodies already: send the body again later",
        )

    def _admits(self, more: int) -> bool:
        """Whether ``more`` bytes of body fit beside those held (a lone body always does)."""
        budget = self.body_bytes_in_flight
        return budget is None or self.in_flight == 0 or self.in_flight + more <= budget

    def _late(self) -> _BodyRefused:
        s = self.body_timeout
        return _BodyRefused(
            408, "body_timeout", s, f"the request body did not arrive within {s:g} s"
        )

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _request_id(_header(scope, b"x-request-id"))
        token = request_id.set(rid)
        scope.setdefault("state", {})["request_id"] = rid
        started = time.perf_counter()
        status = 500
        response_started = False

        async def send_with_id(message: dict) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status, response_started = message["status"], True
                message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        received = 0
        held = 0  # bytes of this body counted in self.in_flight
        body_done = False
        deadline = time.monotonic() + self.body_timeout

        async def limited_receive() -> dict:
            nonlocal received, body_done, held
            if body_done:  # after the body, receive() waits for a disconnect: no deadline
                return await receive()
            # A client that holds a request open without sending its body holds memory:
            # the whole body must arrive within body_timeout of the request's start.
            message = await self.deadlines.receive(receive, deadline)
            if message is None:
                raise self._late()
            received += len(message.get("body", b""))
            if received > self.max_body_bytes:
                raise self._too_large()
            if received > held:  # more than its Content-Length reserved (or none given)
                if not self._admits(received - held):
                    raise self._too_many()
                self.in_flight += received - held
                held = received
            body_done = message["type"] != "http.request" or not message.get("more_body")
            return message

        try:
            length = _header(scope, b"content-length")
            if length and length.isdigit():
                if int(length) > self.max_body_bytes:
                    raise self._too_large()
                # Refused before a byte of it is read when the bodies held are too many.
                if not self._admits(int(length)):
                    raise self._too_many()
                held = int(length)
                self.in_flight += held
            await self.app(scope, limited_receive, send_with_id)
        except _BodyRefused as refused:
            self.metrics.rejections.labels(refused.limit).inc()
            if not response_started:
                body = error_body(str(refused), code="LIMIT_EXCEEDED", limit=refused.limit)
                retry = [(b"retry-after", b"1")] if refused.status == 503 else []
                await send_json(send_with_id, refused.status, body, retry)
        except Exception:
            log.exception("unexpected error answering %s %s", scope["method"], scope["path"])
            if not response_started:
                await send_json(send_with_id, 500, _crashed(rid))
        finally:
            self.in_flight -= held
            self._observed(scope["method"], scope["path"], status, started)
            request_id.reset(token)

    def takes(self, length: int) -> bool:
        """Whether a body of ``length`` bytes is within the limits now (``__call__`` refuses
        one that is not, saying which)."""
        return length <= self.max_body_bytes and self._admits(length)

    def answer_now(
        self, method: str, path: str, headers: list[tuple[bytes, bytes]], length: int,
        answer: Callable[[], Response],
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:  # fmt: skip
        """What ``__call__`` sends for a request whose whole body (``length`` bytes, which
        it ``takes``) is in hand, when the app below it answers at once: ``answer()``, run
        under the request's id. Status, headers and body."""
        rid = _request_id(_named(headers, b"x-request-id"))
        # Set in the event loop's own context, not a task's copy of it: reset before
        # anything else runs there, or every task made after would see this request's id.
        token = request_id.set(rid)
        try:
            started = time.perf_counter()
            self.in_flight += length  # held while answered, beside the bodies of the others
            try:
                response = answer()
            except Exception:
                log.exception("unexpected error answering %s %s", method, path)
                body = json.dumps(_crashed(rid)).encode()
                response = Response(body, 500, media_type="application/json")
            finally:
                self.in_flight -= length
            self._observed(method, path, response.status_code, started)
            self.metrics.at_once.inc()
        finally:
            request_id.reset(token)
        return (
            response.status_code,
            [*response.raw_headers, (b"x-request-id", rid.encode())],
            response.body,
        )

    def _observed(self, method: str, path: str, status: int, started: float) -> None:
        """A request answered, in the metrics and the log."""
        seconds = time.perf_counter() - started
        route = path if path in ROUTES else "other"
        metrics = self.metrics
        metrics.child(metrics.requests, route, str(status)).inc()
        metrics.child(metrics.latency, route).observe(seconds)
        log.info(
            "%s %s %s",
            method,
            path,
            status,
            extra={"fields": {"status": status, "ms": round(seconds * 1000, 2)}},
        )


def _request_id(given: str | None) -> str:
    """The client's ``X-Request-Id`` when it is a usable one, else a new id."""
    return given if given and _CLIENT_ID.fullmatch(given) else new_request_id()


def _crashed(rid: str) -> dict:
    """The body of a 500: no detail of the fault (the log has it), the request's id."""
    message = f"Internal server error (request id {rid})."
    return error_body(message, code="INTERNAL_SERVER_ERROR", requestId=rid)
