"""Pausing Python's cyclic garbage collector, one pause shared by every thread.

A load and an answer make many objects and no cycles: a load's parsed records, an
answer's dicts and lists (freed by reference counting once it is encoded). With the
collector on, every 10,000 allocations it scans them again, finds nothing to free, and
moves them on to the older generations that the full collections scan: at a million
specs, a fifth of the time of an impact answer of 50,000 rows.

Pauses overlap (threads answering at once, a reload while serving): the collector is
on again when the last one ends, or, for a pause given a ``longest``, when it ends
after the collector has been off that long, so answers overlapping one another without
end never keep it off. The cycles other threads make meanwhile are collected then.
"""

from __future__ import annotations

import contextlib
import gc
import math
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

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
