"""The graph being served, and reloading it without a restart.

A reload builds the new graph beside the old one and swaps one reference, so
a request sees either the old graph or the new one, never a mix; requests in
flight keep the graph they started with. A reload that fails changes nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field

import anyio

from cachegraph.graph import CacheGraph, LoadReport, MirrorSource, load, snapshot
from cachegraph.graph.changes import CHANGES, ChangeLog, Watched, record_changes
from cachegraph.graph.memory import collector_paused, settle
from cachegraph.graph.questions.counts import precompute, stats
from cachegraph.graph.questions.mirrors import record_watches
from cachegraph.graph.questions.status import LoadStatus, record_load
from cachegraph.graph.sources import files
from cachegraph.graph.sources.fetch import Fetcher, FetchLimits
from cachegraph.graph.sources.layouts import checked as remote_checked
from cachegraph.graph.sources.loader import sources_of
from cachegraph.graph.sources.locations import redacted
from cachegraph.graph.sources.mirrors import mirrors_file
from cachegraph.graph.sources.reader import STALE_COPY, Problem
from cachegraph.graph.sources.remote import (
    UNUSED_SECONDS,
    MirrorWatch,
    default_cache_dir,
    held_state,
    unused_copies,
)
from cachegraph.graph.sources.source import Checking, checked
from cachegraph.graph.words import counted

from .aside import fetch_sizes_aside, load_aside
from .progress import ProgressLine
from .sources import default_data, default_mirrors

log = logging.getLogger("cachegraph")


@dataclass
class DataSources:
    """Where the server's data comes from: page/spec-file paths and mirrors."""

    paths: list[str] = field(default_factory=list)
    mirrors: list[MirrorSource] = field(default_factory=list)
    #: a snapshot file to restart from while the sources are unchanged, and to write
    snapshot: str = ""
    #: where remote mirrors' copies are kept ("": the XDG default), and each fetch's bounds
    cache_dir: str = ""
    fetch_limits: FetchLimits = field(default_factory=FetchLimits)
    #: what is known of each remote mirror's freshness, by name; kept across reloads
    watches: dict[str, MirrorWatch] = field(default_factory=dict)
    #: what each load changed in each mirror (None: not kept)
    changes: ChangeLog | None = None
    #: a local v3 mirror with an index of this many bytes or more is served from its index
    #: first, its spec manifests read by a later load (``graph.sources.loader.index_first``);
    #: None: every mirror read whole
    index_first_bytes: int | None = None
    #: a mirrors file at a URL, read again at each check (``listed``: the last of
    #: ``mirrors``, which it listed when last read)
    listing: str = ""
    listed: list[MirrorSource] = field(default_factory=list)
    #: why the mirrors file could not be read again at the last check ("": it could)
    listing_error: str = ""
    #: the mirrors the last load read by their index only: a later load reads them whole
    index_first: list[str] = field(default_factory=list)
    #: the sources' fingerprint being worked out, started before the first load
    _fingerprint: files.Fingerprint | None = field(
        default=None, init=False, repr=False, compare=False
    )
    #: the mirrors with each remote one as its local copy, as last checked
    _local: list[MirrorSource] | None = field(default=None, init=False, repr=False)
    #: each local source's fingerprint at the last check, by label
    _seen: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    #: the index hash of each remote mirror's copy the data served was loaded from
    _served: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    #: whether a check reads the mirrors file again (not the first: read at start)
    _relist: bool = field(default=False, init=False, repr=False)
    #: the index hash of each remote mirror's copy at the last check, by label
    _held: dict[str, str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        # absolute: the copies' paths are in the snapshot's fingerprint, and `--cache-dir
        # cache` and the same folder given whole are one cache
        self.cache_dir = os.path.abspath(self.cache_dir) if self.cache_dir else ""

    def remote(self) -> bool:
        """Whether any mirror (or the mirrors file) is remote: then each load checks them."""
        return bool(self.listing) or any(m.url for m in self.mirrors)

    def check_sources(self) -> bool:
        """With a remote mirror, check every source (``graph.sources.source``): a remote
        mirror with Spack's cheap request, fetched into the cache directory where it
        changed; a local source by its fingerprint. Return whether any changed. Without a
        remote mirror nothing is checked: such a server reloads when asked."""
        if not self.remote():
            return False
        with Fetcher(self.fetch_limits) as fetcher:
            cache_dir = self.cache_dir or default_cache_dir()
            relisted = self._read_listing(fetcher, cache_dir)
            checking = Checking(fetcher, cache_dir, self.watches, self._seen, remote_checked)
            found, changed = checked(sources_of(self.paths, self.mirrors), checking)
            changed = changed or relisted
        self._local = [s for s in found if isinstance(s, MirrorSource)]
        # A copy another process sharing the cache directory brought up to date (a worker
        # of --workers, which found the change first) is a change to this one too.
        held = self.held_hashes()
        changed = changed or (self._held is not None and held != self._held)
        self._held = held
        removed = unused_copies(cache_dir)
        if removed:
            log.info("removed %s of the cache directory %s that no check used for %d days",
                     counted(len(removed), "mirror copy", "mirror copies"), cache_dir,
                     UNUSED_SECONDS // 86400)  # fmt: skip
        return changed

    def _read_listing(self, fetcher: Fetcher, cache_dir: str) -> bool:
        """Read the mirrors file at a URL again; whether the mirrors it lists changed (then
        they replace those it listed before). One that cannot be read keeps them."""
        if not self.listing:
            return False
        if not self._relist:  # the first check: the file was read a moment ago, at start
            self._relist = True
            return False
        try:
            listed = mirrors_file(self.listing, fetcher, cache_dir)
        except ValueError as exc:
            where = redacted(self.listing)
            why = str(exc).removeprefix(f"{where}: ")
            kept = counted(len(self.listed), "mirror")
            self.listing_error = f"{why}; keeping the {kept} it listed"
            log.warning("%s: %s", where, self.listing_error)
            return False
        self.listing_error = ""
        if listed == self.listed:
            return False
        named = self.mirrors[: len(self.mirrors) - len(self.listed)]
        self.mirrors, self.listed = named + listed, listed
        for gone in set(self.watches) - {m.label for m in self.mirrors}:
            del self.watches[gone]  # no longer said stale, nor in /metrics
        log.info("the mirrors file %s changed: it lists %s", redacted(self.listing),
                 counted(len(listed), "mirror"))  # fmt: skip
        return True

    def record_changes(self, graph: CacheGraph, at_start: bool) -> None:
        """Record in the change log what this load changed in each mirror (``at_start``: the
        first load, which finds what changed while the server was down)."""
        if self.changes is None:
            return
        held = self.held_hashes()
        mirrors = [
            Watched(m.name, m.tag, m.stack, held.get(m.name, "")) for m in graph.mirrors.values()
        ]
        graph.memo[CHANGES] = self.changes  # what the API and the feeds read
        try:
            record_changes(self.changes, graph.store, mirrors, at_start)
        except OSError as exc:
            log.warning("cannot keep the change log in %s: %s", self.changes.folder, exc)

    def held_hashes(self) -> dict[str, str]:
        """The index hash of each remote mirror's copy, by label."""
        return {m.label: held_state(m.path).hash for m in self.local_mirrors() if m.url}

    def served(self) -> None:
        """A load of every copy held is served: no mirror's new index waits refused."""
        self._served = self.held_hashes()
        for watch in self.watches.values():
            watch.refused = ""

    def refused(self, why: str) -> None:
        """A load was refused: each remote mirror whose copy changed since the data served
        is marked stale, saying why (until a load of it is served: a later check finds its
        copy unchanged and does not try again)."""
        for name, held in self.held_hashes().items():
            watch = self.watches.get(name)
            if watch is not None and self._served.get(name) != held:
                watch.refused = f"its new index is not served: {why}"

    def bundled(self) -> bool:
        """Whether nothing was given: the bundled pages and mirrors are served."""
        return not self.paths and not self.mirrors

    def resolved_paths(self) -> list[str]:
        return [str(default_data())] if self.bundled() else self.paths

    def resolved_mirrors(self) -> list[MirrorSource]:
        return default_mirrors() if self.bundled() else self.local_mirrors()

    def local_mirrors(self) -> list[MirrorSource]:
        """The mirrors given, each remote one as its local copy once checked."""
        return self.mirrors if self._local is None else self._local

    def start_fingerprint(self) -> None:
        """Start working out the sources' fingerprint, in a second process, for the first
        load to take: a server starts it first thing, and it runs while Python imports the
        rest (at a million mirror specs it stats every folder of the mirrors, 1.7 s, about
        a start on the seeds). Nothing to start without a snapshot, nor with remote mirrors:
        their copies are known once checked, and the load works it out then."""
        self._fingerprint = None if self.remote() else self.fingerprinting()

    def fingerprinting(self) -> files.Fingerprint | None:
        """The fingerprint started for this load (that one once), or None without a snapshot."""
        started, self._fingerprint = self._fingerprint, None
        if started is None and self.snapshot:
            started = snapshot.fingerprinting(self.resolved_paths(), self.resolved_mirrors())
        return started


def load_sources(
    sources: DataSources, checked: bool = False, aside: bool = False
) -> tuple[CacheGraph, LoadReport, str]:
    """Load the sources -- from the snapshot when it was made from these very files.

    Remote mirrors are checked first, and fetched where they changed (``checked``: they
    just were, by a refresh); with a snapshot, while it is mapped and verified
    (``CheckedFingerprint``). ``aside``: a full load is made by a second process
    (``cachegraph.aside``), as a reload's is, so that the server answers meanwhile. The
    third item is the fingerprint to write a snapshot under once the graph is served; empty
    when there is none to write (no snapshot asked, or read from it).
    """
    started = time.perf_counter()
    pending: files.Fingerprint | CheckedFingerprint | None = None
    if not checked and sources.remote() and sources.snapshot:
        pending = CheckedFingerprint(sources)
    elif not checked:
        sources.check_sources()
    with collector_paused():
        pending = pending or sources.fingerprinting()
        found = snapshot.read(sources.snapshot, pending) if pending else None
        if isinstance(found, snapshot.Refused):
            log_refused(sources.snapshot, found)
            found = None
        if found is None and pending is not None:
            pending.result()  # the mirrors checked (fetched where they changed): their copies
        paths, mirrors = sources.resolved_paths(), sources.resolved_mirrors()
        key = ""
        if found is not None:
            graph, report = found
            log.info("restarting from snapshot %s: no data file changed", sources.snapshot)
        else:
            # The fingerprint is of the files before any is read (a file changed
            # meanwhile makes the snapshot stale, never wrong); it is worked out
            # while this process lists them.
            built = load_aside(paths, mirrors) if aside else None
            if built is not None:
                graph, report = built
            else:
                progress = ProgressLine()
                ready = pending.result if pending else None
                first = None if aside else sources.index_first_bytes
                graph, report = load(
                    paths, mirrors, progress=progress, before_reading=ready, index_first_bytes=first
                )
                progress.done()
            key = pending.result() if pending else ""
            if report.index_first:  # the snapshot is of the whole data: the later load's
                key = ""
                log.info(
                    "served from the index of %s first; their spec manifests (sizes, tarballs, "
                    "the checks of their blobs) are read next, by a second process",
                    ", ".join(report.index_first),
                )
        sources.index_first = list(report.index_first)
        # Set the new objects aside before the collector runs again: else its
        # first run scans them all.
        settle(collect=False)
    report.seconds = round(time.perf_counter() - started, 3)
    loaded = LoadStatus(
        report, tuple(paths), sources.snapshot, found is not None, time.time(), sources.bundled()
    )
    record_load(graph, loaded)
    record_watches(graph, sources.watches)
    log_problems(report)
    log.info("loaded %s in %.2fs", report.summary(), report.seconds)
    return graph, report, key


class CheckedFingerprint:
    """The remote mirrors checked (``DataSources.check_sources``), then the fingerprint of
    the sources as checked, in a thread of their own: a restart maps and verifies its
    snapshot meanwhile, and compares it with ``result()`` at the end. At a million mirror
    specs the check (importing the HTTP client, a request a mirror) took 0.7 s and the
    snapshot 0.5 s, each mostly outside Python's lock, one after the other before
    (docs/benchmarks.md). ``result()`` raises what the check raised."""

    def __init__(self, sources: DataSources) -> None:
        self._done: Future[str] = Future()
        self.thread = threading.Thread(target=self._run, args=(sources,), name="check")
        self.thread.start()

    def _run(self, sources: DataSources) -> None:
        try:
            sources.check_sources()
            pending = sources.fingerprinting()
            self._done.set_result(pending.result() if pending is not None else "")
        except BaseException as exc:  # handed to the caller, whatever it is
            self._done.set_exception(exc)

    def result(self) -> str:
        return self._done.result()


def log_refused(path: str, refused: snapshot.Refused) -> None:
    """Say why the snapshot at ``path`` is not used, and what that costs: a full load. A
    damaged one is a warning (it names the check that failed); a stale or absent one is
    a restart's usual news."""
    level = logging.WARNING if refused.damaged else logging.INFO
    log.log(
        level,
        "snapshot %s not used: %s; loading the data in full instead (a full load, not a "
        "restart from the snapshot), then writing a new snapshot",
        path, refused.reason,
    )  # fmt: skip


#: Problems of a load logged one a line; the rest are counted in one line.
LOGGED_PROBLEMS = 20


def log_problems(report: LoadReport, first: int = LOGGED_PROBLEMS) -> None:
    """The first ``first`` problems of a load, a line each, then how many more there are:
    a million bad records make 21 lines, not a million (``cachegraph validate`` lists all)."""
    for problem in report.problems[:first]:
        log.log(logging.WARNING if problem.severity == "warning" else logging.ERROR, "%s", problem)
    if len(report.problems) > first:
        more = report.problems[first:]
        errors = sum(p.severity == "error" for p in more)
        log.warning(
            "... and %s (%s, %s) not logged: "
            "`cachegraph validate` or POST /admin/reload lists them all",
            counted(len(more), "more problem"), counted(errors, "error"),
            counted(len(more) - errors, "warning"),
        )  # fmt: skip


def save_snapshot(sources: DataSources, graph: CacheGraph, report: LoadReport, key: str) -> None:
    """Write the snapshot of a graph loaded from files (after it is served: it takes seconds)."""
    started = time.perf_counter()
    try:
        snapshot.save(sources.snapshot, graph, report, key)
    except OSError as exc:
        log.warning("cannot write snapshot %s: %s", sources.snapshot, exc)
        return
    log.info("wrote snapshot %s in %.2fs", sources.snapshot, time.perf_counter() - started)


def warm(graph: CacheGraph) -> None:
    """Work out the whole-data answers (overlaps, counts per tag) in a background thread once
    the graph is served: a few tenths of a second at a million specs, which a restart from a
    snapshot need not wait for, and the first request that asks would otherwise pay."""
    threading.Thread(target=precompute, args=(graph,), daemon=True, name="warm").start()


class NoData(RuntimeError):
    """The first load read no source: there is nothing to serve."""


@dataclass
class Outcome:
    """What a load or reload did: its time, whether it is being served, and why not."""

    ok: bool
    finished: float
    summary: str
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def counted(self) -> dict:
        """What anyone may read (``/readyz``): the problems counted, not copied (O(1))."""
        return {
            "ok": self.ok,
            "finished": self.finished,
            "summary": self.summary,
            "problem_count": len(self.problems),
        }


@dataclass
class State:
    """The graph being served. Replaced whole, never changed in place."""

    sources: DataSources = field(default_factory=DataSources)
    graph: CacheGraph | None = None
    report: LoadReport | None = None
    last: Outcome | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _sized: tuple[CacheGraph | None, dict[str, int]] = (None, {})

    async def load(self) -> Outcome:
        """Load the sources and serve them, whatever their problems (the first load).

        Raises NoData when no source could be read: a server with nothing to serve
        should stop at start, saying why, rather than answer empty and look ready.
        """
        graph, report, key = await anyio.to_thread.run_sync(load_sources, self.sources)
        problems = [str(p) for p in report.problems]
        if not report.specs and not report.ok:
            self.last = Outcome(False, time.time(), "no data loaded: " + report.summary(), problems)
            raise NoData("; ".join([*problems[:5], report.summary()]))
        self.graph, self.report = graph, report
        self.sources.served()
        await anyio.to_thread.run_sync(self.sources.record_changes, graph, True)
        settle(collect=False)
        self._save_snapshot(key)
        warm(graph)
        self.last = Outcome(True, time.time(), report.summary(), problems)
        return self.last

    async def reload(self, checked: bool = False, whole: bool = False) -> Outcome:
        """Load the sources again and serve them unless they hold no spec or have more errors
        than the data being served had: a server that started with errors still takes new
        data, and a reload never serves data worse than what it replaces. ``checked``: the
        remote mirrors were just checked (a refresh). ``whole``: it reads what the load served
        left for later (index-first mirrors' spec manifests): what it finds wrong was there
        before, unread, so more errors do not refuse it."""
        async with self._lock:
            try:
                graph, report, key = await anyio.to_thread.run_sync(
                    load_sources, self.sources, checked, True
                )
            except Exception as exc:
                log.exception("reload failed")
                self.last = Outcome(False, time.time(), f"reload failed: {exc}")
                return self.last
            problems = [str(p) for p in report.problems]
            before = len(self.report.errors) if self.report is not None else 0
            if not report.specs or (len(report.errors) > before and not whole):
                why = (
                    "no specs" if not report.specs
                    else f"{counted(len(report.errors), 'error')}, more than the {before} of the "
                    "data served"
                )  # fmt: skip
                summary = f"reload refused ({why}); still serving the previous data"
                self.last = Outcome(False, time.time(), summary, problems)
                self.sources.refused(f"its load was refused ({why})")
                log.error("%s", summary)
            else:
                self.swap(graph, report)
                self.sources.served()
                await anyio.to_thread.run_sync(self.sources.record_changes, graph, False)
                self._save_snapshot(key)
                warm(graph)
                self.last = Outcome(True, time.time(), report.summary(), problems)
                self._checked_problems()  # the mirrors file's, which no load reads
                log.info("reloaded: %s", report.summary())
            del graph
            settle(collect=True)
            return self.last

    def swap(self, graph: CacheGraph, report: LoadReport) -> None:
        """Serve ``graph`` from now on, and free the old one at once (unless a request still
        answers from it): before the new one's change records and answers worked out ahead
        are made, so a reload holds two stores, never two stores and those (at a million
        specs the old graph outlived them and the rebuild's peak was 7 MB over steady + a
        store)."""
        self._sized = (None, {})  # the old graph's counts, and with them the old graph
        self.graph, self.report = graph, report
        settle(collect=True)  # its cycles too, out of the frozen generation

    async def sized(self, remote: bool = True) -> Outcome | None:
        """Load again with what the load served left for later: the sizes remote v3 mirrors'
        copies lack, fetched by a second process (unless ``remote`` is False), and the spec
        manifests of the local mirrors read by their index first. None when there was none."""
        sources = self.sources
        fetched = 0
        if remote and sources.remote():
            cache_dir = sources.cache_dir or default_cache_dir()
            fetched = await anyio.to_thread.run_sync(
                fetch_sizes_aside, sources.mirrors, cache_dir, sources.fetch_limits
            )
        if fetched:
            log.info("fetched the spec manifests of %s: loading again with their sizes",
                     counted(fetched, "spec"))  # fmt: skip
        elif not sources.index_first:
            return None
        return await self.reload(checked=True, whole=bool(sources.index_first))

    async def refresh(self) -> Outcome | None:
        """Check the remote mirrors; when any changed, load again (a reload, swapped in whole
        once built). None when nothing changed."""
        async with self._lock:
            changed = await anyio.to_thread.run_sync(self.sources.check_sources)
            if not changed:
                self._checked_problems()
                return None
        log.info("a remote mirror changed: loading again")
        return await self.reload(checked=True)

    def _checked_problems(self) -> None:
        """The served load's problems as the last check found them: without the warnings
        that a mirror's copy is served stale for each mirror whose check succeeds again (its
        copy is its index; a changed one is loaded again, and the new load says so afresh),
        and with the mirrors file's, when it could not be read again (until it can)."""
        report = self.report
        if report is None:
            return
        recovered = {w.url for w in self.sources.watches.values() if not w.error}
        listing = redacted(self.sources.listing) if self.sources.listing else None
        kept = [p for p in report.problems
                if not (p.message.endswith(STALE_COPY) and p.path in recovered)
                and p.path != listing]  # fmt: skip
        if self.sources.listing_error:
            kept.append(Problem(listing or "", self.sources.listing_error, severity="warning"))
        if kept == report.problems:
            return
        report.problems = kept  # one assignment: a reader has the list before or after
        if self.last is not None and self.last.ok:
            self.last = dataclasses.replace(
                self.last, summary=report.summary(), problems=[str(p) for p in kept]
            )

    def _save_snapshot(self, key: str) -> None:
        if key:
            # A background thread: the server answers while it writes.
            args = (self.sources, self.graph, self.report, key)
            threading.Thread(target=save_snapshot, args=args, daemon=True).start()

    def size(self) -> dict[str, int]:
        """The served graph's counts, worked out once per graph (``/readyz`` asks often)."""
        graph = self.graph
        if graph is None:
            return {}
        if self._sized[0] is not graph:
            self._sized = (graph, dict(vars(stats(graph))))
        return dict(self._sized[1])
