"""The server as an Apollo Federation subgraph (`--federation`), in a process of its own:
marking entities changes their types for the whole process."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest

from tests.app.test_serve import free_port, wait_healthy
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow

KERAS_SPEC = "22xqlomma3rncrgywukvxs53oiorwmgd"


def ask(port: int, query: str, variables: dict | None = None) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def port():
    port = free_port()
    command = [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
               "--data", str(SEEDS)]  # fmt: skip
    process = subprocess.Popen(
        [*command, "--federation"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        wait_healthy(port, process)
        yield port
    finally:
        process.terminate()
        process.wait(10)


def test_the_service_sdl_keys_entities_by_their_natural_ids(port):
    sdl = ask(port, "{ _service { sdl } }")["data"]["_service"]["sdl"]
    keyed = sorted(line.rstrip(" {") for line in sdl.splitlines() if "@key(" in line)
    assert sdl.startswith(
        'schema @link(url: "https://specs.apollo.dev/federation/v2.11", import: ["@key"])'
    )
    assert keyed == [
        'type Compiler implements Node @key(fields: "name", resolvable: true)',
        'type Package implements Node @key(fields: "name", resolvable: true)',
        'type Spec implements Node @key(fields: "hash", resolvable: true)',
        'type Stack implements Node @key(fields: "name", resolvable: true)',
        'type Tag implements Node @key(fields: "name", resolvable: true)',
        'type Target implements Node @key(fields: "name", resolvable: true)',
    ]
    assert "union _Entity = Compiler | Package | Spec | Stack | Tag | Target" in sdl


def test_entities_are_found_by_key(port):
    representations = [
        {"__typename": "Spec", "hash": KERAS_SPEC},
        {"__typename": "Package", "name": "py-keras"},
        {"__typename": "Package", "name": "no-such-package"},
        {"__typename": "Stack", "name": "ml-linux-x86_64-cuda"},
    ]
    query = """query($r: [_Any!]!) { _entities(representations: $r) {
        __typename
        ... on Spec { shortHash package { name } }
        ... on Package { specCount }
        ... on Stack { specCount }
    } }"""
    assert ask(port, query, {"r": representations}) == {
        "data": {
            "_entities": [
                {"__typename": "Spec", "shortHash": "22xqlom", "package": {"name": "py-keras"}},
                {"__typename": "Package", "specCount": 130},
                None,
                {"__typename": "Stack", "specCount": 111},
            ]
        }
    }


def test_the_contract_queries_still_answer(port):
    assert ask(port, "{ stats { specCount } }") == {"data": {"stats": {"specCount": 454}}}
