"""Adversarial load: hostile clients against a real Uvicorn while a prober times /healthz.

    python -m bench.attacks [--clients 4] [--seconds 60] [--specs 20000] [--mirror-specs 5000]

Each client repeats one of the attacks that once stalled, exhausted or killed the
server (docs/reliability.md, "Attacks"), each request new (fresh variables, fresh
texts), while a prober asks GET /healthz every 20 ms on a connection of its own.
It prints a Markdown report for docs/reliability.md: first each attack alone (time to
answer and the server's RSS before and after, on a fresh server), and the bad data
given to ``cachegraph validate`` (time and peak RSS); then all attacks at once: how
each was answered, /healthz latency under them, RSS over the run, each cache's bytes.
Targets: /healthz p99 within 100 ms, under each attack alone and under all at once; no
answer more than 0.5 s past its deadline; RSS growth within the caches' budgets. Each
client, and the prober, is a process of its own.

The second round (issue 30, items 1-10) adds: lockfiles with fresh variant strings and
constraints with fresh versions (caches fed by clients), 3.6 MB lockfile bodies (the
bytes of bodies in flight, and their parsing), 45 aliases of a spec's transitive
dependents (the cost of what the data fans out to), /readyz polled in a loop, batches
of ten of the heaviest page (one deadline a request), connections that never finish
their headers (beside the others, counted), and a server whose log nobody reads (its
stderr a pipe never read, at log level info: every request logs a line).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.harness import Connection, free_port, pct, rss_kb, wait_ready
from cachegraph.settings import Settings
from cachegraph.synth import synthesize
from cachegraph.synthmirror import synthesize_mirrors

ROOT = Path(__file__).resolve().parents[1]
LOCKFILE = ROOT.parent / "shared/lockfiles/FTHPC+Correlation_Compressibility.spack.lock"
#: the spec with the most transitive dependents, found once the server is ready
HUB = {"hash": ""}

PAIR = "specs(first: $n) { nodes { target { specs(first: $n) { nodes { hash } } } } }"
TYPE_REF = "fragment R on __Type { kind name ofType { kind name ofType { kind name } } }"


def attack(kind: str, n: int) -> dict:
    """Request ``n`` of one kind of attack: a new text or new variables each time."""
    if kind == "default-variable pages":
        query = "query($n: Int = 1000) { " + " ".join(f"b{i}: {PAIR}" for i in range(19)) + " }"
        return {"query": query}
    if kind == "heaviest admitted page":
        # as costly as max_cost admits: runs until the time limit, then must stop
        query = (
            "{ specs(first: 1000) { nodes { target { specs(first: 48) { nodes { hash } } } } } }"
        )
        return {"query": query + " " * (n % 50)}
    if kind == "98 introspections":
        many = " ".join(f"s{i}: __schema {{ types {{ name fields {{ type {{ ...R }} }} }} }}"
                        for i in range(98))  # fmt: skip
        return {"query": "query($h: String!) { spec(hash: $h) { hash } " + many + " } " + TYPE_REF,
                "variables": {"h": f"{n:07}"}}  # fmt: skip
    if kind == "one introspection, fresh variables":
        query = ("query($h: String!) { spec(hash: $h) { hash } __schema { types { name "
                 "fields { name args { name type { ...R } } type { ...R } } } } } " + TYPE_REF
                 )  # fmt: skip
        return {"query": query, "variables": {"h": f"{n:07}"}}
    if kind == "bad variable values":
        values = [5, None, "10", 1.5, True, 1e30, [[[["x"]]]]]
        return {"query": "query($h: String!, $n: Int) { spec(hash: $h) { hash } "
                "specs(first: $n) { totalCount } }",
                "variables": {"h": values[n % 7], "n": values[(n + 3) % 7]}}  # fmt: skip
    if kind == "distinct 950 kB query texts":
        return {"query": "{ stats { specCount } }\n#" + f"{n:08}" * 118_000}
    if kind == "distinct 950 kB variables":
        query = "query($s: String!) { specs(filter: {excludeStacks: [$s]}) { totalCount } }"
        return {"query": query, "variables": {"s": f"{n:08}" * 118_000}}
    if kind == "lockfile, fresh variant strings":
        lock = json.loads(LOCKFILE.read_text())
        for node in lock["concrete_specs"].values():
            node.setdefault("parameters", {})["cflags"] = [f"-O{n}", f"-march=x{n}"]
        query = ("query($l: JSON!) { coverage(lockfile: $l) { missCount "
                 "entries { nearest { distance } } } }")  # fmt: skip
        return {"query": query, "variables": {"l": lock}}
    if kind == "constraint, fresh versions":
        query = "query($c: String!) { specs(filter: {satisfies: $c}) { totalCount } }"
        return {"query": query, "variables": {"c": f"zlib@1.{n}.{n % 97}:1.{n}.{n % 89 + 100}"}}
    if kind == "3.6 MB lockfile bodies":
        lock = json.loads(LOCKFILE.read_text())
        specs = list(lock["concrete_specs"].values())
        many = {f"{n:08}{i:024}"[:32]: specs[i % len(specs)] for i in range(1900)}
        lock["concrete_specs"] = many
        return {"query": "query($l: JSON!) { coverage(lockfile: $l) { total } }",
                "variables": {"l": lock}}  # fmt: skip
    if kind == "45 aliases of transitive dependents":
        one = f'spec(hash: "{HUB["hash"]}") {{ dependents(transitive: true) {{ hash }} }}'
        return {"query": "{ " + " ".join(f"a{i}: {one}" for i in range(45)) + " }" + " " * (n % 7)}
    if kind == "batch of 10 heaviest pages":  # each new: none answered from the cache
        page = attack("heaviest admitted page", 0)["query"]
        return [{"query": f"{page}\n# {n}-{i}"} for i in range(10)]
    if kind == "distinct 1000-spec answers":
        query = ("query($v: String!) { specs(first: 1000, filter: {excludeStacks: [$v]}) "
                 "{ nodes { hash specString } } }")  # fmt: skip
        return {"query": query, "variables": {"v": f"s{n}"}}
    raise ValueError(kind)


KINDS = [
    "default-variable pages",
    "heaviest admitted page",
    "98 introspections",
    "one introspection, fresh variables",
    "bad variable values",
    "distinct 950 kB query texts",
    "distinct 950 kB variables",
    "distinct 1000-spec answers",
    "lockfile, fresh variant strings",
    "constraint, fresh versions",
    "3.6 MB lockfile bodies",
    "45 aliases of transitive dependents",
    "batch of 10 heaviest pages",
    "/readyz polled",
]
#: kinds that are a GET of a path, not a GraphQL body
GETS = {"/readyz polled": "/readyz"}
#: connections that send part of their headers and wait
SLOW_HEADERS = 200


async def attacker(port: int, kind: str, i: int, seconds: float) -> dict:
    """One client repeating ``kind`` for ``seconds``: how each answer went, and the slowest
    answer's time as this client saw it and as the server timed it (``Server-Timing``)."""
    stop, conn, n = time.monotonic() + seconds, Connection(port), i * 1_000_000
    outcomes: Counter = Counter()
    slowest = served = 0.0
    while time.monotonic() < stop:
        n += 1
        method, path = ("GET", GETS[kind]) if kind in GETS else ("POST", "/graphql")
        body = b"" if kind in GETS else json.dumps(attack(kind, n)).encode()
        asked = time.monotonic()
        try:
            status, headers, raw = await conn.exchange(method, path, body)
        except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
            outcomes["connection failed"] += 1
            await conn.close()
            conn = Connection(port)
            continue
        if (took := time.monotonic() - asked) > slowest:
            slowest = took
            timing = re.search(r"dur=([0-9.]+)", headers.get("server-timing", ""))
            served = float(timing.group(1)) / 1000 if timing else 0.0
        outcomes[f"{status} {_label(json.loads(raw))}"] += 1
    await conn.close()
    return {"outcomes": outcomes, "slowest": slowest, "served": served}


