"""Load build-cache data from files into a CacheGraph, reporting whatever is wrong.

Sources: cache pages (one file, or folders searched recursively), Spack spec
files (``spec-N.json``, ``*.spec.json``, ``*.spec.json.sig``, ``*.spec.yaml``),
build-cache indices (``index.json``) and whole mirrors in the v2 and v3 layouts
(``graph.sources.mirrors``). A file or record that cannot be loaded is reported
with its path, line where known, and the problem; everything else still loads.
``graph.sources.reader`` reads; this chooses whether one process reads or two
(``graph.sources.parallel``).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from .. import deadline
from ..memory import loading
from ..store.view import CacheGraph
from ..words import counted
from . import parallel
from .layouts import is_v3
from .mirrors import INDEX_VERSIONS, MirrorSource
from .reader import LoadReport, Problem, Reader
from .source import Source
from .trees import File, Tree

__all__ = [
    "INDEX_VERSIONS", "IndexSource", "LoadReport", "MirrorSource", "Problem", "Source", "load",
    "load_sources", "sources_of",
]  # fmt: skip

log = logging.getLogger("cachegraph")

#: ``--index TAG:STACK=PATH`` of earlier versions: an index is a v2 mirror.
IndexSource = MirrorSource
Progress = Callable[[int, int], None]  # (files read, rows so far)


def sources_of(
    paths: Iterable[str | os.PathLike] = (), mirrors: Iterable[MirrorSource] = ()
) -> list[Source]:
    """The sources of data ``paths`` (``--data``: files and folders) and ``mirrors`` name, in
    the order a load reads them.

    >>> [s.label for s in sources_of(["pages"], [MirrorSource.parse("t:s=/m")])]
    ['pages', 't/s']
    """
    return [*(Tree(os.fspath(p)) for p in paths), *mirrors]


def load(
    paths: Iterable[str | os.PathLike] = (),
    mirrors: Iterable[MirrorSource] = (),
    progress: Progress | None = None,
    processes: int | None = None,
    before_reading: Callable[[], object] | None = None,
    index_first_bytes: int | None = None,
) -> tuple[CacheGraph, LoadReport]:
    """Load every source under ``paths`` and each mirror; return the graph and the report.

    ``processes``: 1 reads in this process only; 2 reads the files in two
    processes whenever they are in two folders or more; None (the default) does
    so for a large tree on a machine with two cores or more. The answer is the same.
    ``before_reading`` is called once the files are listed, before any is read.
    ``index_first_bytes``: a local v3 mirror with an index of at least this many bytes is
    read by its index only (``MirrorSource.index_first``; listed in the report's
    ``index_first``); None reads every mirror whole.
    """
    return load_sources(
        sources_of(paths, mirrors), progress, processes, before_reading, index_first_bytes
    )


def load_sources(
    sources: Iterable[Source],
    progress: Progress | None = None,
    processes: int | None = None,
    before_reading: Callable[[], object] | None = None,
    index_first_bytes: int | None = None,
) -> tuple[CacheGraph, LoadReport]:
    """``load`` of any sources (``graph.sources.source``): each read as its parts, at a
    position each, the files in two processes where that pays (``graph.sources.parallel``)."""
    started = time.perf_counter()
    reader = Reader()
    with loading():
        placed = list(enumerate(p for s in sources for p in s.parts(reader.report)))
        if index_first_bytes is not None:
            placed = [(at, index_first(p, index_first_bytes)) for at, p in placed]
            reader.report.index_first = [p.label for _, p in placed if _index_first(p)]
        files = [(at, p.path) for at, p in placed if isinstance(p, File)]
        others = [(at, p) for at, p in placed if not isinstance(p, File)]
        if before_reading is not None:
            before_reading()
        two = processes == 2 or (processes is None and parallel.cores() >= 2)
        split = None
        if two and (processes == 2 or len(files) >= parallel.MIN_FILES):
            split = parallel.halves(files)
        mine, theirs = split or (files, [])
        if (
            two
            and len(others) > 1
            and (
                processes == 2
                or sum(parallel.index_bytes(p) for _, p in others) >= parallel.MIN_INDEX_BYTES
            )
        ):
            others, other_mirrors = parallel.mirror_halves(others)
        else:
            other_mirrors = []
        helper = parallel.Helper(theirs, other_mirrors) if theirs or other_mirrors else None
        try:
            for count, (position, path) in enumerate(mine, 1):
                deadline.check_stopping()
                File(path).read(reader, position)
                if progress is not None and count % 200 == 0:
                    progress(count, reader.builder.record_count)
            for position, source in others:
                deadline.check_stopping()
                source.read(reader, position)
            if helper is not None:
                other = helper.result()
                if other is None:  # no second process here, or it failed (it said why)
                    log.warning(
                        "the second loading process did not send its rows (%s): reading its "
                        "%s and %s in this process",
                        helper.why(), counted(len(theirs), "file"),
                        counted(len(other_mirrors), "mirror"),
                    )  # fmt: skip
                    other = parallel.read_placed(theirs, other_mirrors)
                reader.merge(other)
        finally:
            if helper is not None:
                helper.stop()
        graph = reader.finish()
    reader.report.seconds = round(time.perf_counter() - started, 3)
    return graph, reader.report


def index_first(source: Source, least_bytes: int) -> Source:
    """``source``, read by its index only when it is a local v3 mirror whose index has at
    least ``least_bytes``: Spack lists a mirror by its index alone, and reading each spec
    manifest as well is a quarter of a large mirror's load (a million files at a million)."""
    if (
        not isinstance(source, MirrorSource)
        or source.url
        or not is_v3(source)
        or parallel.index_bytes(source) < least_bytes
    ):
        return source
    return replace(source, index_first=True)


def _index_first(source: Source) -> bool:
    return isinstance(source, MirrorSource) and source.index_first
