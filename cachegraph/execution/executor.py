"""Executing a request, in one place: ``Executor.answer(request, graph) -> Response``.

The steps, each with the cache it owns:

1. the HTTP request read into operations: a JSON body, a batch, or GET parameters;
   those sent by hash get their text (``persisted``: Apollo's persisted queries, or
   trusted documents only); then the answer's ETag, of the data version and the
   operations, and a client already holding it gets 304 (``validators``);
2. an answer kept for the same operation on the same graph (``responses``);
3. the query text parsed and measured against the limits (``prepared``);
4. the compiled plan answering it directly once Strawberry has validated the text,
   else Strawberry's standard execution (validating it the first time);
5. where it runs: on the event loop only when its last answer, on the direct path,
   took under INLINE_SECONDS and it may not walk the whole data; else in a worker
   thread. A thread hand-off costs more than such an answer: the thread, on the
   other core, finds none of the data in its cache (measured: 465 stack overlaps
   took 1.2 ms on the loop, 2.0 ms through a thread).

Every request runs under one deadline (``graph.deadline``), ``timeout`` seconds
after its operations are read, that the long loops check, so work past the time
limit stops instead of running on abandoned. A batch shares it: an operation that
starts past it is answered with the timeout error without running (ten operations
of a batch once ran ten time limits in a row).
Caches are bounded by bytes (``graph.bounded``): distinct large query texts,
variables or answers evict each other, never grow the process.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import orjson
from graphql import GraphQLError, OperationDefinitionNode
from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect, HTTPConnection, Request
from starlette.responses import Response
from strawberry import Schema
from strawberry.exceptions import MissingQueryError
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.types.execution import ExecutionResult, PreExecutionError
from strawberry.types.graphql import OperationType

from cachegraph.graph import deadline, memory
from cachegraph.graph.bounded import BoundedCache
from cachegraph.graph.errors import CacheGraphError, OverBudget, TimedOut
from cachegraph.graph.questions.mirrors import mirror_checks
from cachegraph.graph.store.view import CacheGraph
from cachegraph.schema.context import Context
from cachegraph.schema.cost import Spent
from cachegraph.schema.query import masked

from ..observe import Metrics, error_body, request_id
from .limits import Costs, LimitExceeded, Limits
from .persisted import Documents
from .prepared import Prechecked, Prepared
from .tracing import NO_SPAN, TracedResolvers, Tracing
from .validators import DataVersions, Validators, etag, matches

#: An answer the direct path computed this fast is worth no thread hand-off next time.
INLINE_SECONDS = 0.002
#: An answer this small is freed where it was made: handing it to the releasing thread (a
#: lock, a queue, a thread's wake-up) took 4% of a ``{ __typename }``'s time (issue 43).
SMALL_ANSWER_BYTES = 16 * 1024
#: A request body larger than this is read in a worker thread, not on the loop, one such
#: body at a time: parsing holds the interpreter lock (orjson does not let go of it), so
#: eight bodies parsed at once made the event loop wait behind all eight. Nor is it
#: answered from the response cache, or kept there (see ``_payload``).
INLINE_BODY_BYTES = 64 * 1024
BODY_SHAPE = "the body must be a JSON object, or an array of them (a batch)"


@dataclass(frozen=True)
class Operation:
    """One GraphQL operation of a request."""

    query: str
    variables: dict[str, Any] | None = None
    name: str | None = None
    extensions: dict[str, Any] | None = None


#: what ``Executor.at_once`` finds: the operation, and its key among the kept answers
AtOnce = tuple[Operation, tuple | None]


class BadRequest(Exception):
    """Not a GraphQL request at all: answered with an HTTP status, not a GraphQL result."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


@dataclass(frozen=True)
class Budgets:
    """Bytes each cache of an executor may hold."""

    #: parsed query texts, their checks and compiled plans
    queries: int = 64 * 2**20
    #: encoded answers; 0 keeps none
    responses: int = 128 * 2**20