async def run(port: int, pid: int, kinds: list[str], clients: int, seconds: float):
    stop = time.monotonic() + seconds
    rss: list[int] = []

    async def sampler() -> None:
        while time.monotonic() < stop:
            rss.append(rss_kb(pid))
            await asyncio.sleep(0.5)

    async def child(*args: str) -> Any:
        # Each client and the prober a process of its own, as real clients are: in one
        # process, one client's JSON work (a 3.6 MB lockfile encoded, a 10 MB answer
        # decoded) held the others' clocks, and an answer looked late that was not.
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bench.attacks", *args, "--port", str(port),
            "--seconds", str(seconds), stdout=asyncio.subprocess.PIPE, cwd=ROOT,
        )  # fmt: skip
        out, _ = await process.communicate()
        return json.loads(out)

    assigned = [(i, kind) for i in range(clients) for kind in kinds]
    attackers = [child("--attack", kind, "--client", str(i), "--hub", HUB["hash"])
                 for i, kind in assigned]  # fmt: skip
    *answers, _, closed, health = await asyncio.gather(
        *attackers, sampler(), slow_headers(port, stop), child("--probe")
    )
    outcomes: dict[str, Counter] = {k: Counter() for k in kinds}
    longest: dict[str, tuple[float, float]] = dict.fromkeys(kinds, (0.0, 0.0))
    for (_, kind), answer in zip(assigned, answers, strict=True):
        outcomes[kind].update(answer["outcomes"])
        longest[kind] = max(longest[kind], (answer["slowest"], answer["served"]))
    outcomes["connections that never finish their headers"] = closed
    return outcomes, longest, health, rss


