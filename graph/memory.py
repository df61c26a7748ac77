"""Memory and collector tuning, in one module: what the loader and the server set, and why.

Two entry points:

- **the loader**: ``loading()``, around a whole load (in each process that reads): the
  cyclic garbage collector paused, glibc's large blocks unmapped when freed
  (``large_blocks_unmapped``); ``released()`` gives back what a mirror's index left.
- **the server**: ``serving()``, once at start: the interpreter's switch interval and the
  collector's thresholds. Then, after each load, ``settle()`` (the new graph frozen out of
  the collector's sight, the old one freed and given back), and around each answer a
  pause of ``ANSWER_PAUSE_SECONDS`` at most (``pause``, ``resume``, ``release_aside``).

**Pausing the collector, one pause shared by every thread.** A load and an answer make
many objects and no cycles: a load's parsed records, an answer's dicts and lists (freed by
reference counting once it is encoded). With the collector on, every 10,000 allocations it
scans them again, finds nothing to free, and moves them on to the older generations that
the full collections scan: at a million specs, a fifth of the time of an impact answer of
50,000 rows.

Pauses overlap (threads answering at once, a reload while serving): the collector is
on again when the last one ends, or, for a pause given a ``longest``, when it ends
after the collector has been off that long, so answers overlapping one another without
end never keep it off. The cycles other threads make meanwhile are collected then.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import math
import queue
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

#: How often Python's interpreter lock passes between threads, set by the server at start
#: (Python's default: 5 ms). The event loop waits for the lock at each turn, behind every
#: busy worker thread: under bench/attacks.py, /healthz took 74 ms (p50) and 222 ms at
#: most with the default, 16 ms and 66 ms at 1 ms (four worker threads). On a machine with
#: a core for each (2026-11-28, 2 cores idle), one client asking the heaviest admitted page
#: again and again while /healthz is polled every 20 ms: /healthz p50 / p99 21 / 406 ms at
#: 1 ms, 17 / 288 ms at 0.5 ms, 1.6 / 19 ms at 0.2 ms, 1.4 / 24 ms at 0.1 ms; the page
#: itself 514, 497, 475 and 496 ms (no cost to the thread that holds the lock).
SWITCH_SECONDS = 0.0002
#: The garbage collector's thresholds, set by the server at start (Python's: 700, 10, 10).
#: The graph is frozen out of the collector's sight, so its "a full collection once the
#: objects promoted since the last are a quarter of the long-lived ones" counts only
#: what answers made: an answer of 50,000 rows (the impact of a library every spec links,
#: at a million specs) promoted enough to run a full collection every time, 23 ms of its
#: 74. Young collections every 10,000 allocations rather than 700 promote far fewer; at
#: 50,000, each took 26 ms under bench/attacks.py, and /healthz waited for them.
COLLECTOR_THRESHOLDS = (10_000, 10, 10)
#: Answers are built and encoded with the collector off: an answer is dicts and lists,
#: freed once encoded, that young collections scanned and promoted for the full ones to
#: scan (with the collector on, 50,000 impact rows took a fifth longer). While answers
#: overlap one another, it is on again once it has been off this long.
ANSWER_PAUSE_SECONDS = 1.0

_lock = threading.Lock()
#: [pauses under way, when the first of them began, whether the collector was on then]
_state: list = [0, 0.0, False]
#: what ``release_aside`` was given, with its pause's ``longest``
_released: queue.SimpleQueue = queue.SimpleQueue()
_releaser: list[threading.Thread] = []


def pause() -> None:
    """Begin a pause; ``resume`` ends it."""
    with _lock:
        if _state[0] == 0:
            _state[1:] = time.monotonic(), gc.isenabled()
            gc.disable()
        _state[0] += 1


def resume(longest: float = math.inf) -> None:
    """End a pause ``pause`` began (see the module for ``longest``)."""
    with _lock:
        _state[0] -= 1
        if _state[2] and (_state[0] == 0 or time.monotonic() - _state[1] > longest):
            gc.enable()


@contextlib.contextmanager
def collector_paused(longest: float = math.inf) -> Iterator[None]:
    """The collector off while inside, then on again as it was (see the module).

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    pause()
    try:
        yield
    finally:
        resume(longest)


