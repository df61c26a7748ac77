"""Benchmark at the public cache's scale: start-up, memory, latency and throughput of a real
Uvicorn server, against the floors of the same run and against PostgreSQL + PostGraphile.

    python -m bench.benchmark [--sizes 10000,100000,1000000] [--requests 200]
                              [--mirror-sizes 10000,100000,250000] [--cache-sizes 1000000]
                              [--remote-mirror-sizes 250000] [--remote-transports http,s3,oci]
                              [--seconds 10] [--no-peer] [--short] [--out docs/benchmarks.md]

For each size it generates a page tree (``cachegraph synth``, two tags, kept in
the work folder for the next run) and measures, in one run:

- the JSON floor: reading every file and parsing its JSON-shaped front-matter
  lines with orjson, nothing else (a process of its own);
- cold start: ``cachegraph serve`` from process start until ``/readyz`` answers
  200 (``/healthz`` only means alive), and peak RSS; then the restart from the
  snapshot that first start wrote;
- p50/p99 latency of eight questions, each asked ``--requests`` times with
  variables drawn from the data, one client, the response cache off (every
  answer is computed);
- throughput of the point query with 16 concurrent clients, against a bare
  Starlette route returning prepared JSON of the same size (the HTTP floor);
- the same questions of the peer, when PostgreSQL and Node are installed.

The mirror workload (``cachegraph synth --mirror``: v2 and v3 mirrors with
dependency DAGs, served with ``--mirrors-file``) measures, at each of
``--mirror-sizes``: the floor of parsing the same index blobs with orjson (a
process of its own), cold start and peak RSS, a spec's direct dependencies, and
the count of the transitive dependents of the most depended-on library.

At each of ``--cache-sizes``, ``bench/caching.py`` measures issue 31's targets: a
dashboard revalidated with its ETag (304), nginx's cache against the server,
persisted queries against the text, and tracing on against off.

At each of ``--remote-mirror-sizes`` (none by default), ``bench/remote.py`` measures issue 37's
targets: the mirror workload served over HTTP, S3 and OCI by real servers on this machine.

It prints the tables and writes them, with the machine, to ``--out``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from bench import peer as peers
from bench.caching import caching_report, run_caching
from bench.harness import Connection, free_port, pct
from cachegraph.synth import synthesize
from cachegraph.synthmirror import synthesize_mirrors

ROOT = Path(__file__).resolve().parents[1]

CLIENTS = 16
PEER = "PostGraphile 4.14.1 with postgraphile-plugin-connection-filter 2.3.0 on PostgreSQL"

# -- the questions -------------------------------------------------------------------

SPEC_FIELDS = "hash version os platform target { name } compiler { name }"
PEER_SPEC_FIELDS = "hash version os platform target compiler"
PEER_STACK = "{specStacksByHash: {some: {stack: {equalTo: %s}}}}"
PEER_ORDER = "orderBy: [PACKAGE_ASC, VERSION_ASC, HASH_ASC]"


@dataclass
class Question:
    name: str
    ours: str
    #: the same question to the peer; None when it cannot express it
    peer: str | None
    #: variables for each request, drawn from the data; the same for both servers
    variables: list[dict] = field(default_factory=lambda: [{}])
    #: "fixed" (a fixed-size answer, for the scaling targets) or "language"
    group: str = "fixed"


#: facets as a faceted search page asks them: every facet, its 50 largest values
FACETS = (
    "specCount packages(first: 50) { value count } versions(first: 50) { value count } "
    "compilers(first: 50) { value count } targets(first: 50) { value count } "
    "oss(first: 50) { value count } stacks(first: 50) { value count } "
    "variants(first: 50) { value count } mirrors(first: 50) { value count }"
)
SATISFIES = (
    "query($c: String!) { specs(filter: {satisfies: $c}, first: 50) "
    "{ totalCount nodes { hash version } } }"
)


def questions(sample: Sample) -> list[Question]:
    s = sample
    return [
        Question(
            "spec by hash",
            f"query($h: String!) {{ spec(hash: $h) {{ {SPEC_FIELDS} }} }}",
            f"query($h: String!) {{ specByHash(hash: $h) {{ {PEER_SPEC_FIELDS} }} }}",
            [{"h": h} for h in s.hashes],
        ),
        Question(
            "spec by prefix (10 characters)",
            f"query($h: String!) {{ spec(hash: $h) {{ {SPEC_FIELDS} }} }}",
            "query($h: String!) { allSpecs(filter: {hash: {startsWith: $h}}, first: 2) "
            f"{{ nodes {{ {PEER_SPEC_FIELDS} }} }} }}",
            [{"h": h[:10]} for h in s.hashes],
        ),
        Question(
            "one package's specs in a stack, by compiler",
            "query($p: String!, $s: String!, $c: String!) { specs(filter: "
            "{package: $p, stacks: [$s], compiler: $c}, first: 20) { nodes { hash version } } }",
            "query($p: String!, $s: String!, $c: String!) { allSpecs(filter: {package: "
            "{equalTo: $p}, compiler: {equalTo: $c}, specStacksByHash: {some: {stack: "
            f"{{equalTo: $s}}}}}}}}, first: 20, {PEER_ORDER}) {{ nodes {{ hash version }} }} }}",
            s.scoped,
        ),
        Question(
            "first page of a large stack (no totalCount)",
            "query($s: String!) { stack(name: $s) { specs(first: 50) { nodes { hash version } "
            "pageInfo { hasNextPage endCursor } } } }",
            f"query($s: String!) {{ allSpecs(filter: {PEER_STACK % '$s'}, first: 50, "
            f"{PEER_ORDER}) {{ nodes {{ hash version }} pageInfo {{ hasNextPage endCursor }} }} }}",
            [{"s": stack} for stack in s.large_stacks],
        ),
        Question(
            "sharedSpecs of two stacks, with totalCount",
            "query($a: String!, $b: String!) { sharedSpecs(stacks: [$a, $b], first: 50) "
            "{ totalCount nodes { hash version } } }",
            "query($a: String!, $b: String!) { allSpecs(filter: {and: "
            f"[{PEER_STACK % '$a'}, {PEER_STACK % '$b'}]}}, first: 50, {PEER_ORDER}) "
            "{ totalCount nodes { hash version } } }",
            s.pairs,
        ),
        Question(
            "stackOverlaps of all stacks",
            "{ stackOverlaps { stacks { name } sharedSpecCount jaccard } }",
            "{ allStackOverlaps(orderBy: [SHARED_DESC, A_ASC, B_ASC]) "
            "{ nodes { a b shared jaccard } } }",
        ),
        Question(
            "1000-spec page, 10 fields",
            "query($s: String!) { specs(filter: {stacks: [$s]}, first: 1000) { nodes { "
            "hash shortHash package { name } version compiler { name } os platform "
            "target { name } variants versions } } }",
            f"query($s: String!) {{ allSpecs(filter: {PEER_STACK % '$s'}, first: 1000, "
            f"{PEER_ORDER}) {{ nodes {{ hash shortHash package version compiler os platform "
            "target variants nodeId } } }",
            [{"s": stack} for stack in s.large_stacks],
        ),
        Question(
            "a package with all its counts",
            "query($p: String!) { package(name: $p) { name specCount versions "
            "compilers { name } targets { name } oss platforms "
            "stacks { stack { name } specCount } tags { name } } }",
            "query($p: String!) { allPackageSummaries(condition: {package: $p}) { nodes { "
            "package specCount versions compilers targets oss platforms stackCounts tags } } }",
            [{"p": p} for p in s.packages],
        ),
        Question(
            "satisfies 'name@range: +variant', first 50 with totalCount",
            SATISFIES,
            # The peer has no Spack version order: it answers name and variant only.
            "query($p: String!, $v: String!) { allSpecs(filter: {package: {equalTo: $p}, "
            f"variants: {{contains: [$v]}}}}, first: 50, {PEER_ORDER}) "
            "{ totalCount nodes { hash version } } }",
            s.constraints,
            group="language",
        ),
        Question(
            "facets of the whole cache", f"{{ facets {{ {FACETS} }} }}", None, group="language"
        ),
        Question(
            "facets of one package",
            f"query($p: String!) {{ facets(filter: {{package: $p}}) {{ {FACETS} }} }}",
            None,
            [{"p": p} for p in s.packages],
            group="language",
        ),
    ]


@dataclass
class Sample:
    """Variables drawn at random from a tree's pages; the same for our server and the peer."""

    hashes: list[str]
    packages: list[str]
    scoped: list[dict]
    large_stacks: list[str]
    pairs: list[dict]
    #: {"c": "name@major: +variant", "p": name, "v": variant}
    constraints: list[dict] = field(default_factory=lambda: [{"c": "", "p": "", "v": ""}])