async def slow_headers(port: int, stop: float) -> Counter:
    """SLOW_HEADERS connections that send part of a request's headers, then wait: how each
    ended (the server's 408 and close, or still open at the end)."""

    async def one() -> str:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            return "connection refused"
        writer.write(b"GET /healthz HTTP/1.1\r\nhost: x\r\n")
        try:
            got = await asyncio.wait_for(reader.read(), max(0.1, stop - time.monotonic()))
        except TimeoutError:
            got = None
        except OSError:
            got = b""
        writer.close()
        if got is None:
            return "still open at the end"
        return "408, closed" if got.startswith(b"HTTP/1.1 408") else "closed"

    return Counter(await asyncio.gather(*(one() for _ in range(SLOW_HEADERS))))


async def probe(port: int, seconds: float) -> list[float]:
    """GET /healthz every 20 ms for ``seconds``: how long each answer took."""
    stop, conn, found = time.monotonic() + seconds, Connection(port), []
    while time.monotonic() < stop:
        started = time.perf_counter()
        status, _ = await conn.request("GET", "/healthz")
        found.append(time.perf_counter() - started)
        assert status == 200
        await asyncio.sleep(0.02)
    await conn.close()
    return found


def _label(answer: dict | list) -> str:
    """How an answer went: the limit or code of its first error, else "answered"."""
    if isinstance(answer, list):  # a batch: how its last operation went
        return "batch, last " + _label(answer[-1]) if answer else "empty batch"
    errors = answer.get("errors") or []
    code = errors[0].get("extensions", {}) if errors else {}
    return code.get("limit") or code.get("code") or ("error" if errors else "answered")


async def one_at_a_time(port: int, pid: int, kinds: list[str], times: int) -> list[tuple]:
    """Each attack alone, ``times`` times: median time to answer, RSS before and after, and
    /healthz (asked every 20 ms meanwhile, from this process: the attack's client mostly
    waits) at its 99th percentile and its slowest."""
    found, conn = [], Connection(port)
    for kind in kinds:
        before, spent, answers, health = rss_kb(pid), [], Counter(), []
        done = asyncio.Event()

        async def prober(done: asyncio.Event, health: list[float]) -> None:
            probe = Connection(port)
            while not done.is_set():
                started = time.perf_counter()
                await probe.request("GET", "/healthz")
                health.append(time.perf_counter() - started)
                await asyncio.sleep(0.02)
            await probe.close()

        probing = asyncio.create_task(prober(done, health))
        for n in range(times):
            method, path = ("GET", GETS[kind]) if kind in GETS else ("POST", "/graphql")
            body = b"" if kind in GETS else json.dumps(attack(kind, n)).encode()
            started = time.perf_counter()
            status, raw = await conn.request(method, path, body)
            spent.append(time.perf_counter() - started)
            answers[f"{status} {_label(json.loads(raw))}"] += 1
        done.set()
        await probing
        found.append((kind, answers, pct(spent, 0.5), before, rss_kb(pid),
                      pct(health, 0.99), max(health)))  # fmt: skip
    await conn.close()
    return found


