"""/readyz reads counts worked out once, never the load's problems one by one; a load with
many bad records logs the first of them and a count, not a line each."""

from __future__ import annotations

import logging
import tracemalloc

from starlette.testclient import TestClient

from cachegraph.app import create_app
from cachegraph.settings import Settings
from cachegraph.state import LOGGED_PROBLEMS, DataSources, Outcome
from tests.conftest import SEEDS


def test_readyz_with_a_million_problems_copies_none_of_them(seeds_graph):
    app = create_app(seeds_graph, settings=Settings())
    with TestClient(app) as client:
        client.get("/readyz")  # the counts, worked out once for this graph
        problems = [f"page{n}.md: error: empty file" for n in range(1_000_000)]
        app.state.cache.last = Outcome(True, 0.0, "loaded", problems)
        tracemalloc.start()
        try:
            ready = client.get("/readyz").json()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert ready["last_load"] == {
        "ok": True,
        "finished": 0.0,
        "summary": "loaded",
        "problem_count": 1_000_000,
    }
    assert ready["spec_count"] == 454
    # Before, /readyz copied the million problems (dataclasses.asdict): 8 MB of list alone.
    assert peak < 1_000_000, f"/readyz allocated {peak:,} bytes"


def test_a_load_with_many_bad_records_logs_the_first_and_a_count(tmp_path, caplog):
    for n in range(100):
        (tmp_path / f"empty{n:03}.md").write_text("")
    caplog.set_level(logging.INFO, "cachegraph")
    app = create_app(sources=DataSources(paths=[str(tmp_path), str(SEEDS)]))
    with TestClient(app) as client:
        assert client.get("/readyz").json()["last_load"]["problem_count"] == 100
    problems = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert problems == [
        *(f"{tmp_path / f'empty{n:03}.md'}: error: empty file" for n in range(LOGGED_PROBLEMS)),
        f"... and {100 - LOGGED_PROBLEMS} more problems ({100 - LOGGED_PROBLEMS} errors, "
        "0 warnings) not logged: `cachegraph validate` or POST /admin/reload lists them all",
    ]