def sample(tree: Path, n: int = 200, seed: int = 7) -> Sample:
    rng = random.Random(seed)
    pages = sorted(tree.rglob("*.md"))
    rows = []
    for page in rng.sample(pages, min(len(pages), n)):
        found = list(peers.page_rows([page]))
        rows.append(rng.choice(found))
    sizes: dict[str, int] = {}
    for page in rng.sample(pages, min(len(pages), 400)):
        for _, _, row in peers.page_rows([page]):
            for stack in row["stacks"]:
                sizes[stack] = sizes.get(stack, 0) + 1
    stacks = sorted(sizes, key=lambda s: -sizes[s])
    from cachegraph.graph.spack.names import normalize_compiler

    scoped = [
        {"p": p, "s": rng.choice(r["stacks"]), "c": normalize_compiler(r["compiler"])}
        for p, _, r in rows
        if normalize_compiler(r["compiler"])
    ]
    pairs = [{"a": a, "b": b} for a, b in (rng.sample(stacks[:12], 2) for _ in range(n))]
    return Sample(
        hashes=[r["hash"] for _, _, r in rows],
        packages=[p for p, _, _ in rows],
        scoped=scoped,
        large_stacks=stacks[:5],
        pairs=pairs,
        constraints=[constraint(p, r["versions"][0], r["variants"]) for p, _, r in rows],
    )


def constraint(package: str, version: str, variants: list[str]) -> dict:
    """A constraint a spec of the data satisfies: its name, ``@major:`` and one variant."""
    bools = [v for v in variants if v.startswith(("+", "~"))] or variants
    variant = bools[0] if bools else ""
    return {"c": f"{package}@{version.split('.')[0]}: {variant}", "p": package, "v": variant}


# -- measuring -------------------------------------------------------------------------


async def latencies(port: int, query: str, variables: list[dict], n: int) -> tuple[list, int]:
    """Seconds of each of ``n`` requests on one keep-alive connection, and the failures."""
    conn, times, failed = Connection(port), [], 0
    bodies = [orjson.dumps({"query": query, "variables": v}) for v in variables]
    for body in bodies[:3]:  # warm the connection and the server's caches of the query text
        await conn.request("POST", "/graphql", body)
    for i in range(n):
        started = time.perf_counter()
        status, raw = await conn.request("POST", "/graphql", bodies[i % len(bodies)])
        times.append(time.perf_counter() - started)
        answer = orjson.loads(raw)
        if status != 200 or answer.get("errors") or not answer.get("data"):
            failed += 1
            if failed == 1:
                print(f"    failed: {raw[:300]!r}", file=sys.stderr)
    await conn.close()
    return times, failed


TYPENAME = orjson.dumps({"query": "{ __typename }"})


async def timed(port: int, method: str, path: str, bodies: list[bytes], n: int) -> tuple:
    """p50 and p99 in ms of ``n`` requests on one kept-alive connection, after 200 unmeasured."""
    conn, times = Connection(port), []
    for i in range(n + 200):
        started = time.perf_counter()
        status, _ = await conn.request(method, path, bodies[i % len(bodies)])
        if status != 200:
            raise RuntimeError(f"{method} {path}: {status}")
        if i >= 200:
            times.append(time.perf_counter() - started)
    await conn.close()
    return pct(times, 0.5) * 1e3, pct(times, 0.99) * 1e3


async def throughput(port: int, path: str, bodies: list[bytes], seconds: float) -> float:
    """Requests a second that CLIENTS concurrent keep-alive clients get answered."""
    stop = time.monotonic() + seconds
    done = [0]

    async def client(offset: int) -> None:
        conn, i = Connection(port), offset
        while time.monotonic() < stop:
            status, _ = await conn.request("POST", path, bodies[i % len(bodies)])
            done[0] += status == 200
            i += CLIENTS
        await conn.close()

    started = time.monotonic()
    await asyncio.gather(*(client(i) for i in range(CLIENTS)))
    return done[0] / (time.monotonic() - started)


