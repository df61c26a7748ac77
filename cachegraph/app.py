"""The Starlette app: /graphql, GraphiQL's assets, health, readiness, metrics and reload."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import logging
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from types import FrameType

import strawberry
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route

from cachegraph.graph import CacheGraph, deadline
from cachegraph.schema import build_schema

from . import changes
from .assets import Assets
from .execution import COLLECTOR_THRESHOLDS, SWITCH_SECONDS, Executor, schema_extensions
from .execution.tracing import Tracing
from .graphiql import STATIC
from .observe import Metrics, RequestMiddleware, error_body, stamp_request_ids
from .settings import Settings
from .state import DataSources, NoData, Outcome, State
from .ui import ui_page
from .view import GraphQLView

log = logging.getLogger("cachegraph")


def create_app(
    graph: CacheGraph | None = None,
    sources: DataSources | None = None,
    settings: Settings | None = None,
) -> Starlette:
    """The app serving ``graph``, or the data of ``sources`` (by default the settings' data,
    or the bundled seeds), configured by ``settings`` (by default the environment's)."""
    settings = settings or Settings.from_env()
    stamp_request_ids()
    if sources is None:
        sources = settings.data_sources()
    state = State(sources=sources, graph=graph)
    metrics = Metrics()
    metrics.remote_mirrors.watches = sources.watches
    token = settings.token()
    # None unless OTEL_EXPORTER_OTLP_ENDPOINT is set
    tracing = Tracing.from_env(min_ms=settings.trace_min_ms)

    def observe(outcome: Outcome) -> None:
        metrics.reloads.labels("ok" if outcome.ok else "failed").inc()
        metrics.reload_time.set(outcome.finished)
        metrics.reload_ok.set(1 if outcome.ok else 0)
        for kind, count in state.size().items():
            metrics.graph_size.labels(kind.removesuffix("_count")).set(count)
        if state.graph is not None:
            state.graph.kept_answers.budget = settings.answer_cache
            executor.versions.warm(state.graph)  # the data version of the ETags

    async def reload() -> Outcome:
        outcome = await state.reload()
        observe(outcome)
        return outcome

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # The event loop waits for the interpreter lock at each turn: see SWITCH_SECONDS.
        sys.setswitchinterval(SWITCH_SECONDS)
        gc.set_threshold(*COLLECTOR_THRESHOLDS)
        if state.graph is None:
            undo = _stopping_the_load()
            log.info("loading the data (Ctrl-C or SIGTERM stops the load)")
            try:
                await state.load()
            except NoData as exc:
                log.error("no data loaded, stopping: %s", exc)
                server = getattr(app.state, "server", None)
                if server is None:
                    raise  # an embedding app (a test client) is told so
                # ``cachegraph serve`` stops as Ctrl-C stops it, having said why in the line
                # above: a failed startup would print the lifespan's traceback as well.
                state.last = Outcome(False, time.time(), f"no data loaded: {exc}")
                server.should_exit = True
            except deadline.Stopped:  # Ctrl-C while loading: the server is ending anyway
                log.warning("stopped while loading the data: the server is ending")
                state.last = Outcome(False, 0.0, "stopped while loading")
            finally:
                undo()
        else:
            state.last = Outcome(True, 0.0, "graph given")
        observe(state.last)
        hangup = _on_hangup(lambda: asyncio.ensure_future(reload()))
        refreshing = None
        if state.sources.remote() and state.graph is not None:
            refreshing = asyncio.ensure_future(
                _refreshing(state, settings.refresh, settings.remote_sizes, observe)
            )
        try:
            yield
        finally:
            hangup()
            if refreshing is not None:
                refreshing.cancel()
            if tracing is not None:
                tracing.shutdown()

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "alive"})

    async def readyz(request: Request) -> Response:
        if state.graph is None:
            return JSONResponse({"status": "loading"}, status_code=503)
        if not state.graph.store.n:  # an empty data folder: nothing to answer with
            status = 503
            body = {"status": "empty", "reason": "no specs loaded", **state.size()}
        else:
            status = 200
            body = {"status": "ready", **state.size()}
        if state.last is not None:
            # Anyone may ask: counts, not the data's paths (POST /admin/reload lists them).
            body["last_load"] = state.last.counted()
        return JSONResponse(body, status_code=status)

    async def metrics_page(request: Request) -> Response:
        caches = executor.cache_sizes()
        if state.graph is not None:
            caches["answers"] = state.graph.kept_answers
        metrics.caches(caches)
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    async def admin_reload(request: Request) -> Response:
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return JSONResponse(
                error_body("a valid bearer token is required"),
                status_code=401,
                headers={"www-authenticate": "Bearer"},
            )
        outcome = await reload()
        return JSONResponse(outcome.to_dict(), status_code=200 if outcome.ok else 422)

    async def home(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        if settings.ui and "text/html" in request.headers.get("accept", ""):
            return HTMLResponse(ui_page(root))
        return RedirectResponse(root.rstrip("/") + "/graphql")

    async def explorer(request: Request) -> Response:
        if not settings.ui:
            return JSONResponse(error_body("the web explorer is turned off (--no-ui)"), 404)
        return HTMLResponse(ui_page(request.scope.get("root_path", "")))

    limits = settings.limits()
    executor = Executor(
        served_schema(settings, traced=tracing is not None),
        limits=limits,
        timeout=settings.timeout,
        max_batch=settings.max_batch,
        budgets=settings.budgets(),
        metrics=metrics,
        threads=settings.worker_threads(),
        validators=settings.validators(),
        documents=settings.documents(metrics.registry),
        tracing=tracing,
    )
    view = GraphQLView(executor, state, graphiql=settings.graphiql)
    routes = [
        Route("/", home),
        Route("/ui", explorer),
        Route("/ui/{view:path}", explorer),
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics_page),
        Route("/graphql", view),
        Mount("/static", Assets(STATIC), name="static"),
    ]
    if token:
        routes.append(Route("/admin/reload", admin_reload, methods=["POST"]))
    changes.install(routes, metrics.registry, state)  # feeds and the change log's metrics
    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(settings.cors_origins),
        allow_methods=["GET", "POST"],
        allow_headers=["content-type", "authorization", "x-request-id"],
        expose_headers=["x-request-id"],
    )
    app.add_middleware(
        RequestMiddleware,
        metrics=metrics,
        max_body_bytes=settings.max_body_bytes,
        body_timeout=settings.body_timeout,
        body_bytes_in_flight=settings.body_bytes_in_flight,
    )
    app.state.cache = state
    return app


