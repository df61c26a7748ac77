"""Issue 37's targets: mirrors served over HTTP (nginx), S3 (SeaweedFS) and OCI (the CNCF
registry), all on this machine, against the floor measured in the same run.

    python -m bench.remote [--sizes 250000] [--transports http,s3,oci] [--no-sizes] [--out FILE]

For each size (the mirror workload's tree, ``cachegraph synth --mirror``, made once in the
work folder) and transport:

- the floor: a fresh process downloading the same index bytes with a plain client (httpx2
  for http and OCI, obstore for S3) and parsing each with orjson, nothing else;
- cold start with an empty cache directory: ``cachegraph serve --mirrors-file`` of the
  remote URLs (and ``--snapshot``), process start to ``/readyz`` 200, and peak RSS;
- the restart with the cache directory and the snapshot, the network up and down (the
  server of the mirrors stopped): seconds to ready, and that the copies are served marked
  stale.

Over HTTP only (the check is the same request whatever the transport):

- a refresh with nothing changed over 100 mirrors: seconds, requests a mirror (nginx's
  access log), and whether anything was loaded again;
- one mirror of the twelve changed under a running server refreshing every second:
  seconds until the new data is answered (``loadStatus.finished`` moves), the point query's
  p99 during the rebuild against its idle p99, and the RSS then against the steady RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import orjson
import yaml
from cachegraph.graph import MirrorSource
from cachegraph.graph.sources.mirrors import mirrors_file

from bench.benchmark import (
    Server,
    index_blobs,
    peak_rss_mb,
    rss_with_children,
    seeds_start,
    verdict,
)
from bench.harness import Connection, pct
from cachegraph.state import DataSources
from cachegraph.synthmirror import synthesize_mirrors
from tests.ocipush import CONFIG_MEDIA, INDEX_TAG, LAYER_MEDIA, MANIFEST_MEDIA, RegistryPusher
from tests.remote import (
    Registry,
    SeaweedS3,
    StaticServer,
    program,
)

ROOT = Path(__file__).resolve().parents[1]

#: What a load of a remote mirror reads: the index and what names it, nothing else.
READ_FILES = (
    "build_cache/index.json",
    "build_cache/index.json.hash",
    "v3/layout.json",
    "v3/manifests/index/index.manifest.json",
)
#: Seconds a start may take: a million specs on two cores shared with other loads took more
#: than ten minutes.
READY_LIMIT = 1800
#: the sizes issue 37's targets name, and the peak RSS (MB) allowed at each
TARGET_SIZES = {250_000: 1024, 1_000_000: 3072}
POINT = "query($h: String!) { spec(hash: $h) { hash version compiler { name } stacks { name } } }"


@dataclass
class Transported:
    transport: str
    floor: float = 0.0
    cold: float = 0.0
    rss: float = 0.0
    restart_up: float = 0.0
    restart_down: float = 0.0
    stale_down: bool = False


@dataclass
class RemoteResult:
    size: int
    specs: int = 0
    index_bytes: int = 0
    seeds: float = 0.0
    transports: list[Transported] = field(default_factory=list)
    #: a refresh with nothing changed, 100 mirrors: seconds, requests a mirror, changed
    refresh: tuple[float, float, bool] = (0.0, 0.0, False)
    #: one of twelve changed: seconds to new data, idle p99 / rebuild p99 (ms), RSS MB
    change: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0)
    #: the v3 mirrors' sizes: seconds from ready to served, bytes known then, p99 meanwhile
    sizes: tuple[float, int, float] = (0.0, 0, 0.0)
    #: MB of one store (the snapshot the HTTP cold start wrote)
    store: float = 0.0


def mirror_folders(tree: Path) -> list[tuple[str, str, Path]]:
    """(tag, stack, root) of each mirror of a synthesized tree, as its mirrors.yaml lists."""
    return [(m.tag, m.stack, m.path) for m in mirrors_file(tree / "mirrors.yaml")]


def index_files(root: Path) -> list[Path]:
    """The files of a mirror a load of it reads: its index and what names it."""
    found = [root / f for f in READ_FILES if (root / f).is_file()]
    manifest = root / "v3" / "manifests" / "index" / "index.manifest.json"
    if manifest.is_file():
        record = orjson.loads(manifest.read_bytes())["data"][0]
        found.append(root / "blobs" / "sha256" / record["checksum"][:2] / record["checksum"])
    return found


def remote_listing(urls: list[tuple[str, str, str]], where: Path) -> Path:
    """A mirrors file naming the remote URLs."""
    listing = where / "remote-mirrors.yaml"
    entries = [{"tag": t, "stack": s, "url": u} for t, s, u in urls]
    listing.write_text(yaml.safe_dump({"mirrors": entries}))
    return listing


FLOOR = """
import sys, json, orjson
jobs = json.loads(sys.argv[1])
import httpx2
client = httpx2.Client(trust_env=False)
store = None
for kind, where in jobs:
    if kind == "http":
        data = client.get(where).content
    elif kind == "oci":
        base, digest = where
        data = client.get(f"{base}/blobs/{digest}").content
        if not data:
            raise SystemExit("empty")
        client.get(f"{base}/manifests/index.spack",
                   headers={"Accept": "application/vnd.oci.image.manifest.v1+json"})
    else:
        import obstore
        from obstore.store import S3Store
        bucket, key, endpoint = where
        if store is None:
            store = S3Store(bucket, config={"endpoint": endpoint, "skip_signature": True,
                            "region": "us-east-1"}, client_options={"allow_http": True})
        data = bytes(obstore.get(store, key).bytes())
    orjson.loads(data)
