"""The store's tables: distinct strings, and distinct sets of codes, each value once.

A column of the store holds integer codes; what a code means is a row of one of
these tables. ``Strings`` is a list of distinct strings (a package name, a
version, a tag...). ``Sets`` is a list of distinct tuples of codes -- a spec's
variants, the stacks holding it in one tag, its mirrors -- as compressed sparse
rows: set ``c`` is ``members[indptr[c]:indptr[c + 1]]``. Both pack into plain
arrays (a snapshot maps them back) and keep a Python object per row only once
something asks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

#: Codes of one column: 32 bits, as no table comes near four billion rows.
CODE = np.uint32


class Strings:
    """Distinct strings; a string's code is its position.

    >>> t = Strings()
    >>> t.codes(["zlib", "xz", "zlib"]), t.find("xz"), t.find("bzip2"), t[1], len(t)
    ([0, 1, 0], 1, None, 'xz', 2)
    >>> Strings.unpacked(*t.packed()).values
    ['zlib', 'xz']
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values: list[str] = list(values)
        self._codes: dict[str, int] | None = None

    def __getitem__(self, code: int) -> str:
        return self.values[code]

    def __getstate__(self) -> dict:
        return {"values": self.values, "_codes": None}  # the index is made again on use

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def _index(self) -> dict[str, int]:
        # Made on first use: a restart from a snapshot never asks most tables.
        if self._codes is None:
            self._codes = {v: i for i, v in enumerate(self.values)}
        return self._codes

    def find(self, value: str) -> int | None:
        """The code of ``value``, or None when the table lacks it."""
        return self._index().get(value)

    def code(self, value: str) -> int:
        """The code of ``value``, added when new."""
        index = self._index()
        found = index.get(value)
        if found is None:
            found = index[value] = len(self.values)
            self.values.append(value)
        return found

    def codes(self, values: Sequence[str]) -> list[int]:
        """The code of each value, adding the new ones: one C loop when all are known."""
        index = self._index()
        found = list(map(index.get, values))
        if None in found:
            for value in dict.fromkeys(v for v, c in zip(values, found, strict=True) if c is None):
                self.code(value)
            found = list(map(index.__getitem__, values))
        return found

    def packed(self) -> tuple[np.ndarray, np.ndarray]:
        """(UTF-8 bytes, offsets): the table as two arrays."""
        encoded = [v.encode() for v in self.values]
        offsets = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return np.frombuffer(b"".join(encoded), np.uint8), offsets

    @classmethod
    def unpacked(cls, blob: np.ndarray, offsets: np.ndarray) -> Strings:
        raw = blob.tobytes()
        data, spans = raw.decode(), pairwise(offsets.tolist())
        if len(data) == len(raw):  # ASCII, as nearly every name is: offsets index the text
            return cls([data[a:b] for a, b in spans])
        return cls([raw[a:b].decode() for a, b in spans])

    def sorted_codes(self, key: Callable[[str], Any] | None = None) -> np.ndarray:
        """Each code's position when the table is sorted (by ``key``)."""
        order = sorted(range(len(self.values)), key=(lambda i: key(self.values[i])) if key else
                       self.values.__getitem__)  # fmt: skip
        position = np.empty(len(order), np.int64)
        position[order] = np.arange(len(order))
        return position


class Sets:
    """Distinct tuples of codes: set ``c`` is ``members[indptr[c]:indptr[c + 1]]``.

    >>> s = Sets.of([(2, 0), (), (2, 0)])
    >>> s.codes, s.rows(), len(s)
    ([0, 1, 0], [(2, 0), ()], 2)
    >>> s.contains(np.array([0, 2])).tolist()
    [True, False]
    """

    def __init__(self, indptr: np.ndarray, members: np.ndarray) -> None:
        self.indptr = indptr
        self.members = members
        #: the code of each tuple given to ``of``, in order
        self.codes: list[int] = []
        self._rows: list[tuple[int, ...] | None] | None = None

    @classmethod
    def of(cls, rows: Iterable[tuple[int, ...]]) -> Sets:
        index: dict[tuple[int, ...], int] = {}
        codes = [index.setdefault(tuple(r), len(index)) for r in rows]
        found = cls.from_rows(list(index))
        found.codes = codes
        return found

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[int]]) -> Sets:
        indptr = np.zeros(len(rows) + 1, np.int64)
        np.cumsum([len(r) for r in rows], out=indptr[1:])
        members = np.fromiter((m for r in rows for m in r), np.int64, int(indptr[-1]))
        return cls(indptr, members.astype(CODE))

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def row(self, code: int) -> tuple[int, ...]:
        rows = self._rows
        if rows is None:
            rows = self._rows = [None] * len(self)
        found = rows[code]
        if found is None:
            found = rows[code] = tuple(
                self.members[self.indptr[code] : self.indptr[code + 1]].tolist()
            )
        return found

    def rows(self) -> list[tuple[int, ...]]:
        return [self.row(c) for c in range(len(self))]

    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def contains(self, members: np.ndarray) -> np.ndarray:
        """For each set, whether it holds any of ``members``."""
        wanted = np.zeros(int(self.members.max(initial=0)) + 1, bool)
        wanted[members[members < len(wanted)]] = True
        return self.count(wanted) > 0

    def count(self, wanted: np.ndarray) -> np.ndarray:
        """For each set, how many of its members ``wanted`` (a mask over member codes) marks."""
        hits = self.owners()[wanted[self.members]] if len(self.members) else self.members
        return np.bincount(hits, minlength=len(self))

    def owners(self) -> np.ndarray:
        """The set code of each position of ``members``."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.lengths())


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, sorted: by a sort, which numpy 2's ``np.unique`` (hashing, when
    asked for nothing else) is many times slower than on a million values.

    >>> distinct(np.array([3, 1, 3, 2])).tolist()
    [1, 2, 3]
    """
    found = np.sort(values)
    return found[np.r_[True, found[1:] != found[:-1]]] if len(found) else found


