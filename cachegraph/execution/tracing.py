"""OpenTelemetry traces of requests, exported over OTLP where an operator asks for them.

When ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is
set, and the optional extra is installed (``pip install 'spack-cache-graph[tracing]'``),
every GraphQL request is a trace::

    graphql.request            the request: method, operation name, status, cache use
      graphql.parse            the text parsed (or found parsed), its tokens counted
      graphql.validate         its cost and depth measured against the limits
      graphql.execute          the direct path (a compiled plan) or Strawberry's
        graphql.validate.schema    Strawberry's validation, the first time a text runs
        graphql.resolve T.f        each resolver that may walk every spec (the cost
                                   model's ``walks``: a whole-data count, a transitive walk)

Making a span costs the SDK about 70 µs here, a third of a point query's time in the
server. So parse, validate and a direct execution are timed, and made spans afterwards
only when they took at least ``--trace-min-ms`` (0.25 ms by default; 0: always); and the
request's span is made once its answer is sent (a background of the response), with the
times it measured, unless a child needs it as its parent first. Strawberry's execution
and the resolvers that walk are always spans.

exported in batches (OTLP over HTTP, protobuf) by the SDK's background thread; the
SDK's own variables (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_BSP_*``, ``OTEL_EXPORTER_OTLP_HEADERS``...) apply. A request carrying a
``traceparent`` header joins the caller's trace.

Without the variable nothing is imported and nothing is made: the executor's only
cost is testing ``tracing is None`` a few times a request. An operation that may walk
every spec runs the standard way while tracing (so its resolvers have spans); every
other keeps its direct path.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

from strawberry.extensions import SchemaExtension

log = logging.getLogger("cachegraph")

#: the variables that turn tracing on (the OTLP exporter reads them itself)
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
#: the default of ``--trace-min-ms``
MIN_MS = 0.25
#: entered where no span is made: ``with (tracing.span(...) if tracing else NO_SPAN):``
NO_SPAN = contextlib.nullcontext()


class Tracing:
    """A tracer and the provider exporting its spans."""

    def __init__(self, tracer: Any, provider: Any = None, min_ms: float = MIN_MS) -> None:
        self.tracer, self.provider = tracer, provider
        #: a step shorter than this is no span (nanoseconds)
        self.min_ns = int(min_ms * 1e6)

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, min_ms: float = MIN_MS
    ) -> Tracing | None:
        """Tracing exported over OTLP when the environment names an endpoint; else None."""
        environ = os.environ if environ is None else environ
        if not any(environ.get(name) for name in ENDPOINT_VARIABLES):
            return None
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
        except ImportError as exc:
            log.warning(
                "OTEL_EXPORTER_OTLP_ENDPOINT is set but OpenTelemetry is not installed (%s): "
                "no traces; pip install 'spack-cache-graph[tracing]'",
                exc,
            )
            return None
        service = environ.get("OTEL_SERVICE_NAME") or "cachegraph"
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        return cls(provider.get_tracer("cachegraph"), provider, min_ms)

    @contextlib.contextmanager
    def request(self, method: str, headers: Mapping[str, str]) -> Iterator[RequestTrace]:
        """One request's trace, current within the block (and in its worker threads). Its
        span ends when the block does; the caller finishes it (``RequestTrace.finish``),
        once the answer is sent. An error leaving the block finishes it at once."""
        from opentelemetry.propagate import extract

        parent = extract(dict(headers)) if "traceparent" in headers else None
        traced = RequestTrace(self, parent, {"http.request.method": method})
        token = _REQUEST.set(traced)
        try:
            yield traced
        except BaseException as exc:
            traced.ended, traced.error = time.time_ns(), exc
            traced.finish()
            raise
        finally:
            traced.ended = traced.ended or time.time_ns()
            _REQUEST.reset(token)

    def span(self, name: str, **attributes: Any) -> Any:
        """A span within the current one, current within the block (a context manager)."""
        return self.tracer.start_as_current_span(name, _parent(), attributes=attributes)

    def step(self, name: str, **attributes: Any) -> Step:
        """A block timed, and made a span within the current one if it took long enough."""
        return Step(self, name, attributes)

    @staticmethod
    def note(**attributes: Any) -> None:
        """Attributes of the current request's span."""
        traced = _REQUEST.get(None)
        if traced is not None:
            traced.note(**attributes)

    def shutdown(self) -> None:
        """Export what is pending, then stop (the server's end)."""
        if self.provider is not None:
            self.provider.shutdown()