def json_floor(tree: Path) -> float:
    """Seconds a fresh process takes to read the tree and parse its JSON lines, start to exit.

    The process's whole life is the floor, as a server's start is ours.
    """
    code = (
        "import os, sys, orjson\n"
        "for root, dirs, names in os.walk(sys.argv[1]):\n"
        "    for name in names:\n"
        "        with open(os.path.join(root, name), 'rb') as f:\n"
        "            data = f.read()\n"
        "        for line in data.split(b'\\n'):\n"
        "            key, _, value = line.partition(b': ')\n"
        "            if value[:1] in (b'[', b'{', b'\"'):\n"
        "                try:\n"
        "                    orjson.loads(value)\n"
        "                except orjson.JSONDecodeError:\n"
        "                    pass\n"
    )
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, str(tree)], check=True)
    return time.perf_counter() - started


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_with_children(pid: int) -> float:
    """MB resident now in a process and its children (a load's second process)."""
    total = 0.0
    pids = [pid]
    with contextlib.suppress(OSError):
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    for each in pids:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            pass
    return total


def seeds_start(times: int = 3) -> float:
    """Seconds a server takes to be ready on the bundled seeds: the median of a few starts."""
    found = []
    for _ in range(times):
        server = Server(None)
        found.append(server.seconds)
        server.stop()
    return sorted(found)[len(found) // 2]


class Server:
    """``cachegraph serve`` in a process of its own; ``seconds`` from start to ready."""

    def __init__(self, tree: Path | None, *options: str, ready_limit: float = 600) -> None:
        self.port = free_port()
        env = {**os.environ, "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2")}
        command = [sys.executable, "-m", "cachegraph.cli", "serve"]
        command += ["--data", str(tree)] if tree is not None else []
        command += ["--port", str(self.port), "--log-level", "warning", *options]
        self.started = time.perf_counter()
        self.process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
        self.peak_together = 0.0  # MB: the server and the process that loads beside it
        self.seconds = self._wait_ready(self.started, ready_limit)

    def _wait_ready(self, started: float, limit: float = 600) -> float:
        async def ready() -> bool:
            try:
                conn = Connection(self.port)
                status, _ = await conn.request("GET", "/readyz")
                await conn.close()
                return status == 200
            except OSError:
                return False

        while time.perf_counter() - started < limit:
            if self.process.poll() is not None:
                raise RuntimeError("the server exited while starting")
            self.peak_together = max(self.peak_together, rss_with_children(self.process.pid))
            if asyncio.run(ready()):
                return time.perf_counter() - started
            time.sleep(0.02)
        self.process.kill()  # not left loading after the run that waited for it ended
        raise RuntimeError(f"the server did not become ready in {limit:g} s")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def http_floor(body: bytes) -> subprocess.Popen:
    """A bare Starlette route answering every POST with ``body``, on a real Uvicorn."""
    port = free_port()
    code = (
        "import sys, uvicorn\n"
        "from starlette.applications import Starlette\n"
        "from starlette.responses import Response\n"
        "from starlette.routing import Route\n"
        "body = sys.stdin.buffer.read()\n"
        "async def answer(request):\n"
        "    await request.body()\n"
        "    return Response(body, media_type='application/json')\n"
        "app = Starlette(routes=[Route('/graphql', answer, methods=['POST'])])\n"
        f"uvicorn.run(app, host='127.0.0.1', port={port}, log_level='warning')\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
    process.stdin.write(body)
    process.stdin.close()
    process.port = port  # type: ignore[attr-defined]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            asyncio.run(Connection(port).request("POST", "/graphql", b"{}"))
            return process
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the HTTP floor did not start")


# -- one size ----------------------------------------------------------------------------


@dataclass
class Result:
    size: int
    specs: int = 0
    floor: float = 0.0
    cold: float = 0.0
    rss: float = 0.0
    #: MB: the peak of the server and its second loading process together, while loading
    rss_together: float = 0.0
    snapshot: float = 0.0
    cached_ms: float = 0.0
    ours: dict[str, tuple[float, float]] = field(default_factory=dict)
    peer: dict[str, tuple[float, float]] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    rps: float = 0.0
    floor_rps: float = 0.0
    peer_note: str = ""
    #: small answers (issue 43), (p50, p99) ms: "/healthz", "{ __typename }", and "bare
    #: route" (a bare Starlette route on the server's own HTTP stack, the point's answer)
    small: dict[str, tuple[float, float]] = field(default_factory=dict)


#: Page records per distinct spec in two tags (the second keeps 60% of the first's specs).
RECORDS_PER_SPEC = 1.43


def tree_of(size: int, args: argparse.Namespace) -> Path:
    """The generated page tree of ``size`` specs (made once, kept in the work folder); with
    ``--short``, of about ``size`` short page records (``cachegraph.synth``'s short shape)."""
    short = getattr(args, "short", False)
    tree = args.work / (f"short-{size}" if short else f"tree-{size}")
    if not (tree / ".complete").exists():
        print(f"[{size:,}] generating the page tree", flush=True)
        specs = round(size / RECORDS_PER_SPEC) if short else size
        synthesize(tree, specs, 2, 1, short=short)
        (tree / ".complete").write_text("")
    return tree


def run_size(size: int, args: argparse.Namespace, peer: peers.Peer | None) -> Result:
    result = Result(size)
    tree = tree_of(size, args)
    snap = args.work / f"snapshot-{size}"
    snap.unlink(missing_ok=True)
    chosen = sample(tree)
    asked = questions(chosen)

    print(f"[{size:,}] JSON floor", flush=True)
    result.floor = json_floor(tree)
    print(f"[{size:,}] cold start", flush=True)
    server = Server(tree, "--response-cache", "0", "--snapshot", str(snap))
    try:
        result.cold = server.seconds
        # the snapshot is written once the whole data is served: the latencies are of that
        # (the index first served, a second process reads the manifests beside the server)
        while not snap.exists() and time.perf_counter() - server.started < 1200:
            server.peak_together = max(server.peak_together, rss_with_children(server.process.pid))
            time.sleep(0.2)
        result.whole = time.perf_counter() - server.started
        result.rss_together = server.peak_together
        # The server writes its snapshot once it is ready: let that finish before measuring.
        deadline = time.monotonic() + 600
        while not snap.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        for q in asked:
            times, failed = asyncio.run(latencies(server.port, q.ours, q.variables, args.requests))
            result.ours[q.name] = (pct(times, 0.5) * 1000, pct(times, 0.99) * 1000)
            result.failures[q.name] = failed
            print(f"[{size:,}] ours  {q.name}: p50 {result.ours[q.name][0]:.2f} ms", flush=True)
        point = asked[0]
        bodies = [orjson.dumps({"query": point.ours, "variables": v}) for v in point.variables]
        result.small["/healthz"] = asyncio.run(
            timed(server.port, "GET", "/healthz", [b""], args.requests)
        )
        result.small["{ __typename }"] = asyncio.run(
            timed(server.port, "POST", "/graphql", [TYPENAME], args.requests)
        )
        result.rps = asyncio.run(throughput(server.port, "/graphql", bodies, args.seconds))
        _, answer = asyncio.run(Connection(server.port).request("POST", "/graphql", bodies[0]))
        result.rss = peak_rss_mb(server.process.pid)
        result.specs = orjson.loads(
            asyncio.run(Connection(server.port).request("GET", "/readyz"))[1]
        )["spec_count"]
    finally:
        server.stop()
    floor = http_floor(answer)
    try:
        result.small["bare route"] = asyncio.run(
            timed(floor.port, "POST", "/graphql", bodies, args.requests)
        )
        result.floor_rps = asyncio.run(throughput(floor.port, "/graphql", bodies, args.seconds))
    finally:
        floor.terminate()
        floor.wait(10)

    print(f"[{size:,}] restart from the snapshot", flush=True)
    server = Server(tree, "--snapshot", str(snap))
    try:
        result.snapshot = server.seconds
        page = asked[6]
        times, _ = asyncio.run(latencies(server.port, page.ours, page.variables[:1], 50))
        result.cached_ms = pct(times, 0.5) * 1000
    finally:
        server.stop()

    if peer is not None:
        print(f"[{size:,}] peer: loading PostgreSQL", flush=True)
        db = f"cache{size}"
        seconds = peer.load(tree, db)
        peer.serve(db, free_port())
        result.peer_note = f"loaded and indexed in {seconds:.0f} s"
        for q in asked:
            if q.peer is None:
                continue
            times, failed = asyncio.run(
                latencies(peer.gql_port, q.peer, q.variables, args.requests)
            )
            result.peer[q.name] = (pct(times, 0.5) * 1000, pct(times, 0.99) * 1000)
            result.failures[q.name + " (peer)"] = failed
            print(f"[{size:,}] peer  {q.name}: p50 {result.peer[q.name][0]:.2f} ms", flush=True)
        peer.stop_graphql()
        peer.psql(f"drop database {db}")
    return result


# -- the mirror workload -----------------------------------------------------------------


@dataclass
class MirrorResult:
    size: int
    specs: int = 0
    records: int = 0
    floor: float = 0.0
    cold: float = 0.0
    #: seconds from start until the whole data is served (a large v3 mirror is served from
    #: its index first, its spec manifests read by a second load: ``--index-first-bytes``)
    whole: float = 0.0
    rss: float = 0.0
    rss_together: float = 0.0
    snapshot: float = 0.0
    direct: tuple[float, float] = (0.0, 0.0)
    dependents: tuple[float, float] = (0.0, 0.0)
    dependents_of: str = ""
    failures: int = 0
    #: the constraint-language and graph questions: name -> (p50, p99) ms
    language: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: name -> ms of the first ask, before anything was kept
    first: dict[str, float] = field(default_factory=dict)


def index_blobs(mirrors: Path) -> list[Path]:
    """Every index a mirror tree holds: v2 index.json files and the blobs v3 manifests name."""
    found = sorted(mirrors.rglob("build_cache/index.json"))
    for manifest in sorted(mirrors.rglob("v3/manifests/index/index.manifest.json")):
        record = orjson.loads(manifest.read_bytes())["data"][0]
        root = manifest.parents[3]
        found.append(root / "blobs" / "sha256" / record["checksum"][:2] / record["checksum"])
    return found


def warm(tree: Path, also: list[Path] = ()) -> None:
    """Read once the files a load of these mirrors reads, so that the page cache holds them:
    their indices and manifests (``also``: the v3 index blobs), not the spec files and blobs
    their indices leave unread (a million specs' would not fit in memory)."""
    for root, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if d != "blobs"]
        for name in names:
            if not name.endswith(".spec.json"):
                _read_through(os.path.join(root, name))
    for path in also:
        _read_through(path)