def served_schema(settings: Settings, *, traced: bool = False) -> strawberry.Schema:
    """The schema the settings ask for, ready for an Executor under their limits (``traced``:
    one with tracing)."""
    extensions = schema_extensions(settings.limits(), traced=traced)
    if settings.federation:
        from cachegraph.schema.federation import build_federated_schema

        return build_federated_schema(extensions)
    return build_schema(extensions)


def app_from_environment() -> Starlette:
    """The app as configured by CACHEGRAPH_* variables (for Uvicorn's --factory, workers)."""
    from . import server
    from .observe import configure_logging

    settings = Settings.from_env()
    configure_logging(settings.log_level, settings.log_format)  # a worker is a new process
    server.HEADER_TIMEOUT = settings.header_timeout
    return create_app(settings=settings)


async def _refreshing(
    state: State, period: float, sizes: bool, observe: Callable[[Outcome], None]
) -> None:
    """The sizes the remote mirrors' copies lack (``sizes``), fetched once served (loaded
    again when any came); then, every ``period`` seconds (0: never), a check of the remote
    mirrors, loading again when one changed. A check that fails keeps that mirror's last good
    data (marked stale) and is said in its ``MirrorWatch``; nothing here ever ends the
    server."""

    async def nothing() -> None:
        return None

    def scheduled(period: float) -> float:
        # said before the step: the status view must not read "refreshing is off" while a
        # first step (the sizes, a second process) runs
        due = time.time() + period
        for watch in list(state.sources.watches.values()):
            watch.next_check = due
        return due

    step = state.sized if sizes else nothing
    due = scheduled(period) if period > 0 else 0.0
    while True:
        try:
            outcome = await step()
            if outcome is not None:
                observe(outcome)
                if sizes and step == state.refresh:  # a changed index: its specs' sizes next
                    outcome = await state.sized()
                    if outcome is not None:
                        observe(outcome)
        except Exception:
            log.exception("refreshing the remote mirrors failed")
        if period <= 0:
            return
        await asyncio.sleep(max(0.0, due - time.time()))
        due = scheduled(period)  # the check after the one that starts now
        step = state.refresh


def _stopping_the_load() -> Callable[[], object]:
    """While the data loads, SIGINT and SIGTERM also stop the load, then reach the handlers
    they had (Uvicorn's, in every worker): else the load runs to its end, minutes at a
    million specs, before the server can stop. Returns an undo; nothing where this thread
    cannot take signals (a test client's)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def stop(sig: int, frame: FrameType | None) -> None:
        deadline.stop_all()
        handler = before[sig]
        if callable(handler):
            handler(sig, frame)
        elif handler == signal.SIG_DFL:
            signal.signal(sig, signal.SIG_DFL)
            signal.raise_signal(sig)

    for sig in before:
        signal.signal(sig, stop)
    return lambda: [signal.signal(sig, handler) for sig, handler in before.items()]


def _on_hangup(callback: Callable[[], object]) -> Callable[[], object]:
    """Run ``callback`` on SIGHUP where this process can take signals; returns an undo."""
    try:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGHUP, callback)
    except (RuntimeError, ValueError, NotImplementedError, AttributeError):
        # Not the main thread (a test client), or no SIGHUP on this platform.
        return lambda: None
    return lambda: loop.remove_signal_handler(signal.SIGHUP)
