"""Walks over the dependency edges, a whole level at a time in numpy.

The store holds dependencies as compressed sparse rows (``Store.deps``: a
spec's children, ``Store.rdeps``: its parents), each edge with its deptype
bits. ``reached`` is the one walk every question uses -- a spec's DAG, its
dependents, the specs whose DAG holds a node, a lockfile's closure: gather
every neighbour of the frontier in one indexing, drop the seen ones, repeat.
The dependents of a library every spec links are millions of edges; the DAG
below one spec is a few hundred, where this costs a few levels of array calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .. import deadline
from .columns import Store
from .tables import distinct


def neighbours(
    indptr: np.ndarray, indices: np.ndarray, frontier: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(positions, neighbours): every edge of the frontier's rows, in one gather.

    >>> [a.tolist() for a in neighbours(np.array([0, 2, 2, 3]), np.array([1, 2, 0]),
    ...                                 np.array([0, 2]))]
    [[0, 1, 2], [1, 2, 0]]
    """
    low, lengths = indptr[frontier], indptr[frontier + 1] - indptr[frontier]
    total = int(lengths.sum())
    positions = np.repeat(low - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
    return positions, indices[positions]


def reached_mask(
    indptr: np.ndarray,
    indices: np.ndarray,
    starts: Iterable[int] | np.ndarray,
    keep: np.ndarray | Callable[[np.ndarray], np.ndarray] | None = None,
    steps: int | None = None,
) -> np.ndarray:
    """A mask of every row reached from ``starts`` through one or more edges of the table
    (only the edges ``keep`` marks, by position, or for which ``keep(positions)`` is true;
    at most ``steps`` of them when given).

    A start is marked only when another start (or itself, in a cycle) reaches it.

    >>> indptr, indices = np.array([0, 1, 2, 2, 3]), np.array([1, 2, 0])  # 0→1→2, 3→0
    >>> [np.flatnonzero(reached_mask(indptr, indices, s)).tolist() for s in ([0], [1, 0], [2])]
    [[1, 2], [1, 2], []]
    >>> np.flatnonzero(reached_mask(indptr, indices, [3], steps=1)).tolist()
    [0]
    >>> np.flatnonzero(reached_mask(indptr, indices, [0], keep=np.array([1, 0, 1], bool))).tolist()
    [1]
    """
    n = len(indptr) - 1
    seen = np.zeros(n, bool)
    # where each row last stands in ``found``: keeps one of its copies, without a sort
    last = np.empty(n, np.int64)
    given = starts if isinstance(starts, np.ndarray) else np.fromiter(starts, np.int64)
    frontier = distinct(np.asarray(given, np.int64))
    level = 0
    while frontier.size and (steps is None or level < steps):
        deadline.check()
        positions, found = neighbours(indptr, indices, frontier)
        if callable(keep):
            found = found[keep(positions)]
        elif keep is not None:
            found = found[keep[positions]]
        if not found.size:
            break
        found = found[~seen[found]]
        seen[found] = True
        order = np.arange(found.size)
        last[found] = order
        frontier = found[last[found] == order].astype(np.int64)
        level += 1
    return seen


def edge_filter(
    store: Store, deptypes: int | None, up: bool
) -> Callable[[np.ndarray], np.ndarray] | None:
    """Which edges of a walk (given by position in ``deps``, or in ``rdeps`` when ``up``)
    have one of the deptype bits; None for every edge. Tested on the edges the walk reaches
    only: a mask over every edge cost O(E) a call, millions for a DAG of a few hundred."""
    if deptypes is None:
        return None
    types = store.dep_types
    if up:
        return lambda positions: (types[store.rdep_edge[positions]] & deptypes) > 0
    return lambda positions: (types[positions] & deptypes) > 0


def reached(
    store: Store,
    starts: Iterable[int] | np.ndarray,
    up: bool = False,
    deptypes: int | None = None,
    steps: int | None = None,
) -> np.ndarray:
    """A mask of the specs reached from ``starts``: their dependencies (or, ``up``, their
    dependents) through edges of those deptype bits, transitively or in ``steps`` steps."""
    indptr, indices = store.rdeps if up else store.deps
    return reached_mask(indptr, indices, starts, edge_filter(store, deptypes, up), steps)