def _read_through(path: str | Path) -> None:
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


def index_floor(blobs: list[Path]) -> float:
    """Seconds a fresh process takes to read and parse every index with orjson, start to exit."""
    code = "import sys, orjson\nfor p in sys.argv[1:]:\n    orjson.loads(open(p, 'rb').read())\n"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *map(str, blobs)], check=True)
    return time.perf_counter() - started


def draw_mirror_variables(blobs: list[Path], result: MirrorResult) -> tuple:
    """Variables from the raw indices: held specs, constraints on them, dependencies to ask
    with ``^``, a lockfile, the largest package, and the most depended-on library (set on
    ``result`` with the counts of records and specs)."""
    rng = random.Random(7)
    depended: dict[str, int] = {}
    hashes: set[str] = set()
    nodes: dict[str, dict] = {}
    for blob in blobs:
        installs = orjson.loads(blob.read_bytes())["database"]["installs"]
        result.records += len(installs)
        for hash, entry in installs.items():
            hashes.add(hash)
            nodes[hash] = entry["spec"]
            for dep in entry["spec"].get("dependencies", []):
                depended[dep["hash"]] = depended.get(dep["hash"], 0) + 1
    result.specs = len(hashes)
    library = max(depended, key=depended.__getitem__)
    result.dependents_of = library
    chosen = rng.sample(sorted(hashes), 200)
    constraints, deps = [], []
    for h in chosen:
        node = nodes[h]
        flags = [f"+{k}" if v else f"~{k}" for k, v in sorted(node["parameters"].items())
                 if isinstance(v, bool)]  # fmt: skip
        constraints.append(constraint(node["name"], node["version"], flags))
        linked = [d for d in node.get("dependencies", []) if d["name"].startswith("lib-")]
        if linked:
            dep = nodes[rng.choice(linked)["hash"]]
            deps.append({"c": f"^{dep['name']}@{dep['version'].split('.')[0]}:"})
    environment = lockfile_of(nodes, rng, 500)
    largest = max(Counter(n["name"] for n in nodes.values()).items(), key=lambda kv: kv[1])[0]
    impacted = f"{nodes[library]['name']}@{nodes[library]['version']}"
    return chosen, constraints, deps, environment, largest, impacted, library


