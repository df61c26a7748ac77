"""Issue 42: what idle change followers cost the server, over WebSocket and over SSE.

    python -m bench.subscribers [--count 1000]

``cachegraph serve`` on the bundled data (its change log in memory) with
``--followers-per-client`` above ``--count``; then, in turn, ``--count`` WebSocket
connections each with one ``changes`` subscription running (graphql-transport-ws), and
``--count`` ``/changes/stream`` streams, all from one client process, all idle (no change
comes). The server's resident memory is read from ``/proc`` before and once every follower
is in place (its gauge in ``/metrics`` says so), each after a settling second; the cost of
one follower is the difference over the count. It prints a Markdown table
(docs/benchmarks.md, "Idle change followers").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import time
import urllib.request
from functools import partial

from websockets.asyncio.client import connect

from bench.harness import free_port, rss_kb, wait_ready

FOLLOW = "subscription { changes { id mirror addedCount removedCount } }"


def metric(port: int, name: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


async def settled_rss(pid: int) -> float:
    await asyncio.sleep(1)
    return rss_kb(pid) / 1024


def serve(count: int) -> tuple[subprocess.Popen, int]:
    port = free_port()
    command = [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
               "--log-level", "warning", "--followers-per-client", str(count + 10)]  # fmt: skip
    server = subprocess.Popen(command)
    wait_ready(port, server)
    return server, port


async def websockets_held(port: int, count: int, measure) -> float:
    sockets = []
    try:
        for i in range(count):
            ws = await connect(f"ws://127.0.0.1:{port}/graphql",
                               subprotocols=["graphql-transport-ws"])  # fmt: skip
            await ws.send(json.dumps({"type": "connection_init"}))
            assert json.loads(await ws.recv())["type"] == "connection_ack"
            await ws.send(json.dumps({"type": "subscribe", "id": str(i),
                                      "payload": {"query": FOLLOW}}))  # fmt: skip
            sockets.append(ws)
        while metric(port, "cachegraph_subscriptions") < count:
            await asyncio.sleep(0.1)
        return await measure()
    finally:
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)


async def streams_held(port: int, count: int, measure) -> float:
    held = []
    try:
        for _ in range(count):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /changes/stream HTTP/1.1\r\nhost: bench\r\n\r\n")
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200"), head[:100]
            held.append(writer)
        return await measure()
    finally:
        for writer in held:
            writer.close()


def run(count: int) -> list[tuple[str, float, float]]:
    rows = []
    for label, hold in (
        ("WebSocket subscriptions", websockets_held),
        ("SSE streams", streams_held),
    ):
        server, port = serve(count)
        try:
            time.sleep(1)
            before = rss_kb(server.pid) / 1024

            after = asyncio.run(hold(port, count, partial(settled_rss, server.pid)))
            rows.append((label, before, after))
            print(f"{label}: {before:.1f} MB -> {after:.1f} MB", flush=True)
        finally:
            server.terminate()
            server.wait(30)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    rows = run(args.count)
    print(f"\n{platform.machine()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} cores; {args.count:,} idle followers from one client\n")  # fmt: skip
    print("| followers | server RSS before | with them | per follower |")
    print("|---|---:|---:|---:|")
    for label, before, after in rows:
        each = (after - before) * 1024 / args.count
        print(f"| {args.count:,} {label} | {before:.1f} MB | {after:.1f} MB | {each:.1f} kB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
