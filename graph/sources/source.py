"""What the loader, the snapshot and the refresh know of a place data comes from: ``Source``.

A source has a **label** (how a load and its messages name it: a path, or a mirror's name),
a **fingerprint** (a digest that changes whenever what it holds may have: a snapshot is kept
under its sources' fingerprints), a way to **read** into the store (its rows and problems
into a ``reader.Reader``, at its position in the load) and a way to **check for change**
(``check``: the source as it is now, and whether it changed since it was last checked).
``parts`` says what a load reads it as: a tree its files (which a load in two processes
shares out, ``graph.sources.parallel``), a mirror itself and its named views.

The kinds, one module each; a new kind of source is one more module implementing these:

- ``trees.Tree`` and ``trees.File``: a file or a folder of them -- cache pages, spec files,
  indices found among them, the rebuilt site's data files (``reader.Reader.read_file`` tells
  them apart by name and content, as ``sitedata`` and ``specfiles`` say);
- ``mirrors.MirrorSource``: a build-cache mirror, read by its index, each layout a module
  (``v2``, ``v3``, ``oci``; ``layouts`` chooses); at a URL it is read from its local copy,
  and checked with the cheap request Spack makes (``layouts.checked``, given as
  ``Checking.remote``), each scheme a transport of ``fetch``.

A lockfile is not a source of the store: it is what a client asks about (``lockfiles``),
read from the request or ``cachegraph coverage``'s file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, runtime_checkable

from . import files

if TYPE_CHECKING:
    from .reader import LoadReport, Reader

#: What a fingerprint is made of, in the terms ``files.fingerprint`` takes (paths whose
#: every file counts, labels, mirrors): worked out by a second process, which imports
#: nothing of the package (``files.Fingerprint``).
Described = tuple[list[str], list[str], list[str]]


@runtime_checkable
class Source(Protocol):
    """A place data comes from (see the module's text)."""

    @property
    def label(self) -> str:
        """How a load names it: unique among the sources of one load."""
        ...

    def described(self) -> Described:
        """What its fingerprint is made of (``files.fingerprint``'s arguments)."""
        ...

    def fingerprint(self) -> str:
        """A digest that changes whenever what ``read`` would give may have."""
        ...

    def parts(self, report: LoadReport) -> list[Source]:
        """What a load reads it as, in order, each at a position of its own (a folder's
        files; a mirror and its named views); a part missing is said in ``report``."""
        ...

    def read(self, reader: Reader, position: int) -> None:
        """Its rows and problems into ``reader``, at ``position`` of the load."""
        ...

    def check(self, checking: Checking) -> Checked:
        """The source as it is now (a remote mirror: its local copy, fetched where it
        changed), and whether it changed since the last check."""
        ...


class Checked(NamedTuple):
    source: Any  # the Source as now held
    changed: bool


@dataclass
class Checking:
    """What one round of checks shares: the fetcher and cache directory remote mirrors are
    checked with, what is known of each (``remote.MirrorWatch``, by label; kept across
    rounds), and the fingerprint each local source had at the last round (kept too)."""

    fetcher: Any = None
    cache_dir: str = ""
    watches: dict = field(default_factory=dict)
    seen: dict[str, str] = field(default_factory=dict)
    #: how a mirror at a URL is checked: ``layouts.checked``, given by the caller (the
    #: layouts read mirrors with ``mirrors``, so ``mirrors`` does not import them)
    remote: Callable[[Any, Checking], Checked] | None = None
    #: one check a remote copy in a round, however many mirrors share it
    shared: dict[Any, Any] = field(default_factory=dict, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def once(self, key: Any, work: Any) -> Any:
        """``work()``'s answer, worked out once a round for ``key``; concurrent callers
        wait for the first."""
        with self.lock:
            box = self.shared.setdefault(key, [threading.Lock(), None, False])
        with box[0]:
            if not box[2]:
                box[1], box[2] = work(), True
        return box[1]

    def changed(self, source: Source) -> bool:
        """Whether a local source's fingerprint differs from the last round's (never at its
        first: what a load reads is what it found then)."""
        now = source.fingerprint()
        with self.lock:
            before = self.seen.get(source.label)
            self.seen[source.label] = now
        return before is not None and before != now


#: Sources checked at once: a remote check is a request or two of waiting on the network
#: (a server that does not answer waits its retries out), and the client's pool is shared.
CHECKS_AT_ONCE = 16


def checked(sources: Sequence[Source], checking: Checking) -> tuple[list[Any], bool]:
    """Every source as it is now, checked several at once; and whether any changed."""
    if not sources:
        return [], False
    with ThreadPoolExecutor(min(CHECKS_AT_ONCE, len(sources)), "check") as pool:
        found = list(pool.map(lambda s: s.check(checking), sources))
    return [c.source for c in found], any(c.changed for c in found)


def fingerprint(sources: Iterable[Source], labels: Sequence[str] = ()) -> str:
    """One digest of ``labels`` and every source's fingerprint."""
    return files.fingerprints([s.described() for s in sources], labels)


def fingerprinting(sources: Iterable[Source], labels: Sequence[str] = ()) -> files.Fingerprint:
    """``fingerprint`` worked out in a second process meanwhile."""
    return files.Fingerprint([s.described() for s in sources], labels)