"""


def floor(jobs: list) -> float:
    """Seconds a fresh process takes to download and parse every index, start to exit."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR, json.dumps(jobs)], check=True)
    return time.perf_counter() - started


def index_blob_of(root: Path) -> Path:
    return index_blobs(root)[0] if (root / "v3").is_dir() else root / "build_cache/index.json"


def publish(transport: str, servers: dict, tree: Path, folders) -> tuple[list, list]:
    """The mirrors put on a server; (tag, stack, URL) of each, and the floor's jobs."""
    urls, jobs = [], []
    started = time.perf_counter()
    if transport == "http":
        nginx: StaticServer = servers["http"]
        for tag, stack, root in folders:
            below = root.relative_to(tree).as_posix()
            urls.append((tag, stack, f"{nginx.url}/{below}"))
            blob = index_blob_of(root).relative_to(tree).as_posix()
            jobs.append(("http", f"{nginx.url}/{blob}"))
    elif transport == "s3":
        s3: SeaweedS3 = servers["s3"]
        os.environ.update(s3.env())  # the servers started after reach it (AWS_ENDPOINT_URL)
        s3.make_bucket("bench")
        uploads = []
        for tag, stack, root in folders:
            prefix = root.relative_to(tree).as_posix()
            for path in index_files(root):
                uploads.append((f"bench/{prefix}/{path.relative_to(root).as_posix()}", path))
            urls.append((tag, stack, f"s3://bench/{prefix}"))
            blob = index_blob_of(root).relative_to(root).as_posix()
            jobs.append(("s3", ("bench", f"{prefix}/{blob}", s3.endpoint)))
        at_once(lambda job: s3_put(s3.endpoint, *job), uploads)
    else:
        registry: Registry = servers["oci"]
        pushes = [(f"bench/{tag}-{stack}".lower(), index_blob_of(root))
                  for tag, stack, root in folders]  # fmt: skip
        digests = at_once(lambda job: oci_push_index(registry.base, *job), pushes)
        for (tag, stack, _), (repository, _), digest in zip(folders, pushes, digests, strict=True):
            urls.append((tag, stack, registry.url(repository)))
            jobs.append(("oci", (f"{registry.base}/v2/{repository}", digest)))
    seconds = time.perf_counter() - started
    print(f"  [{transport}] published in {seconds:.1f} s", flush=True)
    return urls, jobs


#: Uploads at once: the large indices go file to server without waiting on each other (one
#: at a time, twelve 400 MB indices took longer than the loads they are measured for).
UPLOADS_AT_ONCE = 4
CHUNK = 1 << 20


def at_once(work, jobs: list) -> list:
    """``work`` of each job, ``UPLOADS_AT_ONCE`` at a time; the results in the jobs' order."""
    with ThreadPoolExecutor(UPLOADS_AT_ONCE) as pool:
        return list(pool.map(work, jobs))


def file_chunks(path: Path):
    """The file's bytes a MiB at a time: an upload never holds a whole index in memory."""
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


