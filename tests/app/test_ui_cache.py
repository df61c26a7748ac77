"""The explorer in real headless Chromium asks by hash over GET, so the browser keeps its
answers: a page opened again revalidates them (304), and a reload of the data shows up
as new ETags and the new data."""

from __future__ import annotations

import json
import re
import shutil
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.app.conftest import KERAS
from tests.app.test_reload import DTYPES, TOKEN
from tests.browser import chromium, serving
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow


def reload_data(origin: str) -> None:
    request = urllib.request.Request(
        f"{origin}/admin/reload", method="POST", headers={"authorization": f"Bearer {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert json.load(response)["ok"]


def answered(origin: str) -> dict[str, int]:
    """/graphql requests the server answered, by status."""
    with urllib.request.urlopen(f"{origin}/metrics", timeout=5) as response:
        text = response.read().decode()
    found = re.findall(r'cachegraph_requests_total\{route="/graphql",status="(\d+)"\} (\S+)', text)
    return {status: int(float(n)) for status, n in found}


def test_the_explorer_asks_by_hash_over_get_and_sees_a_reload_as_new_etags(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SEEDS / KERAS, data)
    # max-age 0: the browser revalidates every answer each time it is asked again
    arguments = ["--data", str(data), "--admin-token", TOKEN, "--cache-max-age", "0"]
    with serving(*arguments) as origin, chromium() as browser:
        context = browser.new_context()
        page = context.new_page()
        seen: list[tuple[str, str, int, str | None, str | None]] = []

        def record(response) -> None:
            request = response.request
            if urllib.parse.urlsplit(request.url).path == "/graphql":
                sent = request.all_headers().get("if-none-match")
                etag = response.all_headers().get("etag")
                seen.append((request.method, request.url, response.status, etag, sent))

        page.on("response", record)

        def visit() -> list[tuple]:
            seen.clear()
            page.goto(origin + "/")
            page.locator("html[data-painted]").wait_for(timeout=30_000)
            page.wait_for_load_state("networkidle")
            return list(seen)

        first = visit()
        assert first, "the home view asked nothing"
        for method, url, status, etag, _ in first:
            params = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
            assert method == "GET" and "query" not in params, url
            assert json.loads(params["extensions"][0])["persistedQuery"]["version"] == 1
            assert status == 200 and etag, (url, status, etag)
        page.get_by_text("130", exact=False).first.wait_for(timeout=10_000)
        tags = {url: etag for _, url, _, etag, _ in first}

        # The same view again: the browser sends the validators it kept, and the server
        # answers 304 to each (Chromium shows the page the answer it kept, as a 200).
        again = visit()
        assert {url for _, url, *_ in again} == set(tags)
        assert all(sent == tags[url] for _, url, _, _, sent in again), again
        assert answered(origin) == {"200": len(first), "304": len(again)}

        shutil.copy(SEEDS / DTYPES, data)
        reload_data(origin)
        after = visit()
        assert {status for _, _, status, *_ in after} == {200}
        assert answered(origin) == {"200": len(first) + len(after), "304": len(again)}
        for _, url, _, etag, sent in after:
            assert sent == tags[url]  # revalidated the copy it had ...
            assert etag.split("-")[0] != tags[url].split("-")[0]  # ... of the old data
        page.get_by_text("259", exact=False).first.wait_for(timeout=10_000)
        context.close()
