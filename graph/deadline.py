"""A time limit that long-running loops check, so that work nobody waits for stops.

The server answers an operation within a time limit; past it the client gets
an error, and the work must stop too, not run on in an abandoned thread.
Loops that may run long (paging, counting, walking DAGs, scanning candidates)
call ``check()`` or iterate through ``checked()``; both raise ``TimedOut``
once the deadline that ``until`` set for this context has passed. Without a
deadline they cost a context-variable read.

>>> with until(time.monotonic() - 1):
...     check()
Traceback (most recent call last):
...
cachegraph.graph.errors.TimedOut: the operation ran past its time limit
>>> sum(checked(range(10)))
45
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import TypeVar

from .errors import TimedOut

T = TypeVar("T")


class Stopped(Exception):
    """The process is stopping (Ctrl-C while a load runs): the work ends where it is."""


#: Set once the process is stopping: loads check it between files and chunks.
_STOPPING = threading.Event()


def stop_all() -> None:
    """Make every ``check_stopping`` raise Stopped from now on (the process is ending)."""
    _STOPPING.set()


def check_stopping() -> None:
    """Raise Stopped if the process is stopping."""
    if _STOPPING.is_set():
        raise Stopped("stopped: the process is ending")


def stopping_checked(items: Iterable[T], every: int = 256) -> Iterator[T]:
    """``items``, raising Stopped between them once the process is stopping.

    >>> list(stopping_checked("ab"))
    ['a', 'b']
    """
    for i, item in enumerate(items):
        if not i % every and _STOPPING.is_set():
            raise Stopped("stopped: the process is ending")
        yield item


#: When the current operation must stop (time.monotonic()); none by default.
_DEADLINE: ContextVar[float] = ContextVar("deadline", default=math.inf)
#: Items ``checked`` yields between two looks at the clock.
EVERY = 1024


class until:  # lower case: used as a function, ``with until(when):``
    """Within this block, ``check`` raises TimedOut once ``time.monotonic()`` passes ``when``.

    A class, not ``contextlib.contextmanager``: every request enters one, and a generator's
    context manager took 3-4% of a small answer's processor time (issue 43)."""

    __slots__ = ("_token", "_when")

    def __init__(self, when: float) -> None:
        self._when = when

    def __enter__(self) -> None:
        self._token = _DEADLINE.set(self._when)

    def __exit__(self, *_exc: object) -> None:
        _DEADLINE.reset(self._token)


def check() -> None:
    """Raise TimedOut if the current operation's deadline has passed."""
    if time.monotonic() > _DEADLINE.get():
        raise TimedOut


def checked(items: Iterable[T], every: int = EVERY) -> Iterator[T]:
    """``items``, checking the deadline every ``every`` of them."""
    when = _DEADLINE.get()
    if when == math.inf:
        yield from items
        return
    for i, item in enumerate(items):
        if not i % every and time.monotonic() > when:
            raise TimedOut
        yield item
