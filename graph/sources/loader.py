"""Load build-cache data from files into a CacheGraph, reporting whatever is wrong.

Sources: cache pages (one file, or folders searched recursively), Spack spec
files (``spec-N.json``, ``*.spec.json``, ``*.spec.json.sig``, ``*.spec.yaml``),
build-cache indices (``index.json``) and whole mirrors in the v2 and v3 layouts
(``graph.mirrors``). A file or record that cannot be loaded is reported with
its path, line where known, and the problem; everything else still loads.
``graph.reader`` reads; this chooses whether one process reads or two
(``graph.parallel``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

from .mirrors import INDEX_VERSIONS, MirrorSource
from .model import CacheGraph
from .parallel import load_in_two
from .reader import LoadReport, Problem, Reader, collector_paused, source_files

__all__ = ["INDEX_VERSIONS", "IndexSource", "LoadReport", "MirrorSource", "Problem", "load"]

#: ``--index TAG:STACK=PATH`` of earlier versions: an index is a v2 mirror.
IndexSource = MirrorSource
Progress = Callable[[int, int], None]  # (files read, specs so far)


def load(
    paths: Iterable[str | os.PathLike] = (),
    mirrors: Iterable[MirrorSource] = (),
    progress: Progress | None = None,
    processes: int | None = None,
    before_reading: Callable[[], object] | None = None,
) -> tuple[CacheGraph, LoadReport]:
    """Load every source under ``paths`` and each mirror; return the graph and the report.

    ``processes``: 1 reads in this process only; 2 reads a tree of pages in two
    processes whenever its sources allow; None (the default) does so for a
    large tree on a machine with two cores or more. The answer is the same.
    ``before_reading`` is called once the files are listed, before any is read.
    """
    started = time.perf_counter()
    reader = Reader()
    mirrors = list(mirrors)
    with collector_paused():
        sources = source_files(paths, reader.report)
        if before_reading is not None:
            before_reading()
        graph = None
        if not mirrors and not reader.report.problems and processes != 1:
            graph = load_in_two(sources, reader.report, force=processes == 2)
        if graph is None:
            for count, path in enumerate(sources, 1):
                reader.read_file(path)
                if progress is not None and count % 200 == 0:
                    progress(count, reader.builder.spec_count)
            for source in mirrors:
                reader.read_mirror(source)
            graph = reader.finish()
    reader.report.seconds = round(time.perf_counter() - started, 3)
    return graph, reader.report
