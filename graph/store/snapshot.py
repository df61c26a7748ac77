"""Save a loaded graph to one file and restart from it in a fraction of a load's time.

A snapshot holds the specs in contract order, their indices, dependencies and
the load report, written with ``marshal`` (objects that specs share -- interned
strings, stack sets -- are stored once and come back shared). It also holds a
fingerprint of the sources it was built from: every file's path, size and
modification time. A snapshot whose fingerprint differs from the sources of
the moment, or written by another Python or format version, is not used.

``marshal`` trusts its input: keep snapshot files where only the server writes.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

from . import files
from .columns import index_columns, index_of, ranks_bytes, ranks_of, spec_columns, spec_records
from .loader import IndexSource
from .model import CacheGraph, MirrorInfo
from .queries import precomputed, restore_precomputed
from .reader import LoadReport, Problem

#: Changes whenever what a snapshot holds (or how records load) changes.
FORMAT = 4
_MAGIC = b"cachegraph-snapshot"


def fingerprint(paths: Iterable[str | os.PathLike], indices: Iterable[IndexSource] = ()) -> str:
    """A digest of every source file's path, size and modification time."""
    return files.fingerprint(*_described(paths, indices))


def fingerprinting(
    paths: Iterable[str | os.PathLike], indices: Iterable[IndexSource] = ()
) -> files.Fingerprint:
    """``fingerprint`` worked out in a second process while this one reads a snapshot."""
    return files.Fingerprint(*_described(paths, indices))


def _described(paths, indices) -> tuple[list[str], list[str], list[str]]:
    indices = list(indices)
    labels = [
        f"{FORMAT} {sys.version_info[:2]}",
        *(f"mirror {s.label} {s.tag}:{s.stack}" for s in indices),
    ]
    return list(map(str, paths)), labels, [str(s.path) for s in indices]


def save(path: str | os.PathLike, graph: CacheGraph, report: LoadReport, key: str) -> None:
    """Write ``graph`` and its load report, built from sources with fingerprint ``key``.

    Written beside the target and renamed over it: a reader never sees half a file.
    """
    specs = graph.ordered
    rank = graph.rank
    body = {
        "key": key,
        "columns": spec_columns(specs),
        "index": index_columns(graph.index),
        "hashes": ranks_bytes(map(rank.__getitem__, graph.hashes)),
        "deps": graph.deps,
        "mirrors": [tuple(asdict(m).values()) for m in graph.mirrors.values()],
        "precomputed": precomputed(graph),
        "report": {
            **asdict(report),
            "problems": [tuple(asdict(p).values()) for p in report.problems],
        },
    }
    target = Path(path)
    partial = target.with_name(target.name + f".{os.getpid()}.partial")
    try:
        partial.write_bytes(_header() + marshal.dumps(body, 4))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def load(
    path: str | os.PathLike, key: str | files.Fingerprint
) -> tuple[CacheGraph, LoadReport] | None:
    """The graph and report saved at ``path``, or None unless it was built from sources ``key``.

    Given a ``Fingerprint`` still being worked out, the snapshot is read
    meanwhile and compared with it at the end.
    """
    try:
        with open(path, "rb") as f:
            if f.read(len(_header())) != _header():
                return None
            body = marshal.loads(f.read())  # load(f) reads item by item: 10x slower
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(body, dict) or (isinstance(key, str) and body.get("key") != key):
        return None
    specs = spec_records(body["columns"])
    index = index_of(body["index"])
    # From the column rather than the records: a million records visited in hash order
    # would cost twice as much.
    hashes = list(map(body["columns"]["hash"].__getitem__, ranks_of(body["hashes"])))
    mirrors = [MirrorInfo(*m) for m in body["mirrors"]]
    graph = CacheGraph(specs, index, body["deps"], hashes, mirrors)
    restore_precomputed(graph, body["precomputed"])
    if not isinstance(key, str) and key.result() != body.get("key"):
        return None
    fields = body["report"]
    fields["problems"] = [Problem(*p) for p in fields["problems"]]
    return graph, LoadReport(**fields)


def _header() -> bytes:
    return b"%s %d %d.%d\n" % (_MAGIC, FORMAT, *sys.version_info[:2])
