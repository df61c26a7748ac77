"""Load a large tree of pages in two processes, with the answer of a load in one.

The pages are split by the folder that holds them -- the package, on the
public site -- into two halves of packages. A second process reads one half,
orders and indexes its specs and sends them back as columns, while this
process does the same with the other half; the halves are then joined by
placing one after the other. Reading pages is most of a large load, and it
costs the same per row everywhere, so two cores take it in about half the time.

A hash belongs to one package, so each half holds every listing of its specs
and keeps the first as one process would. What does not fit that shape goes
back to one process: spec files and indices (they refer across files), a hash
listed in both halves, or a page whose folder misnames its package so the
halves' specs interleave in contract order (then they are re-sorted).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import subprocess
import sys
import threading
from array import array
from collections import defaultdict
from collections.abc import Callable
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import IO, Any

from .columns import index_columns, index_of, spec_columns, spec_records
from .model import CacheGraph, IndexKey, SpecRecord, ordered_index, rank_index, sort_key
from .reader import LoadReport, Problem, Reader, collector_paused

#: Fewer files than this load in one process: a second one would not pay for its start.
MIN_FILES = 2000
#: The share of the files this process reads: the second one also starts Python and
#: sends its specs back (and this one takes them in), about a tenth more work per file.
MINE = 0.55

# Problems sort as one process reports them: those of reading, in file order,
# then those found once every file is read (key (stage, file position)).
Keyed = tuple[tuple[int, int], Problem]


@dataclass
class Part:
    """What one process read: its specs in contract order, their index, and its problems."""

    specs: list[SpecRecord]
    index: dict[IndexKey, array]
    hashes: list[str]  # sorted
    problems: list[Keyed]
    pages: int
    records: int
    unresolved: int
    tags: list[str]


def load_in_two(files: list[Path], report: LoadReport, force: bool = False) -> CacheGraph | None:
    """The graph of ``files`` read in two processes, its counts and problems put in ``report``.

    None when they are better read in one (few files, one core, spec files,
    one package) or could not be (no second process, a hash in both halves).
    """
    if not force and (len(files) < MIN_FILES or _cores() < 2):
        return None
    halves = _halves(files)
    if halves is None:
        return None
    mine, theirs = halves
    other = _Helper(theirs)
    try:
        first = read_part(mine, other.starts_after)
        sent = other.result()
    finally:
        other.stop()
    if sent is None:  # no second process here, or it failed (it said why on stderr)
        return None
    second = _received(sent)
    graph = joined(first, second)
    if graph is None:
        return None
    problems = sorted(first.problems + second.problems, key=lambda keyed: keyed[0])
    report.problems += [problem for _, problem in problems]
    report.pages = first.pages + second.pages
    report.records = first.records + second.records
    report.unresolved = first.unresolved + second.unresolved
    report.tags = sorted({*first.tags, *second.tags})
    report.specs = len(graph.ordered)
    return graph


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def _halves(files: list[Path]) -> tuple[list[tuple[int, str]], list[tuple[int, str]]] | None:
    """Files by folder name, split into two parts (``MINE`` of them first); None if not pages."""
    if any(path.suffix == ".json" for path in files):
        return None
    folders: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for position, path in enumerate(files):
        folders[path.parent.name].append((position, str(path)))
    if len(folders) < 2:
        return None
    first: list[tuple[int, str]] = []
    second: list[tuple[int, str]] = []
    for name in sorted(folders):
        (first if len(first) < len(files) * MINE else second).extend(folders[name])
    if not second:
        return None
    return sorted(first), sorted(second)


def read_part(
    files: list[tuple[int, str]], first_rank: Callable[[int], int] = lambda count: 0
) -> Part:
    """Read these (file position, path) pages as one process would, and order their specs.

    Once they are read, ``first_rank`` is told how many specs there are, and
    says where the first one goes among the specs of both parts.
    """
    loader = Reader()
    problems = loader.report.problems
    keyed: list[Keyed] = []
    for position, path in files:
        seen = len(problems)
        loader.read_file(Path(path))
        keyed += [((0, position), p) for p in problems[seen:]]
    seen = len(problems)
    loader.resolve()
    where = dict(map(reversed, files))
    keyed += [((1, where.get(p.path, len(files))), p) for p in problems[seen:]]
    specs = sorted(loader.builder.records.values(), key=sort_key)
    index = rank_index(specs, first_rank(len(specs)))
    report = loader.report
    tags = sorted(loader.tags)
    hashes = sorted(loader.builder.records)
    return Part(specs, index, hashes, keyed, report.pages, report.records, report.unresolved, tags)


def joined(first: Part, second: Part) -> CacheGraph | None:
    """One graph of both parts; None when a hash is in both (only one process can decide)."""
    if not set(first.hashes).isdisjoint(second.hashes):
        return None
    specs = first.specs + second.specs
    if first.specs and second.specs and sort_key(second.specs[0]) < sort_key(first.specs[-1]):
        return CacheGraph(*ordered_index(specs), {})
    index = dict(first.index)
    for key, ranks in second.index.items():  # ranked after the first part already
        index[key] = index[key] + ranks if key in index else ranks
    hashes = first.hashes + second.hashes
    hashes.sort()  # two sorted runs: one merge
    return CacheGraph(specs, index, {}, hashes)


class _Helper:
    """A second Python process reading files: ``python -m cachegraph.graph.parallel``.

    A plain subprocess, not multiprocessing: it imports no one's main module,
    and forks no process that has threads (the server loads in one). It is
    sent the files, then -- once this process has read its own -- the rank its
    specs start at, so that neither process renumbers the other's index.
    """

    def __init__(self, files: list[tuple[int, str]]) -> None:
        self.sent: bytes | None = None
        self.first_rank: int | None = None
        self.placed = threading.Event()
        root = str(Path(__file__).resolve().parent.parent)
        path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "cachegraph.graph.parallel"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": path},
            )
        except OSError:
            self.thread = None
            return
        # A thread talks to it, so this process reads its own half meanwhile.
        self.thread = threading.Thread(target=self._talk, args=(marshal.dumps(files),))
        self.thread.start()

    def starts_after(self, count: int) -> int:
        """Place the second part's specs after this process's ``count``; this one's go first."""
        self.first_rank = count
        self.placed.set()
        return 0

    def _talk(self, files: bytes) -> None:
        out = None
        with contextlib.suppress(OSError, ValueError):  # it ended early: it said why on stderr
            with self.process.stdin as stdin:
                _send(stdin, files)
                self.placed.wait()
                _send(stdin, marshal.dumps(self.first_rank))
            with self.process.stdout as stdout:
                out = stdout.read()
        if self.process.wait() == 0:
            self.sent = out

    def result(self) -> bytes | None:
        if self.thread is not None:
            self.thread.join()
        return self.sent

    def stop(self) -> None:
        """End the second process unless it is done (this one gave up on it)."""
        if self.thread is not None and self.thread.is_alive():
            self.process.kill()
            self.placed.set()
            self.thread.join()


