"""The deployments' nginx keeps GET answers as the server's headers say: a repeated
dashboard request is answered by nginx alone (no request reaches a replica: their
/metrics say so), an expired copy is revalidated (304 from a replica, no answer
computed), and after a reload of changed data the revalidation brings the new answer."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from cachegraph.ui import ui_operations
from tests.app.conftest import KERAS
from tests.app.test_reload import DTYPES, TOKEN
from tests.app.test_replicas import replicas_behind_nginx
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow

MAX_AGE = 2


def dashboard_url(listen: int) -> str:
    """The explorer's home view, by hash over GET, as a dashboard asks it."""
    text = ui_operations()["Tags"]
    extensions = {
        "persistedQuery": {"version": 1, "sha256Hash": hashlib.sha256(text.encode()).hexdigest()}
    }
    params = {"operationName": "Tags", "variables": "{}", "extensions": json.dumps(extensions)}
    return f"http://127.0.0.1:{listen}/graphql?{urllib.parse.urlencode(params)}"


def served(replicas: list[int]) -> dict[str, float]:
    """/graphql requests the replicas answered, by status."""
    counts: dict[str, float] = {}
    for port in replicas:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
        for status, n in re.findall(
            r'cachegraph_requests_total\{route="/graphql",status="(\d+)"\} (\S+)', text
        ):
            counts[status] = counts.get(status, 0.0) + float(n)
    return counts


def fetch(url: str) -> tuple[str, str, dict]:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.headers["x-cache-status"], response.headers["etag"], json.load(response)


def once_expired(url: str, kept: tuple[str, dict], within: float = MAX_AGE + 30) -> tuple:
    """The first answer nginx gives once its copy expires (it counts whole seconds), asked
    every 0.2 s: until then, each answer is the copy ``kept`` (etag, body), from nginx
    alone (a HIT reaches no replica)."""
    ends = time.monotonic() + within
    while (got := fetch(url))[0] == "HIT":
        assert got[1:] == kept
        assert time.monotonic() < ends, f"nginx's copy did not expire in {within:g} s"
        time.sleep(0.2)
    return got


@pytest.fixture
def cached_topology(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SEEDS / KERAS, data)
    serve = ("--data", str(data), "--admin-token", TOKEN, "--cache-max-age", str(MAX_AGE))
    with replicas_behind_nginx(tmp_path, *serve) as (listen, replicas, _):
        yield data, listen, replicas


def test_nginx_answers_a_repeated_request_and_revalidates_after_a_reload(cached_topology):
    data, listen, replicas = cached_topology
    url = dashboard_url(listen)
    one_tag = {"data": {"tags": [{"name": "develop", "specCount": 130}]}}

    status, etag, answer = fetch(url)
    assert (status, answer) == ("MISS", one_tag)
    assert served(replicas).get("200") == 1.0
    for _ in range(20):
        assert fetch(url) == ("HIT", etag, one_tag)
    assert served(replicas) == {"200": 1.0}  # no request reached a replica

    # Expired: nginx asks with If-None-Match, a replica says 304.
    assert once_expired(url, (etag, one_tag)) == ("REVALIDATED", etag, one_tag)
    kept_at = time.monotonic()  # the copy is fresh again for MAX_AGE from about now
    assert served(replicas) == {"200": 1.0, "304": 1.0}
    assert fetch(url) == ("HIT", etag, one_tag)

    shutil.copy(SEEDS / DTYPES, data)
    for port in replicas:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/admin/reload",
            method="POST",
            headers={"authorization": f"Bearer {TOKEN}"},
        )
        urllib.request.urlopen(request, timeout=60).close()
    # Until it expires, the copy kept is given: asked while surely fresh (on a loaded machine
    # the reloads may take longer than the copy lives; then it is not asked here).
    if time.monotonic() - kept_at < MAX_AGE / 2:
        assert fetch(url)[0] == "HIT"

    status, new_etag, answer = once_expired(url, (etag, one_tag))
    assert status == "EXPIRED"  # revalidated, and the replica answered anew
    assert answer["data"]["tags"][0]["specCount"] == 259
    assert new_etag != etag and new_etag.split("-")[0] != etag.split("-")[0]
    assert served(replicas) == {"200": 2.0, "304": 1.0}
    assert fetch(url) == ("HIT", new_etag, answer)


def test_nginx_keeps_no_post_and_no_answer_with_errors(cached_topology):
    _, listen, replicas = cached_topology
    bad = urllib.parse.urlencode({"query": '{ spec(hash: "abc") { hash } }'})
    for _ in range(3):
        status, etag, answer = fetch(f"http://127.0.0.1:{listen}/graphql?{bad}")
        assert answer["errors"] and etag is None and status == "MISS"
    for _ in range(3):
        request = urllib.request.Request(
            f"http://127.0.0.1:{listen}/graphql",
            data=b'{"query": "{ stats { specCount } }"}',
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["x-cache-status"] is None
    assert served(replicas) == {"200": 6.0}
