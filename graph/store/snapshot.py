"""A snapshot is the store's arrays in one file, memory-mapped at restart.

The file is a header line, a JSON description (each array's name, type, shape
and offset; the mirrors; the load report; the fingerprint of the sources it was
built from, ``files.fingerprint``), then each array's
bytes, aligned. A restart maps the file and makes each array a view of its
bytes: nothing is read until a query touches it, so a restart at a million
specs costs about what a start on a handful does. A snapshot whose fingerprint
differs from the sources of the moment, or written by another format version,
is not used. It is written beside the target and renamed over it, so a reader
never sees half a file; a server still mapping the old one keeps it.
"""

from __future__ import annotations

import json
import mmap
import os
import sys
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..sources import files
from ..sources.mirrors import MirrorSource
from ..sources.reader import LoadReport, Problem
from .columns import Store
from .records import MirrorInfo
from .view import CacheGraph

#: Changes whenever what a snapshot holds (or how records load) changes.
FORMAT = 6
_MAGIC = b"cachegraph-snapshot"
_ALIGN = 64


def fingerprint(paths: Iterable[str | os.PathLike], mirrors: Iterable[MirrorSource] = ()) -> str:
    """A digest of the sources: what ``files.fingerprint`` says of them, with the mirrors'
    names, tags and stacks and this snapshot format."""
    return files.fingerprint(*_described(paths, mirrors))


def fingerprinting(
    paths: Iterable[str | os.PathLike], mirrors: Iterable[MirrorSource] = ()
) -> files.Fingerprint:
    """``fingerprint`` worked out in a second process while this one reads a snapshot."""
    return files.Fingerprint(*_described(paths, mirrors))


def _described(paths, mirrors) -> tuple[list[str], list[str], list[str]]:
    mirrors = list(mirrors)
    labels = [
        f"{FORMAT} {sys.version_info[:2]}",
        *(
            f"mirror {s.label} {s.tag}:{s.stack}" + (f"^{s.view}" if s.view else "")
            for s in mirrors
        ),
    ]
    return list(map(str, paths)), labels, [str(s.path) for s in mirrors]


def save(path: str | os.PathLike, graph: CacheGraph, report: LoadReport, key: str) -> None:
    """Write ``graph``'s store and its load report, built from sources with fingerprint ``key``."""
    store = graph.store
    described, offset = [], 0
    for name, array in store.arrays.items():
        array = np.ascontiguousarray(array)
        offset = -(-offset // _ALIGN) * _ALIGN
        described.append([name, array.dtype.str, list(array.shape), offset])
        offset += array.nbytes
    meta = {
        "key": key,
        "arrays": described,
        "mirrors": [asdict(m) for m in store.mirrors],
        "report": {
            **asdict(report),
            "problems": [list(asdict(p).values()) for p in report.problems],
        },
    }
    head = _header() + _framed(json.dumps(meta).encode())
    start = -(-len(head) // _ALIGN) * _ALIGN
    target = Path(path)
    partial = target.with_name(target.name + f".{os.getpid()}.partial")
    try:
        with open(partial, "wb") as f:
            f.write(head.ljust(start, b"\0"))
            for (_, _, _, at), array in zip(described, store.arrays.values(), strict=True):
                f.seek(start + at)
                f.write(np.ascontiguousarray(array).data)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def load(
    path: str | os.PathLike, key: str | files.Fingerprint
) -> tuple[CacheGraph, LoadReport] | None:
    """The graph and report saved at ``path``, or None unless it was built from sources ``key``.

    Given a ``Fingerprint`` still being worked out, the snapshot is mapped
    meanwhile and compared with it at the end.
    """
    try:
        with open(path, "rb") as f:
            if f.read(len(_header())) != _header():
                return None
            size = int.from_bytes(f.read(8), "little")
            meta = json.loads(f.read(size))
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(meta, dict) or (isinstance(key, str) and meta.get("key") != key):
        return None
    start = -(-(len(_header()) + 8 + size) // _ALIGN) * _ALIGN
    try:
        arrays = {}
        for name, dtype, shape, at in meta["arrays"]:
            dtype = np.dtype(dtype)
            count = int(np.prod(shape, dtype=np.int64))
            arrays[name] = np.frombuffer(mapped, dtype, count, start + at).reshape(shape)
        mirrors = [MirrorInfo(**m) for m in meta["mirrors"]]
        fields = meta["report"]
        fields["problems"] = [Problem(*p) for p in fields["problems"]]
        report = LoadReport(**fields)
    except (KeyError, TypeError, ValueError):
        return None
    if not isinstance(key, str) and key.result() != meta.get("key"):
        return None
    return CacheGraph(Store(arrays, mirrors)), report


def _framed(data: bytes) -> bytes:
    return len(data).to_bytes(8, "little") + data


def _header() -> bytes:
    return b"%s %d\n" % (_MAGIC, FORMAT)
