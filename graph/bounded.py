"""A least-recently-used cache bounded by the bytes its entries take, and a size estimate.

Caches keyed by what clients send (query texts, variables, names) must be
bounded by bytes, not entries: a count bound lets a client who sends large
distinct keys grow the process without limit. An entry larger than a
fraction of the budget is not kept at all, so one request cannot empty the
cache of everyone else's entries.

>>> cache = BoundedCache(budget=1000, largest=500)
>>> cache.put("a", "x", 300), cache.put("b", "y", 300), cache.put("huge", "z", 900)
(True, True, False)
>>> cache.get("b"), cache.put("c", "w", 500), cache.get("a"), cache.bytes, cache.evictions
('y', True, None, 800, 1)
"""

from __future__ import annotations

import sys
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

#: An entry larger than budget / LARGEST_SHARE is not kept.
LARGEST_SHARE = 8


class BoundedCache:
    """Entries kept while their bytes (as ``put`` is told) fit in ``budget``; thread-safe."""

    def __init__(self, budget: int, largest: int | None = None) -> None:
        self.budget = budget
        #: the largest entry kept; by default budget / LARGEST_SHARE
        self.largest = largest
        self.bytes = 0
        self.evictions = 0
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return default
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Any, size: int) -> bool:
        """Keep ``value``, evicting the least recently used; False when it is too large."""
        if size > (self.budget // LARGEST_SHARE if self.largest is None else self.largest):
            return False
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._entries[key] = (value, size)
            self.bytes += size
            while self.bytes > self.budget:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.bytes -= dropped
                self.evictions += 1
        return True

    def kept(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept under ``key`` when it fits."""
        found = self.get(key, _MISSING)
        if found is _MISSING:
            found = compute()
            self.put(key, found, approximate_size(key) + approximate_size(found))
        return found

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)


_MISSING = object()
#: Items of a container looked at to estimate its size; the rest are taken to be alike.
SAMPLE = 16
#: Types whose objects the graph owns (it registers them): a kept answer that refers to
#: one holds a reference, not a copy, and is not charged for it.
SHARED: set[type] = set()


def approximate_size(value: Any, depth: int = 8) -> int:
    """About how many bytes ``value`` holds: exact for strings, bytes and arrays, sampled
    for containers (their first SAMPLE items taken as typical), ``depth`` levels deep.

    >>> approximate_size("x" * 1000) > 1000, approximate_size(list(range(1000))) > 8000
    (True, True)
    >>> approximate_size(((("x" * 10_000,),),)) > 10_000  # however deep a client nests it
    True
    >>> from types import SimpleNamespace
    >>> fields = {f"f{i}": None for i in range(20)}  # an object's every field counts
    >>> approximate_size(SimpleNamespace(**fields, last="x" * 10_000)) > 10_000
    True
    """
    if type(value) in SHARED:
        return 0
    size = sys.getsizeof(value)
    if isinstance(value, str | bytes | array | int | float) or depth == 0:
        return size
    nbytes = getattr(value, "nbytes", None)  # a NumPy array
    if isinstance(nbytes, int):
        return size + nbytes
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list | tuple | set | frozenset):
        items = value
    elif hasattr(value, "__dict__"):
        # An object's fields are few and unlike each other (a query's 100 kB filter may be
        # its ninth): each is measured, none taken as typical of the rest.
        fields = vars(value)
        if depth == 1:
            return size + sys.getsizeof(fields)
        measured = sum(approximate_size(item, depth - 2) for item in fields.items())
        return size + sys.getsizeof(fields) + measured
    elif hasattr(value, "__slots__"):
        slots = [getattr(value, s, None) for s in value.__slots__]
        return size + sum(approximate_size(v, depth - 1) for v in slots)
    else:
        return size
    count = len(items)
    if count == 0:
        return size
    # Fewer items looked at the deeper it goes: the work stays bounded at any depth.
    sample = [item for item, _ in zip(items, range(max(1, SAMPLE >> (8 - depth))), strict=False)]
    sampled = sum(approximate_size(item, depth - 1) for item in sample)
    return size + sampled * count // len(sample)
