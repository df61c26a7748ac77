"""The Starlette app: /graphql, GraphiQL's assets, health, readiness, metrics and reload."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from types import FrameType

import strawberry
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute, get_route_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cachegraph.graph import CacheGraph, deadline, memory
from cachegraph.schema import build_schema

from . import changes
from .assets import Assets
from .execution import Executor, schema_extensions
from .execution.tracing import Tracing
from .graphiql import STATIC
from .observe import Metrics, RequestMiddleware, error_body, stamp_request_ids
from .settings import Settings
from .state import DataSources, NoData, Outcome, State
from .subscriptions import Subscriptions
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
    return CacheGraphApp(Service(settings, State(sources=sources, graph=graph)))


class Service:
    """What the routes and the lifespan share: the data (``state``), the executor that
    answers over it, the metrics, and the reload that keeps the three in step."""

    def __init__(self, settings: Settings, state: State) -> None:
        self.settings = settings
        self.state = state
        self.metrics = Metrics()
        self.metrics.remote_mirrors.watches = state.sources.watches
        self.token = settings.token()
        # None unless OTEL_EXPORTER_OTLP_ENDPOINT is set
        self.tracing = Tracing.from_env(min_ms=settings.trace_min_ms)
        self.executor = Executor(
            served_schema(settings, traced=self.tracing is not None),
            limits=settings.limits(),
            timeout=settings.timeout,
            max_batch=settings.max_batch,
            budgets=settings.budgets(),
            metrics=self.metrics,
            threads=settings.worker_threads(),
            validators=settings.validators(),
            documents=settings.documents(self.metrics.registry),
            tracing=self.tracing,
            admin_token=self.token,
        )

    def observe(self, outcome: Outcome) -> None:
        """A load's outcome in the metrics, and the new graph's budgets and ETag version."""
        self.metrics.reloads.labels("ok" if outcome.ok else "failed").inc()
        self.metrics.reload_time.set(outcome.finished)
        self.metrics.reload_ok.set(1 if outcome.ok else 0)
        for kind, count in self.state.size().items():
            self.metrics.graph_size.labels(kind.removesuffix("_count")).set(count)
        if self.state.graph is not None:
            self.state.graph.kept_answers.budget = self.settings.answer_cache
            self.executor.versions.warm(self.state.graph)  # the data version of the ETags

    async def reload(self) -> Outcome:
        """Load the data again (the old graph served until the new one is ready)."""
        outcome = await self.state.reload()
        self.observe(outcome)
        return outcome


class Endpoints:
    """The routes' handlers: health, readiness, metrics, reload and the pages."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def routes(self) -> list[BaseRoute]:
        """Every route, /admin/reload only when a token is set."""
        service = self.service
        self.view = view = GraphQLView(
            service.executor, service.state, graphiql=service.settings.graphiql
        )
        routes: list[BaseRoute] = [
            Route("/", self.home),
            Route("/ui", self.explorer),
            Route("/ui/{view:path}", self.explorer),
            Route("/healthz", self.healthz),
            Route("/readyz", self.readyz),
            Route("/metrics", self.metrics),
            Route("/graphql", view),
            Mount("/static", Assets(STATIC), name="static"),
        ]
        if service.token:
            routes.append(Route("/admin/reload", self.admin_reload, methods=["POST"]))
        per_client, registry = service.settings.followers_per_client, service.metrics.registry
        # subscriptions (WebSocket) at /graphql; the change log's feeds, stream and metrics
        subscriptions = Subscriptions(service.executor, service.state, per_client, registry)
        routes.append(WebSocketRoute("/graphql", subscriptions.connect))
        changes.install(routes, registry, service.state, per_client)
        return routes

    async def healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "alive"})

    async def readyz(self, request: Request) -> Response:
        state = self.service.state
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

    async def metrics(self, request: Request) -> Response:
        service = self.service
        caches = service.executor.cache_sizes()
        if service.state.graph is not None:
            caches["answers"] = service.state.graph.kept_answers
        service.metrics.caches(caches)
        return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    async def admin_reload(self, request: Request) -> Response:
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.service.token}".encode()):
            return JSONResponse(
                error_body("a valid bearer token is required"),
                status_code=401,
                headers={"www-authenticate": "Bearer"},
            )
        outcome = await self.service.reload()
        return JSONResponse(outcome.to_dict(), status_code=200 if outcome.ok else 422)

    async def home(self, request: Request) -> Response:
        root = request.scope.get("root_path", "")
        if self.service.settings.ui and "text/html" in request.headers.get("accept", ""):
            return HTMLResponse(ui_page(root))
        return RedirectResponse(root.rstrip("/") + "/graphql")

    async def explorer(self, request: Request) -> Response:
        if not self.service.settings.ui:
            return JSONResponse(error_body("the web explorer is turned off (--no-ui)"), 404)
        return HTMLResponse(ui_page(request.scope.get("root_path", "")))


