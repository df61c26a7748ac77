"""GET and POST /graphql: GraphiQL for a browser, else the executor's answer on the graph
of the moment (taken once per request: a reload during it does not change its answers)."""

from __future__ import annotations

from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.types import Receive, Scope, Send

from .execution import Executor
from .graphiql import graphiql_page
from .observe import error_body
from .state import State


class GraphQLView:
    def __init__(self, executor: Executor, state: State, *, graphiql: bool) -> None:
        self.executor, self.state, self.graphiql = executor, state, graphiql

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        graph = self.state.graph
        if graph is None:
            message = "the data is still loading; try again shortly"
            response = JSONResponse(error_body(message), status_code=503)
        elif self.graphiql and _wants_ide(request):
            response = HTMLResponse(graphiql_page(scope.get("root_path", "")))
        else:
            response = await self.executor.answer(request, graph)
        await response(scope, receive, send)

    def at_once(self, headers: Headers, body: bytes) -> Callable[[], Response] | None:
        """The answer to a POST of ``body``, to be worked out at once, when the executor can
        (``Executor.at_once``); None, nothing done, when it goes the whole way."""
        graph = self.state.graph
        found = None if graph is None else self.executor.at_once(headers, body, graph)
        if found is None:
            return None
        return lambda: self.executor.answer_at_once(found, headers, graph)


def _wants_ide(request: Request) -> bool:
    """A browser opening the endpoint: a GET without a query that accepts HTML."""
    if request.method != "GET":  # a POST's headers and parameters unread: never the IDE
        return False
    accept = request.headers.get("accept", "")
    return (
        "query" not in request.query_params
        and "extensions" not in request.query_params  # a persisted query, by hash
        and ("text/html" in accept or "*/*" in accept)
    )
