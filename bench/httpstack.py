"""Issue 43: the HTTP stacks the server could run on, measured side by side.

    python -m bench.httpstack [--requests 2000] [--data PATH]

One keep-alive client (``http.client``), ``--requests`` requests after 200 unmeasured,
p50 and p99 of each:

- a bare Starlette route returning a prepared 190-byte JSON answer, under Uvicorn's plain
  h11 and httptools protocols and under ``cachegraph.server``'s (with the header timer), on
  asyncio and on uvloop;
- the server itself (``cachegraph serve``, response cache off) on each stack it can run on:
  ``/healthz``, ``{ __typename }`` and the point query (a spec by hash with its compiler,
  target and stacks), on the bundled data or ``--data``. A stack is chosen by making the
  imports of the others fail (a module of their name that raises ImportError, first on
  ``PYTHONPATH``), as where their wheels are missing.

It prints a Markdown table (docs/benchmarks.md, "HTTP stack").
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BODY = (
    b'{"data":{"spec":{"hash":"22xqlomma3rncrgywukvxs53oiorwmgd","compiler":{"name":"gcc",'
    b'"version":"11.4.0"},"target":{"name":"x86_64_v3"},"stacks":[{"name":"e4s"}]}}}'
)
BARE = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Route
{block}
async def answer(request):
    await request.body()
    return Response({body!r}, media_type="application/json")
app = Starlette(routes=[Route("/x", answer, methods=["GET", "POST"])])
uvicorn.run(app, host="127.0.0.1", port={port}, http={http!r}, loop={loop!r},
            log_level="warning", access_log=False)
"""
#: (label, uvicorn http, loop) of the bare route
BARE_STACKS = [
    ("Uvicorn h11, asyncio", "h11", "asyncio"),
    ("ours: h11 + header timer, asyncio", "cachegraph.server:HeaderTimeoutProtocol", "asyncio"),
    ("Uvicorn httptools, asyncio", "httptools", "asyncio"),
    ("ours: httptools + header timer, asyncio", "cachegraph.server:HttpToolsHeaderTimeout",
     "asyncio"),
    ("Uvicorn httptools, uvloop", "httptools", "uvloop"),
    ("ours: httptools + header timer, uvloop", "cachegraph.server:HttpToolsHeaderTimeout",
     "uvloop"),
]  # fmt: skip
#: (label, modules made unimportable) of the server
SERVER_STACKS = [
    ("h11, asyncio (fallback)", ["httptools", "uvloop"]),
    ("httptools, asyncio", ["uvloop"]),
    ("httptools, uvloop (default)", []),
]
POINT = """query($hash: String!) { spec(hash: $hash) { hash compiler { name version }
  target { name } stacks { name } } }"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def without(modules: list[str], folder: Path) -> dict[str, str]:
    """An environment where importing ``modules`` fails, as where they have no wheel: a
    module of each name that raises ImportError, first on the path."""
    for name in modules:
        (folder / f"{name}.py").write_text(f"raise ImportError('{name}: left out')\n")
    return {**os.environ, "PYTHONPATH": str(folder)}


def wait_for(port: int, process: subprocess.Popen, path: str = "/x", limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server on port {port} exited ({process.returncode})")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"the server on port {port} did not start")


def timed(port: int, method: str, path: str, body: bytes | None, n: int) -> tuple[float, float]:
    """p50 and p99 in ms of ``n`` requests on one kept-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = {"content-type": "application/json"} if body else {}
    times = []
    for i in range(n + 200):
        started = time.perf_counter()
        conn.request(method, path, body=body, headers=headers)
        answer = conn.getresponse()
        answer.read()
        if answer.status != 200:
            raise RuntimeError(f"{method} {path}: {answer.status}")
        if i >= 200:
            times.append(time.perf_counter() - started)
    conn.close()
    times.sort()
    return times[len(times) // 2] * 1e3, times[int(len(times) * 0.99)] * 1e3


def bare(label: str, protocol: str, loop: str, n: int) -> tuple[str, float, float]:
    port = free_port()
    code = BARE.format(block="", body=BODY, port=port, http=protocol, loop=loop)
    process = subprocess.Popen([sys.executable, "-c", code])
    try:
        wait_for(port, process)
        return (label, *timed(port, "GET", "/x", None, n))
    finally:
        process.terminate()
        process.wait(30)


def served(label: str, blocked: list[str], data: list[str], n: int) -> list[tuple]:
    port = free_port()
    command = [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
               "--log-level", "warning", "--response-cache", "0", *data]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        process = subprocess.Popen(command, env=without(blocked, Path(folder)))
        try:
            wait_for(port, process, "/readyz")
            return _asked(label, port, n)
        finally:
            process.terminate()
            process.wait(30)


def _asked(label: str, port: int, n: int) -> list[tuple]:
    first = json.dumps({"query": "{ specs(first: 1) { nodes { hash } } }"}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("POST", "/graphql", body=first, headers={"content-type": "application/json"})
    hash = json.loads(conn.getresponse().read())["data"]["specs"]["nodes"][0]["hash"]
    conn.close()
    point = json.dumps({"query": POINT, "variables": {"hash": hash}}).encode()
    typename = json.dumps({"query": "{ __typename }"}).encode()
    return [
        (label, "/healthz", *timed(port, "GET", "/healthz", None, n)),
        (label, "{ __typename }", *timed(port, "POST", "/graphql", typename, n)),
        (label, "point query", *timed(port, "POST", "/graphql", point, n)),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--data", help="a page tree to serve (default: the bundled data)")
    args = parser.parse_args()
    data = ["--data", args.data] if args.data else []
    lines = [
        f"- machine: {platform.machine()}, Python {platform.python_version()}; one keep-alive "
        f"client, {args.requests:,} requests each after 200 unmeasured",
        "",
        "| bare Starlette route, 190 bytes | p50 ms | p99 ms |",
        "|---|---:|---:|",
    ]
    for label, protocol, loop in BARE_STACKS:
        lines.append("| {} | {:.3f} | {:.3f} |".format(*bare(label, protocol, loop, args.requests)))
    lines += [
        "",
        f"| `cachegraph serve` ({args.data or 'the bundled data'}), response cache off "
        "| request | p50 ms | p99 ms |",
        "|---|---|---:|---:|",
    ]
    for label, blocked in SERVER_STACKS:
        for row in served(label, blocked, data, args.requests):
            lines.append("| {} | {} | {:.3f} | {:.3f} |".format(*row))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
