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

A span costs the SDK about 20 µs, a tenth of a point query's time in the server: so
parse, validate and a direct execution are timed, and made spans afterwards only when
they took at least ``--trace-min-ms`` (0.25 ms by default; 0: always). The request
span, Strawberry's execution and the resolvers that walk are always spans.

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
    def request(self, method: str, headers: Mapping[str, str]) -> Iterator[Any]:
        """The span of one request, current within the block (and in its worker threads)."""
        from opentelemetry.propagate import extract
        from opentelemetry.trace import SpanKind

        parent = extract(dict(headers)) if "traceparent" in headers else None
        with self.tracer.start_as_current_span(
            "graphql.request",
            context=parent,
            kind=SpanKind.SERVER,
            attributes={"http.request.method": method},
        ) as span:
            yield span

    def span(self, name: str, **attributes: Any) -> Any:
        """A span within the current one, current within the block (a context manager)."""
        return self.tracer.start_as_current_span(name, attributes=attributes)

    def step(self, name: str, **attributes: Any) -> Step:
        """A block timed, and made a span within the current one if it took long enough."""
        return Step(self, name, attributes)

    @staticmethod
    def note(**attributes: Any) -> None:
        """Attributes of the current span."""
        from opentelemetry.trace import get_current_span

        get_current_span().set_attributes(attributes)

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
                self.name, start_time=self.started, attributes=self.attributes
            )
            span.end(end_time=ended)


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