class Lifespan:
    """The app's life: the data loaded at start (unless a graph was given), SIGHUP and the
    remote mirrors' refresh while it serves, all undone at the end."""

    def __init__(self, service: Service) -> None:
        self.service = service

    @contextlib.asynccontextmanager
    async def __call__(self, app: Starlette) -> AsyncIterator[None]:
        service, state = self.service, self.service.state
        memory.serving()  # the switch interval and the collector's thresholds
        if state.graph is None:
            await self.load(app)
        else:
            state.last = Outcome(True, 0.0, "graph given")
        service.observe(state.last)
        hangup = _on_hangup(lambda: asyncio.ensure_future(service.reload()))
        refreshing = None
        if (state.sources.remote() or state.sources.index_first) and state.graph is not None:
            settings = service.settings
            refreshing = asyncio.ensure_future(
                _refreshing(state, settings.refresh, settings.remote_sizes, service.observe)
            )
        try:
            yield
        finally:
            hangup()
            if refreshing is not None:
                refreshing.cancel()
            if service.tracing is not None:
                service.tracing.shutdown()

    async def load(self, app: Starlette) -> None:
        """The data loaded, Ctrl-C and SIGTERM stopping the load; no data stops the server
        (``cachegraph serve``) or raises (an embedding app)."""
        state = self.service.state
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


class CacheGraphApp(Starlette):
    """The Starlette app composed of a service's routes, middleware and lifespan;
    ``app.state.cache`` is the data it serves (``app.state.server``, when set, the
    Uvicorn server it stops when there is no data)."""

    def __init__(self, service: Service) -> None:
        endpoints = Endpoints(service)
        super().__init__(
            routes=endpoints.routes(),
            middleware=middleware(service.settings, service.metrics),
            lifespan=Lifespan(service),
        )
        self.service = service
        self.state.cache = service.state
        self.graphql = endpoints.view
        #: the middleware of ids, limits and metrics, once the stack is built
        self._requests: RequestMiddleware | None = None

    def build_middleware_stack(self) -> ASGIApp:
        """Starlette's stack, where POST and GET /graphql go from our middleware (ids,
        limits, metrics, CORS) straight to the GraphQL view, not through Starlette's
        exception middleware and router: the view raises none of the HTTP exceptions that
        middleware answers (any other error is RequestMiddleware's masked 500, as before),
        and a route's match is one comparison here. Every other request goes the whole way.
        """
        stack = super().build_middleware_stack()
        above = stack
        while not isinstance(getattr(above, "app", None), ExceptionMiddleware):
            above = above.app  # ServerErrorMiddleware, ours (outermost first), CORS
            if isinstance(above, RequestMiddleware):
                self._requests = above
        above.app = GraphQLFirst(self.graphql, above.app)
        return stack

    def answer_now(
        self, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes] | None:
        """What this app sends for ``POST /graphql`` of ``body`` (whole), worked out at once
        the way the middleware and the view work it out, when the executor answers it at
        once (``Executor.at_once``: one small operation it runs on the event loop, or keeps
        the answer of) and no ``Origin`` asks for CORS: status, headers and body. None,
        nothing done, for any other request: the server then gives it to the app as ASGI
        messages, as every request was.

        Uvicorn's protocol and the ASGI layers cost a small answer more than executing it
        (docs/benchmarks.md, "Answered at once"): the server's protocol asks this first
        (``cachegraph.server``).
        """
        requests = self._requests
        if (
            requests is None
            or not requests.takes(len(body))
            or any(name == b"origin" for name, _ in headers)
        ):
            return None
        answer = self.graphql.at_once(Headers(raw=headers), body)
        if answer is None:
            return None

        def answered() -> Response:
            response = answer()  # as LeanCORS answers a request naming no Origin:
            response.raw_headers = _vary_origin(response.raw_headers)
            return response

        return requests.answer_now("POST", "/graphql", headers, len(body), answered)


