"""The server starts on data with broken files, logs what it skipped, and serves the rest;
large loads show progress on a terminal only."""

from __future__ import annotations

import io
import logging

import pytest
from starlette.testclient import TestClient

from cachegraph import DataSources, Settings, create_app
from cachegraph.progress import ProgressLine
from cachegraph.state import NoData
from tests.conftest import ROOT, SEEDS

BROKEN = ROOT / "tests" / "corpus" / "broken"


def test_the_server_starts_anyway_and_logs_what_it_skipped(caplog):
    caplog.set_level(logging.INFO, "cachegraph")
    app = create_app(sources=DataSources(paths=[str(BROKEN), str(SEEDS)]))
    with TestClient(app) as client:
        ready = client.get("/readyz").json()
        stats = client.post("/graphql", json={"query": "{ stats { specCount } }"}).json()
    assert (ready["status"], ready["spec_count"]) == ("ready", 459)
    assert ready["last_load"]["problem_count"] == 19
    assert str(BROKEN) not in str(ready)  # no paths to anyone who asks
    assert stats == {"data": {"stats": {"specCount": 459}}}
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert f"{BROKEN / 'empty.md'}: error: empty file" in errors
    assert len(errors) == 19
    assert any(r.getMessage().startswith("loaded 8 pages") for r in caplog.records)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal():
    out = Terminal()
    progress = ProgressLine(out)
    progress(200, 5000)
    progress.done()
    text = out.getvalue()
    assert text.startswith("\rloading: 200 files, 5,000 specs, ") and "files/s" in text
    assert text.endswith("\r\033[K")


def test_no_progress_elsewhere():
    out = io.StringIO()
    progress = ProgressLine(out)
    progress(200, 5000)
    progress.done()
    assert out.getvalue() == ""


def test_an_app_whose_data_cannot_be_read_does_not_start(tmp_path):
    app = create_app(
        sources=DataSources(paths=[str(tmp_path / "nothing-here")]), settings=Settings()
    )
    with (
        pytest.raises(NoData, match="nothing-here: error: no such file or folder"),
        TestClient(app),
    ):
        pass