class Executor:
    """Executes operations on a schema under limits, a time limit and byte-bounded caches.

    The schema must be built with ``schema_extensions``. At most ``threads`` operations
    run in worker threads at once (the rest wait their turn): more would only compete
    for the interpreter lock, and with the event loop for it.
    """

    def __init__(
        self,
        schema: Schema,
        *,
        limits: Limits | None = None,
        timeout: float = 10.0,
        max_batch: int = 10,
        budgets: Budgets | None = None,
        metrics: Metrics | None = None,
        threads: int = 4,
        validators: Validators | None = None,
        documents: Documents | None = None,
        tracing: Tracing | None = None,
        admin_token: str | None = None,
    ) -> None:
        if Prechecked not in schema.extensions:
            raise ValueError("build the schema with execution.schema_extensions(limits)")
        self.schema = schema
        self.limits = limits or Limits()
        self.timeout, self.max_batch = timeout, max_batch
        budgets = budgets or Budgets()
        self.costs = Costs(schema)
        self.prepared = BoundedCache(budgets.queries)
        self.responses = ResponseCache(budgets.responses)
        self.metrics = metrics or Metrics()
        self.threads = threads
        self._limiter: anyio.CapacityLimiter | None = None
        self._parser: anyio.CapacityLimiter | None = None
        self.validators = validators or Validators()
        self.documents = documents or Documents(registry=self.metrics.registry)
        self.tracing = tracing
        #: the bearer token whose requests are the admin's (None: no one's are)
        self.admin = f"Bearer {admin_token}".encode() if admin_token else None
        self.versions = DataVersions(_schema_salt(schema))

    # -- HTTP ------------------------------------------------------------------------

    async def answer(self, request: Request, graph: CacheGraph) -> Response:
        """The response to a GraphQL request over HTTP, answered on ``graph``, with the time
        it took (``Server-Timing``: what bench/caching.py measures a 304 by).

        Its media type is the one the client accepts (``response_media_type``); as
        ``application/graphql-response+json``, a request that cannot be executed (a syntax
        or validation error, variables that do not fit, a limit) is answered 400 with no
        ``data`` (GraphQL over HTTP, 6.4.2).
        """
        started = time.perf_counter()
        if self.tracing is None:
            response = await self._answer(request, graph)
        else:
            with self.tracing.request(request.method, request.headers) as traced:
                response = await self._answer(request, graph)
                traced.note(**{"http.response.status_code": response.status_code})
            if response.background is None:  # the span made once the answer is sent
                response.background = traced
            else:
                traced.finish()
        return _timed(response, started)

    def at_once(self, headers: Headers, body: bytes, graph: CacheGraph) -> AtOnce | None:
        """The operation of a POST of ``body`` (whole), with its key among the kept answers,
        that ``answer_at_once`` answers as ``answer`` would: what most requests are, one
        operation, small, that ran fast on the direct path last time (``runs_inline``) or
        whose answer is kept, neither the admin's nor traced, nor sent by hash or under
        trusted documents. None, nothing done, for any other request, which goes the whole
        way (``answer``).

        The server's HTTP protocol asks this before it makes a request's ASGI messages and
        task (``cachegraph.server``): for a small answer those cost more than executing it.
        """
        if (
            self.versions.known(graph) is None
            or self.tracing is not None
            or self.documents.trusted
            or len(body) > INLINE_BODY_BYTES
            or (self.admin is not None and "authorization" in headers)
            or not headers.get("content-type", "").lower().startswith("application/json")
        ):
            return None
        try:
            given = orjson.loads(body)
            op = _operation(given) if isinstance(given, dict) else None
        except (orjson.JSONDecodeError, BadRequest):
            return None  # answered the whole way, with its error
        if op is None or op.extensions is not None:
            return None
        key = self._key(graph, "POST", op, admin=False)
        kept = self.responses.get(graph, key)
        return (op, key) if kept is not None or self.runs_inline(op) else None

    def answer_at_once(self, found: AtOnce, headers: Headers, graph: CacheGraph) -> Response:
        """``answer`` to a POST of the operation ``at_once`` found, on the event loop."""
        op, key = found
        started = time.perf_counter()
        media = response_media_type(headers.get("accept", ""))
        ends = time.monotonic() + self.timeout
        version = self._version(self.versions.of(graph), graph)  # known: at_once
        [op], tag = self._resolved([op], version)
        tag = _representation(tag, media)
        if tag is not None and matches(headers.get("if-none-match"), tag):
            return _timed(self.validators.not_modified("POST", tag), started)
        context = Context(graph, request_id.get())
        payload = self._at_once(op, context, "POST", key, ends, inline=True)
        return _timed(self._response("POST", [payload], False, tag, media, False), started)

    async def _answer(self, request: Request, graph: CacheGraph) -> Response:
        media = response_media_type(request.headers.get("accept", ""))
        admin = self.from_admin(request)
        try:
            given, batch, small = await self._operations(request)
            ends = time.monotonic() + self.timeout  # the request's, not each operation's
            version = self._version(await self.versions.version(graph), graph)
            if small:
                resolved, tag = self._resolved(given, version)
            else:  # hashing megabytes of text: not on the loop
                resolved, tag = await anyio.to_thread.run_sync(self._resolved, given, version)
            if admin:  # their answers show the server's paths: neither validated nor kept
                tag = None
            tag = _representation(tag, media)
            if tag is not None and matches(request.headers.get("if-none-match"), tag):
                return self.validators.not_modified(request.method, tag)
            payloads = [
                await self._payload(op, graph, request.method, small, ends, admin)
                if isinstance(op, Operation)
                else op
                for op in resolved
            ]
        except BadRequest as exc:
            return Response(orjson.dumps(error_body(exc.message)), exc.status, media_type=media)
        except ClientDisconnect:
            return Response(status_code=400)  # no one reads it
        return self._response(request.method, payloads, batch, tag, media, admin)

    def _response(
        self, method: str, payloads: list[bytes], batch: bool, tag: str | None, media: str,
        admin: bool,
    ) -> Response:  # fmt: skip
        status = 200
        if media == GRAPHQL_RESPONSE and not batch:
            payloads[0], status = _as_graphql_response(payloads[0])
        body = b"[" + b",".join(payloads) + b"]" if batch else payloads[0]
        response = self.validators.respond(method, tag, body, payloads, status, media)
        if admin:
            response.headers["cache-control"] = "private, no-store"
        return response

    @staticmethod
    def _version(version: str, graph: CacheGraph) -> str:
        """The data version of the answers: the graph's, and its remote mirrors' checks (a
        check changes their freshness fields)."""
        checks = mirror_checks(graph)
        return f"{version}.{checks}" if checks else version

    def from_admin(self, request: HTTPConnection) -> bool:
        """Whether the request (or WebSocket) carries the admin token as its bearer."""
        if self.admin is None or "authorization" not in request.headers:
            return False
        return hmac.compare_digest(request.headers["authorization"].encode(), self.admin)

    def _resolved(
        self, given: list[Operation], version: str
    ) -> tuple[list[Operation | bytes], str | None]:
        """The operations with the text of those sent by hash (or the error answering one),
        and the ETag of their answer: worked out before executing, so that a client
        holding it gets 304. None when some operation cannot be answered."""
        resolved = [self.documents.resolve(op) for op in given]
        operations = [op for op in resolved if isinstance(op, Operation)]
        if len(operations) < len(resolved):
            return resolved, None
        return resolved, etag(version, operations)

    async def _operations(self, request: Request) -> tuple[list[Operation], bool, bool]:
        """The request's operations, whether they came as a batch, and whether the request
        is small enough to look up on the event loop."""
        if request.method == "GET":
            params = request.query_params
            given = {"query": params.get("query"), "operationName": params.get("operationName")}
            for name in ("variables", "extensions"):  # JSON in a parameter
                try:
                    given[name] = orjson.loads(params[name]) if name in params else None
                except orjson.JSONDecodeError as exc:
                    raise BadRequest(f"the '{name}' parameter is not JSON: {exc}") from exc
            return [_operation(given)], False, len(str(request.url)) <= INLINE_BODY_BYTES
        if request.method != "POST":
            raise BadRequest("Unsupported method, must be of request type POST or GET", 405)
        content_type = request.headers.get("content-type", "").lower()
        if not content_type.startswith("application/json"):
            raise BadRequest("Unsupported content type")
        body = await _read_body(request)
        small = len(body) <= INLINE_BODY_BYTES
        try:
            value = orjson.loads(body) if small else await self._parse_aside(body)
        except orjson.JSONDecodeError as exc:
            raise BadRequest("Unable to parse request body as JSON") from exc
        if isinstance(value, dict):
            return [_operation(value)], False, small
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise BadRequest(BODY_SHAPE)
        if not value:
            raise BadRequest("the batch is empty: send at least one operation")
        if len(value) > self.max_batch:
            self.metrics.rejections.labels("max_batch").inc()
            raise BadRequest(
                f"the batch holds {len(value)} operations (limit max_batch = {self.max_batch})"
            )
        return [_operation(v) for v in value], True, small

    async def _payload(
        self,
        op: Operation,
        graph: CacheGraph,
        method: str,
        small: bool,
        ends: float,
        admin: bool = False,
    ) -> bytes:
        """The operation's answer as JSON: kept, computed on the loop, or in a thread;
        the timeout error, not run, once the request's deadline ``ends`` has passed."""
        context = Context(graph, request_id.get(), admin=admin)
        # A large request is neither looked up nor kept: keying it (its variables encoded
        # with sorted keys) holds the interpreter lock about a quarter as long again as
        # parsing it, for an answer rarely asked again (a lockfile's coverage).
        key = self._key(graph, method, op, admin) if small else None
        inline = small and self.runs_inline(op)
        found = self._at_once(op, context, method, key, ends, inline=inline)
        if found is not None:
            return found
        work: Callable[[], bytes] = lambda: self._respond(op, context, method, key)  # noqa: E731
        return await self._within_time_in_thread(work, ends)

    def _key(self, graph: CacheGraph, method: str, op: Operation, admin: bool) -> tuple | None:
        """The operation's key among the kept answers (None: not kept)."""
        key = None if admin else self.responses.key(method, op)
        checks = mirror_checks(graph)
        if checks and key is not None:  # remote mirrors' freshness changes between reloads
            key = (*key[:-1], f"{key[-1]}#{checks}")
        return key

    def _at_once(
        self, op: Operation, context: Context, method: str, key: tuple | None, ends: float,
        *, inline: bool,
    ) -> bytes | None:  # fmt: skip
        """The answer when no thread is needed: kept, past the deadline, or ``inline``
        (computed on the loop); None when it must be computed in a thread."""
        found = self._cached(context.graph, key)
        if found is not None:
            return found
        if time.monotonic() >= ends:
            return self._timed_out()
        if inline:
            return self._within_time(lambda: self._respond(op, context, method, key), ends)
        return None

    def runs_inline(self, op: Operation) -> bool:
        """Whether to answer on the event loop: it ran fast on the direct path last time."""
        prepared: Prepared | None = self.prepared.get(op.query)
        if prepared is None or prepared.errors != []:
            return False
        plan, measured = prepared.plans.get(op.name), prepared.known(op.name, op.variables)
        return (
            plan is not None
            and measured is not None
            and not measured.walks
            and plan.latest <= INLINE_SECONDS
        )

    def _within_time(self, work: Callable[[], bytes], ends: float) -> bytes:
        try:
            with deadline.until(ends):
                return work()
        except TimedOut:
            return self._timed_out()

    async def _within_time_in_thread(self, work: Callable[[], bytes], ends: float) -> bytes:
        try:
            with anyio.fail_after(max(0.0, ends - time.monotonic())):
                # Abandoned at the deadline; the deadline stops what it still does.
                return await anyio.to_thread.run_sync(
                    self._within_time, work, ends, abandon_on_cancel=True, limiter=self._threads()
                )
        except TimeoutError:
            return self._timed_out()

    async def _parse_aside(self, body: bytes) -> Any:
        """A large body parsed in a worker thread, one at a time (see INLINE_BODY_BYTES)."""
        if self._parser is None:
            self._parser = anyio.CapacityLimiter(1)
        return await anyio.to_thread.run_sync(orjson.loads, body, limiter=self._parser)

    def _threads(self) -> anyio.CapacityLimiter:
        # Made on first use, in the event loop it will serve.
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.threads)
        return self._limiter

    def _timed_out(self) -> bytes:
        message = f"the query ran longer than {self.timeout:g} seconds"
        error = LimitExceeded("timeout", self.timeout, message)
        self._count([error])
        return orjson.dumps({"data": None, "errors": [error.formatted]})

    def _respond(self, op: Operation, context: Context, method: str, key: tuple | None) -> bytes:
        """The operation's JSON answer, kept under ``key`` (looked up on the loop) when it
        has one and the answer has no errors."""
        memory.pause()
        try:
            body = self.run(op, context, method)
            payload = orjson.dumps(body)
        except BaseException:
            memory.resume(memory.ANSWER_PAUSE_SECONDS)
            raise
        clean = "errors" not in body  # errors carry request ids, and may be transient
        if len(payload) <= SMALL_ANSWER_BYTES:  # freed at once: a hand-off costs more
            del body
            memory.resume(memory.ANSWER_PAUSE_SECONDS)
        else:  # freed aside, the pause ending then: the answer goes out meanwhile
            memory.release_aside(body, memory.ANSWER_PAUSE_SECONDS)
            del body
        if key is not None:  # counted once executed: a timeout is not a miss
            self.metrics.child(self.metrics.cached, "miss").inc()
            if clean:
                self.responses.put(context.graph, key, payload)
        return payload

    def _cached(self, graph: CacheGraph, key: Any) -> bytes | None:
        found = self.responses.get(graph, key)
        if found is not None:
            self.metrics.child(self.metrics.cached, "hit").inc()
            if self.tracing is not None:
                self.tracing.note(**{"cachegraph.response_cache": "hit"})
        return found

    # -- one operation -----------------------------------------------------------------

    def run(self, op: Operation, context: Context, method: str = "POST") -> dict[str, Any]:
        """The JSON body answering ``op`` (data, errors, extensions); BadRequest when the
        operation cannot run at all (an unknown operation name, a mutation over GET).

        ``context`` holds the graph and the request id; resolvers add warnings to it.
        """
        trace = self.tracing
        if trace is not None and op.name:
            trace.note(**{"graphql.operation.name": op.name})
        try:
            with trace.step("graphql.parse") if trace else NO_SPAN:
                prepared = self._prepare(op.query)
            with trace.step("graphql.validate") if trace else NO_SPAN:
                measured = prepared.measure(self.costs, self.limits, op.name, op.variables)
        except GraphQLError as error:  # syntax, or a limit
            self._count([error])
            return {"data": None, "errors": [error.formatted]}
        # While tracing, an operation that may walk every spec runs the standard way: its
        # resolvers get spans.
        plan = prepared.plan(self.schema, op.name) if not (trace and measured.walks) else None
        # (a plan is a query's: only an operation without one may be a subscription)
        if plan is None and operation_kind(prepared.document, op.name) == "subscription":
            raise BadRequest(SUBSCRIPTION_OVER_HTTP)
        context.spent = Spent(self.limits.max_cost)  # what data-sized lists return
        if plan is not None:
            try:
                with (
                    trace.step("graphql.execute", **{"cachegraph.path": "direct"})
                    if trace
                    else NO_SPAN
                ):
                    data = plan.answer(op.variables, context)
            except OverBudget as over:
                return self._over_budget(over)
            if data is not None:
                self.metrics.child(self.metrics.executed, "direct").inc()
                return _body(data, None, context.warnings)
        self.metrics.child(self.metrics.executed, "standard").inc()
        context.prepared, context.spent = prepared, Spent(self.limits.max_cost)
        context.tracing = trace
        try:
            with (
                trace.span("graphql.execute", **{"cachegraph.path": "standard"})
                if trace
                else NO_SPAN
            ):
                result = self.schema.execute_sync(
                    op.query,
                    variable_values=op.variables,
                    context_value=context,
                    operation_name=op.name,
                    allowed_operation_types=OperationType.from_http(method),
                    operation_extensions=op.extensions,
                )
        except CannotGetOperationTypeError as e:
            raise BadRequest(e.as_http_error_reason()) from e
        except InvalidOperationTypeError as e:
            raise BadRequest(e.as_http_error_reason(method)) from e
        except MissingQueryError as e:
            raise BadRequest("No GraphQL query found in the request") from e
        errors = result.errors or []
        if any(isinstance(e.original_error, TimedOut) for e in errors):
            raise TimedOut  # the answer is the timeout, not a page of field errors
        for error in errors:
            if isinstance(error.original_error, OverBudget):
                return self._over_budget(error.original_error)  # the limit, not a page of them
        self._count(errors)
        return _body(result.data, errors, (result.extensions or {}).get("warnings"))

    async def subscribe(self, op: Operation, context: Context) -> AsyncIterator[dict[str, Any]]:
        """The answers of a subscription, each a JSON body (``data``, and ``errors`` when
        some); one body of ``errors`` only when it cannot start: a syntax error, a limit, an
        operation that is not a subscription (those go over HTTP). The document is checked
        against the same limits as a query's."""
        try:
            prepared = self._prepare(op.query)
            prepared.measure(self.costs, self.limits, op.name, op.variables)
            _only_subscriptions(prepared.document, op.name)
        except GraphQLError as error:
            self._count([error])
            yield {"errors": [error.formatted]}
            return
        context.prepared, context.spent = prepared, Spent(self.limits.max_cost)
        results = await self.schema.subscribe(
            op.query,
            variable_values=op.variables,
            context_value=context,
            operation_name=op.name,
        )
        if isinstance(results, PreExecutionError):
            results = _once(results)
        try:
            async for result in results:
                errors = [masked(e, context.request_id) for e in result.errors or ()]
                self._count(errors)
                body: dict[str, Any] = {"errors": [e.formatted for e in errors]}
                if result.data is None and errors:  # it did not start, or it stopped
                    yield body
                    return
                yield {"data": result.data, **(body if errors else {})}
        except CacheGraphError as exc:  # the source stopped (a follower cut off): said once
            yield {"errors": [GraphQLError(str(exc)).formatted]}

    def _over_budget(self, over: OverBudget) -> dict[str, Any]:
        error = LimitExceeded(over.limit, over.value, over.message)
        self._count([error])
        return {"data": None, "errors": [error.formatted]}

    def _prepare(self, query: str) -> Prepared:
        found = self.prepared.get(query)
        if found is None:
            found = Prepared.of(query, self.limits)
            self.prepared.put(query, found, found.size)
        return found

    def _count(self, errors: list[GraphQLError]) -> None:
        for error in errors:
            code = (error.extensions or {}).get("code")
            if code == "LIMIT_EXCEEDED":
                self.metrics.rejections.labels(error.extensions["limit"]).inc()
            kind = "server" if code == "INTERNAL_SERVER_ERROR" else "client"
            self.metrics.errors.labels(kind).inc()

    def cache_sizes(self) -> dict[str, BoundedCache]:
        """Each cache this executor owns, by name (for /metrics)."""
        return {
            "queries": self.prepared,
            "responses": self.responses.cache,
            "persisted": self.documents.cache,
        }


