"""What each load changed in each mirror: a log of events, kept in the cache directory.

A mirror's specs as last seen are kept beside the log (``Seen``: its sorted hashes, a key per
spec of its package, version and variants, and its spec strings as codes into tables of
fragments), so a reload, a refresh or a restart compares the new store's columns with them:
the diff is a few set operations on arrays, and only the specs that changed become Python
objects. An event holds the hashes and spec strings of those specs only.

The log is one JSON object a line, appended (``changes.jsonl``). A line cut short by a crash,
or damaged otherwise, is reported and skipped; the rest is read. The log is bounded by bytes:
the oldest whole events go first (the file is then rewritten by a rename), never a part of
one. Without a cache directory the log and what was seen are kept in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import logging
import os
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

try:
    import fcntl
except ImportError:  # not a POSIX system: one process keeps the log
    fcntl = None  # type: ignore[assignment]

from .attributes import ATTRIBUTES
from .errors import CacheGraphError
from .store.columns import Store

log = logging.getLogger("cachegraph")

#: the log's file and the folder of what each mirror held when last seen, in the cache dir
LOG_FILE = "changes.jsonl"
#: held by the process recording changes (``ChangeLog.shared``)
LOCK_FILE = ".lock"
SEEN_FOLDER = "seen"
#: the default budget of the log: some thousands of events of a few changed specs each
DEFAULT_BYTES = 16 << 20
_SEP = "\x00"
#: where a graph keeps the change log of the server serving it (``CacheGraph.memo``)
CHANGES = "change log"


@dataclass(frozen=True)
class ChangedSpec:
    """A spec an event names: its hash and spec string (what is left of it once gone)."""

    hash: str
    spec_string: str


@dataclass(frozen=True)
class Replaced:
    """A spec rebuilt: the same package, version and variants under a new hash."""

    old: ChangedSpec
    new: ChangedSpec


@dataclass
class Change:
    """One mirror's index changed: what it added, removed and replaced."""

    at: float
    mirror: str
    tag: str
    stack: str
    old_index: str
    new_index: str
    added: list[ChangedSpec] = field(default_factory=list)
    removed: list[ChangedSpec] = field(default_factory=list)
    replaced: list[Replaced] = field(default_factory=list)
    #: found by a start: the index changed while the server was down
    at_start: bool = False
    #: its place in the log (1, 2, ...): a cursor, and the order of events
    id: int = 0

    def to_line(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True) + "\n"

    @classmethod
    def from_line(cls, line: str) -> Change:
        """The event of one line; ValueError when it is not one."""
        try:
            data = json.loads(line)
            spec = lambda d: ChangedSpec(str(d["hash"]), str(d["spec_string"]))  # noqa: E731
            return cls(
                at=float(data["at"]),
                mirror=str(data["mirror"]),
                tag=str(data["tag"]),
                stack=str(data["stack"]),
                old_index=str(data["old_index"]),
                new_index=str(data["new_index"]),
                added=[spec(d) for d in data["added"]],
                removed=[spec(d) for d in data["removed"]],
                replaced=[Replaced(spec(d["old"]), spec(d["new"])) for d in data["replaced"]],
                at_start=bool(data["at_start"]),
                id=int(data["id"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"not a change event ({exc.__class__.__name__}: {exc})") from None

    def packages(self) -> set[str]:
        """The packages of the specs it names (a spec string starts with its package)."""
        specs = [*self.added, *self.removed, *(r.new for r in self.replaced)]
        return {_package(s.spec_string) for s in specs}

    def hashes(self) -> set[str]:
        return {s.hash for s in self.added} | {r.new.hash for r in self.replaced}


def _package(spec_string: str) -> str:
    return spec_string.split("@", 1)[0]


class ChangeLog:
    """The events, oldest first, within ``budget`` bytes; in ``folder`` when one is given."""

    def __init__(self, folder: str | os.PathLike | None, budget: int = DEFAULT_BYTES) -> None:
        self.folder = Path(folder) if folder else None
        self.budget = budget
        self.events: deque[Change] = deque()
        self._sizes: deque[int] = deque()
        self.bytes = 0
        self.next_id = 1
        #: lines of the file that were not events (reported and skipped when read)
        self.damaged = 0
        self.dropped = 0
        self._lock = threading.Lock()
        self._listeners: list[Callable[[Change], None]] = []
        self._seen_memory: dict[str, Seen] = {}
        #: the log file as last read or written here: its identity and how many bytes of it
        self._file: tuple[int, int] | None = None
        self._read_to = 0
        if self.folder is not None:
            self._read()

    @property
    def path(self) -> Path | None:
        return None if self.folder is None else self.folder / LOG_FILE

    def _read(self) -> None:
        for event in self._lines_from(0):
            self._keep(event, len(event.to_line().encode()))
        if self._trim():
            self._rewrite()

    def _lines_from(self, offset: int) -> list[Change]:
        """The events of the file from byte ``offset`` on (damaged lines reported and
        skipped); where the file was read to is noted."""
        try:
            with open(self.path, "rb") as f:
                stat = os.fstat(f.fileno())
                f.seek(offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self._file, self._read_to = (stat.st_dev, stat.st_ino), offset + len(data)
        events = []
        text = data.decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines(keepends=True), 1):
            if not line.strip():
                continue
            try:
                event = Change.from_line(line)
            except ValueError as exc:
                self.damaged += 1
                log.warning("change log %s line %d skipped: %s", self.path, number, exc)
                continue
            events.append(event)
            self.next_id = max(self.next_id, event.id + 1)
        return events

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        """Hold the log alone among the processes keeping it in the same folder (the workers
        of ``--workers``), having first read what the others added meanwhile: each change
        is then recorded once, numbered after theirs, and said to this process's readers."""
        if self.folder is None or fcntl is None:
            yield
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / LOCK_FILE, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
            with self._lock:
                found = self._caught_up()
            for event in found:
                self._tell(event)
            yield

    def _caught_up(self) -> list[Change]:
        """The events another process added since this one last read or wrote the file,
        kept here too; the whole log read again when another process rewrote it."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return []
        last = self.events[-1].id if self.events else 0
        if self._file == (stat.st_dev, stat.st_ino):
            if stat.st_size <= self._read_to:
                return []
            read = self._lines_from(self._read_to)
        else:  # rewritten (the oldest events dropped): what it holds now is the log
            self.events.clear()
            self._sizes.clear()
            self.bytes = 0
            read = self._lines_from(0)
        for event in read:
            self._keep(event, len(event.to_line().encode()))
        self._trim()
        return [e for e in read if e.id > last]

    def _tell(self, event: Change) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _keep(self, event: Change, size: int) -> None:
        self.events.append(event)
        self._sizes.append(size)
        self.bytes += size

    def _trim(self) -> bool:
        """Drop the oldest whole events until the log fits its budget; whether any went."""
        dropped = False
        while self.events and self.bytes > self.budget:
            self.events.popleft()
            self.bytes -= self._sizes.popleft()
            self.dropped += 1
            dropped = True
        return dropped

    def _rewrite(self) -> None:
        if self.folder is None:
            return
        part = self.folder / f".{LOG_FILE}.part"
        with open(part, "w", encoding="utf-8") as out:
            out.writelines(e.to_line() for e in self.events)
            stat = os.fstat(out.fileno())
            written = out.tell()
        os.replace(part, self.path)
        self._file, self._read_to = (stat.st_dev, stat.st_ino), written

    def append(self, event: Change) -> Change:
        """Number the event and keep it (an event larger than the whole budget is not kept:
        said in the log, never cut)."""
        with self._lock:
            event.id = self.next_id
            self.next_id += 1
            line = event.to_line()
            size = len(line.encode())
            if size > self.budget:
                log.warning("change of %s (%s bytes) exceeds the change log's budget: not kept",
                            event.mirror, size)  # fmt: skip
                self.dropped += 1
                return event
            self._keep(event, size)
            if self._trim():
                self._rewrite()
            elif self.folder is not None:
                self.folder.mkdir(parents=True, exist_ok=True)
                with open(self.path, "ab") as out:
                    out.write(line.encode())
                    stat = os.fstat(out.fileno())
                    if self._file in (None, (stat.st_dev, stat.st_ino)):
                        self._file, self._read_to = (stat.st_dev, stat.st_ino), out.tell()
        self._tell(event)
        return event

    def listen(self, listener: Callable[[Change], None]) -> Callable[[], None]:
        """Call ``listener`` with each new event; returns the undo."""
        with self._lock:
            self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    @property
    def followers(self) -> int:
        """How many listen for new events now."""
        return len(self._listeners)

    def snapshot(self) -> list[Change]:
        with self._lock:
            return list(self.events)

    # -- what each mirror held when last seen ----------------------------------------------

    def _seen_path(self, mirror: str) -> Path:
        key = hashlib.sha256(mirror.encode()).hexdigest()[:24]
        return self.folder / SEEN_FOLDER / f"{key}.npz"

    def seen(self, mirror: str) -> Seen | None:
        if self.folder is None:
            return self._seen_memory.get(mirror)
        return Seen.read(self._seen_path(mirror))

    def seen_index(self, mirror: str) -> str | None:
        """The index ``mirror`` held when last seen (None: never seen, or unreadable), read
        alone: a start on unchanged mirrors compares no more than this."""
        if self.folder is None:
            found = self._seen_memory.get(mirror)
            return None if found is None else found.index
        return Seen.read_index(self._seen_path(mirror))

    def keep_seen(self, mirror: str, seen: Seen) -> None:
        if self.folder is None:
            self._seen_memory[mirror] = seen
            return
        seen.write(self._seen_path(mirror))


# -- what a mirror held ------------------------------------------------------------------


#: the attributes of the spec string, in its order (``attributes.spec_string``)
_SHOWN = [(a.name, a.shown) for a in ATTRIBUTES]
#: what makes a rebuilt spec the same one: Spack's package, version and variants
_SAME = ("package", "version", "variants")


@dataclass
class Seen:
    """A mirror's specs at one moment: ``hashes`` sorted, a ``key`` a spec (its package,
    version and variants: equal keys are one spec rebuilt) and, per attribute of the spec
    string, a column of codes into a table of its fragments."""

    index: str
    hashes: np.ndarray
    key: np.ndarray
    codes: dict[str, np.ndarray]
    fragments: dict[str, list[str]]

    @classmethod
    def of(cls, store: Store, mirror: str, index: str = "") -> Seen:
        """The specs ``mirror`` holds in ``store``, from its columns."""
        ranks = store.ranks("mirror", mirror)
        hashes = store.hashes.take(store.position_of.take(ranks))
        order = np.argsort(hashes, kind="stable")
        ranks, hashes = ranks[order], hashes[order]
        codes, fragments = {}, {}
        for name, shown in _SHOWN:
            if name == "variants":
                column, values = store.variants, store.variant_tuples()
            else:
                column, values = store.codes[name], store.attribute_values(name)
            codes[name] = np.asarray(column.take(ranks), np.uint32)
            fragments[name] = [shown(v) for v in values]
        key = np.zeros(len(ranks), np.uint64)
        for name in _SAME:
            digests = _digests(fragments[name])
            key = (key * np.uint64(0x100000001B3)) ^ digests.take(codes[name].astype(np.int64))
        index = index or hashlib.sha256(hashes.tobytes()).hexdigest()
        return cls(index, hashes, key, codes, fragments)

    def strings(self, positions: np.ndarray) -> list[str]:
        """The spec strings of the specs at these positions (only those are made)."""
        parts = [
            [self.fragments[name][c] for c in self.codes[name].take(positions).tolist()]
            for name, _ in _SHOWN
        ]
        return ["".join(p) for p in zip(*parts, strict=True)]

    def specs(self, positions: np.ndarray) -> list[ChangedSpec]:
        hashes = [h.decode() for h in self.hashes.take(positions).tolist()]
        return list(map(ChangedSpec, hashes, self.strings(positions)))

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {"hashes": self.hashes, "key": self.key}
        for name, _ in _SHOWN:
            arrays[f"code.{name}"] = self.codes[name]
            arrays[f"table.{name}"] = np.frombuffer(
                _SEP.join(self.fragments[name]).encode(), np.uint8
            )
        arrays["index"] = np.frombuffer(self.index.encode(), np.uint8)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        part = path.with_name(f".{path.name}.part")
        part.write_bytes(buffer.getvalue())
        os.replace(part, path)

    @classmethod
    def read_index(cls, path: Path) -> str | None:
        """The index of what was written at ``path`` (an .npz member read alone); None when
        there is none or it cannot be read (``read`` says why)."""
        try:
            with np.load(path, allow_pickle=False) as data:
                return data["index"].tobytes().decode()
        except (OSError, ValueError, KeyError, UnicodeDecodeError):
            return None

    @classmethod
    def read(cls, path: Path) -> Seen | None:
        """What was written at ``path``; None when there is none or it is damaged (said)."""
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            codes = {name: arrays[f"code.{name}"] for name, _ in _SHOWN}
            fragments = {
                name: arrays[f"table.{name}"].tobytes().decode().split(_SEP) for name, _ in _SHOWN
            }
            index = arrays["index"].tobytes().decode()
            return cls(index, arrays["hashes"], arrays["key"], codes, fragments)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, UnicodeDecodeError) as exc:
            log.warning("%s: what a mirror held is unreadable (%s): starting afresh", path, exc)
            return None


def _digests(values: list[str]) -> np.ndarray:
    """A 64-bit digest of each distinct value: one per table row, not per spec."""
    return np.array(
        [int.from_bytes(hashlib.blake2b(v.encode(), digest_size=8).digest()) for v in values]
        or [0],
        np.uint64,
    )


def diff(old: Seen, new: Seen) -> tuple[list[ChangedSpec], list[ChangedSpec], list[Replaced]]:
    """Added, removed and replaced specs from ``old`` to ``new``, by set operations on their
    sorted hash columns; a removed and an added spec of one key are one spec replaced."""
    gone = np.flatnonzero(~np.isin(old.hashes, new.hashes, assume_unique=True))
    came = np.flatnonzero(~np.isin(new.hashes, old.hashes, assume_unique=True))
    # one removed spec paired with one added of the same key (the first of each, by hash)
    old_keys, old_first = np.unique(old.key.take(gone), return_index=True)
    new_keys, new_first = np.unique(new.key.take(came), return_index=True)
    _, in_old, in_new = np.intersect1d(old_keys, new_keys, assume_unique=True, return_indices=True)
    was, now = gone.take(old_first.take(in_old)), came.take(new_first.take(in_new))
    order = np.argsort(new.hashes.take(now), kind="stable")
    was, now = was.take(order), now.take(order)
    replaced = [Replaced(o, n) for o, n in zip(old.specs(was), new.specs(now), strict=True)]
    added = new.specs(np.setdiff1d(came, now))
    removed = old.specs(np.setdiff1d(gone, was))
    return added, removed, replaced


@dataclass(frozen=True)
class Watched:
    """A mirror as loaded: its name, tag, stack, and its index's hash ("" when unknown:
    the hash of its spec hashes is used)."""

    name: str
    tag: str
    stack: str
    index: str = ""


def record_changes(
    changes: ChangeLog, store: Store, mirrors: Iterable[Watched], at_start: bool = False
) -> list[Change]:
    """Compare each mirror in ``store`` with what it held when last seen; record an event for
    each that changed (``at_start``: found by a start), and keep what it holds now. A mirror
    seen for the first time is kept, with no event: nothing is known of before."""
    with changes.shared():
        return _recorded(changes, store, mirrors, time.time(), at_start)


def _recorded(
    changes: ChangeLog, store: Store, mirrors: Iterable[Watched], now: float, at_start: bool
) -> list[Change]:
    recorded = []
    for mirror in mirrors:
        if mirror.index and changes.seen_index(mirror.name) == mirror.index:
            # the index it held when last seen: nothing to compare or keep. Working out what
            # it holds was most of a restart's time on unchanged mirrors (0.2 s of twelve at
            # a million specs) and memory beside a reload's two stores.
            continue
        new = Seen.of(store, mirror.name, mirror.index)
        old = changes.seen(mirror.name)
        if old is not None and old.index != new.index:
            added, removed, replaced = diff(old, new)
            if added or removed or replaced:
                event = Change(now, mirror.name, mirror.tag, mirror.stack, old.index,
                               new.index, added, removed, replaced, at_start)  # fmt: skip
                recorded.append(changes.append(event))
        if old is None or old.index != new.index:
            changes.keep_seen(mirror.name, new)
    return recorded


# -- questions -----------------------------------------------------------------------------


#: bytes of events one follower (a stream or a subscription) may let wait: past them, cut
FOLLOWER_BYTES = 1 << 20


class FellBehind(CacheGraphError):
    """A follower let more events wait than its budget: it is cut off."""

    def __init__(self, budget: int) -> None:
        super().__init__(
            f"cut off: more than {budget:,} bytes of changes waited for this reader "
            "(read faster, or ask `changes(since:)` for what was missed)"
        )


class Follower:
    """The new events of a change log for one reader (an event stream or a subscription),
    waiting within ``budget`` bytes (their log lines' sizes): a reader that lets more wait
    is cut off, its waiting events dropped at once. Made and read in one event loop; the
    log may record events in any thread.

    >>> async def main():
    ...     changes = ChangeLog(None)
    ...     with Follower(changes, budget=400) as follower:
    ...         changes.append(Change(0.0, "develop/e4s", "develop", "e4s", "a", "b"))
    ...         first = await anext(follower.events())
    ...         for _ in range(3):  # never read: past the budget
    ...             changes.append(Change(0.0, "develop/e4s", "develop", "e4s", "b", "c"))
    ...         try:
    ...             await anext(follower.events())
    ...         except FellBehind as cut:
    ...             return first.id, follower.bytes, str(cut)[:27]
    >>> asyncio.run(main())
    (1, 0, 'cut off: more than 400 byte')
    """

    def __init__(self, changes: ChangeLog, budget: int = FOLLOWER_BYTES) -> None:
        self.changes, self.budget = changes, budget
        self.loop: asyncio.AbstractEventLoop | None = None
        self.waiting: deque[tuple[Change, int]] = deque()
        self.bytes = 0
        self.cut = False
        self.ready = asyncio.Event()
        self._undo: Callable[[], None] | None = None

    def __enter__(self) -> Follower:
        self.loop = asyncio.get_running_loop()
        self._undo = self.changes.listen(self._push)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._undo is not None:
            self._undo()
            self._undo = None
        self.waiting.clear()

    def _push(self, event: Change) -> None:
        """Called by the log, in whatever thread recorded the event."""
        self.loop.call_soon_threadsafe(self._keep, event, len(event.to_line()))

    def _keep(self, event: Change, size: int) -> None:
        if self.cut:
            return
        if self.bytes + size > self.budget:
            self.cut = True
            self.waiting.clear()
            self.bytes = 0
        else:
            self.waiting.append((event, size))
            self.bytes += size
        self.ready.set()

    async def events(self) -> AsyncIterator[Change]:
        """Each new event as it comes; FellBehind once the reader is cut off."""
        while True:
            while self.waiting and not self.cut:
                event, size = self.waiting.popleft()
                self.bytes -= size
                yield event
            if self.cut:
                raise FellBehind(self.budget)
            self.ready.clear()
            await self.ready.wait()


def change_log(G) -> ChangeLog | None:
    """The change log kept with a served graph; None when none is kept."""
    return G.memo.get(CHANGES)


def select(
    events: Iterable[Change],
    since: float | None = None,
    until: float | None = None,
    mirror: str | None = None,
    tag: str | None = None,
    stack: str | None = None,
    package: str | None = None,
) -> list[Change]:
    """The events within ``[since, until)`` of this mirror, tag, stack, and naming a spec of
    this package; oldest first."""
    return [
        e
        for e in events
        if (since is None or e.at >= since)
        and (until is None or e.at < until)
        and (mirror is None or e.mirror == mirror)
        and (tag is None or e.tag == tag)
        and (stack is None or e.stack == stack)
        and (package is None or package in e.packages())
    ]


def moments(events: Iterable[Change], hash: str) -> tuple[float | None, float | None]:
    """When the log saw ``hash`` come (first) and go (last), within the history kept."""
    came = went = None
    for e in events:
        if any(s.hash == hash for s in e.added) or any(r.new.hash == hash for r in e.replaced):
            came = e.at if came is None else came
        if any(s.hash == hash for s in e.removed) or any(r.old.hash == hash for r in e.replaced):
            went = e.at
    return came, went


def mirrors_then(events: Iterable[Change], hash: str, now: Iterable[str], at: float) -> set[str]:
    """The mirrors that held ``hash`` at ``at``: those holding it now, each later event
    undone, newest first."""
    held = set(now)
    for e in sorted((e for e in events if e.at > at), key=lambda e: -e.id):
        if any(s.hash == hash for s in e.added) or any(r.new.hash == hash for r in e.replaced):
            held.discard(e.mirror)
        if any(s.hash == hash for s in e.removed) or any(r.old.hash == hash for r in e.replaced):
            held.add(e.mirror)
    return held


def coverage_at(G, found, env, events: list[Change], at: float, tag: str | None = None):
    """``found`` (a ``Coverage`` of now) as the cache stood at ``at``: an entry held then and
    not now is a hit (its own record when the graph no longer has the spec), one held now and
    not then a miss; only the events after ``at`` are read."""
    from .questions.coverage import Coverage, Entry, cached_roots

    later = [e for e in events if e.at > at]
    named = set().union(*(e.hashes() | {s.hash for s in e.removed} for e in later)) | {
        r.old.hash for e in later for r in e.replaced
    }
    entries = []
    for entry in found.entries:
        if entry.external or entry.hash not in named:
            entries.append(entry)
            continue
        spec = G.spec(entry.hash)
        now = spec.mirrors if spec is not None else ()
        then = mirrors_then(later, entry.hash, now, at)
        if tag is not None:
            then = {m for m in then if _tag_of(G, later, m) == tag}
        if then or (spec is not None and spec.stacks and not spec.mirrors):
            entries.append(Entry(entry.hash, entry.wanted, spec or entry.wanted, None))
        else:
            entries.append(Entry(entry.hash, entry.wanted, None, "not in any loaded mirror then"))
    hit = {e.hash for e in entries if e.spec is not None}
    return Coverage(tuple(entries), () if env is None else cached_roots(env, hit))


def _tag_of(G, events: list[Change], mirror: str) -> str | None:
    info = G.mirrors.get(mirror)
    if info is not None:
        return info.tag
    return next((e.tag for e in events if e.mirror == mirror), None)