class Step:
    """A block timed; a span afterwards, when it took at least the tracing's ``min_ns``."""

    __slots__ = ("attributes", "name", "started", "tracing")

    def __init__(self, tracing: Tracing, name: str, attributes: dict[str, Any]) -> None:
        self.tracing, self.name, self.attributes = tracing, name, attributes

    def __enter__(self) -> Step:
        self.started = time.time_ns()
        return self

    def __exit__(self, *_: object) -> None:
        ended = time.time_ns()
        if ended - self.started >= self.tracing.min_ns:
            span = self.tracing.tracer.start_span(
                self.name, _parent(), attributes=self.attributes, start_time=self.started
            )
            span.end(end_time=ended)


class RequestTrace:
    """One request: its start, end and attributes, and its span once something made it.

    The span is made when a child needs a parent (``context``), else by ``finish``: a
    point query's trace costs the answer nothing but taking the time.
    """

    __slots__ = ("attributes", "ended", "error", "parent", "span", "started", "tracing")

    def __init__(self, tracing: Tracing, parent: Any, attributes: dict[str, Any]) -> None:
        self.tracing, self.parent, self.attributes = tracing, parent, attributes
        self.started, self.ended = time.time_ns(), 0
        self.span: Any = None
        self.error: BaseException | None = None

    def note(self, **attributes: Any) -> None:
        self.attributes.update(attributes)
        if self.span is not None:
            self.span.set_attributes(attributes)

    def context(self) -> Any:
        """An OpenTelemetry context whose span is this request's (made now if need be)."""
        from opentelemetry.trace import set_span_in_context

        return set_span_in_context(self._span())

    def _span(self) -> Any:
        if self.span is None:
            from opentelemetry.trace import SpanKind

            self.span = self.tracing.tracer.start_span(
                "graphql.request",
                self.parent,
                kind=SpanKind.SERVER,
                attributes=self.attributes,
                start_time=self.started,
            )
        return self.span

    def finish(self) -> None:
        """End the request's span, made now unless a child made it."""
        span = self._span()
        if self.error is not None:
            from opentelemetry.trace import Status, StatusCode

            span.record_exception(self.error)
            span.set_status(Status(StatusCode.ERROR, repr(self.error)))
        span.end(end_time=self.ended)

    async def __call__(self) -> None:
        """As a response's background: finished once the answer is sent."""
        self.finish()


#: the trace of the request under way, in this task and the worker threads it starts
_REQUEST: contextvars.ContextVar[RequestTrace] = contextvars.ContextVar("cachegraph_request")


def _parent() -> Any:
    """The context a new span hangs from: the span current here (Strawberry's execution,
    for its resolvers), else the request's."""
    from opentelemetry.trace import get_current_span

    if get_current_span().is_recording():
        return None
    traced = _REQUEST.get(None)
    return traced.context() if traced is not None else None


class TracedResolvers(SchemaExtension):
    """A span for each resolver that may walk every spec, and for Strawberry's validation.

    In the schema only when tracing; the tracer is the context's ``tracing``.
    """

    def on_validate(self) -> Iterator[None]:
        tracing = _tracing(self.execution_context.context)
        if tracing is None:
            yield
            return
        with tracing.span("graphql.validate.schema"):
            yield

    def resolve(self, _next: Any, root: Any, info: Any, *args: Any, **kwargs: Any) -> Any:
        tracing = _tracing(info.context)
        if tracing is None or not _may_walk(info, kwargs):
            return _next(root, info, *args, **kwargs)
        name = f"graphql.resolve {info.parent_type.name}.{info.field_name}"
        path = ".".join(str(key) for key in info.path.as_list())
        with tracing.span(name, **{"graphql.field.path": path, "cachegraph.walks": True}):
            return _next(root, info, *args, **kwargs)


def _tracing(context: Any) -> Tracing | None:
    return getattr(context, "tracing", None)


def _may_walk(info: Any, arguments: dict[str, Any]) -> bool:
    field = info.parent_type.fields.get(info.field_name)
    definition = field.extensions.get("strawberry-definition") if field is not None else None
    cost = (getattr(definition, "metadata", None) or {}).get("cost")
    return cost is not None and cost.may_walk(arguments)
