"""A mirror file linked to a planted secret: `cachegraph validate` and a real server (its
log and its GraphQL answers) name the path and what is wrong, never what the file holds."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.app.test_serve import free_port, post, wait_healthy
from tests.graph.sources.test_links import KINDS, SECRET, SECRETS, planted

pytestmark = pytest.mark.slow


def test_a_planted_secret_shows_nowhere(shared_mirrors: Path, tmp_path: Path):
    mirrors = []
    for f, form in enumerate(SECRETS):
        secret = tmp_path / f"secret-{f}"
        secret.write_text(SECRETS[form])
        for k, kind in enumerate(KINDS):
            root = planted(kind, secret, tmp_path / f"{f}-{k}", shared_mirrors)
            mirrors += ["--mirror", f"t:s{f}-{k}={root}"]
    validate = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", "validate", *mirrors, "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "error" in validate.stdout and validate.returncode != 0
    plain = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", "validate", *mirrors],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert "not valid JSON" in plain.stdout + plain.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
         "--log-level", "debug", *mirrors],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_healthy(port, server)
        answer = post(
            port,
            "{ loadStatus { summary problems(first: 1000) { totalCount nodes { path message } } }"
            " mirrors { name location errors warnings specCount } stats { specCount } }",
        )
        assert answer["data"]["loadStatus"]["problems"]["totalCount"] > len(KINDS)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ui/status", timeout=10) as r:
            page = r.read().decode()
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
    said = {
        "validate --json": validate.stdout + validate.stderr,
        "validate": plain.stdout + plain.stderr,
        "the GraphQL answer": str(answer),
        "the status page": page,
        "the server's log": (out + err).decode(),
    }
    assert [where for where, text in said.items() if SECRET in text] == []
