"""Cold start of a page tree against its orjson floor, two versions of the code interleaved
(issue 40 item 1): on a shared machine the figures of one run vary, so each round takes the
floor, this checkout's start and the other version's start back to back.

    python -m bench.coldstart [--short] [--sizes 250000,1000000] [--runs 2]
                              [--other PATH] [--work /tmp/cachegraph-bench]

``--short`` generates pages of short records (``cachegraph synth --short``; ``--sizes``
counts page records), else the project's own shape (``--sizes`` counts specs), both as
``bench.benchmark`` does, kept in the work folder. ``--other`` names a folder to put first
on PYTHONPATH for the other version: that version's package laid out as installed
(``cachegraph/`` with ``graph``, ``schema`` and ``seeds`` inside it) and a
``sitecustomize.py`` that removes this checkout's editable finder from ``sys.meta_path``;
its server starts in that folder.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bench.benchmark import Server, json_floor, tree_of


def start(tree: Path, python_path: str | None) -> float:
    """Seconds from process start until ``/readyz`` answers, with this PYTHONPATH."""
    saved, here = os.environ.get("PYTHONPATH"), os.getcwd()
    if python_path:  # from its folder: ``-m`` puts the working folder first on sys.path
        os.environ["PYTHONPATH"] = python_path
        os.chdir(python_path)
    try:
        server = Server(tree, "--response-cache", "0")
        server.stop()
        return server.seconds
    finally:
        os.chdir(here)
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="250000")
    parser.add_argument("--short", action="store_true")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--other", help="PYTHONPATH of the other version (see above)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/cachegraph-bench"))
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    print("| tree | run | floor | this | ratio | other | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for size in [int(s) for s in args.sizes.split(",") if s]:
        tree = tree_of(size, args)
        name = f"{'short' if args.short else 'own'} {size:,}"
        for run in range(1, args.runs + 1):
            floor = json_floor(tree)
            ours = start(tree, None)
            other = start(tree, args.other) if args.other else float("nan")
            print(
                f"| {name} | {run} | {floor:.1f} s | {ours:.1f} s | {ours / floor:.2f}× | "
                f"{other:.1f} s | {other / floor:.2f}× |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