def drawn_once(tree: Path, blobs: list[Path], result: MirrorResult) -> tuple:
    """``draw_mirror_variables``, kept beside the tree (``.drawn.json``) for the same index
    files: at a million specs drawing takes a quarter of an hour and 13 GB, and draws the
    same variables every time (its seed is fixed)."""
    kept = tree / ".drawn.json"
    key = [[str(b), b.stat().st_size, b.stat().st_mtime_ns] for b in blobs]
    if kept.exists():
        found = orjson.loads(kept.read_bytes())
        if found["key"] == key:
            result.records, result.specs = found["records"], found["specs"]
            result.dependents_of = found["dependents_of"]
            return tuple(found["drawn"])
    # Drawn in a function of their own: the parsed indices (some 8 GB at a million specs)
    # are freed before the server starts, and leave the machine's memory to it.
    drawn = draw_mirror_variables(blobs, result)
    kept.write_bytes(orjson.dumps({
        "key": key, "records": result.records, "specs": result.specs,
        "dependents_of": result.dependents_of, "drawn": drawn,
    }))  # fmt: skip
    return drawn


def run_mirror_size(size: int, args: argparse.Namespace) -> MirrorResult:
    result = MirrorResult(size)
    tree = args.work / f"mirrors-{size}"
    if not (tree / ".complete").exists():
        print(f"[mirrors {size:,}] generating the mirrors", flush=True)
        synthesize_mirrors(tree, size, 2, 1)
        (tree / ".complete").write_text("")
    blobs = index_blobs(tree)
    drawn = drawn_once(tree, blobs, result)
    chosen, constraints, deps, environment, largest, impacted, library = drawn
    tags = sorted({p.parent.name for p in tree.glob("*/*/")} - {tree.name})[:2]

    # The server's second load reads every manifest, the floor only the indices: with the
    # files in the page cache for both, the ratio measures parsing, not this machine's disk.
    print(f"[mirrors {size:,}] reading the indices and manifests once (page cache)", flush=True)
    warm(tree, blobs)
    print(f"[mirrors {size:,}] index floor", flush=True)
    result.floor = index_floor(blobs)
    print(f"[mirrors {size:,}] cold start", flush=True)
    snap = args.work / f"mirrors-snapshot-{size}"
    snap.unlink(missing_ok=True)
    served = ("--mirrors-file", str(tree / "mirrors.yaml"))
    server = Server(None, *served, "--response-cache", "0", "--snapshot", str(snap))
    try:
        result.cold = server.seconds
        # the snapshot is written once the whole data is served: the latencies are of that
        # (the index first served, a second process reads the manifests beside the server)
        while not snap.exists() and time.perf_counter() - server.started < 1200:
            server.peak_together = max(server.peak_together, rss_with_children(server.process.pid))
            time.sleep(0.2)
        result.whole = time.perf_counter() - server.started
        result.rss_together = server.peak_together
        asks = [
            ("direct", "query($h: String!) { spec(hash: $h) { dependencies { hash } } }",
             [{"h": h} for h in chosen]),
            ("dependents", "query($h: String!) { spec(hash: $h) { "
             "dependentCount(transitive: true) } }", [{"h": library}]),
        ]  # fmt: skip
        packages = [{"p": c["p"]} for c in constraints]
        asks += [
            (LANGUAGE_TARGETS[0][0], SATISFIES, constraints),
            (LANGUAGE_TARGETS[1][0], "query($c: String!) { specs(filter: {satisfies: $c}, "
             "first: 50) { nodes { hash version } } }", deps),
            (LANGUAGE_TARGETS[2][0], f"{{ facets {{ {FACETS} }} }}", [{}]),
            (LANGUAGE_TARGETS[3][0], "query($p: String!) { facets(filter: {package: $p}) "
             f"{{ {FACETS} }} }}", packages),
        ]  # fmt: skip
        asks += [
            (QUESTION_TARGETS[0][0], "query($lock: JSON) { coverage(lockfile: $lock) { total "
             "hitCount missCount hitBytes cachedRoots entries { hash hit reason } } }",
             [{"lock": environment}]),
            (QUESTION_TARGETS[1][0], "query($c: String!) { nearest(spec: $c, first: 5) { "
             "spec { hash } distance differences { field wanted cached } } }", constraints),
            (QUESTION_TARGETS[2][0], "query($p: String!) { package(name: $p) { lookalikes { "
             "specs { hash } differingDependencies } } }", [{"p": largest}]),
            (QUESTION_TARGETS[3][0], "query($c: String!) { impact(spec: $c) { specCount "
             "packages { package { name } specCount } stacks { stack { name } specCount } "
             "specs(first: 50) { nodes { hash } } } }", [{"c": impacted}]),
            (QUESTION_TARGETS[4][0], "query($a: String!, $b: String!) { tagDiff(from: $a, "
             "to: $b) { added(first: 0) { totalCount } removed(first: 0) { totalCount } "
             "kept(first: 0) { totalCount } } }", [{"a": tags[0], "b": tags[-1]}]),
        ]  # fmt: skip
        for name, query, variables in asks:
            # Answers the graph keeps (lookalikes, impact, a tag diff) are timed the first
            # time too, before the repeated asks find them kept.
            result.first[name] = asyncio.run(first_ask(server.port, query, variables[0]))
            times, failed = asyncio.run(latencies(server.port, query, variables, args.requests))
            measured = (pct(times, 0.5) * 1000, pct(times, 0.99) * 1000)
            if hasattr(result, name):
                setattr(result, name, measured)
            else:
                result.language[name] = measured
            result.failures += failed
            print(f"[mirrors {size:,}] {name}: p50 {measured[0]:.2f} ms", flush=True)
        result.rss = peak_rss_mb(server.process.pid)
    finally:
        server.stop()
    print(f"[mirrors {size:,}] restart from the snapshot", flush=True)
    server = Server(None, *served, "--snapshot", str(snap))
    result.snapshot = server.seconds
    server.stop()
    return result


