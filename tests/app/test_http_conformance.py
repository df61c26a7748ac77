"""GraphQL over HTTP (https://graphql.github.io/graphql-over-http/): the
``application/graphql-response+json`` media type, and the audit of ``graphql-http``, the
specification's reference implementation, run against a real server (issue 30)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cachegraph import create_app
from tests.app.test_serve import free_port, wait_healthy
from tests.conftest import ROOT, SEEDS

GRAPHQL_RESPONSE = "application/graphql-response+json; charset=utf-8"
ACCEPT = {"accept": "application/graphql-response+json, application/json;q=0.9"}


@pytest.fixture(scope="module")
def client(seeds_graph):
    with TestClient(create_app(seeds_graph)) as client:
        yield client


def _post(client, body: dict, headers: dict) -> tuple[int, str, dict]:
    response = client.post("/graphql", json=body, headers=headers)
    return response.status_code, response.headers["content-type"], response.json()


REQUEST_ERRORS = [
    pytest.param(
        {"query": "{ stats {"},
        [{"message": "Syntax Error: Expected Name, found <EOF>.",
          "locations": [{"line": 1, "column": 10}]}],
        id="document parsing",
    ),
    pytest.param(
        {"query": "{ nope }"},
        [{"message": "Cannot query field 'nope' on type 'Query'. Did you mean 'node'?",
          "locations": [{"line": 1, "column": 3}]}],
        id="document validation",
    ),
    pytest.param(
        {"query": "query($h: String!) { spec(hash: $h) { hash } }", "variables": {"h": 5}},
        [{"message": "Variable '$h' has invalid value: String cannot represent a non string "
                     "value: 5",
          "locations": [{"line": 1, "column": 7}], "extensions": {"code": "BAD_USER_INPUT"}}],
        id="variable coercion",
    ),
    pytest.param(
        {"query": "{ stats { specCount } }" + " " * 100_000},
        [{"message": "the query document is 100,023 bytes (limit max_query_bytes = 100000)",
          "extensions": {"code": "LIMIT_EXCEEDED", "limit": "max_query_bytes", "value": 100000}}],
        id="a limit",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("body", "errors"), REQUEST_ERRORS)
def test_a_request_error_is_400_without_data_in_the_graphql_media_type(client, body, errors):
    assert _post(client, body, ACCEPT) == (400, GRAPHQL_RESPONSE, {"errors": errors})
    # a client of application/json gets what it always got
    assert _post(client, body, {"accept": "application/json"}) == (
        200, "application/json", {"data": None, "errors": errors}
    )  # fmt: skip


def test_an_executed_operation_is_200_in_the_media_type_asked_for(client):
    assert _post(client, {"query": "{ stats { specCount } }"}, ACCEPT) == (
        200, GRAPHQL_RESPONSE, {"data": {"stats": {"specCount": 454}}}
    )  # fmt: skip
    # a field's error: the operation was executed, and its data is the answer
    assert _post(client, {"query": '{ spec(hash: "22xq") { hash } }'}, ACCEPT) == (
        200,
        GRAPHQL_RESPONSE,
        {
            "data": {"spec": None},
            "errors": [{"message": "hash prefix '22xq' is 4 characters; give at least 7",
                        "locations": [{"line": 1, "column": 3}], "path": ["spec"]}],
        },
    )  # fmt: skip
    for accept in ("", "*/*", "application/json", "application/graphql-response+json;q=0"):
        status, kind, _ = _post(client, {"query": "{ stats { specCount } }"}, {"accept": accept})
        assert (status, kind) == (200, "application/json")


def test_a_body_that_is_not_json_is_400_in_either_media_type(client):
    for accept, kind in ((ACCEPT["accept"], GRAPHQL_RESPONSE), ("", "application/json")):
        response = client.post(
            "/graphql", content="{", headers={"content-type": "application/json", "accept": accept}
        )
        assert (response.status_code, response.headers["content-type"], response.json()) == (
            400, kind, {"errors": [{"message": "Unable to parse request body as JSON"}]}
        )  # fmt: skip


# -- the audit ------------------------------------------------------------------------------

#: the versions audited (.ci/run installs them into .ci/node_modules)
PACKAGES = ("graphql-http@1.23.1", "graphql@16.15.0")
AUDIT = """
import { serverAudits } from 'graphql-http';
const results = [];
for (const audit of serverAudits({ url: process.argv[2] })) {
  const { status, reason } = await audit.fn();
  results.push({ name: audit.name, status, reason: reason || null });
}
console.log(JSON.stringify(results));
"""


def _audit_folder(tmp: Path) -> Path:
    """Where graphql-http is installed: .ci/node_modules, or here by npm; skips saying why."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: .ci/run installs it (Debian's nodejs and npm)")
    installed = ROOT / ".ci"
    if (installed / "node_modules" / "graphql-http").is_dir():
        return installed
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed, nor graphql-http in .ci/node_modules (.ci/run does so)")
    try:
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(tmp), *PACKAGES],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"npm could not install {', '.join(PACKAGES)}: {exc}")
    return tmp


@pytest.mark.slow
def test_the_graphql_over_http_audit_passes_with_no_warning(tmp_path):
    folder = _audit_folder(tmp_path)
    script = folder / "cachegraph-audit.mjs"
    script.write_text(AUDIT)
    port = free_port()
    serve = ["serve", "--port", str(port), "--data", str(SEEDS)]
    server = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", *serve],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_healthy(port, server)
        done = subprocess.run(
            ["node", str(script), f"http://127.0.0.1:{port}/graphql"],
            capture_output=True, text=True, timeout=300, cwd=folder,
            env={**os.environ, "NODE_PATH": str(folder / "node_modules")},
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(10)
        if script.parent == ROOT / ".ci":
            script.unlink()
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [r for r in results if r["status"] != "ok"] == []
    assert len(results) >= 50  # the audit ran (61 checks in graphql-http 1.23.1)
