"""Load test: many concurrent clients of mixed queries against a real Uvicorn while the
data is changed and reloaded, every answer checked against the data.

    python -m bench.loadtest [--clients 64] [--seconds 60] [--reloads 10] [--specs 20000]
                             [--adversaries 1]

It generates a page tree (``cachegraph synth``), starts ``cachegraph serve`` on it,
and alternates the tree between two versions (one package page present, then
absent) with a POST /admin/reload each time. Each answer must equal what the
schema answers in-process on one version or the other. It prints a Markdown
report (for docs/reliability.md): requests, failures, wrong answers, latency,
reload times, RSS growth, and how fast each kind of hostile request is refused.

Beside the normal clients, ``--adversaries`` clients of each attack in
``bench/attacks.py`` send a request at a time, a new text or new variables each,
and another process asks GET /healthz every 20 ms. Their warm-up fills the caches
(bounded by bytes, with smaller budgets than the defaults here so that they fill in
the warm-up), so RSS growth over the run shows whether anything grows without bound.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from cachegraph.graph import load
from cachegraph.schema import schema
from cachegraph.schema.context import Context

from bench.attacks import KINDS, attack, hostile_pages, write_page
from bench.harness import Connection, free_port, pct, rss_kb, wait_ready
from cachegraph.synth import synthesize

TOKEN = "loadtest-token"
ROOT = Path(__file__).resolve().parents[1]
#: Cache budgets for the run: small enough for the warm-up's attacks to fill them.
BUDGETS = {"CACHEGRAPH_QUERY_CACHE": "16777216", "CACHEGRAPH_RESPONSE_CACHE": "16777216",
           "CACHEGRAPH_ANSWER_CACHE": "16777216"}  # fmt: skip


def answer(graph, query: str, variables: dict) -> dict:
    result = schema.execute_sync(query, variable_values=variables, context_value=Context(graph))
    body: dict = {"data": result.data}
    if result.errors:
        body["errors"] = [e.formatted for e in result.errors]
    return json.loads(json.dumps(body))


def mixed_queries(graph) -> list[tuple[str, str, dict]]:
    spec = graph.all_specs()[len(graph.all_specs()) // 3]
    stacks = sorted({s for r in graph.all_specs()[:2000] for s in r.all_stacks})
    return [
        (
            "spec by hash",
            "query($h: String!) { spec(hash: $h) { hash version compiler } }",
            {"h": spec.hash},
        ),
        (
            "spec by prefix",
            "query($h: String!) { spec(hash: $h) { hash package { name } } }",
            {"h": spec.hash[:8]},
        ),
        (
            "stack page",
            "query($s: String!) { stack(name: $s) { specs(first: 20) "
            "{ nodes { hash version } } } }",
            {"s": "root"},
        ),
        (
            "shared specs",
            "query($a: String!, $b: String!) { sharedSpecs(stacks: [$a, $b]) "
            "{ totalCount nodes { hash } } }",
            {"a": stacks[1], "b": stacks[2]},
        ),
        ("stack overlaps", "{ stackOverlaps { stacks sharedSpecCount } }", {}),
        (
            "package counts",
            "query($p: String!) { package(name: $p) { name specCount "
            "versions compilers { name } } }",
            {"p": spec.package},
        ),
        ("stats", "{ stats { packageCount specCount stackCount tagCount } }", {}),
        ("100-spec page", "{ specs(first: 100) { edges { cursor node { hash os target } } } }", {}),
    ]


ATTACKS = {
    "depth bomb": '{ spec(hash: "x") { '
    + "package { specs { nodes { " * 6
    + "hash"
    + " } } }" * 6
    + " } }",
    "1000 aliases": "{ " + " ".join(f"a{i}: stats {{ specCount }}" for i in range(1000)) + " }",
    "first: 1000000000": "{ specs(first: 1000000000) { nodes { hash } } }",
    "cost bomb": "{ packages(first: 1000) { nodes { specs(first: 1000) { nodes { hash } } } } }",
    "fragment cycle": "{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }",
    "5 MB query": "{ stats { specCount } }" + " " * 5_000_000,
}


async def run(
    args: argparse.Namespace, port: int, pid: int, cases, victim: Path, away: Path, outcomes
):
    stop = time.monotonic() + args.seconds
    latencies: list[float] = []
    counts = {"requests": 0, "failed": 0, "wrong": 0}
    wrong_examples: list[str] = []
    rss_samples: list[int] = []

    async def client(seed: int) -> None:
        rng, conn = random.Random(seed), Connection(port)
        while time.monotonic() < stop:
            name, query, variables, expected = rng.choice(cases)
            body = json.dumps({"query": query, "variables": variables}).encode()
            started = time.perf_counter()
            try:
                status, raw = await conn.request("POST", "/graphql", body)
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                counts["failed"] += 1
                await conn.close()
                conn = Connection(port)
                continue
            latencies.append(time.perf_counter() - started)
            counts["requests"] += 1
            if status != 200:
                counts["failed"] += 1
            elif json.loads(raw) not in expected:
                counts["wrong"] += 1
                wrong_examples.append(name)
        await conn.close()

    async def reloader() -> list[float]:
        times = []
        for _ in range(args.reloads):
            await asyncio.sleep(args.seconds / (args.reloads + 1))
            if victim.exists():
                shutil.move(victim, away)
            else:
                shutil.move(away, victim)
            started = time.perf_counter()
            conn = Connection(port)  # a new one: an idle one outlives the keep-alive time
            status, raw = await conn.request(
                "POST", "/admin/reload", headers=f"authorization: Bearer {TOKEN}\r\n"
            )
            await conn.close()
            times.append(time.perf_counter() - started)
            assert status == 200, raw
        return times

    async def sampler() -> None:
        while time.monotonic() < stop:
            rss_samples.append(rss_kb(pid))
            await asyncio.sleep(0.5)

    tasks = [asyncio.create_task(client(i)) for i in range(args.clients)]
    tasks += [
        asyncio.create_task(adversary(port, KINDS[i % len(KINDS)], i, stop, outcomes))
        for i in range(args.adversaries * len(KINDS))
    ]
    sampling = asyncio.create_task(sampler())
    prober = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bench.attacks", "--probe", str(port),
        "--seconds", str(args.seconds), stdout=asyncio.subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    reload_times = await reloader()
    await asyncio.gather(*tasks, sampling)
    health = json.loads((await prober.communicate())[0])
    return counts, latencies, reload_times, rss_samples, wrong_examples, health


async def adversary(port: int, kind: str, seed: int, stop: float, outcomes: Counter) -> None:
    """Send one kind of attack until ``stop``, a new request each time."""
    conn, n = Connection(port), seed * 1_000_000
    while time.monotonic() < stop:
        n += 1
        try:
            status, _ = await conn.request("POST", "/graphql", json.dumps(attack(kind, n)).encode())
            outcomes[status] += 1
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            outcomes["connection failed"] += 1
            await conn.close()
            conn = Connection(port)
    await conn.close()


async def attacks(port: int) -> dict[str, tuple[int, float]]:
    conn, found = Connection(port), {}
    for name, query in ATTACKS.items():
        times = []
        for _ in range(10):
            started = time.perf_counter()
            status, raw = await conn.request(
                "POST", "/graphql", json.dumps({"query": query}).encode()
            )
            times.append(time.perf_counter() - started)
            if status == 413:
                await conn.close()
                conn = Connection(port)
        found[name] = (status, statistics.median(times) * 1000, json.loads(raw))
    await conn.close()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--reloads", type=int, default=10)
    parser.add_argument("--specs", type=int, default=20_000)
    parser.add_argument("--adversaries", type=int, default=1, help="clients per attack")
    parser.add_argument("--warmup", type=float, default=30, help="seconds of attacks first")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cachegraph-load-"))
    data, spare = work / "data", work / "spare"
    spare.mkdir()
    synthesize(data, args.specs, 2, 0)
    full = load([data])[0]
    victim = sorted(data.glob("*/*/specs.md"))[0].parent
    away = spare / victim.name
    shutil.move(victim, away)
    less = load([data])[0]
    shutil.move(away, victim)
    cases = [
        (name, q, v, [answer(full, q, v), answer(less, q, v)]) for name, q, v in mixed_queries(full)
    ]

    port = free_port()
    # MALLOC_ARENA_MAX as the Dockerfile sets it: glibc's per-thread arenas otherwise
    # keep growing RSS as the worker threads take turns.
    env = {
        **os.environ,
        "CACHEGRAPH_ADMIN_TOKEN": TOKEN,
        "CACHEGRAPH_LOG_LEVEL": "warning",
        "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2"),
        **BUDGETS,
    }
    command = ["cachegraph.cli", "serve", "--port", str(port), "--data", str(data)]
    server = subprocess.Popen([sys.executable, "-m", *command], env=env, stderr=subprocess.DEVNULL)
    try:
        wait_ready(port, server)
        warm = asyncio.run(warmup(port, cases, args.warmup))
        rss_start = rss_kb(server.pid)
        outcomes: Counter = Counter()
        counts, latencies, reloads, rss, wrong, health = asyncio.run(
            run(args, port, server.pid, cases, victim, away, outcomes)
        )
        rss_end = rss_kb(server.pid)
        refused = asyncio.run(attacks(port))
        hostile = asyncio.run(hostile_reload(port, data))
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(work)

    growth = (rss_end - rss_start) / rss_start
    print(f"## Load test: {args.clients} clients, {args.seconds:g} s, {args.reloads} reloads\n")
    print(
        f"- data: {args.specs:,} specs in 2 tags ({full.spec_count:,} specs, "
        f"{full.spec_count - less.spec_count:,} of them in the page that comes and goes)"
    )
    print(
        f"- machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; client and "
        "server share it"
    )
    print(
        f"- requests answered: {counts['requests']:,} "
        f"({counts['requests'] / args.seconds:,.0f}/s), warm-up {warm}"
    )
    print(
        f"- failed requests: {counts['failed']}; wrong answers: {counts['wrong']}"
        + (f" ({sorted(set(wrong))})" if wrong else "")
    )
    print(
        f"- latency: p50 {pct(latencies, 0.5) * 1000:.1f} ms, p99 "
        f"{pct(latencies, 0.99) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms"
    )
    print(f"- reloads: {len(reloads)}, each {min(reloads):.2f}–{max(reloads):.2f} s")
    print(
        f"- beside them, {args.adversaries} client(s) of each of the {len(KINDS)} attacks in "
        f"bench/attacks.py: {sum(outcomes.values()):,} requests, answered "
        + ", ".join(f"{n:,} × {status}" for status, n in outcomes.most_common())
    )
    print(
        f"- /healthz every 20 ms from another process: {len(health):,} answers, p50 "
        f"{pct(health, 0.5) * 1000:.1f} ms, p99 {pct(health, 0.99) * 1000:.1f} ms, "
        f"max {max(health) * 1000:.1f} ms"
    )
    print(
        f"- RSS: {rss_start / 1024:.0f} MB after warm-up, {rss_end / 1024:.0f} MB at the end "
        f"({growth:+.1%}); peak {max(rss) / 1024:.0f} MB (two graphs during a reload)\n"
    )
    print("| hostile request | status | median time to refuse | error |")
    print("|---|---|---|---|")
    for name, (status, ms, body) in refused.items():
        message = body["errors"][0]["message"]
        print(f"| {name} | {status} | {ms:.1f} ms | {message[:70]} |")
    print(
        f"\nA reload with hostile data among the pages (30,000-deep nesting, an alias bomb, a "
        f"FIFO): HTTP {hostile[0]} in {hostile[1]:.2f} s, {hostile[2]} problems named; the "
        f"server then answered {hostile[3]}"
    )
    ok = (
        hostile[0] == 422
        and counts["failed"] == 0
        and counts["wrong"] == 0
        and growth < 0.10
        and pct(health, 0.99) <= 0.1
    )
    print(
        f"\n{'PASS' if ok else 'FAIL'}: zero failures, zero wrong answers, RSS growth < 10%, "
        "/healthz p99 within 100 ms"
    )
    return 0 if ok else 1


async def hostile_reload(port: int, data: Path) -> tuple[int, float, int, str]:
    """Bad data added to the pages, then a reload: its status, time, problems, and what the
    server answers next."""
    for n, text in enumerate(hostile_pages().values()):
        write_page(data / f"hostile-{n}.md", text)
    conn, started = Connection(port), time.perf_counter()
    status, raw = await conn.request(
        "POST", "/admin/reload", headers=f"authorization: Bearer {TOKEN}\r\n"
    )
    seconds = time.perf_counter() - started
    _, answer = await conn.request("POST", "/graphql", b'{"query": "{ stats { specCount } }"}')
    await conn.close()
    return status, seconds, len(json.loads(raw)["problems"]), answer.decode()


async def warmup(port: int, cases, seconds: float) -> str:
    conn = Connection(port)
    for _ in range(20):
        for _, query, variables, _ in cases:
            body = json.dumps({"query": query, "variables": variables}).encode()
            await conn.request("POST", "/graphql", body)
    # A reload holds two graphs for a moment: the baseline includes that high-water mark.
    await conn.request("POST", "/admin/reload", headers=f"authorization: Bearer {TOKEN}\r\n")
    await conn.close()
    # The attacks fill every cache to its budget: the baseline includes them full.
    stop, outcomes = time.monotonic() + seconds, Counter()
    await asyncio.gather(
        *(adversary(port, kind, i, stop, outcomes) for i, kind in enumerate(KINDS, 1000))
    )
    return f"{20 * len(cases)} requests, one reload and {seconds:g} s of attacks"


if __name__ == "__main__":
    sys.exit(main())