#: GraphQL over HTTP's own media type, and the one every client understands
GRAPHQL_RESPONSE = "application/graphql-response+json; charset=utf-8"
JSON = "application/json"


SUBSCRIPTION_OVER_HTTP = (
    "a subscription goes over WebSocket at /graphql (the graphql-transport-ws protocol), "
    "or follow /changes/stream (Server-Sent Events); HTTP carries queries"
)


def operation_kind(document: Any, name: str | None) -> str | None:
    """'query', 'mutation' or 'subscription': the kind of the operation ``name`` picks; None
    when it picks none, or several."""
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [o for o in operations if name is None or (o.name and o.name.value == name)]
    return chosen[0].operation.value if len(chosen) == 1 else None


def _only_subscriptions(document: Any, name: str | None) -> None:
    """GraphQLError unless the operation to run is a subscription."""
    kind = operation_kind(document, name)
    if kind is None:
        raise GraphQLError(
            f"no operation named {name!r} in the document"
            if name
            else "name the operation to run: the document holds several"
        )
    if kind != "subscription":
        raise GraphQLError(
            f"a {kind} goes over HTTP (POST /graphql); a WebSocket carries subscriptions only"
        )


async def _once(result: ExecutionResult) -> AsyncIterator[ExecutionResult]:
    yield result


