"""Real headless Chromium (Debian's package) driven by Playwright, and a real server process
for it to talk to. Browser tests skip, saying why, where Chromium is absent."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.test_serve import free_port, wait_healthy
from tests.conftest import ROOT

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: As this machine needs them: no sandbox as root, and no calls to Google's hosts.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Screenshots and other things to look at after a run (CI keeps the folder).
ARTIFACTS = Path(os.environ.get("CACHEGRAPH_ARTIFACTS", ROOT / "build" / "artifacts"))


@contextlib.contextmanager
def chromium() -> Iterator:
    """A Playwright Browser on the system Chromium."""
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium (Debian's package 'chromium'; .ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def serving(*arguments: str, seconds: float = 60) -> Iterator[str]:
    """The origin of ``cachegraph serve ARGUMENTS`` on a free port, stopped afterwards."""
    port = free_port()
    command = [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port), *arguments]
    server = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(port, server, seconds)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)


def ask(origin: str, query: str, variables: dict | None = None) -> dict:
    """The data of the server's own answer, asked directly."""
    request = urllib.request.Request(
        f"{origin}/graphql",
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        answer = json.load(response)
    assert "errors" not in answer, answer
    return answer["data"]
