"""The web explorer's speed in headless Chromium: each view's first meaningful paint and the
data it downloads, on the bundled seeds, a page tree and the mirror workload of
``benchmark.py`` (made in --work when absent), against a floor measured in the same run.

    python -m bench.ui                                  # seeds, 1M page records, 250k mirrors
    python -m bench.ui --sizes 10000 --mirror-sizes 10000   # a quick look
    python -m bench.ui --sizes "" --mirror-sizes "" --together 100000:160000
        # issue 41's shape: page records and mirrors with DAGs served at once (30+ stacks)

First meaningful paint: from the start of navigation to the moment the view's main data
is on the screen (the explorer marks it, ``performance.mark("cg-painted")``), in a new
browser context each time (nothing cached), the median of ``--repeat`` loads. Data: the
bytes of every /graphql answer the view receives until two seconds after that paint
(the answers it asks for afterwards -- lookalikes, neighbours -- included). The floor is
a page of this server with nothing to ask (``/healthz``) in a new context. Targets: the
paint <= 0.5 s on the seeds and <= 1.5 s at 1M page records and on the 250k mirrors, and
no view over 1 MB. The figures go into docs/benchmarks.md between its ``ui`` markers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import sys
from pathlib import Path

from playwright.sync_api import Error

from bench.benchmark import Server, lockfile_of
from cachegraph.synth import synthesize
from cachegraph.synthmirror import synthesize_mirrors
from tests.browser import ask, chromium

ROOT = Path(__file__).resolve().parents[1]

VIEWS = ("home", "search", "packages", "package", "spec", "diff", "coverage")
MB = 1_000_000


def urls(origin: str) -> dict[str, str]:
    """view -> the URL of one it shows: the largest package, a spec with the deepest DAG of
    a few, the two newest tags."""
    largest = ask(origin, "{ facets { packages(first: 1) { value } } }")["facets"]["packages"][0]
    package = largest["value"]
    found = ask(origin, "query($p: String) { specs(filter: {package: $p}, first: 20) { nodes { "
                "hash dependencyCount(transitive: true) } } }", {"p": package})  # fmt: skip
    spec = max(found["specs"]["nodes"], key=lambda s: s["dependencyCount"])["hash"]
    return {
        "home": "/",
        "search": f"/ui/search?q={package}",
        "packages": "/ui/packages",
        "package": f"/ui/package/{package}",
        "spec": f"/ui/spec/{spec}",
        "diff": "/ui/diff",
        "coverage": "/ui/coverage",
    }


def load(browser, url: str, lockfile: Path | None = None) -> tuple[float, int]:
    """(ms to the view's paint, bytes of /graphql answers) of one load in a new context."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    received: list[int] = []

    def answered(response) -> None:
        # POST /graphql, or GET /graphql?... (the explorer's persisted queries)
        if response.url.split("?")[0].endswith("/graphql"):
            # an answer still coming when the context closes is not counted
            with contextlib.suppress(Error):
                received.append(len(response.body()))

    page.on("response", answered)
    page.goto(url)
    page.locator("html[data-painted]").wait_for(timeout=60_000)
    painted = page.evaluate("performance.getEntriesByName('cg-painted')[0].startTime")
    if lockfile is not None:  # the coverage view: its answer, after the upload
        started = page.evaluate("performance.now()")
        page.get_by_label("spack.lock file").set_input_files(str(lockfile))
        page.get_by_test_id("coverage-summary").wait_for(timeout=60_000)
        painted = page.evaluate("performance.now()") - started
    page.wait_for_timeout(2000)
    context.close()
    return painted, sum(received)


def floor(browser, origin: str) -> float:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{origin}/healthz")
    ms = page.evaluate("performance.getEntriesByType('navigation')[0].responseEnd")
    context.close()
    return ms


def measure(label: str, server: Server, repeat: int, lockfile: Path | None) -> list[str]:
    origin = f"http://127.0.0.1:{server.port}"
    views = urls(origin)
    rows = []
    with chromium() as browser:
        floors = [floor(browser, origin) for _ in range(repeat)]
        for view in VIEWS:
            runs = [load(browser, origin + views[view]) for _ in range(repeat)]
            paint = statistics.median(ms for ms, _ in runs)
            data = max(size for _, size in runs)
            rows.append(f"| {label} | {view} | {paint:.0f} ms | {data / 1000:,.1f} kB |")
            print(rows[-1], flush=True)
        if lockfile is not None:
            runs = [load(browser, origin + views["coverage"], lockfile) for _ in range(repeat)]
            paint = statistics.median(ms for ms, _ in runs)
            data = max(size for _, size in runs)
            rows.append(
                f"| {label} | coverage answer ({lockfile.stem}) | {paint:.0f} ms after the "
                f"upload | {data / 1000:,.1f} kB |"
            )
            print(rows[-1], flush=True)
    rows.append(
        f"| {label} | floor: `/healthz` in a new context | {statistics.median(floors):.0f} ms | |"
    )
    return rows


def mirror_lockfile(tree: Path, work: Path) -> Path:
    """A version 6 spack.lock of about 500 specs made of whole DAGs of the mirrors."""
    nodes: dict[str, dict] = {}
    for index in sorted(tree.rglob("index.json")):
        for hash, entry in json.loads(index.read_text())["database"]["installs"].items():
            nodes[hash] = entry["spec"]
    path = work / f"{tree.name}.spack.lock"
    path.write_text(json.dumps(lockfile_of(nodes, random.Random(7), 500)))
    return path


def made(tree: Path, synthesize_into, size: int) -> Path:
    """``tree``, synthesized (2 tags, seed 1, as benchmark.py makes it) unless it was."""
    if not (tree / ".complete").exists():
        synthesize_into(tree, size, 2, 1)
        (tree / ".complete").write_text("")
    return tree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000000")
    parser.add_argument("--mirror-sizes", default="250000")
    parser.add_argument(
        "--together",
        default="",
        help="PAGES:MIRROR_SPECS served at once, e.g. 100000:160000 (30+ stacks, 100k+ specs "
        "with DAGs; issue 41's shape)",
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/cachegraph-bench"))
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks.md")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    rows = []
    server = Server(ROOT / "seeds" / "pages")
    try:
        rows += measure("seeds", server, args.repeat, None)
    finally:
        server.stop()
    for size in [int(s) for s in args.sizes.split(",") if s]:
        tree = made(args.work / f"tree-{size}", synthesize, size)
        server = Server(tree)
        try:
            rows += measure(f"{size:,} page records", server, args.repeat, None)
        finally:
            server.stop()
    for size in [int(s) for s in args.mirror_sizes.split(",") if s]:
        tree = made(args.work / f"mirrors-{size}", synthesize_mirrors, size)
        lockfile = mirror_lockfile(tree, args.work)
        server = Server(None, "--mirrors-file", str(tree / "mirrors.yaml"))
        try:
            rows += measure(f"{size:,} mirror specs", server, args.repeat, lockfile)
        finally:
            server.stop()
    if args.together:
        pages, mirrors = (int(n) for n in args.together.split(":"))
        tree = made(args.work / f"tree-{pages}", synthesize, pages)
        mirrored = made(args.work / f"mirrors-{mirrors}", synthesize_mirrors, mirrors)
        server = Server(tree, "--mirrors-file", str(mirrored / "mirrors.yaml"))
        try:
            label = f"{pages:,} page records + {mirrors:,} mirror specs"
            rows += measure(label, server, args.repeat, mirror_lockfile(mirrored, args.work))
        finally:
            server.stop()
    table = "\n".join(["| data | view | first meaningful paint (median) | data downloaded (max) |",
                       "|---|---|---:|---:|", *rows])  # fmt: skip
    print(table)
    text = args.out.read_text() if args.out.exists() else ""
    start, end = "<!-- ui -->", "<!-- /ui -->"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        args.out.write_text(before + start + "\n" + table + "\n" + end + rest.split(end, 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
