"""The Starlette app: /graphql (POST, GET, GraphiQL), /healthz; data loaded in the lifespan."""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
from cross_web import HTTPException
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from strawberry.asgi import GraphQL

from graph import CacheGraph, IndexSource, LoadReport, load
from graph.queries import stats
from schema import schema

from .progress import ProgressLine
from .sources import default_data

log = logging.getLogger("cachegraph")


@dataclass
class DataSources:
    """Where the server's data comes from: page/spec-file paths and stack indices."""

    paths: list[str] = field(default_factory=list)
    indices: list[IndexSource] = field(default_factory=list)

    def resolved_paths(self) -> list[str]:
        return self.paths or ([] if self.indices else [str(default_data())])


@dataclass
class State:
    """The graph being served. Replaced whole, never changed in place."""

    graph: CacheGraph | None = None
    report: LoadReport | None = None


def load_sources(sources: DataSources) -> tuple[CacheGraph, LoadReport]:
    progress = ProgressLine()
    graph, report = load(sources.resolved_paths(), sources.indices, progress=progress)
    progress.done()
    for problem in report.problems:
        log.log(logging.WARNING if problem.severity == "warning" else logging.ERROR, "%s", problem)
    log.info("loaded %s in %.2fs", report.summary(), report.seconds)
    return graph, report


class GraphQLView(GraphQL):
    """Strawberry's ASGI view, answering on the graph of the moment and in JSON only."""

    def __init__(self, state: State) -> None:
        super().__init__(schema)
        self.state = state

    async def get_context(self, request: Any, response: Any) -> dict[str, Any]:
        # Taken once per request: a reload during it does not change its answers.
        return {"graph": self.state.graph, "request": request, "response": response}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and self.state.graph is None:
            await _error(503, "the data is still loading; try again shortly")(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def run(self, request, **kwargs):
        try:
            return await super().run(request, **kwargs)
        except HTTPException as exc:
            # Not a GraphQL request at all: say so in the shape GraphQL clients read.
            status = 400 if exc.status_code in (400, 404, 415) else exc.status_code
            return _error(status, exc.reason)


def _error(status: int, message: str) -> Response:
    return JSONResponse({"errors": [{"message": message}]}, status_code=status)


def health(state: State) -> Response:
    if state.graph is None:
        return JSONResponse({"status": "loading"}, status_code=503)
    body = {"status": "ok", **vars(stats(state.graph))}
    if state.report is not None:
        body["problems"] = len(state.report.problems)
    return Response(json.dumps(body), media_type="application/json")


def create_app(graph: CacheGraph | None = None, sources: DataSources | None = None) -> Starlette:
    """The app serving ``graph``, or the data of ``sources`` (the seeds by default)."""
    state = State(graph=graph)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if state.graph is None:
            state.graph, state.report = await anyio.to_thread.run_sync(
                load_sources, sources or DataSources()
            )
        yield

    async def healthz(request: Request) -> Response:
        return health(state)

    async def home(request: Request) -> Response:
        return RedirectResponse("/graphql")

    view = GraphQLView(state)
    app = Starlette(
        routes=[
            Route("/", home),
            Route("/healthz", healthz),
            Route("/graphql", view),
        ],
        lifespan=lifespan,
    )
    app.state.cache = state
    return app
