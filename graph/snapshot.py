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

import hashlib
import marshal
import os
import sys
from array import array
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from types import MappingProxyType

from .loader import IndexSource, LoadReport, Problem, source_files
from .model import CacheGraph, SpecRecord
from .queries import precomputed, restore_precomputed

#: Changes whenever what a snapshot holds (or how records load) changes.
FORMAT = 2
_MAGIC = b"cachegraph-snapshot"


def fingerprint(paths: Iterable[str | os.PathLike], indices: Iterable[IndexSource] = ()) -> str:
    """A digest of every source file's path, size and modification time."""
    files = [*map(str, source_files(paths, LoadReport())), *(str(s.path) for s in indices)]
    lines = [f"{FORMAT} {sys.version_info[:2]}"]
    lines += [f"index {s.tag}:{s.stack}" for s in indices]
    for path in files:
        try:
            st = os.stat(path)
            lines.append(f"{path}\t{st.st_size}\t{st.st_mtime_ns}")
        except OSError:
            lines.append(f"{path}\tmissing")
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def save(path: str | os.PathLike, graph: CacheGraph, report: LoadReport, key: str) -> None:
    """Write ``graph`` and its load report, built from sources with fingerprint ``key``.

    Written beside the target and renamed over it: a reader never sees half a file.
    """
    specs = graph.ordered
    layouts: dict[int, int] = {}
    layout_list: list[dict] = []
    for s in specs:
        if id(s.stacks) not in layouts:
            layouts[id(s.stacks)] = len(layout_list)
            layout_list.append(dict(s.stacks))
    columns = {
        name: [getattr(s, name) for s in specs]
        for name in (
            "hash",
            "package",
            "version",
            "versions",
            "compiler",
            "os",
            "platform",
            "target",
            "variants",
            "all_stacks",
            "source",
            "from_page",
        )
    }
    columns["layout"] = array("i", (layouts[id(s.stacks)] for s in specs)).tobytes()
    rank = graph.rank
    body = {
        "key": key,
        "columns": columns,
        "layouts": layout_list,
        "index": {k: v.tobytes() for k, v in graph.index.items()},
        "hashes": array("i", (rank[h] for h in graph.hashes)).tobytes(),
        "deps": graph.deps,
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


def load(path: str | os.PathLike, key: str) -> tuple[CacheGraph, LoadReport] | None:
    """The graph and report saved at ``path``, or None unless it was built from sources ``key``."""
    try:
        with open(path, "rb") as f:
            if f.read(len(_header())) != _header():
                return None
            body = marshal.loads(f.read())  # load(f) reads item by item: 10x slower
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(body, dict) or body.get("key") != key:
        return None
    c = body["columns"]
    layouts = [MappingProxyType(layout) for layout in body["layouts"]]
    stacks = [layouts[i] for i in _ints(c["layout"])]
    specs = list(
        map(
            SpecRecord,
            c["hash"],
            c["package"],
            c["version"],
            c["versions"],
            c["compiler"],
            c["os"],
            c["platform"],
            c["target"],
            c["variants"],
            stacks,
            c["all_stacks"],
            c["source"],
            c["from_page"],
        )
    )
    index = {key: _ints(ranks) for key, ranks in body["index"].items()}
    hashes = [specs[r].hash for r in _ints(body["hashes"])]
    graph = CacheGraph(specs, index, body["deps"], hashes)
    restore_precomputed(graph, body["precomputed"])
    fields = body["report"]
    fields["problems"] = [Problem(*p) for p in fields["problems"]]
    return graph, LoadReport(**fields)


def _ints(data: bytes) -> array:
    ranks = array("i")
    ranks.frombytes(data)
    return ranks


def _header() -> bytes:
    return b"%s %d %d.%d\n" % (_MAGIC, FORMAT, *sys.version_info[:2])