def start_targets(big: MirrorResult) -> list[str]:
    """The start-up targets of the mirror workload: at a million specs (the public cache's
    every release), cold at most twice the floor, RSS 4 GB, restart 3 s; below, cold at most
    1.5 times the floor, RSS 1 GB, restart within 2 s of a start on the seeds."""
    large = big.specs >= 1_000_000
    ratio, rss = (2.0, 4096) if large else (1.5, 1024)
    restart, allowed = (big.snapshot, 3.0) if large else (big.snapshot - SEEDS_START[0], 2.0)
    what = "restart from the snapshot" if large else "restart from the snapshot, past the seeds'"
    return [
        f"| cold start ≤ {ratio:g}× the index floor | {big.cold / big.floor:.2f}× | "
        f"{verdict(big.cold <= ratio * big.floor)} |",
        f"| peak RSS ≤ {rss / 1024:g} GB | {big.rss:,.0f} MB ({big.rss_together:,.0f} MB with "
        f"the second process) | {verdict(big.rss <= rss)} |",
        f"| {what} ≤ {allowed:g} s | {restart:.2f} s | {verdict(restart <= allowed)} |",
    ]


#: seconds to start on the bundled seeds, measured once a run (``main``)
SEEDS_START = [0.0]


def mirror_report(results: list[MirrorResult]) -> list[str]:
    lines = [
        "",
        "### The mirror workload",
        "",
        "`cachegraph synth --mirror`: 12 mirrors (2 tags x 6 stacks, v2 then v3), DAGs of 5-15 "
        "direct dependencies, a quarter lookalikes; served with `--mirrors-file`; the indices and "
        "manifests read once before the floor and the server are timed, so both find them in "
        "the page cache.",
        "",
        "| specs | index records | index floor | cold start | ratio | whole data served "
        "| restart from snapshot | peak RSS (with the second process) "
        "| direct dependencies p50 / p99 | transitive dependents counted p50 / p99 |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.specs:,} | {r.records:,} | {r.floor:.1f} s | {r.cold:.1f} s | "
            f"{r.cold / r.floor:.1f}× | {r.whole:.1f} s | {r.snapshot:.1f} s | {r.rss:,.0f} MB "
            f"({r.rss_together:,.0f} MB) | {r.direct[0]:.2f} / {r.direct[1]:.2f} ms "
            f"| {r.dependents[0]:.1f} / {r.dependents[1]:.1f} ms |"
        )
    lines += [
        "",
        "Spack's constraint language and the questions only a graph answers, on the mirrors "
        "(ms, p50 / p99, and the first ask, before anything was kept); the peer holds no "
        "DAGs, so it is not asked here:",
        "",
        "| question | " + " | ".join(f"{r.specs:,}" for r in results) + " |",
        "|---" + "|---:" * len(results) + "|",
    ]
    for name, _ in LANGUAGE_TARGETS + QUESTION_TARGETS:
        lines.append(
            f"| {name} | "
            + " | ".join(
                f"{r.language[name][0]:.2f} / {r.language[name][1]:.2f} (first {r.first[name]:.0f})"
                for r in results
            )
            + " |"
        )
    failures = sum(r.failures for r in results)
    lines.append("")
    lines.append(f"Failed or wrong-shaped answers: {failures or 'none'}.")
    big = max(results, key=lambda r: r.size)
    lines += [
        "",
        f"### Mirror targets at {big.specs:,} specs",
        "",
        "| target | measured | |",
        "|---|---|---|",
        *start_targets(big),
        f"| a spec's direct dependencies ≤ 2 ms | {big.direct[0]:.2f} ms | "
        f"{verdict(big.direct[0] <= 2)} |",
        f"| transitive dependents of the most depended-on library, counted, ≤ 100 ms | "
        f"{big.dependents[0]:.1f} ms | {verdict(big.dependents[0] <= 100)} |",
        *language_targets(big.language, {}, ""),
        *[
            f"| {name} ≤ {ms} ms | {big.language[name][0]:.2f} ms (first {big.first[name]:.0f} "
            f"ms) | {verdict(big.language[name][0] <= ms)} |"
            for name, ms in QUESTION_TARGETS
            if name in big.language
        ],
        *(
            [
                f"| impact of the most depended-on library ≤ 50 ms at a million specs | "
                f"{big.language[IMPACT][0]:.2f} ms | {verdict(big.language[IMPACT][0] <= 50)} |"
            ]
            if big.specs >= 1_000_000 and IMPACT in big.language
            else []
        ),
    ]
    return lines


