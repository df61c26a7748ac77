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
from collections.abc import Callable, Iterable, Iterator, Sequence
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
) -> Iterator[tuple[str, Callable[[], os.stat_result]]]:
    """(path, how to stat it) of every regular file under ``paths``, as os.walk goes
    top-down: a folder's files, then its folders, each in name order.

    A file is stat'd only when its caller asks: listing a folder tells files from
    folders, and a load needs no more.
    """
    for raw in paths:
        path = os.fspath(raw)
        try:
            st = os.stat(path)
        except OSError:
            missing.append(path)
            continue
        if stat.S_ISREG(st.st_mode):
            yield path, lambda st=st: st
        elif stat.S_ISDIR(st.st_mode):
            yield from _tree(path, irregular)
        else:
            irregular.append(path)


def _tree(top: str, irregular: list[str]) -> Iterator[tuple[str, Callable[[], os.stat_result]]]:
    # A stack, not recursion: a generator per level costs every file the depth of its path.
    stack = [top]
    while stack:
        try:
            with os.scandir(stack.pop()) as found:
                entries = sorted((e for e in found if not e.name.startswith(".")), key=_name)
        except OSError:
            continue
        below = []
        for entry in entries:
            try:
                if entry.is_file():
                    yield entry.path, entry.stat
                elif entry.is_dir():
                    if not entry.is_symlink():  # as os.walk: a link to a folder is not followed
                        below.append(entry.path)
                else:
                    entry.stat()  # a dangling link raises: nothing to report
                    irregular.append(entry.path)
            except OSError:
                continue
        stack.extend(reversed(below))


def _name(entry: os.DirEntry) -> str:
    return entry.name


def _folders(top: str, skip: frozenset[str]) -> Iterator[tuple[str, os.stat_result]]:
    """Every folder under ``top`` (``top`` too) and its stat, but those in ``skip``.

    A folder whose link count says it holds no folders (2: itself and its name in its
    parent) is not listed, as GNU find does: a mirror's tens of thousands of spec files
    sit in such folders. Where the count means nothing (1, on btrfs), it is listed.
    """
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            st = os.stat(folder)
        except OSError:
            continue
        yield folder, st
        if st.st_nlink == 2:
            continue
        try:
            with os.scandir(folder) as found:
                below = sorted(
                    e.path
                    for e in found
                    if e.is_dir(follow_symlinks=False)
                    and not e.name.startswith(".")
                    and e.path not in skip
                )
        except OSError:
            continue
        stack.extend(reversed(below))


def fingerprint(paths: Sequence[str], labels: Sequence[str] = (), more: Sequence[str] = ()) -> str:
    """A digest of ``labels`` and every source file's path, size and modification time.

    ``more`` are mirrors, given by their paths. An indexed mirror is what its index lists
    (as Spack reads one), so its own files are not each stat'd (a quarter of a million
    specs are a million files): its index files are, and every folder's modification time,
    which changes when a file is added, removed or replaced by a rename (as Spack, rsync
    and ``aws s3 sync`` write). Content-addressed blobs (v3) are left out: a changed blob
    has another name, in a manifest that changed.
    """
    lines = list(labels)
    missing: list[str] = []
    for mirror in more:
        root, index, skip = _mirror_index(mirror)
        # A folder of the mirror that is a link (build_cache/, v3/) is read through it, as
        # Spack reads it: the walks below, which follow no link, walk it as a top of its own.
        linked = _linked_folders(root, skip)
        if not index:
            paths = [*paths, mirror, *linked]
            continue
        for path in index:
            try:
                st = os.stat(path)
                lines.append(f"{path}\t{st.st_size}\t{st.st_mtime_ns}")
            except OSError:
                lines.append(f"{path}\tmissing")
        for top in (root, *linked):
            lines += [f"{folder}/\t{st.st_mtime_ns}" for folder, st in _folders(top, skip)]
    for path, stat_of in _walked(paths, missing, []):
        st = stat_of()
        lines.append(f"{path}\t{st.st_size}\t{st.st_mtime_ns}")
    lines += [f"{path}\tmissing" for path in missing]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _linked_folders(root: str, skip: frozenset[str]) -> list[str]:
    """The folders of a mirror's root that are symbolic links to folders, by name."""
    try:
        with os.scandir(root) as found:
            return sorted(
                e.path
                for e in found
                if e.is_symlink() and e.is_dir() and not e.name.startswith(".")
                and e.path not in skip
            )  # fmt: skip
    except OSError:
        return []


def _mirror_index(mirror: str) -> tuple[str, list[str], frozenset[str]]:
    """An indexed mirror's folder, its index files and the folders its fingerprint leaves
    out; for a mirror without an index, no index files (every file counts). Found as
    ``layouts.read_mirror`` finds them (this module imports nothing of the package: see
    the top)."""
    if os.path.isfile(mirror):  # a v2 index.json named itself
        return os.path.dirname(mirror), [mirror, mirror + ".hash"], frozenset()
    if os.path.isfile(os.path.join(mirror, "v3", "layout.json")):
        manifests = os.path.join(mirror, "v3", "manifests", "index")
        listed = [path for path, _ in _walked([manifests], [], [])]
        index = [os.path.join(mirror, "v3", "layout.json"), *listed] if listed else []
        return mirror, index, frozenset([os.path.join(mirror, "blobs")])
    folder = os.path.join(mirror, "build_cache")
    index = os.path.join(folder if os.path.isdir(folder) else mirror, "index.json")
    return mirror, [index, index + ".hash"] if os.path.isfile(index) else [], frozenset()


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


def fingerprints(parts: Sequence[Sequence[Sequence[str]]], labels: Sequence[str] = ()) -> str:
    """One digest of ``labels`` and the ``fingerprint`` of each part (its arguments: paths,
    labels, mirrors), in order: a load's sources, each fingerprinted as its kind says."""
    lines = [*labels, *(fingerprint(*part) for part in parts)]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


class Fingerprint:
    """``fingerprints`` worked out in a second process; ``result()`` waits for it."""

    def __init__(self, parts: Sequence[Sequence[Sequence[str]]], labels: Sequence[str] = ()):
        self.args = json.dumps([[[list(map(str, a)) for a in part] for part in parts],
                                list(labels)])  # fmt: skip
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
            self.digest = fingerprints(*json.loads(self.args))
        return self.digest


if __name__ == "__main__":
    print(fingerprints(*json.loads(sys.argv[1])))