def response_media_type(accept: str) -> str:
    """The media type to answer in: ``application/graphql-response+json`` when the client
    accepts it at least as well as ``application/json``, else ``application/json`` (what
    a client that names neither, or only ``*/*``, gets: GraphQL over HTTP, 6.4.1).

    >>> response_media_type("application/graphql-response+json, application/json;q=0.9")
    'application/graphql-response+json; charset=utf-8'
    >>> response_media_type("application/json"), response_media_type("")
    ('application/json', 'application/json')
    """
    quality = {}
    for part in accept.split(","):
        kind, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        quality.setdefault(kind.lower(), q)
    wanted = quality.get("application/graphql-response+json", 0.0)
    if wanted > 0 and wanted >= quality.get(JSON, 0.0):
        return GRAPHQL_RESPONSE
    return JSON


_NO_DATA = b'{"data":null,"errors":'


def _as_graphql_response(payload: bytes) -> tuple[bytes, int]:
    """A payload as ``application/graphql-response+json`` answers it: a request error (no
    data, and no error of a field: it was never executed) is 400 without ``data``.

    A time limit met while executing is not the request's fault: it keeps ``data: null``.
    """
    if not payload.startswith(_NO_DATA):
        return payload, 200
    errors = orjson.loads(payload)["errors"]
    if any("path" in e or (e.get("extensions") or {}).get("limit") == "timeout" for e in errors):
        return payload, 200
    return orjson.dumps({"errors": errors}), 400