# -- the report --------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def report(
    results: list[Result],
    args: argparse.Namespace,
    peer_missing: str | None,
    mirrors: list[MirrorResult] = (),
) -> str:
    asked = questions(Sample([""], [""], [{}], [""], [{}]))
    names = [q.name for q in asked]
    # These have an answer of a fixed size, whatever the data's.
    fixed = [q.name for q in asked if q.group == "fixed"]
    lines = [
        "## Run",
        "",
        f"- machine: {machine()}",
        f"- command: `python -m bench.benchmark --sizes {','.join(map(str, args.sizes))} "
        f"--mirror-sizes {','.join(map(str, args.mirror_sizes))} "
        f"--cache-sizes {','.join(map(str, args.cache_sizes))} "
        f"--requests {args.requests} --seconds {args.seconds:g}"
        + (" --short" if args.short else "")
        + "`",
        f"- questions: each asked {args.requests} times, one client, variables drawn from the "
        "data, response cache off; throughput: "
        f"{CLIENTS} clients for {args.seconds:g} s; client and servers share the machine",
        f"- peer: {peer_missing or f'{PEER} {_pg_version()}'}"
        + "".join(f"; {r.specs:,} specs {r.peer_note}" for r in results if r.peer_note),
        "",
        "### Start-up and memory",
        "",
        f"A start on the bundled seeds took {SEEDS_START[0]:.2f} s (the median of three).",
        "",
        "| specs | JSON floor | cold start | ratio | restart from snapshot | peak RSS "
        "(with the second process) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.specs:,} | {r.floor:.1f} s | {r.cold:.1f} s | {r.cold / r.floor:.1f}× | "
            f"{r.snapshot:.1f} s | {r.rss:,.0f} MB ({r.rss_together:,.0f} MB) |"
        )
    lines += ["", "### Latency (ms, p50 / p99)", ""]
    header = "| question | " + " | ".join(f"{r.size:,}" for r in results)
    peer_cols = [r for r in results if r.peer]
    header += "".join(f" | peer {r.size:,} | ours/peer {r.size:,}" for r in peer_cols)
    lines += [header + " |", "|---" + "|---:" * (len(results) + 2 * len(peer_cols)) + "|"]
    for name in names:
        row = f"| {name} | " + " | ".join(
            f"{r.ours[name][0]:.2f} / {r.ours[name][1]:.2f}" for r in results
        )
        for r in peer_cols:
            if name not in r.peer:
                row += " | cannot ask | —"
                continue
            ratio = r.ours[name][0] / r.peer[name][0]
            row += f" | {r.peer[name][0]:.2f} / {r.peer[name][1]:.2f} | {ratio:.2f}"
        lines.append(row + " |")
    lines += ["", "### Throughput of the point query", ""]
    lines += ["| specs | ours | HTTP floor | ratio |", "|---:|---:|---:|---:|"]
    for r in results:
        lines.append(
            f"| {r.specs:,} | {r.rps:,.0f}/s | {r.floor_rps:,.0f}/s | {r.rps / r.floor_rps:.0%} |"
        )
    lines.append("")
    lines.append(
        "Answered from the response cache (the 1000-spec page asked again): "
        + ", ".join(f"{r.cached_ms:.2f} ms at {r.specs:,}" for r in results)
        + "."
    )
    lines += ["", "### Small answers (issue 43)", ""]
    lines += [
        "| specs | `GET /healthz` | `{ __typename }` | over `/healthz` (p50) | bare route on the "
        "server's stack |",
        "|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        health, typename, bare = (r.small[k] for k in ("/healthz", "{ __typename }", "bare route"))
        lines.append(
            f"| {r.specs:,} | {health[0]:.3f} / {health[1]:.3f} | {typename[0]:.3f} / "
            f"{typename[1]:.3f} | {typename[0] - health[0]:+.3f} | {bare[0]:.3f} / {bare[1]:.3f} |"
        )
    lines.append("")
    failures = {k: v for r in results for k, v in r.failures.items() if v}
    lines.append(f"Failed or wrong-shaped answers: {failures or 'none'}.")
    lines += targets(results, fixed) if results else []
    lines += mirror_report(list(mirrors)) if mirrors else []
    return "\n".join(lines) + "\n"


def targets(results: list[Result], fixed: list[str]) -> list[str]:
    big = max(results, key=lambda r: r.size)
    mid = [r for r in results if r.size == big.size // 10]
    lines = [
        "",
        f"### Targets at {big.specs:,} specs",
        "",
        "| target | measured | |",
        "|---|---|---|",
    ]

    def add(target: str, measured: str, ok: bool) -> None:
        lines.append(f"| {target} | {measured} | {verdict(ok)} |")

    add("cold start ≤ 2× the JSON floor", f"{big.cold / big.floor:.2f}×", big.cold <= 2 * big.floor)
    past = big.snapshot - SEEDS_START[0]
    add("restart from the snapshot within 1 s of a start on the seeds", f"{past:+.2f} s", past <= 1)
    add("peak RSS ≤ 1 GB", f"{big.rss:,.0f} MB ({big.rss_together:,.0f} MB with the second "
        "process)", big.rss <= 1024)  # fmt: skip
    if mid:
        worst = max(fixed, key=lambda n: big.ours[n][0] / mid[0].ours[n][0])
        ratio = big.ours[worst][0] / mid[0].ours[worst][0]
        add(
            "fixed-size answers: p50 at 1M / at 100k ≤ 1.5",
            f"worst {ratio:.2f} ({worst})",
            ratio <= 1.5,
        )
    if big.peer:
        worst = max(fixed, key=lambda n: big.ours[n][0] / big.peer[n][0])
        ratio = big.ours[worst][0] / big.peer[worst][0]
        add(
            "ours/peer ≤ 0.5 for every fixed-size question",
            f"worst {ratio:.2f} ({worst})",
            ratio <= 0.5,
        )
    add(
        "point throughput ≥ 50% of the HTTP floor",
        f"{big.rps / big.floor_rps:.0%}",
        big.rps >= 0.5 * big.floor_rps,
    )
    overlaps = big.ours["stackOverlaps of all stacks"][0]
    add("stackOverlaps ≤ 50 ms", f"{overlaps:.1f} ms", overlaps <= 50)
    page = big.ours["1000-spec page, 10 fields"][0]
    add("1000-spec × 10-field page ≤ 250 ms", f"{page:.1f} ms", page <= 250)
    return lines + language_targets(big.ours, big.peer, "") + path_targets(big)


#: issue 43's ours/peer questions: (question, target)
PATH_RATIOS = [
    ("spec by hash", 0.33),
    ("one package's specs in a stack, by compiler", 0.33),
    ("first page of a large stack (no totalCount)", 0.33),
    ("satisfies 'name@range: +variant', first 50 with totalCount", 1.0),  # issue 40
]


def path_targets(big: Result) -> list[str]:
    """Issue 43's targets (and issue 40's of the request path) at the largest size."""
    lines = ["", f"### Targets of the request path at {big.specs:,} specs (issues 40, 43)", ""]
    lines += ["| target | measured | |", "|---|---|---|"]

    def add(target: str, measured: str, ok: bool) -> None:
        lines.append(f"| {target} | {measured} | {verdict(ok)} |")

    bare = big.small["bare route"][0]
    add("bare route on the server's own stack, p50 ≤ 0.30 ms", f"{bare:.3f} ms", bare <= 0.30)
    point = big.ours["spec by hash"][0]
    add("point query p50 ≤ 0.55 ms (response cache off)", f"{point:.3f} ms", point <= 0.55)
    over = big.small["{ __typename }"][0] - big.small["/healthz"][0]
    add("`{ __typename }` over `/healthz`, p50 ≤ +0.10 ms", f"{over:+.3f} ms", over <= 0.10)
    for name, most in PATH_RATIOS if big.peer else ():
        ratio = big.ours[name][0] / big.peer[name][0]
        add(f"ours/peer, {name} ≤ {most:g}", f"{ratio:.2f}", ratio <= most)
    share = big.rps / big.floor_rps
    add("point throughput ≥ 60% of the bare route (16 clients)", f"{share:.0%}", share >= 0.6)
    return lines


#: (question, target in ms) of the constraint language, at the largest size of each workload
LANGUAGE_TARGETS = [
    ("satisfies 'name@range: +variant', first 50 with totalCount", 20),
    ("satisfies '^dep@range', first 50", 50),
    ("facets of the whole cache", 200),
    ("facets of one package", 5),
]


IMPACT = "impact of the most depended-on library"
#: (question, target in ms) of the graph questions, at the largest mirror workload
QUESTION_TARGETS = [
    ("coverage of a 500-spec lockfile", 50),
    ("nearest for one constraint", 20),
    ("lookalike groups of the largest package", 100),
    ("impact of the most depended-on library", 200),
    ("tag diff of two tags (counts)", 100),
]


def lockfile_of(nodes: dict[str, dict], rng: random.Random, size: int) -> dict:
    """A version 6 lockfile of about ``size`` concrete specs: the DAGs of random held specs,
    with a tenth of its roots rebuilt under another hash (misses with a lookalike)."""
    concrete: dict[str, dict] = {}
    roots: list[str] = []
    hashes = sorted(nodes)
    for _ in range(100_000):
        if len(concrete) >= size * 0.98:
            break
        root = rng.choice(hashes)
        closure, stack = {}, [root]
        room = size - len(concrete)
        while stack and len(closure) <= room:  # a DAG that cannot fit is left at once
            h = stack.pop()
            if h in nodes and h not in concrete and h not in closure:
                closure[h] = nodes[h]
                stack += [d["hash"] for d in nodes[h].get("dependencies", [])]
        if not stack and len(closure) <= room:  # whole DAGs only, and no more than size
            roots.append(root)
            concrete |= closure
    for i, root in enumerate(list(roots)[::10]):
        changed = root[:-4] + f"{i:04d}"[-4:].translate(str.maketrans("0123456789", "abcdefghij"))
        concrete[changed] = {**concrete.pop(root), "hash": changed}
        roots[roots.index(root)] = changed
    return {
        "_meta": {"file-type": "spack-lockfile", "lockfile-version": 6, "specfile-version": 5},
        "roots": [{"hash": h, "spec": concrete[h]["name"]} for h in dict.fromkeys(roots)],
        "concrete_specs": concrete,
    }


async def first_ask(port: int, query: str, variables: dict) -> float:
    """Milliseconds of one request on a new connection."""
    conn = Connection(port)
    started = time.perf_counter()
    await conn.request("POST", "/graphql", orjson.dumps({"query": query, "variables": variables}))
    elapsed = time.perf_counter() - started
    await conn.close()
    return elapsed * 1000


def language_targets(ours: dict, peer: dict, where: str) -> list[str]:
    lines = []
    for name, ms in LANGUAGE_TARGETS:
        if name not in ours:
            continue
        p50 = ours[name][0]
        lines.append(f"| {name}{where} ≤ {ms} ms | {p50:.2f} ms | {verdict(p50 <= ms)} |")
        if name in peer:
            ratio = p50 / peer[name][0]
            lines.append(
                f"| {name}{where}: ours/peer ≤ 0.5 | {ratio:.2f} | {verdict(ratio <= 0.5)} |"
            )
    return lines


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        memory = int(Path("/proc/meminfo").read_text().split()[1]) / 1024 / 1024
    except OSError:
        memory = float("nan")
    return (
        f"{os.cpu_count()} cores ({cpu}), {memory:.0f} GB RAM, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}"
    )


def _pg_version() -> str:
    try:
        out = subprocess.run(
            [peers._program("postgres") or "postgres", "--version"], capture_output=True, text=True
        )
        return out.stdout.split()[-1]
    except OSError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--mirror-sizes", default="10000,100000,250000")
    # issue 31: ETag revalidation, nginx's cache, persisted queries, tracing (bench/caching.py)
    parser.add_argument("--cache-sizes", default="1000000")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument(
        "--remote-mirror-sizes", default="", help="issue 37's remote mirrors (bench/remote.py)"
    )
    parser.add_argument("--remote-transports", default="http,s3,oci")
    parser.add_argument(
        "--remote-no-sizes", action="store_true", help="skip the v3 sizes' arrival (no target)"
    )
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument(
        "--short",
        action="store_true",
        help="page trees of short records (about 35 a page, ~460 bytes each): --sizes counts "
        "page records",
    )
    parser.add_argument("--work", type=Path, default=Path("/tmp/cachegraph-bench"))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s]
    args.mirror_sizes = [int(s) for s in args.mirror_sizes.split(",") if s]
    args.cache_sizes = [int(s) for s in args.cache_sizes.split(",") if s]
    args.work.mkdir(parents=True, exist_ok=True)

    peer_missing = "skipped (--no-peer)" if args.no_peer else peers.missing()
    peer = None
    if peer_missing is None:
        peer = peers.Peer(args.work)
        peer.start(free_port())
    else:
        print(f"peer: {peer_missing}", file=sys.stderr)
    print("a start on the seeds", flush=True)
    SEEDS_START[0] = seeds_start()
    results: list[Result] = []
    mirrors: list[MirrorResult] = []
    caching: list = []
    remote: list = []

    def composed() -> str:
        text = report(results, args, peer_missing, mirrors)
        text += "\n".join(caching_report(caching, args)) + "\n" if caching else ""
        if remote:
            text += "\n".join(remote_mirrors.report(remote)) + "\n"
            text += "\n".join(remote_mirrors.targets(mirrors, remote)) + "\n"
        return text

    def so_far() -> None:
        """What is measured so far, beside --out: a run that stops half way keeps it."""
        args.out.with_name(args.out.name + ".partial").write_text(composed())

    try:
        for size in args.sizes:
            results.append(run_size(size, args, peer))
            so_far()
    finally:
        if peer is not None:
            peer.stop()
    for size in args.mirror_sizes:
        mirrors.append(run_mirror_size(size, args))
        so_far()
    for size in args.cache_sizes:
        tree = tree_of(size, args)
        caching.append(run_caching(tree, sample(tree).hashes, size, args))
        so_far()
    if args.remote_mirror_sizes:
        from bench import remote as remote_mirrors  # it imports this module: asked for here only

        transports = args.remote_transports.split(",")
        sizes = [int(size) for size in args.remote_mirror_sizes.split(",") if size]
        for size in sizes:
            # The v3 sizes' arrival (a request a spec) at the smallest size only: at a
            # million it takes longer than the rest together, and it is no target.
            sized = size == min(sizes) and not args.remote_no_sizes
            remote.append(remote_mirrors.run_size(size, transports, args.work, sized))
            so_far()
    text = composed()
    print(text)
    head = args.out.read_text().split("## Run")[0] if args.out.exists() else "# Benchmarks\n\n"
    args.out.write_text(head + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
