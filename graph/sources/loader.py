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

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from .. import deadline
from ..memory import loading
from ..store.view import CacheGraph
from . import parallel
from .mirrors import INDEX_VERSIONS, MirrorSource, is_v3, with_views
from .reader import LoadReport, Problem, Reader, source_files

__all__ = ["INDEX_VERSIONS", "IndexSource", "LoadReport", "MirrorSource", "Problem", "load"]

#: ``--index TAG:STACK=PATH`` of earlier versions: an index is a v2 mirror.
IndexSource = MirrorSource
Progress = Callable[[int, int], None]  # (files read, rows so far)


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
    started = time.perf_counter()
    reader = Reader()
    mirrors, reader.report.views = with_views(list(mirrors))
    if index_first_bytes is not None:
        mirrors = [index_first(m, index_first_bytes) for m in mirrors]
        reader.report.index_first = [m.label for m in mirrors if m.index_first]
    with loading():
        files = source_files(paths, reader.report)
        if before_reading is not None:
            before_reading()
        two = processes == 2 or (processes is None and parallel.cores() >= 2)
        split = None
        if two and (processes == 2 or len(files) >= parallel.MIN_FILES):
            split = parallel.halves(files)
        mine = split[0] if split else list(enumerate(map(str, files)))
        theirs = split[1] if split else []
        placed = list(enumerate(mirrors, len(files)))
        if (
            two
            and len(mirrors) > 1
            and (
                processes == 2
                or sum(map(parallel.index_bytes, mirrors)) >= parallel.MIN_INDEX_BYTES
            )
        ):
            placed, other_mirrors = parallel.mirror_halves(mirrors, len(files))
        else:
            other_mirrors = []
        helper = parallel.Helper(theirs, other_mirrors) if theirs or other_mirrors else None
        try:
            for count, (position, path) in enumerate(mine, 1):
                deadline.check_stopping()
                reader.at(position)
                reader.read_file(Path(path))
                if progress is not None and count % 200 == 0:
                    progress(count, reader.builder.record_count)
            for position, source in placed:
                deadline.check_stopping()
                reader.read_mirror_at(position, source)
            if helper is not None:
                other = helper.result()
                if other is None:  # no second process here, or it failed (it said why)
                    other = parallel.read_placed(theirs, other_mirrors)
                reader.merge(other)
        finally:
            if helper is not None:
                helper.stop()
        graph = reader.finish()
    reader.report.seconds = round(time.perf_counter() - started, 3)
    return graph, reader.report


def index_first(source: MirrorSource, least_bytes: int) -> MirrorSource:
    """``source``, read by its index only when it is a local v3 mirror whose index has at
    least ``least_bytes``: Spack lists a mirror by its index alone, and reading each spec
    manifest as well is a quarter of a large mirror's load (a million files at a million)."""
    if source.url or not is_v3(source) or parallel.index_bytes(source) < least_bytes:
        return source
    return replace(source, index_first=True)