def _send(pipe: IO[bytes], data: bytes) -> None:
    pipe.write(len(data).to_bytes(8, "little") + data)
    pipe.flush()


def _received_frame(pipe: IO[bytes]) -> Any:
    size = int.from_bytes(pipe.read(8), "little")
    return marshal.loads(pipe.read(size))


def _read_sent(stdin: IO[bytes]) -> bytes:
    """``read_part`` in the second process, of the files sent, as bytes to send back."""
    with collector_paused():
        part = read_part(_received_frame(stdin), lambda count: _received_frame(stdin))
        body = {
            "columns": spec_columns(part.specs),
            "index": index_columns(part.index),
            "hashes": part.hashes,  # the same strings as the specs': marshal writes each once
            "problems": [(key, *astuple(p)) for key, p in part.problems],
            "counts": (part.pages, part.records, part.unresolved),
            "tags": part.tags,
        }
        return marshal.dumps(body, 4)


def _received(data: bytes) -> Part:
    body = marshal.loads(data)
    problems = [(key, Problem(*fields)) for key, *fields in body["problems"]]
    return Part(
        spec_records(body["columns"]),
        index_of(body["index"]),
        body["hashes"],
        problems,
        *body["counts"],
        body["tags"],
    )


if __name__ == "__main__":
    sys.stdout.buffer.write(_read_sent(sys.stdin.buffer))
