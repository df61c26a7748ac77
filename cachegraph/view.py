"""The GraphQL endpoint: Strawberry's ASGI view, answering on the graph of the moment.

An operation runs in a worker thread under a time limit, so a slow query never
stalls the event loop that answers health checks and other clients -- unless it
is known to be small (``runs_inline``): then the hand-off would cost more than it.
"""

from __future__ import annotations

import functools
from typing import Any

import anyio
import orjson
from cross_web import HTTPException
from graphql import GraphQLError
from starlette.responses import HTMLResponse, JSONResponse, Response
from strawberry.asgi import GraphQL
from strawberry.exceptions import MissingQueryError
from strawberry.schema import BaseSchema
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType

from schema.limits import LimitExceeded, Limits, runs_inline

from .graphiql import graphiql_page
from .observe import Metrics, error_body, request_id
from .responses import ResponseCache
from .state import State


class GraphQLView(GraphQL):
    def __init__(
        self,
        schema: BaseSchema,
        state: State,
        metrics: Metrics,
        *,
        timeout: float,
        max_batch: int,
        graphiql: bool,
        response_cache: int = 0,
        limits: Limits | None = None,
    ) -> None:
        super().__init__(schema, graphql_ide="graphiql" if graphiql else None)
        self.state, self.metrics = state, metrics
        self.timeout, self.max_batch = timeout, max_batch
        self.responses = ResponseCache(response_cache)
        self.limits = limits or Limits()

    async def get_context(self, request: Any, response: Any) -> dict[str, Any]:
        # Taken once per request: a reload during it does not change its answers.
        return {"graph": self.state.graph, "request_id": request_id.get()}

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and self.state.graph is None:
            message = "the data is still loading; try again shortly"
            await JSONResponse(error_body(message), status_code=503)(scope, receive, send)
            return
        await super().__call__(scope, receive, send)

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        return HTMLResponse(graphiql_page())

    async def run(self, request, **kwargs) -> Response:
        try:
            return await super().run(request, **kwargs)
        except HTTPException as exc:
            # Not a GraphQL request at all: say so in the shape GraphQL clients read.
            status = 400 if exc.status_code in (400, 404, 415) else exc.status_code
            return JSONResponse(error_body(exc.reason), status_code=status)

    def parse_json(self, data: str | bytes) -> Any:
        value = super().parse_json(data)
        if isinstance(value, dict) or (
            isinstance(value, list) and all(isinstance(item, dict) for item in value)
        ):
            return value
        raise HTTPException(400, "the body must be a JSON object, or an array of them (a batch)")

    def _validate_batch_request(self, request_data: list, protocol: str) -> None:
        if not request_data:
            raise HTTPException(400, "the batch is empty: send at least one operation")
        if len(request_data) > self.max_batch:
            self.metrics.rejections.labels("max_batch").inc()
            raise HTTPException(
                400,
                f"the batch holds {len(request_data)} operations "
                f"(limit max_batch = {self.max_batch})",
            )

    async def execute_single(
        self, request, request_adapter, sub_response, context, root_value, request_data
    ) -> ExecutionResult:
        key = self._cache_key(request_adapter.method, request_data)
        if key is not None:
            found = self.responses.get(context["graph"], key)
            self.metrics.cached.labels("miss" if found is None else "hit").inc()
            if found is not None:
                return found
        result = await self._execute(request_adapter, context, root_value, request_data)
        if key is not None:
            self.responses.put(context["graph"], key, result)
        return result

    def _cache_key(self, method: str, request_data: Any) -> tuple | None:
        if self.responses.size <= 0 or not isinstance(request_data.query, str):
            return None
        try:
            variables = orjson.dumps(request_data.variables, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits: just run it
            return None
        return (method, request_data.query, variables, request_data.operation_name)

    async def _execute(self, request_adapter, context, root_value, request_data) -> ExecutionResult:
        allowed = OperationType.from_http(request_adapter.method)
        run = functools.partial(
            self.schema.execute_sync,
            request_data.query,
            variable_values=request_data.variables,
            context_value=context,
            root_value=root_value,
            operation_name=request_data.operation_name,
            allowed_operation_types=allowed,
            operation_extensions=request_data.extensions,
        )
        inline = runs_inline(
            request_data.query, request_data.operation_name, request_data.variables, self.limits
        )
        try:
            if inline:
                # Small and seen before: a thread hand-off would cost more than the work.
                return run()
            with anyio.fail_after(self.timeout):
                # Abandoned at the deadline; the cost limit bounds what it still does.
                return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
        except TimeoutError:
            message = f"the query ran longer than {self.timeout:g} seconds"
            return ExecutionResult(
                data=None, errors=[LimitExceeded("timeout", self.timeout, message)]
            )
        except CannotGetOperationTypeError as e:
            raise HTTPException(400, e.as_http_error_reason()) from e
        except InvalidOperationTypeError as e:
            raise HTTPException(400, e.as_http_error_reason(request_adapter.method)) from e
        except MissingQueryError as e:
            raise HTTPException(400, "No GraphQL query found in the request") from e

    async def process_result(self, request: Any, result: ExecutionResult) -> dict:
        for error in result.errors or ():
            self._count(error)
        return await super().process_result(request, result)

    def _count(self, error: GraphQLError) -> None:
        code = (error.extensions or {}).get("code")
        if code == "LIMIT_EXCEEDED":
            self.metrics.rejections.labels(error.extensions["limit"]).inc()
        self.metrics.errors.labels("server" if code == "INTERNAL_SERVER_ERROR" else "client").inc()

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)