def streamed_put(http: httpx2.Client, url, path: Path, headers: dict | None = None):
    size = str(path.stat().st_size)
    return http.put(url, content=file_chunks(path),
                    headers={"content-length": size, **(headers or {})})  # fmt: skip


def s3_put(endpoint: str, key: str, path: Path) -> None:
    """One object PUT to an unauthenticated SeaweedFS, streamed from the file."""
    with httpx2.Client(trust_env=False, timeout=600) as http:
        for attempt in range(5):
            response = streamed_put(http, f"{endpoint}/{key}", path)
            if response.status_code < 500:  # a 5xx while the bucket's volumes grow: again
                break
            time.sleep(0.5 * (attempt + 1))
    if response.status_code != 200:
        raise RuntimeError(f"PUT /{key}: {response.status_code} {response.text}")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    for chunk in file_chunks(path):
        digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def oci_push_index(base: str, repository: str, index: Path) -> str:
    """The ``index.spack`` image of Spack's ``_oci_update_index`` (as ``RegistryPusher.
    push_index``), its layer streamed from the file; the layer's digest."""
    with httpx2.Client(trust_env=False, timeout=600) as http:
        pusher = RegistryPusher(base, http)
        config = pusher.push_blob(repository, b"{}")
        digest = sha256_of(index)
        start = http.post(f"{base}/v2/{repository}/blobs/uploads/")
        if start.status_code != 202:
            raise RuntimeError(f"upload of {repository}: {start.status_code} {start.text}")
        location = httpx2.URL(base).join(start.headers["location"])
        put = streamed_put(http, location.copy_merge_params({"digest": digest}), index,
                           {"content-type": "application/octet-stream"})  # fmt: skip
        if put.status_code != 201:
            raise RuntimeError(f"upload of {repository}: {put.status_code} {put.text}")
        manifest = {
            "mediaType": MANIFEST_MEDIA,
            "schemaVersion": 2,
            "config": {"mediaType": CONFIG_MEDIA, **config},
            "layers": [{"mediaType": LAYER_MEDIA, "digest": digest,
                        "size": index.stat().st_size}],
        }  # fmt: skip
        pusher.push_manifest(repository, INDEX_TAG, manifest)
    return digest


def ask_status(port: int) -> dict:
    async def ask() -> dict:
        conn = Connection(port)
        query = "{ loadStatus { finished } mirrors { name freshness { stale error lastChange } } }"
        _, raw = await conn.request("POST", "/graphql", orjson.dumps({"query": query}))
        await conn.close()
        return orjson.loads(raw)["data"]

    return asyncio.run(ask())


def run_transport(transport: str, servers: dict, tree: Path, folders, work: Path) -> Transported:
    """Floor, cold start, and restarts with the cache directory; the transport's server is
    stopped before the last (the network down) and not started again."""
    got = Transported(transport)
    urls, jobs = publish(transport, servers, tree, folders)
    listing = remote_listing(urls, work)
    print(f"  [{transport}] floor", flush=True)
    got.floor = floor(jobs)
    cache = work / f"cache-{transport}"
    shutil.rmtree(cache, ignore_errors=True)
    snap = work / f"snapshot-{transport}"
    snap.unlink(missing_ok=True)
    served = ("--mirrors-file", str(listing), "--cache-dir", str(cache), "--snapshot", str(snap))
    print(f"  [{transport}] cold start", flush=True)
    server = Server(None, *served, ready_limit=READY_LIMIT)
    got.cold, got.rss = server.seconds, peak_rss_mb(server.process.pid)
    deadline = time.monotonic() + 600  # the snapshot is written once the data is served
    while not snap.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    server.stop()
    print(f"  [{transport}] restart, the network up", flush=True)
    server = Server(None, *served, ready_limit=READY_LIMIT)
    got.restart_up = server.seconds
    server.stop()
    print(f"  [{transport}] restart, the network down", flush=True)
    servers.pop(transport).stop()
    server = Server(None, *served, ready_limit=READY_LIMIT)
    got.restart_down = server.seconds
    status = ask_status(server.port)
    got.stale_down = all(m["freshness"]["stale"] for m in status["mirrors"])
    server.stop()
    print(f"  [{transport}] {transport_row(got)}", flush=True)  # kept if a later one fails
    if transport != "http":  # a 1M copy is 6 GB: gone before the next transport's is made
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(storage(work, transport), ignore_errors=True)
    return got


