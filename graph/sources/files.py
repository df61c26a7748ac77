"""Which files a load reads, and a fingerprint of them; run as a script, it prints one.

Only the standard library: a restart works out the fingerprint in a second
process (``Fingerprint``) started as ``python files.py``, without importing
the package, while this one reads the snapshot; both are mostly CPU work in
Python, so threads would take turns and two processes take half the time.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path


def source_files(
    paths: Iterable[str | os.PathLike], missing: list[str], irregular: list[str] | None = None
) -> Iterator[Path]:
    """Every regular file under ``paths``, in the order a load reads them.

    Folders are searched recursively, in name order, skipping hidden names.
    Missing paths go to ``missing``; FIFOs, sockets and devices, which a read could
    wait on forever, to ``irregular`` (never read).
    """
    for path, _ in _walked(paths, missing, [] if irregular is None else irregular):
        yield Path(path)


def _walked(
    paths: Iterable[str | os.PathLike], missing: list[str], irregular: list[str]
) -> Iterator[tuple[str, os.stat_result]]:
    """(path, its stat) of every regular file under ``paths``: one stat a file, by scandir."""
    for raw in paths:
        path = os.fspath(raw)
        try:
            st = os.stat(path)
        except OSError:
            missing.append(path)
            continue
        if stat.S_ISREG(st.st_mode):
            yield path, st
        elif stat.S_ISDIR(st.st_mode):
            yield from _tree(path, irregular)
        else:
            irregular.append(path)


def _tree(folder: str, irregular: list[str]) -> Iterator[tuple[str, os.stat_result]]:
    try:
        with os.scandir(folder) as found:
            entries = sorted((e for e in found if not e.name.startswith(".")),
                             key=lambda e: e.name)  # fmt: skip
    except OSError:
        return
    files, folders = [], []
    for entry in entries:
        try:
            st = entry.stat()
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            files.append((entry.path, st))
        elif stat.S_ISDIR(st.st_mode):
            if not entry.is_symlink():  # as os.walk: a link to a folder is not followed
                folders.append(entry.path)
        else:
            irregular.append(entry.path)
    # As os.walk goes: a folder's files, then its folders, each in name order.
    yield from files
    for sub in folders:
        yield from _tree(sub, irregular)


def fingerprint(paths: Sequence[str], labels: Sequence[str] = (), more: Sequence[str] = ()) -> str:
    """A digest of ``labels`` and every source file's path, size and modification time.

    ``more`` are files or folders outside ``paths`` to include (mirrors given on their own).
    """
    lines = list(labels)
    missing: list[str] = []
    for path, st in [*_walked(paths, [], []), *_walked(more, missing, [])]:
        lines.append(f"{path}\t{st.st_size}\t{st.st_mtime_ns}")
    lines += [f"{path}\tmissing" for path in missing]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def read_regular(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """A regular file's bytes: opened without waiting (a FIFO would block a plain open), then
    checked to be a regular file of at most ``limit`` bytes. OSError says why not.

    One open, one fstat and the reads: a v3 mirror has a manifest per spec, a quarter of a
    million of them for a large one.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, "not a regular file")
        if limit is not None and st.st_size > limit:
            raise OSError(0, f"larger than {limit:,} bytes")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


class Fingerprint:
    """``fingerprint`` worked out in a second process; ``result()`` waits for it."""

    def __init__(self, paths: Sequence[str], labels: Sequence[str] = (), more: Sequence[str] = ()):
        self.args = json.dumps([list(map(str, paths)), list(labels), list(map(str, more))])
        self.digest = ""
        try:
            self.process: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-I", __file__, self.args], stdout=subprocess.PIPE
            )
        except OSError:  # no second process here: this one will do it
            self.process = None

    def result(self) -> str:
        if not self.digest and self.process is not None:
            out, _ = self.process.communicate()
            if self.process.returncode == 0 and len(out.strip()) == 64:
                self.digest = out.strip().decode()
        if not self.digest:
            self.digest = fingerprint(*json.loads(self.args))
        return self.digest


if __name__ == "__main__":
    print(fingerprint(*json.loads(sys.argv[1])))