def _representation(tag: str | None, media: str) -> str | None:
    """The ETag of an answer in ``media``: ``application/graphql-response+json`` is another
    representation of it than ``application/json``."""
    return tag[:-1] + '-g"' if tag is not None and media == GRAPHQL_RESPONSE else tag


def _timed(response: Response, started: float) -> Response:
    """The response with the time its answer took (``Server-Timing``), appended as it is:
    no other part of the answer sets it (MutableHeaders would scan)."""
    spent = (time.perf_counter() - started) * 1000
    response.raw_headers.append((b"server-timing", b"answer;dur=%.3f" % spent))
    return response


def schema_extensions(limits: Limits, *, traced: bool = False) -> list:
    """The Strawberry extensions a schema needs to be executed by an Executor (``traced``:
    with spans for resolvers, when the executor has tracing)."""
    from strawberry.extensions import DisableIntrospection

    extensions: list = [Prechecked] + ([] if limits.introspection else [DisableIntrospection])
    return extensions + ([TracedResolvers] if traced else [])


def _schema_salt(schema: Schema) -> str:
    """What answers depend on besides the data and the operation: the server and its schema."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        server = version("spack-cache-graph")
    except PackageNotFoundError:
        server = "unknown"
    return f"{server} {hashlib.blake2b(schema.as_str().encode()).hexdigest()}"


async def _read_body(request: Request) -> bytes:
    """The request's body, read from its ASGI messages: Starlette's ``Request.body`` reads
    them through an async generator, 4-7% of a point query's time in the app (issue 43).
    Nothing else reads a GraphQL request's body."""
    chunks = []
    while True:
        message = await request.receive()
        if message["type"] == "http.request":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                return b"".join(chunks)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


