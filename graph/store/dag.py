"""Walks over the ``depends_on`` edges by rank: the int caches of the graph that make them cheap.

Every dependent of a library that most of a 250,000-spec cache links is a walk
over millions of edges. The dependents are kept as one compressed sparse row
table (numpy arrays: rank r's direct dependents are
``indices[indptr[r]:indptr[r + 1]]``), and the walk goes a whole level at a
time in numpy -- gather every neighbour of the frontier, drop the seen ones --
instead of a Python step per edge: about twenty times faster, and a tenth of
the memory of one Python array per spec. numpy is the well-kept library for
exactly that; nothing else here needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from . import deadline
from .model import CacheGraph


def dependents_csr(cg: CacheGraph) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, indices): the specs that depend directly on each rank, from the in-edges."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        pred, rank, n = cg.g.pred, cg.rank, len(cg.ordered)
        counts = np.fromiter((len(pred["spec", s.hash]) for s in cg.ordered), np.int64, n)
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        parents = (rank[p[1]] for s in cg.ordered for p in pred["spec", s.hash])
        return indptr, np.fromiter(parents, np.int32, int(indptr[-1]))

    return cg.memoized("dependents csr", compute)


def reached_mask(indptr: np.ndarray, indices: np.ndarray, starts: Iterable[int]) -> np.ndarray:
    """A mask of every rank reached from ``starts`` through one or more edges of the table.

    A start is marked only when another start (or itself, in a cycle) reaches it.

    >>> indptr, indices = np.array([0, 1, 2, 2, 3]), np.array([1, 2, 0])  # 0→1→2, 3→0
    >>> [np.flatnonzero(reached_mask(indptr, indices, s)).tolist() for s in ([0], [1, 0], [2])]
    [[1, 2], [1, 2], []]
    """
    n = len(indptr) - 1
    seen = np.zeros(n, bool)
    # where each rank last stands in ``found``: keeps one of its copies, without a sort
    last = np.empty(n, np.int64)
    frontier = np.unique(np.fromiter(starts, np.int64))
    while frontier.size:
        deadline.check()
        low, lengths = indptr[frontier], indptr[frontier + 1] - indptr[frontier]
        total = int(lengths.sum())
        if not total:
            break
        # the positions of every neighbour of the frontier, in one gather
        positions = np.repeat(low - (np.cumsum(lengths) - lengths), lengths) + np.arange(total)
        found = indices[positions]
        found = found[~seen[found]]
        seen[found] = True
        order = np.arange(found.size)
        last[found] = order
        frontier = found[last[found] == order]
    return seen


def all_dependents(cg: CacheGraph, rank: int) -> np.ndarray:
    """The ranks, sorted, of every spec that depends on this one through any chain of edges."""
    mask = reached_mask(*dependents_csr(cg), (rank,))
    mask[rank] = False
    return np.flatnonzero(mask)


def dependencies_of(cg: CacheGraph) -> Callable[[int], tuple[int, ...]]:
    """rank -> the ranks of the specs it depends on directly (its ``depends_on`` out-edges),
    each worked out the first time it is asked: a walk down one DAG visits a few hundred."""
    known: dict[int, tuple[int, ...]] = cg.memoized("dependencies", dict)
    succ, rank, ordered = cg.g.succ, cg.rank, cg.ordered

    def dependencies(r: int) -> tuple[int, ...]:
        found = known.get(r)
        if found is None:
            edges = succ["spec", ordered[r].hash].items()
            found = known[r] = tuple(rank[c[1]] for c, d in edges if d["kind"] == "depends_on")
        return found

    return dependencies


def reached(neighbors: Callable[[int], Iterable[int]], starts: Iterable[int]) -> set[int]:
    """Every rank reached from ``starts`` through one or more steps: for the small walks
    (the DAG below one spec), where sets beat setting up arrays.

    >>> index = [[1], [2], [], [0]]
    >>> reached(index.__getitem__, [0]), reached(index.__getitem__, [1, 0])
    ({1, 2}, {1, 2})
    """
    seen: set[int] = set()
    frontier: set[int] = set()
    for r in starts:
        frontier.update(neighbors(r))
    while frontier:
        deadline.check()
        seen |= frontier
        found: set[int] = set()
        for r in frontier:
            found.update(neighbors(r))
        frontier = found - seen
    return seen