def storage(work: Path, transport: str) -> Path:
    """Where the S3 or OCI server of a run keeps the objects uploaded to it."""
    return work / f"{transport}-storage"


def refresh_unchanged(nginx: StaticServer, work: Path, count: int = 100) -> tuple:
    """A check of ``count`` small mirrors with nothing changed: seconds, requests a mirror
    (counted in nginx's access log), and whether any mirror was found changed."""
    source = ROOT / "seeds" / "mirrors" / "mpigdb"
    folder = nginx.root / "small"
    for i in range(count):
        if not (folder / str(i)).is_dir():
            shutil.copytree(source, folder / str(i))
    mirrors = [MirrorSource.parse(f"t:s{i}={nginx.url}/small/{i}") for i in range(count)]
    sources = DataSources(mirrors=mirrors, cache_dir=str(work / "cache-small"))
    sources.check_sources()  # the first: every index fetched
    log = nginx.state / "access.log"
    before = log.stat().st_size
    started = time.perf_counter()
    changed = sources.check_sources()
    seconds = time.perf_counter() - started
    with log.open("rb") as f:
        f.seek(before)
        requests = sum(1 for line in f if b"/small/" in line)
    shutil.rmtree(folder)  # not left in the mirror tree the other workloads read
    return seconds, requests / count, changed


def one_changed(nginx: StaticServer, tree: Path, folders, work: Path, cold: float) -> tuple:
    """Under a server refreshing every second, one v2 mirror's index replaced by one with a
    new hash: seconds until the new data is answered, point-query p99 idle and during the
    rebuild (ms), RSS steady and at its peak during the rebuild (MB)."""
    root = next(r for _, _, r in folders if (r / "build_cache" / "index.json").is_file())
    urls = [(t, s, f"{nginx.url}/{r.relative_to(tree).as_posix()}") for t, s, r in folders]
    listing = remote_listing(urls, work)
    cache = work / "cache-change"
    shutil.rmtree(cache, ignore_errors=True)
    index = root / "build_cache" / "index.json"
    original = index.read_bytes()
    installs = orjson.loads(original)["database"]["installs"]
    hashes = sorted(installs)[:200]
    server = Server(None, "--mirrors-file", str(listing), "--cache-dir", str(cache),
                    "--refresh", "1", "--response-cache", "0", "--no-remote-sizes")  # fmt: skip
    try:
        idle = asyncio.run(point_times(server.port, hashes, 400))
        steady = rss_with_children(server.process.pid)
        finished = ask_status(server.port)["loadStatus"]["finished"]
        # a new index: the same records, another hash (a rebuild of the same specs)
        changed = original.rstrip() + b"\n\n"
        temporary = index.with_name(".index.json.new")
        temporary.write_bytes(changed)
        started = time.perf_counter()
        os.replace(temporary, index)
        during, peak = [], steady
        while True:
            during += asyncio.run(point_times(server.port, hashes, 20))
            peak = max(peak, rss_with_children(server.process.pid))
            if ask_status(server.port)["loadStatus"]["finished"] != finished:
                break
            if time.perf_counter() - started > 10 * cold + 60:
                raise RuntimeError("the changed mirror was not loaded again")
        seconds = time.perf_counter() - started
    finally:
        server.stop()
        index.write_bytes(original)
    p99 = (pct(idle, 0.99) * 1000, pct(during, 0.99) * 1000)
    return seconds, *p99, steady, peak


def sizes_arrive(nginx: StaticServer, tree: Path, folders, work: Path) -> tuple:
    """A server on the remote mirrors with an empty cache directory: seconds from ready until
    the v3 mirrors' sizes are served (their spec manifests fetched, the data loaded again),
    how many specs then have a size, and the point query's p99 meanwhile (ms)."""
    urls = [(t, s, f"{nginx.url}/{r.relative_to(tree).as_posix()}") for t, s, r in folders]
    listing = remote_listing(urls, work)
    cache = work / "cache-sizes"
    shutil.rmtree(cache, ignore_errors=True)
    blob = index_blob_of(folders[0][2])
    hashes = sorted(orjson.loads(blob.read_bytes())["database"]["installs"])[:200]
    server = Server(None, "--mirrors-file", str(listing), "--cache-dir", str(cache),
                    "--refresh", "0", "--response-cache", "0")  # fmt: skip
    try:
        started = time.perf_counter()
        finished = ask_status(server.port)["loadStatus"]["finished"]
        during: list[float] = []
        while ask_status(server.port)["loadStatus"]["finished"] == finished:
            during += asyncio.run(point_times(server.port, hashes, 20))
            if time.perf_counter() - started > 3600:
                raise RuntimeError("the sizes did not come")
        seconds = time.perf_counter() - started
        sized = ask_count(server.port)
    finally:
        server.stop()
    return seconds, sized, pct(during, 0.99) * 1000