def hostile_pages() -> dict[str, str | None]:
    """The bad data that once crashed or hung the server, by name (None: a FIFO)."""
    head = '---\ntitle: "zlib"\ncategories: [package, develop]\n'
    bomb = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    bomb += [
        f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    return {
        "nested 30,000 deep": head + "spec_details: " + "[" * 30_000 + "]" * 30_000 + "\n---\n",
        "YAML alias bomb": head + "meta:\n  " + "\n  ".join(bomb) + "\nspec_details: []\n---\n",
        "a FIFO": None,
    }


def write_page(path: Path, text: str | None) -> None:
    """A hostile page at ``path``: its text, or a FIFO."""
    if text is None:
        os.mkfifo(path)
    else:
        path.write_text(text)


def bad_data(work: Path) -> list[tuple[str, float, int, str]]:
    """Each kind of hostile file given to ``cachegraph validate``: seconds, peak RSS, verdict."""
    found = []
    for name, text in hostile_pages().items():
        folder = work / name.replace(" ", "-")
        folder.mkdir()
        write_page(folder / "page.md", text)
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "cachegraph.cli", "validate", str(folder)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        out = child.stdout.read()
        *_, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
        verdict = next((line for line in out.splitlines() if "page.md" in line), out.strip())
        found.append((name, seconds, usage.ru_maxrss, verdict.split("page.md", 1)[-1].strip(": ")))
    return found


async def hub(port: int) -> str:
    """The hash of the spec with the most transitive dependents among the mirrors' runtimes."""
    query = ('{ specs(first: 200, filter: {package: "gcc-runtime"}) '
             "{ nodes { hash dependentCount(transitive: true) } } }")  # fmt: skip
    conn = Connection(port)
    _, raw = await conn.request("POST", "/graphql", json.dumps({"query": query}).encode())
    await conn.close()
    nodes = json.loads(raw)["data"]["specs"]["nodes"]
    return max(nodes, key=lambda n: n["dependentCount"])["hash"] if nodes else "0" * 32


async def metrics_text(port: int) -> str:
    conn = Connection(port)
    _, raw = await conn.request("GET", "/metrics")
    await conn.close()
    return raw.decode()


async def metric(port: int, name: str) -> float:
    found = re.search(rf"^{name} (\S+)$", await metrics_text(port), re.M)
    return float(found.group(1)) if found else float("nan")


def _pause_sample(text: str, series: str, generation: str, le: str = "") -> float:
    labels = f'generation="{generation}"' + (f',le="{le}"' if le else "")
    pattern = rf"^cachegraph_gc_pause_seconds_{series}\{{{labels}\}} (\S+)$"
    found = re.search(pattern, text, re.M)
    return float(found.group(1)) if found else float("nan")


async def collector_pauses(port: int) -> str:
    """How long the cyclic garbage collector held the interpreter, by generation, from the
    server's ``cachegraph_gc_pause_seconds``: runs, total, and the runs over 0.1 and 0.5 s."""
    text, shown = await metrics_text(port), []
    for g in "012":
        runs = _pause_sample(text, "count", g)
        shown.append(
            f"generation {g}: {runs:,.0f} runs, {_pause_sample(text, 'sum', g):.2f} s, "
            f"{runs - _pause_sample(text, 'bucket', g, '0.1'):,.0f} over 0.1 s, "
            f"{runs - _pause_sample(text, 'bucket', g, '0.5'):,.0f} over 0.5 s"
        )
    return "; ".join(shown)


async def cache_bytes(port: int) -> dict[str, tuple[float, float]]:
    text = await metrics_text(port)
    found: dict[str, tuple[float, float]] = {}
    for cache, value in re.findall(r'cachegraph_cache_bytes\{cache="(\w+)"\} (\S+)', text):
        budget = re.search(rf'cachegraph_cache_budget_bytes\{{cache="{cache}"\}} (\S+)', text)
        found[cache] = (float(value), float(budget.group(1)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=1, help="clients per kind of attack")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--specs", type=int, default=20_000)
    parser.add_argument("--mirror-specs", type=int, default=5_000, help="specs with DAGs")
    parser.add_argument("--each", type=int, default=20, help="requests of each attack alone")
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--attack", help=argparse.SUPPRESS)
    parser.add_argument("--client", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--hub", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        print(json.dumps(asyncio.run(probe(args.port, args.seconds))))
        return 0
    if args.attack:
        # The clients stand for other machines: here they share the server's two cores,
        # and would otherwise take their CPU from it and from the prober.
        os.nice(10)
        HUB["hash"] = args.hub
        print(json.dumps(asyncio.run(attacker(args.port, args.attack, args.client, args.seconds))))
        return 0

    work = Path(tempfile.mkdtemp(prefix="cachegraph-attacks-"))
    synthesize(work / "data", args.specs, 2, 0)
    synthesize_mirrors(work / "mirrors", args.mirror_specs, tags=1, seed=1)
    kinds = [k for k in KINDS if LOCKFILE.exists() or "lockfile" not in k]
    port = free_port()
    # Log level info: every request logs a line to a stderr that nobody reads (item 10).
    env = {**os.environ, "CACHEGRAPH_LOG_LEVEL": "info", "MALLOC_ARENA_MAX": "2"}
    command = ["cachegraph.cli", "serve", "--port", str(port), "--data", str(work / "data"),
               "--mirrors-file", str(work / "mirrors" / "mirrors.yaml")]  # fmt: skip
    server = subprocess.Popen([sys.executable, "-m", *command], env=env, stderr=subprocess.PIPE)
    try:
        wait_ready(port, server)
        HUB["hash"] = asyncio.run(hub(port))
        alone = asyncio.run(one_at_a_time(port, server.pid, kinds, args.each))
        rss_start = rss_kb(server.pid)
        outcomes, longest, health, rss = asyncio.run(
            run(port, server.pid, kinds, args.clients, args.seconds)
        )
        time.sleep(2)  # what still runs after the clients stop: nothing, if work stops
        rss_end = rss_kb(server.pid)
        caches = asyncio.run(cache_bytes(port))
        dropped = asyncio.run(metric(port, "cachegraph_log_lines_dropped_total"))
        pauses = asyncio.run(collector_pauses(port))
        alive = server.poll() is None
    finally:
        server.terminate()
        server.wait(10)

    print(f"## Each attack alone, {args.each} times, on a fresh server\n")
    print("| attack | answers | median time | RSS before → after | /healthz p99, max |")
    print("|---|---|---|---|---|")
    for kind, answers, seconds, before, after, p99, slowest in alone:
        shown = ", ".join(f"{n} × {label}" for label, n in answers.most_common())
        print(f"| {kind} | {shown} | {seconds * 1000:.1f} ms | {before / 1024:.0f} → "
              f"{after / 1024:.0f} MB | {p99 * 1000:.0f}, {slowest * 1000:.0f} ms |")  # fmt: skip
    print("\n| bad data given to `cachegraph validate` | time | peak RSS | reported |")
    print("|---|---|---|---|")
    for name, seconds, peak, verdict in bad_data(work):
        print(f"| {name} | {seconds:.2f} s | {peak / 1024:.0f} MB | {verdict[:70]} |")
    print(f"\n## All attacks at once: {args.clients} client(s) per kind, {args.seconds:g} s\n")
    print(f"- data: {args.specs:,} generated specs; machine: {os.cpu_count()} cores, shared")
    print(
        f"- /healthz every 20 ms: {len(health):,} answers, p50 {pct(health, 0.5) * 1000:.1f} ms,"
        f" p99 {pct(health, 0.99) * 1000:.1f} ms, max {max(health) * 1000:.1f} ms"
    )
    print(
        f"- RSS: {rss_start / 1024:.0f} MB at start, peak {max(rss) / 1024:.0f} MB, "
        f"{rss_end / 1024:.0f} MB at the end; the server {'ran on' if alive else 'DIED'}"
    )
    shown = ", ".join(f"{k} {b / 2**20:.1f} of {t / 2**20:.0f} MiB" for k, (b, t) in caches.items())
    print(f"- caches at the end: {shown}")
    print(f"- log lines dropped (its stderr a pipe nobody read): {dropped:,.0f}")
    print(f"- the garbage collector, over the whole run: {pauses}\n")
    print("| attack | answers | slowest answer (its server time) |")
    print("|---|---|---|")
    for kind, counts in outcomes.items():
        shown = ", ".join(f"{n} × {label}" for label, n in counts.most_common())
        late = f"{longest[kind][0]:.2f} s ({longest[kind][1]:.2f} s)" if kind in longest else "—"
        print(f"| {kind} | {shown} | {late} |")
    deadline = Settings().timeout
    each = all(p99 <= 0.1 for *_, p99, _ in alone)
    kept = max(seen for seen, _ in longest.values()) <= deadline + 0.5
    ok = alive and pct(health, 0.99) <= 0.1
    print(f"\n{'PASS' if each else 'FAIL'}: under each attack alone, /healthz p99 within 100 ms")
    print(f"{'PASS' if kept else 'FAIL'}: no answer past the {deadline:g} s deadline by 0.5 s")
    print(f"{'PASS' if ok else 'FAIL'}: the server lived, /healthz p99 within 100 ms at once")
    return 0 if ok and each and kept else 1


if __name__ == "__main__":
    sys.exit(main())
