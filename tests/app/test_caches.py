"""What the server keeps between requests: answers (until the data changes) and the
snapshot it restarts from (only while no data file changed)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from tests.app.test_reload import DTYPES, ONE_PAGE, STATS, TOKEN, TWO_PAGES
from tests.conftest import SEEDS

AUTH = {"authorization": f"Bearer {TOKEN}"}


def cache_counts(client: TestClient) -> dict[str, float]:
    text = client.get("/metrics").text
    return {
        result: float(value)
        for result, value in re.findall(
            r'cachegraph_response_cache_total\{result="(\w+)"\} (\S+)', text
        )
    }


def test_a_repeated_operation_is_answered_from_the_cache_until_a_reload(data: Path):
    settings = Settings(data=(str(data),), admin_token=TOKEN, response_cache=1_000_000)
    with TestClient(create_app(settings=settings)) as client:
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE
        assert cache_counts(client) == {"hit": 1.0, "miss": 1.0}
        shutil.copy(SEEDS / DTYPES, data)
        assert client.post("/admin/reload", headers=AUTH).status_code == 200
        # The graph changed: the kept answer is not given again.
        assert client.post("/graphql", json=STATS).json() == TWO_PAGES
        assert cache_counts(client) == {"hit": 1.0, "miss": 2.0}


def test_other_variables_or_errors_are_not_answered_from_the_cache(data: Path):
    query = "query($h: String!) { spec(hash: $h) { package { name } } }"
    settings = Settings(data=(str(data),), response_cache=1_000_000)
    with TestClient(create_app(settings=settings)) as client:
        for h in ("abc", "abc", "zzzzzzzz", "zzzzzzzz"):
            client.post("/graphql", json={"query": query, "variables": {"h": h}})
        # Two errors (too short), then an answer computed once and given again.
        assert cache_counts(client) == {"hit": 1.0, "miss": 3.0}


def test_without_a_cache_every_operation_is_executed(data: Path):
    with TestClient(create_app(settings=Settings(data=(str(data),), response_cache=0))) as client:
        for _ in range(3):
            assert client.post("/graphql", json=STATS).json() == ONE_PAGE
        assert cache_counts(client) == {}


def cache_metrics(client: TestClient, cache: str) -> dict[str, float]:
    text = client.get("/metrics").text
    found = re.findall(rf'cachegraph_cache_(\w+)\{{cache="{cache}"\}} (\S+)', text)
    return {name: float(value) for name, value in found}


def test_the_response_cache_holds_no_more_bytes_than_its_budget(seeds_graph):
    budget = 32_000  # an entry over 4,000 bytes (an eighth) is not kept
    small = "{ specs(first: 20) { nodes { hash specString } } }"  # answers of 2.9 kB
    with TestClient(create_app(seeds_graph, settings=Settings(response_cache=budget))) as client:
        for n in range(40):  # forty distinct texts: 117 kB of answers
            assert len(client.post("/graphql", json={"query": small + " " * n}).content) == 2_919
        found = cache_metrics(client, "responses")
        assert found["budget_bytes"] == budget
        assert 0 < found["bytes"] <= budget
        assert found["entries"] + found["evictions"] == 40
        large = "{ specs(first: 100) { nodes { hash specString } } }"  # 14.5 kB: not kept
        assert len(client.post("/graphql", json={"query": large}).content) == 14_568
        assert cache_metrics(client, "responses")["entries"] == found["entries"]


def wait_for(path: Path, seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists()


def test_the_server_restarts_from_its_snapshot_while_the_data_is_unchanged(
    data: Path, tmp_path: Path
):
    snap = tmp_path / "snapshot"
    settings = Settings(data=(str(data),), snapshot=str(snap))
    with TestClient(create_app(settings=settings)) as client:
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE
    wait_for(snap)
    written = snap.stat().st_mtime_ns
    with TestClient(create_app(settings=settings)) as client:
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE
        assert client.get("/readyz").json()["last_load"]["ok"] is True
    assert snap.stat().st_mtime_ns == written  # read, not written again
    shutil.copy(SEEDS / DTYPES, data)
    with TestClient(create_app(settings=settings)) as client:
        # A page was added: the pages are loaded again, and a new snapshot written.
        assert client.post("/graphql", json=STATS).json() == TWO_PAGES
    deadline = time.monotonic() + 10
    while snap.stat().st_mtime_ns == written and time.monotonic() < deadline:
        time.sleep(0.05)
    assert snap.stat().st_mtime_ns != written
