"""The walk questions of issue 40 item 2, in process (a baseline for that item's work).

    python -m bench.walks TREE [--rounds 2] [--snapshot FILE]

TREE is a ``cachegraph synth --specs N --mirror`` tree (its mirrors.yaml is loaded). The
bench's own draws (``benchmark.draw_mirror_variables``: its ``^dep@MAJOR:`` constraints,
500-spec lockfile and most depended-on library) are asked through the schema's compiled
plan, no HTTP, ``--rounds`` times (a change is compared by running this on both commits,
interleaved, on a shared machine). ``--snapshot`` keeps the loaded store in FILE (written
at the first run, read at the next: seconds, where loading 250k mirror specs takes minutes);
it is refused, and the tree loaded again, when the sources or the snapshot format differ.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from cachegraph.graph import load, memory, snapshot
from cachegraph.graph.sources.mirrors import mirrors_file
from cachegraph.schema import schema
from cachegraph.schema.context import Context
from graphql import parse

from bench.benchmark import MirrorResult, draw_mirror_variables, index_blobs
from cachegraph.execution import compiled

DEPS = "query($c: String!) { specs(filter: {satisfies: $c}, first: 50) { nodes { hash version } } }"
COVERAGE = (
    "query($lock: JSON) { coverage(lockfile: $lock) { total hitCount missCount hitBytes "
    "cachedRoots entries { hash hit reason } } }"
)
IMPACT = (
    "query($c: String!) { impact(spec: $c) { specCount packages { package { name } specCount } "
    "stacks { stack { name } specCount } specs(first: 50) { nodes { hash } } } }"
)


def timed(graph, query: str, variables: list[dict]) -> tuple[float, list]:
    """The median ms of asking ``query`` once with each of ``variables``, and the answers."""
    plan = compiled.plan(schema, parse(query), None)
    times, answers = [], []
    for values in variables:
        context = Context(graph)
        start = time.perf_counter()
        answers.append(plan.answer(values, context))
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), answers


def loaded(tree: Path, kept: Path | None):
    """The tree's graph: from the snapshot ``kept`` when it is one of this tree, else loaded
    (and written there)."""
    mirrors = mirrors_file(tree / "mirrors.yaml")
    key = snapshot.fingerprint([], mirrors)
    found = snapshot.load(kept, key) if kept is not None else None
    if found is not None:
        return found[0]
    graph, report = load([], mirrors)
    if kept is not None:
        snapshot.save(kept, graph, report, key)
    return graph


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tree", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--snapshot", type=Path, help="keep the loaded store in this file")
    args = parser.parse_args()
    drawn = draw_mirror_variables(index_blobs(args.tree), MirrorResult(size=0))
    _, _, deps, environment, _, impacted, _ = drawn
    start = time.perf_counter()
    graph = loaded(args.tree, args.snapshot)
    print(f"loaded {graph.store.n:,} specs in {time.perf_counter() - start:.0f} s", flush=True)
    # The collector as the server sets it: its thresholds, the loaded graph frozen. With
    # the defaults, an impact's 50,000 rows ran full collections: 80-100 ms at 1M, 30 here.
    memory.serving()
    memory.settle(collect=False)
    for round in range(args.rounds):
        ms, _ = timed(graph, DEPS, deps)
        print(f"round {round + 1}: ^dep@range first 50 p50 {ms:.1f} ms ({len(deps)} constraints)")
        ms, _ = timed(graph, COVERAGE, [{"lock": environment}] * 5)
        print(f"round {round + 1}: coverage of the 500-spec lockfile p50 {ms:.1f} ms")
        ms, _ = timed(graph, IMPACT, [{"c": impacted}] * 5)
        print(f"round {round + 1}: impact of {impacted} p50 {ms:.1f} ms (kept after the first)")


if __name__ == "__main__":
    main()
