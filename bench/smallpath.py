"""Issues 43 item 2 and 40 item 3: a small answer's path, two checkouts measured interleaved.

    python -m bench.smallpath --before DIR [--data PATH] [--rounds 2] [--requests 2000]
                              [--seconds 5]

``DIR`` is another checkout of the project (``git archive REV | tar -x -C DIR``), served by
the same interpreter and packages with ``PYTHONPATH=DIR``; this checkout is "after". Each
round serves each checkout in turn, the order alternating between rounds (a machine shared
with other work drifts: each round's two figures are taken minutes apart, not an hour),
response cache off, on ``--data`` (default: the bundled data), and measures:

- on one keep-alive client, ``--requests`` requests after 200 unmeasured (p50 and p99):
  ``GET /healthz``, ``{ __typename }`` and the point query (a spec by hash with its
  compiler, target and stacks, the hashes drawn from the data); ``{ __typename }`` over
  ``/healthz`` is the difference of the two p50s;
- the point query's throughput under 16 keep-alive clients for ``--seconds``, and a bare
  Starlette route (``bench.benchmark.http_floor``: Uvicorn's default stack, httptools and
  uvloop where installed) answering every request with the same answer, under the same
  clients, in the same round.

It prints a Markdown table (docs/benchmarks.md, "HTTP stack").
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
from pathlib import Path

import orjson

from bench.benchmark import http_floor, throughput, timed
from bench.harness import Connection, free_port, wait_ready

POINT = """query($hash: String!) { spec(hash: $hash) { hash compiler { name version }
  target { name } stacks { name } } }"""
HERE = Path(__file__).resolve().parent.parent


def serve(checkout: Path, data: list[str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    command = [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
               "--log-level", "warning", "--response-cache", "0", *data]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    process = subprocess.Popen(command, env=env, cwd=checkout)
    wait_ready(port, process, 1200)
    return process, port


async def hashes(port: int, n: int = 200) -> list[str]:
    query = orjson.dumps({"query": f"{{ specs(first: {n}) {{ nodes {{ hash }} }} }}"})
    _, raw = await Connection(port).request("POST", "/graphql", query)
    return [node["hash"] for node in orjson.loads(raw)["data"]["specs"]["nodes"]]


def measured(checkout: Path, data: list[str], args: argparse.Namespace) -> dict:
    process, port = serve(checkout, data)
    try:
        points = [
            orjson.dumps({"query": POINT, "variables": {"hash": h}})
            for h in asyncio.run(hashes(port))
        ]
        typename = [orjson.dumps({"query": "{ __typename }"})]
        n = args.requests
        figures = {
            "/healthz": asyncio.run(timed(port, "GET", "/healthz", [b""], n)),
            "{ __typename }": asyncio.run(timed(port, "POST", "/graphql", typename, n)),
            "point query": asyncio.run(timed(port, "POST", "/graphql", points, n)),
            "rps": asyncio.run(throughput(port, "/graphql", points, args.seconds)),
        }
        _, figures["answer"] = asyncio.run(Connection(port).request("POST", "/graphql", points[0]))
        figures["points"] = points
        return figures
    finally:
        process.terminate()
        process.wait(30)


def bare(answer: bytes, points: list[bytes], seconds: float) -> float:
    floor = http_floor(answer)
    try:
        return asyncio.run(throughput(floor.port, "/graphql", points, seconds))
    finally:
        floor.terminate()
        floor.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the checkout to compare")
    parser.add_argument("--data", help="a page tree to serve (default: the bundled data)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    data = ["--data", args.data] if args.data else []
    lines = [
        "| round | checkout | /healthz p50 / p99 | { __typename } p50 / p99 | over /healthz "
        "| point p50 / p99 | point rps, 16 clients | bare route rps | share |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for round in range(1, args.rounds + 1):
        order = [("before", args.before), ("after", HERE)]
        if round % 2 == 0:
            order.reverse()
        results = {}
        for label, checkout in order:
            print(f"round {round}: {label}", flush=True)
            results[label] = measured(checkout.resolve(), data, args)
        after = results["after"]
        floor = bare(after["answer"], after["points"], args.seconds)
        for label, _ in order:
            f = results[label]
            health, typename, point = f["/healthz"], f["{ __typename }"], f["point query"]
            lines.append(
                f"| {round} | {label} | {health[0]:.3f} / {health[1]:.3f} "
                f"| {typename[0]:.3f} / {typename[1]:.3f} | +{typename[0] - health[0]:.3f} "
                f"| {point[0]:.3f} / {point[1]:.3f} | {f['rps']:,.0f} | {floor:,.0f} "
                f"| {f['rps'] / floor:.0%} |"
            )
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
