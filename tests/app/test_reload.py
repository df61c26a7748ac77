"""Reloading data without a restart: by POST /admin/reload with a bearer token, and on
SIGHUP; a reload of broken data keeps the old data; a reload under load loses nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from tests.app.test_replicas import waited
from tests.app.test_serve import free_port, wait_healthy
from tests.conftest import SEEDS

TOKEN = "s3cret-token"
STATS = {"query": "{ stats { packageCount specCount } }"}
DTYPES = "001_1922a38d614f6ffb.txt"
ONE_PAGE = {"data": {"stats": {"packageCount": 1, "specCount": 130}}}
TWO_PAGES = {"data": {"stats": {"packageCount": 2, "specCount": 259}}}


def app_on(data: Path, **settings):
    return create_app(settings=Settings(data=(str(data),), **settings))


def test_no_token_configured_no_endpoint(data):
    with TestClient(app_on(data)) as client:
        assert client.post("/admin/reload").status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", TOKEN, f"Basic {TOKEN}"])
def test_reload_needs_the_bearer_token(data, header):
    headers = {"authorization": header} if header else {}
    with TestClient(app_on(data, admin_token=TOKEN)) as client:
        response = client.post("/admin/reload", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json() == {"errors": [{"message": "a valid bearer token is required"}]}


def test_reload_serves_the_new_data(data, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with TestClient(app_on(data, admin_token_file=str(token_file))) as client:
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE
        shutil.copy(SEEDS / DTYPES, data)
        response = client.post("/admin/reload", headers={"authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 200
        assert response.json() | {"finished": 0} == {
            "ok": True,
            "finished": 0,
            "summary": "2 pages, 0 spec files, 0 indices: 259 records, 259 specs, 1 tag; "
            "0 errors, 0 warnings",
            "problems": [],
        }
        assert client.post("/graphql", json=STATS).json() == TWO_PAGES


def test_a_reload_of_broken_data_keeps_the_old_data_and_says_why(data):
    with TestClient(app_on(data, admin_token=TOKEN)) as client:
        (data / "broken.md").write_text("---\ntitle: [unclosed\n---\n")
        shutil.copy(SEEDS / DTYPES, data)
        response = client.post("/admin/reload", headers={"authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 422
        outcome = response.json()
        assert (outcome["ok"], outcome["summary"]) == (
            False,
            "reload refused (1 error, more than the 0 of the data served); still serving the "
            "previous data",
        )
        assert [p.split(": error: ")[0] for p in outcome["problems"]] == [f"{data / 'broken.md'}:3"]
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE
        ready = client.get("/readyz").json()
        assert (ready["spec_count"], ready["last_load"]["ok"]) == (130, False)
        assert "cachegraph_last_reload_success 0.0" in client.get("/metrics").text


def test_a_reload_of_vanished_data_keeps_the_old_data(data):
    with TestClient(app_on(data, admin_token=TOKEN)) as client:
        shutil.rmtree(data)
        response = client.post("/admin/reload", headers={"authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 422
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE


def _post(port: int, path: str, body: dict | None = None, headers: dict | None = None):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=json.dumps(body or {}).encode(),
        headers={"content-type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.load(response)


def reloads_done(port: int) -> float:
    """The reloads the server has finished, well or not (its first load counted): /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(float(n) for n in re.findall(r"cachegraph_reloads_total\{[^}]*\} (\S+)", text))


@pytest.mark.slow
def test_reloads_under_load_lose_no_request_and_mix_no_data(data):
    """Eight clients ask without pause while the data changes and is reloaded six times,
    by POST and by SIGHUP: every answer is whole and is the old data or the new."""
    port = free_port()
    env = {**os.environ, "CACHEGRAPH_ADMIN_TOKEN": TOKEN, "CACHEGRAPH_LOG_LEVEL": "warning"}
    process = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port), "--data", str(data)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        wait_healthy(port, process)
        answers: list[dict] = []
        failures: list[str] = []
        stop = threading.Event()

        def client() -> None:
            while not stop.is_set():
                try:
                    answers.append(_post(port, "/graphql", STATS)[1])
                except (OSError, urllib.error.HTTPError) as exc:
                    failures.append(repr(exc))

        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        auth = {"authorization": f"Bearer {TOKEN}"}
        outcomes = []
        reloaded = reloads_done(port)
        for i in range(6):
            asked = len(answers)  # as many answers again as there are clients, each change
            assert waited(lambda asked=asked: len(answers) >= asked + len(threads))
            if i % 2 == 0:
                shutil.copy(SEEDS / DTYPES, data)
            else:
                (data / DTYPES).unlink()
            if i < 4:
                outcomes.append(_post(port, "/admin/reload", headers=auth)[0])
            else:
                process.send_signal(signal.SIGHUP)  # answered at once: the reload follows
                assert waited(lambda i=i: reloads_done(port) == reloaded + i + 1)
        asked = len(answers)
        assert waited(lambda: len(answers) >= asked + len(threads))
        stop.set()
        for t in threads:
            t.join()
        assert failures == []
        assert outcomes == [200, 200, 200, 200]
        assert len(answers) > 100
        assert {json.dumps(a) for a in answers} == {json.dumps(ONE_PAGE), json.dumps(TWO_PAGES)}
        # The last change (by SIGHUP) removed the second page again.
        assert _post(port, "/graphql", STATS)[1] == ONE_PAGE
    finally:
        process.terminate()
        process.wait(10)


# -- issue 30: what an operator met ---------------------------------------------------------


def _reload(client) -> tuple[int, dict]:
    response = client.post("/admin/reload", headers={"authorization": f"Bearer {TOKEN}"})
    return response.status_code, response.json()


def test_a_server_that_started_with_errors_takes_new_data_with_no_more_errors(data):
    (data / "broken.md").write_text("---\ntitle: [unclosed\n---\n")
    with TestClient(app_on(data, admin_token=TOKEN)) as client:
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE
        shutil.copy(SEEDS / DTYPES, data)
        status, outcome = _reload(client)
        assert (status, outcome["ok"], len(outcome["problems"])) == (200, True, 1)
        assert client.post("/graphql", json=STATS).json() == TWO_PAGES
        (data / "broken2.md").write_text("---\ntitle: [unclosed\n---\n")
        (data / DTYPES).unlink()
        status, outcome = _reload(client)
        assert (status, outcome["summary"]) == (
            422,
            "reload refused (2 errors, more than the 1 of the data served); still serving the "
            "previous data",
        )
        assert client.post("/graphql", json=STATS).json() == TWO_PAGES


def test_an_empty_data_folder_is_not_ready_until_data_comes(data):
    (data / "000_32877e6a9739e9c6.txt").unlink()
    with TestClient(app_on(data, admin_token=TOKEN)) as client:
        ready = client.get("/readyz")
        assert (ready.status_code, ready.json()["status"], ready.json()["reason"]) == (
            503, "empty", "no specs loaded"
        )  # fmt: skip
        shutil.copy(SEEDS / DTYPES, data)
        assert _reload(client)[0] == 200
        assert (client.get("/readyz").status_code, client.get("/readyz").json()["status"]) == (
            200, "ready"
        )  # fmt: skip


def test_the_load_summary_and_readyz_count_the_same_tags(data):
    # a page of tag "gone" whose only record is refused: no spec is in that tag
    (data / "gone.md").write_text(
        '---\ntitle: "zlib"\ncategories: [package, gone]\nspec_details: [5]\n---\n'
    )
    with TestClient(app_on(data)) as client:
        ready = client.get("/readyz").json()
        assert ready["tag_count"] == 1
        assert ", 1 tag; 1 error" in ready["last_load"]["summary"]