def ask_count(port: int) -> int:
    async def ask() -> int:
        conn = Connection(port)
        query = "{ stats { specCount } mirrors { totalBytes } }"
        _, raw = await conn.request("POST", "/graphql", orjson.dumps({"query": query}))
        await conn.close()
        return int(sum(m["totalBytes"] for m in orjson.loads(raw)["data"]["mirrors"]))

    return asyncio.run(ask())


async def point_times(port: int, hashes: list[str], n: int) -> list[float]:
    conn, times = Connection(port), []
    for i in range(n):
        body = orjson.dumps({"query": POINT, "variables": {"h": hashes[i % len(hashes)]}})
        started = time.perf_counter()
        status, raw = await conn.request("POST", "/graphql", body)
        times.append(time.perf_counter() - started)
        if status != 200 or b'"errors"' in raw:
            raise RuntimeError(f"a point query failed: {raw[:200]!r}")
    await conn.close()
    return times


def spec_count(work: Path, blobs: list[Path]) -> int:
    """The distinct specs of the indices: counted once (at a million, minutes of parsing),
    kept in the work folder under the indices' paths, sizes and times."""
    key = hashlib.sha256(
        repr([(str(b), b.stat().st_size, b.stat().st_mtime_ns) for b in blobs]).encode()
    ).hexdigest()
    kept = work / "spec-counts.json"
    counts = orjson.loads(kept.read_bytes()) if kept.is_file() else {}
    if key not in counts:
        installs = (orjson.loads(b.read_bytes())["database"]["installs"] for b in blobs)
        counts[key] = len({h for each in installs for h in each})
        kept.write_bytes(orjson.dumps(counts))
    return counts[key]


def start_servers(work: Path, tree: Path, transports: list[str]) -> dict:
    servers: dict = {}
    nginx = program("nginx", "/usr/sbin/nginx")
    servers["http"] = StaticServer(nginx, tree, work / "nginx-state", None)
    if "s3" in transports:
        weed = program("weed", Path(sys.executable).parent / "weed")
        shutil.rmtree(storage(work, "s3"), ignore_errors=True)
        servers["s3"] = SeaweedS3(weed, storage(work, "s3"))
    if "oci" in transports:
        binary = program("docker-registry", "/usr/bin/docker-registry")
        shutil.rmtree(storage(work, "oci"), ignore_errors=True)
        servers["oci"] = Registry(binary, storage(work, "oci"))
    return servers


def run_size(size: int, transports: list[str], work: Path, sizes: bool = True) -> RemoteResult:
    """Every figure at ``size`` specs; ``sizes``: also the v3 sizes' arrival (a request a
    spec: at a million, longer than the rest together)."""
    result = RemoteResult(size, seeds=seeds_start())
    tree = work / f"mirrors-{size}"
    if not (tree / ".complete").exists():
        print(f"[remote {size:,}] generating the mirrors", flush=True)
        synthesize_mirrors(tree, size, 2, 1)
        (tree / ".complete").write_text("")
    folders = mirror_folders(tree)
    blobs = [index_blob_of(root) for _, _, root in folders]
    result.index_bytes = sum(b.stat().st_size for b in blobs)
    result.specs = spec_count(work, blobs)
    # publish() points the environment at its S3 server (AWS_ENDPOINT_URL, its keys) for the
    # servers started after it; left so, the next size's SeaweedFS inherited the keys,
    # refused anonymous requests and never came up (twice, a lost run each)
    environment = dict(os.environ)
    servers = start_servers(work, tree, transports)
    try:
        print(f"[remote {size:,}] a refresh of 100 mirrors, nothing changed", flush=True)
        result.refresh = refresh_unchanged(servers["http"], work)
        for transport in transports:
            print(f"[remote {size:,}] {transport}", flush=True)
            result.transports.append(run_transport(transport, servers, tree, folders, work))
        if "http" in transports:  # nginx was stopped: the change is measured on a new one
            servers["http"] = StaticServer(program("nginx", "/usr/sbin/nginx"), tree,
                                           work / "nginx-state-2", None)  # fmt: skip
            cold = next(t.cold for t in result.transports if t.transport == "http")
            print(f"[remote {size:,}] one mirror of {len(folders)} changed", flush=True)
            result.change = one_changed(servers["http"], tree, folders, work, cold)
            result.store = (work / "snapshot-http").stat().st_size / 2**20
            if sizes:
                print(f"[remote {size:,}] the v3 mirrors' sizes", flush=True)
                result.sizes = sizes_arrive(servers["http"], tree, folders, work)
    finally:
        for server in servers.values():
            server.stop()
        os.environ.clear()
        os.environ.update(environment)
    return result