class GraphQLFirst:
    """An ASGI app sending HTTP requests for /graphql to ``graphql``, all else to ``rest``
    (GraphQL over WebSocket, at the same path, goes to ``rest``'s router)."""

    def __init__(self, graphql: ASGIApp, rest: ASGIApp) -> None:
        self.graphql, self.rest = graphql, rest

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and get_route_path(scope) == "/graphql":
            await self.graphql(scope, receive, send)
        else:
            await self.rest(scope, receive, send)


def middleware(settings: Settings, metrics: Metrics) -> list[Middleware]:
    """The app's middleware, outermost first: each request counted, bounded and given an
    id, then CORS."""
    return [
        Middleware(
            RequestMiddleware,
            metrics=metrics,
            max_body_bytes=settings.max_body_bytes,
            body_timeout=settings.body_timeout,
            body_bytes_in_flight=settings.body_bytes_in_flight,
        ),
        Middleware(
            LeanCORS,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["content-type", "authorization", "x-request-id"],
            expose_headers=["x-request-id"],
        ),
    ]


class LeanCORS(CORSMiddleware):
    """Starlette's CORS middleware, without its header objects for a request naming no
    ``Origin`` (every request but a browser's from another site), whose answer only gains
    ``Vary: Origin``, set as Starlette sets it: the header objects and the extra send took
    4-5% of a point query's time on the server (issue 43)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or any(name == b"origin" for name, _ in scope["headers"]):
            await super().__call__(scope, receive, send)
            return

        async def varied(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = _vary_origin(message.get("headers", []))
            await send(message)

        await self.app(scope, receive, varied)


def _vary_origin(headers: list) -> list:
    """The headers with ``vary`` holding the values it had and ``Origin``: one header in
    the place of the first, as Starlette's ``MutableHeaders`` writes it."""
    varies = [i for i, (name, _) in enumerate(headers) if name == b"vary"]
    value = b", ".join([*(headers[i][1] for i in varies), b"Origin"])
    if not varies:
        return [*headers, (b"vary", value)]
    kept = [h for i, h in enumerate(headers) if i not in varies[1:]]
    kept[varies[0]] = (b"vary", value)
    return kept


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
    """What the load served left for later, once served: the sizes the remote mirrors' copies
    lack (``sizes``: fetched, loaded again when any came) and the index-first mirrors' spec
    manifests; then, every ``period`` seconds (0: never; none without a remote mirror), a
    check of the remote mirrors, loading again when one changed. A check that fails keeps
    that mirror's last good data (marked stale) and is said in its ``MirrorWatch``; nothing
    here ever ends the server."""

    def scheduled(period: float) -> float:
        # said before the step: the status view must not read "refreshing is off" while a
        # first step (the sizes, a second process) runs
        due = time.time() + period
        for watch in list(state.sources.watches.values()):
            watch.next_check = due
        return due

    if not state.sources.remote():
        period = 0.0
    step = functools.partial(state.sized, sizes)
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
