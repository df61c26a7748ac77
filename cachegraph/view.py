"""The GraphQL endpoint: Strawberry's ASGI view, answering on the graph of the moment.

An operation runs in a worker thread under a time limit, so a slow query never
stalls the event loop that answers health checks and other clients -- unless it
is known to be small: measured small (``Checked.inline``), or one that walks no
data and whose latest answer on the direct path took under ``INLINE_SECONDS``.
Then the hand-off would cost more than the answer: a thread, on the other core,
finds none of the data in its cache (about 1 ms more for 465 stack overlaps).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
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

from schema import compiled
from schema.context import with_warnings
from schema.limits import Checked, LimitExceeded, Limits, checked

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
        if scope["type"] == "http" and scope["method"] == "POST" and _json_body(scope):
            body = await _body(receive)
            if body is None or await self._answer_directly(body, send):
                return  # the client left, or it is answered
            receive = _replaying(body, receive)
        await super().__call__(scope, receive, send)

    async def _answer_directly(self, body: bytes, send) -> bool:
        """Answer a plain JSON operation that has a Plan without Strawberry's HTTP layer.

        That layer costs more than a point query's answer. False when the
        standard way must answer: anything else (a batch, extensions, an
        operation not checked before) goes there, and so does any fault.
        """
        try:
            request = orjson.loads(body)
        except orjson.JSONDecodeError:
            return False
        if not isinstance(request, dict) or not request.keys() <= _PLAIN:
            return False
        query, variables, name = (request.get(k) for k in ("query", "variables", "operationName"))
        if not (
            isinstance(query, str) and isinstance(variables, dict | None)
            and isinstance(name, str | None)
        ):  # fmt: skip
            return False
        known, plan = self._planned(query, name, variables)
        if plan is None:
            return False
        context = {"graph": self.state.graph, "request_id": request_id.get()}
        key = self._cache_key("POST", query, variables, name)
        result = self._cached(context, key)
        if result is None:
            work = functools.partial(self._directly, plan, variables, context)
            result = await self._run(work, _inline(known, plan))
            if result is None:
                _gave_up.set(True)
                return False
            self._keep(context, key, result)
        payload = orjson.dumps(await self.process_result(None, result))
        length = str(len(payload)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", length)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": payload})
        return True

    async def render_graphql_ide(self, request: Any) -> HTMLResponse:
        return HTMLResponse(graphiql_page(request.scope.get("root_path", "")))

    async def run(self, request, **kwargs) -> Response:
        try:
            return await super().run(request, **kwargs)
        except HTTPException as exc:
            # Not a GraphQL request at all: say so in the shape GraphQL clients read.
            status = 400 if exc.status_code in (400, 404, 415) else exc.status_code
            return JSONResponse(error_body(exc.reason), status_code=status)

    def parse_json(self, data: str | bytes) -> Any:
        value = orjson.loads(data)  # its JSONDecodeError is json's, which the view reports
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
        query, name = request_data.query, request_data.operation_name
        key = self._cache_key(request_adapter.method, query, request_data.variables, name)
        result = self._cached(context, key)
        if result is None:
            result = await self._execute(request_adapter, context, root_value, request_data)
            self._keep(context, key, result)
        return result

    def _cache_key(self, method: str, query: Any, variables: Any, name: Any) -> tuple | None:
        if self.responses.size <= 0 or not isinstance(query, str):
            return None
        try:
            variables = orjson.dumps(variables, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits: just run it
            return None
        return (method, query, variables, name)

    def _cached(self, context: dict, key: tuple | None) -> ExecutionResult | None:
        if key is None:
            return None
        found = self.responses.get(context["graph"], key)
        if found is not None:
            self.metrics.cached.labels("hit").inc()
        return found

    def _keep(self, context: dict, key: tuple | None, result: ExecutionResult) -> None:
        # Counted here, once answered: an answer the direct path gives up on is not one.
        if key is not None:
            self.metrics.cached.labels("miss").inc()
            self.responses.put(context["graph"], key, result)

    def _planned(
        self, query: Any, name: str | None, variables: dict | None
    ) -> tuple[Checked | None, compiled.Plan | None]:
        """The operation's check, and its Plan when it was checked before and has one."""
        known = checked(query, name, variables, self.limits, self.schema._schema)
        return known, None if known is None else compiled.plan(self.schema, query, name)

    def _directly(
        self, plan: compiled.Plan, variables: dict | None, context: dict, root: Any = None
    ) -> ExecutionResult | None:
        data = plan.answer(variables, context, root)
        if data is None:
            return None
        self.metrics.executed.labels("direct").inc()
        return with_warnings(ExecutionResult(data=data, errors=None), context)

    async def _run(self, work: Callable[[], Any], inline: bool) -> Any:
        """``work()`` on the event loop when ``inline``, else in a thread under the time
        limit; past it, a result with the timeout error."""
        try:
            if inline:
                # Small and seen before: a thread hand-off would cost more than the work.
                return work()
            with anyio.fail_after(self.timeout):
                # Abandoned at the deadline; the cost limit bounds what it still does.
                return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except TimeoutError:
            message = f"the query ran longer than {self.timeout:g} seconds"
            return ExecutionResult(
                data=None, errors=[LimitExceeded("timeout", self.timeout, message)]
            )

    async def _execute(self, request_adapter, context, root_value, request_data) -> ExecutionResult:
        query, name, variables = (
            request_data.query, request_data.operation_name, request_data.variables
        )  # fmt: skip
        known, plan = self._planned(query, name, variables)
        if _gave_up.get():
            plan = None

        def run() -> ExecutionResult:
            if plan is not None and (found := self._directly(plan, variables, context, root_value)):
                return found
            self.metrics.executed.labels("standard").inc()
            return self.schema.execute_sync(
                query,
                variable_values=variables,
                context_value=context,
                root_value=root_value,
                operation_name=name,
                allowed_operation_types=OperationType.from_http(request_adapter.method),
                operation_extensions=request_data.extensions,
            )

        try:
            return await self._run(run, _inline(known, plan))
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


#: An answer the direct path computed this fast is worth no thread hand-off next time.
INLINE_SECONDS = 0.002


def _inline(known: Checked | None, plan: compiled.Plan | None) -> bool:
    """Whether to answer on the event loop: small by measure, or fast the last time."""
    if known is None:
        return False
    return known.inline or (plan is not None and not known.walks and plan.latest <= INLINE_SECONDS)


#: Set when the direct path gave up on this request's operation (each request is a task
#: of its own): the standard path need not try the plan again.
_gave_up: ContextVar[bool] = ContextVar("gave_up", default=False)

#: The members of a plain operation: no extensions, no batch.
_PLAIN = frozenset({"query", "variables", "operationName"})


def _json_body(scope: dict) -> bool:
    for key, value in scope["headers"]:
        if key == b"content-type":
            return value.lower().startswith(b"application/json")
    return False


async def _body(receive: Callable) -> bytes | None:
    """The whole request body; None when the client left first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Callable) -> Callable:
    """A ``receive`` that gives ``body`` again, then what ``receive`` gives."""
    given = False

    async def replay() -> dict:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
