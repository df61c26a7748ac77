"""Traces: with OTEL_EXPORTER_OTLP_ENDPOINT set, each request is a tree of spans (request,
parse, validate, execute, and the resolvers that may walk every spec) that the server
exports over OTLP/HTTP. The collector here is a real HTTP server decoding the protobuf
export, as a collector would; the server is the real app. Without the variable there
is no tracing at all."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.execution.tracing import Tracing
from tests.app.test_reload import ONE_PAGE, STATS

pytest.importorskip("opentelemetry.sdk", reason="pip install 'spack-cache-graph[tracing]'")
pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the [tracing] extra")
trace_service = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="the [tracing] extra"
)

WALKING = {"query": "query Walk { tags { name packageCount } }", "operationName": "Walk"}
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class Collector:
    """An OTLP/HTTP trace receiver on loopback: every span exported to it, decoded."""

    def __init__(self) -> None:
        self.spans: list[dict] = []
        self.resources: list[dict] = []
        self.paths: list[str] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                collector.receive(self.path, self.headers["content-type"], body)
                answer = trace_service.ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def receive(self, path: str, content_type: str, body: bytes) -> None:
        assert content_type == "application/x-protobuf"
        self.paths.append(path)
        request = trace_service.ExportTraceServiceRequest.FromString(body)
        for resource_spans in request.resource_spans:
            self.resources.append(_attributes(resource_spans.resource.attributes))
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    self.spans.append(
                        {
                            "name": span.name,
                            "id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "trace": span.trace_id.hex(),
                            "attributes": _attributes(span.attributes),
                        }
                    )

    def trees(self) -> list[tuple]:
        """Each root span as (name, [children...]), children in the order they started."""
        children: dict[str, list[dict]] = {}
        for span in self.spans:
            children.setdefault(span["parent"], []).append(span)
        ids = {span["id"] for span in self.spans}

        def tree(span: dict) -> tuple:
            return (span["name"], [tree(c) for c in children.get(span["id"], [])])

        return [tree(s) for s in self.spans if s["parent"] not in ids]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _attributes(pairs) -> dict:
    found = {}
    for pair in pairs:
        kind = pair.value.WhichOneof("value")
        found[pair.key] = getattr(pair.value, kind) if kind else None
    return found


@pytest.fixture
def collector():
    found = Collector()
    yield found
    found.close()


def test_each_request_is_a_span_tree_exported_over_otlp(data: Path, collector, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "cachegraph-test")
    # every step a span, however short it took
    settings = Settings(data=(str(data),), response_cache=0, trace_min_ms=0)
    with TestClient(create_app(settings=settings)) as client:
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE  # first: validated
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE  # then: direct
        walked = client.post("/graphql", json=WALKING).json()
        assert walked == {"data": {"tags": [{"name": "develop", "packageCount": 1}]}}
        joined = client.post("/graphql", json=STATS, headers={"traceparent": TRACEPARENT})
        assert joined.json() == ONE_PAGE
        assert (
            client.get("/graphql", params=STATS, headers={"if-none-match": "*"}).status_code == 304
        )
    # Leaving the app exported every span left.

    assert set(collector.paths) == {"/v1/traces"}
    assert {r["service.name"] for r in collector.resources} == {"cachegraph-test"}
    request = "graphql.request"
    assert collector.trees() == [
        (request, [
            ("graphql.parse", []), ("graphql.validate", []),
            ("graphql.execute", [("graphql.validate.schema", [])]),
        ]),
        (request, [("graphql.parse", []), ("graphql.validate", []), ("graphql.execute", [])]),
        (request, [
            ("graphql.parse", []), ("graphql.validate", []),
            ("graphql.execute", [
                ("graphql.validate.schema", []), ("graphql.resolve Tag.packageCount", []),
            ]),
        ]),
        (request, [("graphql.parse", []), ("graphql.validate", []), ("graphql.execute", [])]),
        (request, []),  # 304: nothing parsed, nothing executed
    ]  # fmt: skip
    roots = [s for s in collector.spans if s["name"] == request]
    assert [r["attributes"].get("http.response.status_code") for r in roots] == [200] * 4 + [304]
    names = [r["attributes"].get("graphql.operation.name") for r in roots]
    assert names == [None, None, "Walk", None, None]
    executes = [s for s in collector.spans if s["name"] == "graphql.execute"]
    assert [s["attributes"]["cachegraph.path"] for s in executes] == [
        "standard", "direct", "standard", "direct"
    ]  # fmt: skip
    [resolver] = [s for s in collector.spans if s["name"].startswith("graphql.resolve")]
    assert resolver["attributes"]["graphql.field.path"] == "tags.0.packageCount"
    # A request carrying a traceparent joins the caller's trace, under its span.
    assert roots[3]["trace"] == TRACEPARENT.split("-")[1]
    assert roots[3]["parent"] == TRACEPARENT.split("-")[2]
    assert len({r["trace"] for r in roots}) == 5


def test_without_an_endpoint_there_is_no_tracing(data: Path, monkeypatch):
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    assert Tracing.from_env() is None
    app = create_app(settings=Settings(data=(str(data),)))
    with TestClient(app) as client:
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE
    executor = next(r.app.executor for r in app.routes if getattr(r, "path", "") == "/graphql")
    assert executor.tracing is None
    assert "TracedResolvers" not in {e.__name__ for e in executor.schema.extensions}


def test_steps_shorter_than_the_threshold_are_no_spans(data: Path, collector, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint)
    settings = Settings(data=(str(data),), response_cache=0, trace_min_ms=60_000)
    with TestClient(create_app(settings=settings)) as client:
        for _ in range(2):
            assert client.post("/graphql", json=STATS).json() == ONE_PAGE
        assert "errors" not in client.post("/graphql", json=WALKING).json()
    # Strawberry's execution and the resolvers that walk are spans whatever their time.
    assert collector.trees() == [
        ("graphql.request", [("graphql.execute", [("graphql.validate.schema", [])])]),
        ("graphql.request", []),
        ("graphql.request", [
            ("graphql.execute", [
                ("graphql.validate.schema", []), ("graphql.resolve Tag.packageCount", []),
            ]),
        ]),
    ]  # fmt: skip