def release_aside(value: Any, longest: float = math.inf) -> None:
    """Free ``value``, made during a pause of the caller's, in a thread of this module's,
    then end that pause: the caller goes on without waiting (freeing the 100,000 dicts of
    a 2 MB answer takes a fifth as long as making them), and no collection scans them.

    The caller drops its own references to ``value`` right after.
    """
    with _lock:
        if not (_releaser and _releaser[-1].is_alive()):  # none yet, or a fork's copy
            thread = threading.Thread(target=_release, name="cachegraph-release", daemon=True)
            thread.start()
            _releaser.append(thread)
    _released.put((value, longest))


def _release() -> None:
    while True:
        value, longest = _released.get()
        del value
        resume(longest)


#: mallopt's parameters: glibc's mmap and trim thresholds
_M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD = -3, -1
#: glibc, once opened (each CDLL made is a cycle left to the collector), or None
_LIBC: list = []


def _libc() -> ctypes.CDLL | None:
    if not _LIBC:
        try:
            _LIBC.append(ctypes.CDLL("libc.so.6"))
        except OSError:  # not glibc
            _LIBC.append(None)
    return _LIBC[0]


def _mallopt(parameter: int, value: int) -> None:
    with contextlib.suppress(AttributeError):  # not glibc
        _libc().mallopt(parameter, value)


@contextlib.contextmanager
def large_blocks_unmapped() -> Iterator[None]:
    """While loading, glibc serves every block over 128 KiB by mmap, so that it is given
    back when freed; after, the thresholds its own would have reached.

    Its default threshold moves: each such block freed raises it to that block's size (up
    to 32 MiB), after which a load's columns (numpy arrays, growing ``array`` columns of
    tens of MB) come from the heap and stay in the process once freed. Fixed, at 250k mirror
    specs, the RSS after a load went from 592 to 318 MB and its peak from 1,148 to 1,059 MB.
    Answers want the opposite: their temporary arrays reuse memory the process has (each
    mapped afresh, zeroed by the kernel page by page, was slower), so once loaded the
    thresholds are glibc's maxima (32 MiB, and 64 MiB kept on top of the heap).
    """
    _mallopt(_M_MMAP_THRESHOLD, 128 << 10)
    try:
        yield
    finally:
        _mallopt(_M_MMAP_THRESHOLD, 32 << 20)
        _mallopt(_M_TRIM_THRESHOLD, 64 << 20)


def released() -> None:
    """Give the memory freed back to the system (glibc): a mirror's index is parsed into
    a gigabyte of short-lived objects, whose pages the allocator would otherwise keep."""
    with contextlib.suppress(AttributeError):
        _libc().malloc_trim(0)


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """The loader's entry point, around a whole load in each process that reads: the
    collector paused (a load makes millions of objects and no cycles) and glibc's large
    blocks unmapped when freed (``large_blocks_unmapped``)."""
    with collector_paused(), large_blocks_unmapped():
        yield


def serving() -> None:
    """The server's entry point, once at start: the interpreter lock passed every
    ``SWITCH_SECONDS`` (the event loop waits for it at each turn) and the collector's
    ``COLLECTOR_THRESHOLDS``."""
    sys.setswitchinterval(SWITCH_SECONDS)
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


def settle(*, collect: bool) -> None:
    """Set the served graph aside from garbage collection; after a reload, free the old one.

    The graph never changes, so the collector need not scan its millions of
    objects again: they are frozen, and a collection pauses for the rest only.
    After a swap, the old graph's memory goes back to the system; without this
    a process that reloads keeps the high-water mark of two graphs.
    """
    if collect:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
    if collect:
        released()