def dense(values: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of values in ``[0, bound)``: by marking
    those present rather than sorting, when ``bound`` is not many times more values.

    >>> [a.tolist() for a in dense(np.array([7, 2, 7, 4]), 8)]
    [[2, 4, 7], [2, 0, 2, 1]]
    """
    if bound > 4 * len(values) + 1024:
        found, inverse = np.unique(values, return_inverse=True)
        return found, inverse.ravel()
    present = np.zeros(bound, bool)
    present[values] = True
    return np.flatnonzero(present), (np.cumsum(present) - 1)[values]


def recode(column: np.ndarray, mapping: np.ndarray) -> np.ndarray:
    """``column``'s codes through ``mapping`` (old code -> new code), as codes.

    >>> recode(np.array([0, 2, 1], CODE), np.array([5, 6, 7])).tolist()
    [5, 7, 6]
    """
    # the mapping as codes first: its values taken are codes, not int64 then a copy
    return mapping.astype(CODE, copy=False)[column] if len(column) else column.astype(CODE)


def set_codes(group: np.ndarray, member: np.ndarray, groups: int) -> tuple[np.ndarray, Sets]:
    """For (group, member) pairs, a code per group naming its set of members (sorted,
    duplicates dropped), and the table of those sets; a group with no pair has the empty set.

    Exact and vectorised: each group's sorted members are folded into one integer, a member
    at a time for all groups at once (a group whose members ended keeps its number, below
    those of every longer prefix), then the integers of every group sorted once; when the
    next member would not fit in 63 bits, the numbers so far are made dense first. The
    table holds each set once, read from the first group naming it.

    >>> codes, sets = set_codes(np.array([0, 0, 2, 2, 2]), np.array([3, 1, 1, 3, 1]), 4)
    >>> codes.tolist(), sets.rows()
    ([1, 0, 1, 0], [(), (1, 3)])
    >>> codes, sets = set_codes(np.array([0, 1, 1, 2]), np.array([2, 2, 0, 0]), 3)
    >>> codes.tolist(), sets.rows()
    ([1, 2, 0], [(0,), (2,), (0, 2)])
    """
    width = int(member.max(initial=0)) + 1
    pairs = distinct(group.astype(np.int64) * width + member.astype(np.int64))
    owner, value = pairs // width, pairs % width
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else owner
    lengths = np.diff(np.r_[starts, len(owner)])
    level = np.arange(len(owner)) - np.repeat(starts, lengths)
    # node: each group's prefix so far as a number below ``bound`` (0: the empty set); a
    # member ``v`` after prefix ``n`` is ``bound + n * width + v``: above every shorter one
    node = np.zeros(groups, np.int64)
    bound = 1
    for depth in range(int(level.max(initial=-1)) + 1):
        if bound * (width + 1) >= 1 << 62:  # the next member would not fit: number densely
            found, node = np.unique(node, return_inverse=True)
            bound = len(found)
        at = level == depth
        who = owner[at]
        node[who] = bound + node[who] * width + value[at]
        bound *= width + 1
    # the groups by number (any order among equal ones: not a stable sort, twice as fast)
    order = np.argsort(node)
    new = np.r_[True, node[order][1:] != node[order][:-1]] if groups else np.zeros(0, bool)
    first = order[new]  # a group of each set: its members are the set's
    codes = np.empty(groups, np.int64)
    codes[order] = np.cumsum(new) - 1
    size = np.zeros(groups, np.int64)
    size[owner[starts]] = lengths
    place = np.zeros(groups, np.int64)
    place[owner[starts]] = starts
    indptr = np.zeros(len(first) + 1, np.int64)
    np.cumsum(size[first], out=indptr[1:])
    at = np.repeat(place[first] - indptr[:-1], size[first]) + np.arange(indptr[-1])
    return codes.astype(CODE).ravel(), Sets(indptr, value[at].astype(CODE))