def _operation(given: dict[str, Any]) -> Operation:
    query, variables = given.get("query"), given.get("variables")
    name, extensions = given.get("operationName"), given.get("extensions")
    if query is None and isinstance(extensions, dict) and "persistedQuery" in extensions:
        query = ""  # sent by hash: the text is the persisted query's
    if query is None:
        raise BadRequest("No GraphQL query found in the request")
    if not isinstance(query, str):
        raise BadRequest("The GraphQL operation's `query` must be a string or null, if provided.")
    if not isinstance(variables, dict | None):
        raise BadRequest(
            "The GraphQL operation's `variables` must be an object or null, if provided."
        )
    if not isinstance(name, str | None):
        raise BadRequest(
            "The GraphQL operation's `operationName` must be a string or null, if provided."
        )
    if not isinstance(extensions, dict | None):
        raise BadRequest(
            "The GraphQL operation's `extensions` must be an object or null, if provided."
        )
    return Operation(query, variables, name, extensions)


def _body(data: Any, errors: list[GraphQLError] | None, warnings: list | None) -> dict[str, Any]:
    body: dict[str, Any] = {"data": data}
    if errors:
        body["errors"] = [e.formatted for e in errors]
    if warnings:
        body["extensions"] = {"warnings": warnings}
    return body


class ResponseCache:
    """Encoded answers by operation, bounded by bytes, emptied when the graph changes.

    The data never changes between reloads, so an answer depends only on the
    operation (query, variables, operation name) and the graph: dashboards that
    poll the same questions are answered without executing them again.
    """

    def __init__(self, budget: int) -> None:
        self.cache = BoundedCache(budget)
        self._graph: weakref.ref | None = None

    def key(self, method: str, op: Operation) -> tuple | None:
        """The operation's key; None when nothing is kept, or its variables have no key."""
        if self.cache.budget <= 0:
            return None
        try:
            variables = orjson.dumps(op.variables, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits: just run it
            return None
        return (method, op.query, variables, op.name)

    def get(self, graph: CacheGraph, key: tuple | None) -> bytes | None:
        if key is None:
            return None
        if self._graph is None or self._graph() is not graph:
            # A reload swapped the graph: nothing kept so far holds for the new one.
            self.cache.clear()
            self._graph = weakref.ref(graph)
            return None
        return self.cache.get(key)

    def put(self, graph: CacheGraph, key: tuple, payload: bytes) -> None:
        if self._graph is not None and self._graph() is graph:
            size = len(payload) + len(key[1]) + len(key[2]) + 200
            self.cache.put(key, payload, size)
