"""Where a load's peak RSS is: the server's own load (``cachegraph.state.load_sources``) in
this process, its RSS sampled meanwhile, the loading thread's stack kept at each new high.

    python -m bench.peak --mirrors-file FILE [--cache-dir DIR] [--fresh]

``--mirrors-file`` as the server takes it (remote URLs or local paths); with remote URLs
the copies are fetched into ``--cache-dir`` as the server fetches them, and ``--fresh``
removes the kept readings there first (``graph.sources.parts``), so that the load reads
every copy as a cold start does, without downloading them again. It prints this process's
high-water mark (``VmHWM``: what bench/benchmark.py and bench/remote.py report for a
server; run it with ``MALLOC_ARENA_MAX=2``, as bench.benchmark.Server starts one), the
highest sample (with the second loading process's RSS at that moment, which ``VmHWM`` does
not count), each new high with the function the load was in, and the stacks at the last.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
import traceback
from pathlib import Path

#: Seconds between samples.
EVERY = 0.05
#: A new high is kept when it is this many MB above the last kept.
STEP_MB = 16


def status_mb(pid: int | str, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children_mb() -> float:
    total = 0.0
    pid = os.getpid()
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            total += status_mb(child, "VmRSS")
    return total


class Sampler(threading.Thread):
    """VmRSS every ``EVERY`` s; at each new high (``STEP_MB`` above the last), the stack of
    the thread ``watched``."""

    def __init__(self, watched: int) -> None:
        super().__init__(daemon=True)
        self.watched = watched
        self.highs: list[tuple[float, float, float, list[str]]] = []  # (t, MB, children, stack)
        self.started = time.perf_counter()
        self.done = threading.Event()

    def run(self) -> None:
        last = 0.0
        while not self.done.wait(EVERY):
            now = status_mb("self", "VmRSS")
            if now >= last + STEP_MB:
                last = now
                frame = sys._current_frames().get(self.watched)
                stack = [
                    f"{Path(f.filename).parent.name}/{Path(f.filename).name}:{f.lineno} {f.name}"
                    for f in traceback.extract_stack(frame)[-8:]
                ] if frame is not None else []  # fmt: skip
                self.highs.append((time.perf_counter() - self.started, now, children_mb(), stack))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors-file", required=True)
    parser.add_argument("--cache-dir", default="")
    parser.add_argument("--fresh", action="store_true", help="drop the kept readings first")
    parser.add_argument("--show", type=int, default=4, help="stacks shown, the highest last")
    args = parser.parse_args()
    if args.fresh and args.cache_dir:
        for kept in Path(args.cache_dir).glob("mirrors/*.read.pickle"):
            kept.unlink()
    from cachegraph.graph.sources.mirrors import mirrors_file

    from cachegraph.state import DataSources, load_sources

    sources = DataSources(mirrors=mirrors_file(args.mirrors_file), cache_dir=args.cache_dir)
    sampler = Sampler(threading.get_ident())
    sampler.start()
    started = time.perf_counter()
    graph, report, _ = load_sources(sources)
    took = time.perf_counter() - started
    sampler.done.set()
    sampler.join()
    print(f"loaded {report.specs:,} specs in {took:.1f} s; {graph.store!r}")
    print(f"VmHWM {status_mb('self', 'VmHWM'):,.0f} MB; now {status_mb('self', 'VmRSS'):,.0f} MB")
    top = max(sampler.highs, key=lambda h: h[1], default=None)
    if top is not None:
        print(f"highest sample {top[1]:,.0f} MB at {top[0]:.1f} s (children then {top[2]:,.0f} MB)")
    # the highs, a line each: where the load was (its innermost frame in graph/)
    for at, mb, _, stack in sampler.highs:
        inner = [line for line in stack if "store/" in line or "sources/" in line]
        print(f"  {at:7.1f} s {mb:7,.0f} MB  {(inner or stack or [''])[-1]}")
    for at, mb, kids, stack in sampler.highs[-args.show :]:
        print(f"-- {mb:,.0f} MB at {at:.1f} s (children {kids:,.0f} MB)")
        for line in stack:
            print("     " + line)


if __name__ == "__main__":
    main()