def transport_row(t: Transported) -> str:
    return (
        f"| {t.transport} | {t.floor:.2f} s | {t.cold:.2f} s | {t.cold / t.floor:.2f}× "
        f"{verdict(t.cold <= 1.3 * t.floor)} | {t.rss:,.0f} MB | {t.restart_up:.2f} s | "
        f"{t.restart_down:.2f} s ({'all stale' if t.stale_down else 'NOT stale'}) |"
    )


def report(results: list[RemoteResult]) -> list[str]:
    lines = [
        "### Remote mirrors (issue 37)",
        "",
        "The mirror workload's tree (12 mirrors, v2 and v3) served by nginx over HTTP, SeaweedFS"
        " over S3 (only the files a load reads uploaded) and the CNCF registry over OCI (each"
        " index pushed as Spack pushes it), all on this machine. The floor: a fresh process"
        " downloading the same index bytes with a plain client and parsing each with orjson.",
        "",
    ]
    for r in results:
        lines += [
            f"#### {r.size:,} specs asked ({r.specs:,} in the indices, "
            f"{r.index_bytes / 2**20:,.0f} MiB of index)",
            "",
            "| transport | floor | cold start | ratio (≤ 1.3×) | peak RSS | restart, network "
            "up | restart, network down (stale) |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        lines += [transport_row(t) for t in r.transports]
        seconds, per_mirror, changed = r.refresh
        took, idle, during, steady, peak = r.change
        cold = next((t.cold for t in r.transports if t.transport == "http"), float("nan"))
        lines += [
            "",
            f"A start on the seeds in this run: {r.seeds:.2f} s.",
            "",
            "| figure | measured | target |",
            "|---|---:|---|",
            f"| a refresh with nothing changed, 100 mirrors | {seconds:.2f} s, "
            f"{per_mirror:.1f} requests a mirror, {'a change found' if changed else 'no rebuild'}"
            f" | ≤ 1 s, ≤ 2 requests a mirror, no rebuild: "
            f"{verdict(seconds <= 1 and per_mirror <= 2 and not changed)} |",
        ]
        if took:  # measured over HTTP only: not when the run left HTTP out
            lines += [
                f"| one mirror of 12 changed: new data answered | {took:.2f} s (cold {cold:.2f} "
                f"s) | ≤ ⅓ of a cold start: {verdict(took <= cold / 3)} |",
                f"| point-query p99 during the rebuild | {during:.2f} ms (idle {idle:.2f} ms) | "
                f"≤ 3× idle: {verdict(during <= 3 * idle)} |",
                f"| RSS during the rebuild | {peak:,.0f} MB (steady {steady:,.0f} MB, a store "
                f"{r.store:,.0f} MB) | ≤ steady + one store: {verdict(peak <= steady + r.store)} |",
            ]
        lines.append("")
        if r.sizes[0]:
            lines += [
                "The v3 mirrors' sizes (their spec manifests, a request a spec, fetched by a "
                f"second process once served, then loaded): served {r.sizes[0]:.1f} s after "
                f"ready, {r.sizes[1] / 2**30:,.1f} GiB of tarballs known then; the point "
                f"query's p99 meanwhile {r.sizes[2]:.2f} ms.",
                "",
            ]
    return lines


def targets(local: list, remote: list[RemoteResult]) -> list[str]:
    """Issue 37's table, every figure of this run against its target: ``local`` the mirror
    workload's results (``bench.benchmark.MirrorResult``: the same tree from its path), at
    the sizes the issue names (250,000 and 1,000,000 specs) only."""
    local = [m for m in local if m.size in TARGET_SIZES]
    remote = [r for r in remote if r.size in TARGET_SIZES]
    if not (local or remote):
        return []
    lines = ["### Issue 37's targets, this run", "", "| figure | measured | target | |",
             "|---|---|---|---|"]  # fmt: skip

    def row(figure: str, measured: str, target: str, ok: bool) -> None:
        lines.append(f"| {figure} | {measured} | {target} | {verdict(ok)} |")

    for r in remote:
        for t in r.transports:
            row(f"{r.size:,} specs over {t.transport}: cold start",
                f"{t.cold:.1f} s, {t.cold / t.floor:.2f}× the floor ({t.floor:.1f} s)",
                "≤ 1.3× the floor", t.cold <= 1.3 * t.floor)  # fmt: skip
    for m in local:
        row(f"{m.size:,} specs from a local path, spec files present: cold start",
            f"{m.cold:.1f} s, {m.cold / m.floor:.2f}× the index floor ({m.floor:.1f} s)",
            "≤ 1.3× the index floor", m.cold <= 1.3 * m.floor)  # fmt: skip
    peaks = [(f"{m.size:,} specs, local path", m.size, m.rss) for m in local]
    peaks += [(f"{r.size:,} specs over {t.transport}", r.size, t.rss)
              for r in remote for t in r.transports]  # fmt: skip
    for what, size, rss in peaks:
        limit = TARGET_SIZES[size]
        row(f"peak RSS, {what}", f"{rss:,.0f} MB", f"≤ {limit // 1024} GB", rss <= limit)
    for r in remote:
        seconds, per_mirror, changed = r.refresh
        row(f"a refresh with nothing changed, 100 mirrors ({r.size:,} specs)",
            f"{seconds:.2f} s, {per_mirror:.1f} requests a mirror, "
            f"{'a rebuild' if changed else 'no rebuild'}", "≤ 1 s, ≤ 2 requests, no rebuild",
            seconds <= 1 and per_mirror <= 2 and not changed)  # fmt: skip
        took, idle, during, steady, peak = r.change
        cold = next((t.cold for t in r.transports if t.transport == "http"), 0.0)
        if took:
            row(f"one mirror of twelve changed ({r.size:,} specs in all): new data answered",
                f"{took:.2f} s = {took / cold:.2f} of the cold start", "≤ ⅓ of a cold start",
                took <= cold / 3)  # fmt: skip
            row("point-query p99 during that rebuild", f"{during:.2f} ms (idle {idle:.2f})",
                "≤ 3× idle", during <= 3 * idle)  # fmt: skip
            row("RSS during that rebuild", f"{peak:,.0f} MB (steady {steady:,.0f} + a store "
                f"{r.store:,.0f})", "≤ steady + one store", peak <= steady + r.store)  # fmt: skip
        for t in r.transports:  # a round trip on loopback is well under a millisecond
            row(f"restart with the cache directory over {t.transport} ({r.size:,} specs), "
                "network up", f"{t.restart_up:.2f} s (a start on the seeds {r.seeds:.2f} s)",
                "≤ 1 s + a round trip a mirror over a start on the seeds",
                t.restart_up <= r.seeds + 1)  # fmt: skip
            row(f"the same, network down ({t.transport}, {r.size:,} specs)",
                f"{t.restart_down:.2f} s, {'every mirror' if t.stale_down else 'NOT all'} "
                "served stale", "serves the copies, marked stale", t.stale_down)  # fmt: skip
    return [*lines, ""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250000")
    parser.add_argument("--transports", default="http,s3,oci")
    parser.add_argument("--no-sizes", action="store_true", help="skip the v3 sizes' arrival")
    parser.add_argument("--work", type=Path, default=Path("/tmp/cachegraph-bench"))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    transports = args.transports.split(",")
    args.work.mkdir(parents=True, exist_ok=True)
    results = [
        run_size(int(s), transports, args.work, not args.no_sizes)
        for s in args.sizes.split(",")
        if s
    ]
    text = "\n".join(report(results))
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
