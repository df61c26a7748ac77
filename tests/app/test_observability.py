"""Request ids, JSON logs, Prometheus metrics, CORS, and a JSON 500 for any crash."""

from __future__ import annotations

import gc
import json
import logging
import os
import sys

import pytest
from cachegraph.graph import load
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.observe import JsonFormatter, new_request_id
from tests.conftest import SEEDS, break_records

STATS = {"query": "{ stats { specCount } }"}


@pytest.fixture
def client(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings())) as client:
        yield client


def samples(client: TestClient) -> dict[tuple, float]:
    text = client.get("/metrics").text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_every_response_carries_a_request_id(client):
    made = client.get("/healthz").headers["x-request-id"]
    assert len(made) == 16 and int(made, 16) >= 0
    given = client.post("/graphql", json=STATS, headers={"x-request-id": "dash-42"})
    assert given.headers["x-request-id"] == "dash-42"
    odd = client.get("/healthz", headers={"x-request-id": "no spaces allowed"})
    assert odd.headers["x-request-id"] != "no spaces allowed"


def test_a_masked_error_and_its_log_line_share_the_request_id(caplog):
    graph = load([SEEDS])[0]
    break_records(graph)  # resolvers will fail unexpectedly
    caplog.set_level(logging.ERROR, "cachegraph.errors")
    with TestClient(create_app(graph, settings=Settings())) as client:
        response = client.post("/graphql", json={"query": "{ specs(first: 1) { nodes { hash } } }"})
    request_id = response.headers["x-request-id"]
    assert response.json()["errors"][0]["extensions"]["requestId"] == request_id
    [record] = caplog.records
    assert record.request_id == request_id
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == request_id
    assert "AttributeError: 'NoneType' object has no attribute 'hash'" in line["error"]
    assert "Traceback" not in response.text


def test_log_lines_are_json_objects():
    record = logging.LogRecord("cachegraph.http", logging.INFO, __file__, 1, "GET %s", ("/",), None)
    record.request_id = "abc"
    record.fields = {"status": 200, "ms": 1.5}
    line = json.loads(JsonFormatter().format(record))
    assert set(line) == {"time", "level", "logger", "message", "request_id", "status", "ms"}
    assert (line["level"], line["logger"], line["message"], line["status"]) == (
        "info",
        "cachegraph.http",
        "GET /",
        200,
    )
    assert line["time"].endswith("Z")


def test_a_crash_outside_graphql_is_a_json_500_with_the_request_id(seeds_graph):
    app = create_app(seeds_graph, settings=Settings())
    with TestClient(app, raise_server_exceptions=False) as client:
        app.state.cache.graph = object()  # /readyz cannot count it
        response = client.get("/readyz")
    request_id = response.headers["x-request-id"]
    assert response.status_code == 500
    assert response.json() == {
        "errors": [
            {
                "message": f"Internal server error (request id {request_id}).",
                "extensions": {"code": "INTERNAL_SERVER_ERROR", "requestId": request_id},
            }
        ]
    }


def test_metrics_count_requests_rejections_and_the_graph(client):
    client.post("/graphql", json=STATS)
    aliases = " ".join(f"a{i}: stats {{ specCount }}" for i in range(101))
    client.post("/graphql", json={"query": "{ " + aliases + " }"})
    client.post("/graphql", json={"query": '{ spec(hash: "abc") { hash } }'})
    client.post("/graphql", json=[STATS] * 11)
    found = samples(client)
    graphql_200 = ("cachegraph_requests_total", (("route", "/graphql"), ("status", "200")))
    assert found[graphql_200] == 3
    assert found[("cachegraph_requests_total", (("route", "/graphql"), ("status", "400")))] == 1
    assert found[("cachegraph_rejections_total", (("limit", "max_aliases"),))] == 1
    assert found[("cachegraph_rejections_total", (("limit", "max_batch"),))] == 1
    assert found[("cachegraph_graphql_errors_total", (("kind", "client"),))] == 2
    assert found[("cachegraph_request_duration_seconds_count", (("route", "/graphql"),))] == 4
    assert found[("cachegraph_graph_objects", (("kind", "spec"),))] == 454
    assert found[("cachegraph_graph_objects", (("kind", "package"),))] == 4
    assert found[("cachegraph_last_reload_success", ())] == 1
    assert found[("cachegraph_reloads_total", (("result", "ok"),))] == 1


def test_each_run_of_the_garbage_collector_is_timed_by_generation(client):
    """A full collection holds every thread, the event loop too: an operator sees how long."""
    before = samples(client)
    gc.collect(1)
    gc.collect(2)
    gc.collect(2)
    found = samples(client)
    for generation, runs in (("1", 1), ("2", 2)):
        key = ("cachegraph_gc_pause_seconds_count", (("generation", generation),))
        assert found[key] - before[key] >= runs
        spent = ("cachegraph_gc_pause_seconds_sum", (("generation", generation),))
        assert found[spent] > before[spent]
        every = ("cachegraph_gc_pause_seconds_bucket", (("generation", generation), ("le", "+Inf")))
        assert found[every] == found[key]


def test_the_server_sets_the_collectors_thresholds_and_the_switch_interval(seeds_graph):
    """Python's defaults made a full collection of every large answer (the graph is frozen
    out of the collector's count) and kept the event loop 5 ms behind each busy thread."""
    gc.set_threshold(700, 10, 10)
    sys.setswitchinterval(0.005)
    with TestClient(create_app(seeds_graph, settings=Settings())):
        assert gc.get_threshold() == (10_000, 10, 10)
        assert sys.getswitchinterval() == pytest.approx(0.0002)


def test_cors_allows_only_the_configured_origins(seeds_graph):
    settings = Settings(cors_origins=("https://dash.example.org",))
    preflight = {"access-control-request-method": "POST"}
    with TestClient(create_app(seeds_graph, settings=settings)) as client:
        allowed = client.options(
            "/graphql", headers={"origin": "https://dash.example.org", **preflight}
        )
        refused = client.options(
            "/graphql", headers={"origin": "https://evil.example", **preflight}
        )
        simple = client.post("/graphql", json=STATS, headers={"origin": "https://dash.example.org"})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://dash.example.org"
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    assert simple.headers["access-control-allow-origin"] == "https://dash.example.org"
    assert simple.json() == {"data": {"stats": {"specCount": 454}}}


def test_a_forked_worker_names_its_requests_apart_from_its_parent():
    """``--workers`` forks: each worker's request ids must differ from the others'."""
    parent = new_request_id()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its id, then out without running the parent's cleanup
        os.write(write, new_request_id().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.waitpid(pid, 0)
    os.close(read)
    assert len(child) == 16 and child[:8] != parent[:8]
    assert new_request_id()[:8] == parent[:8]
