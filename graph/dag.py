"""Walks over the ``depends_on`` edges by rank: the int caches that make them cheap."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

from .model import CacheGraph


def dependents_index(cg: CacheGraph) -> list[array]:
    """rank -> the ranks of the specs that depend on it directly.

    A cache of the graph's ``depends_on`` in-edges, as the rank indices are of
    its other relations: a walk over every dependent of a library that
    thousands of specs link steps over ints, not node tuples hashed at each step.
    """

    def compute() -> list[array]:
        empty = array("i")
        pred, rank = cg.g.pred, cg.rank
        return [array("i", [rank[p[1]] for p in pred["spec", s.hash]]) or empty for s in cg.ordered]

    return cg.memoized("dependents index", compute)


def reached(index: Sequence[Sequence[int]], starts: Iterable[int]) -> set[int]:
    """Every rank reached from ``starts`` through one or more steps of ``index``.

    A start is in the answer only when another start (or itself, in a cycle) reaches it.

    >>> reached([[1], [2], [], [0]], [0]), reached([[1], [2], [], [0]], [1, 0])
    ({1, 2}, {1, 2})
    """
    seen: set[int] = set()
    frontier: set[int] = set()
    for r in starts:
        frontier.update(index[r])
    while frontier:
        seen |= frontier
        found: set[int] = set()
        for r in frontier:
            found.update(index[r])
        frontier = found - seen
    return seen


def all_dependents(cg: CacheGraph, rank: int) -> set[int]:
    """The ranks of every spec that depends on this one through any chain of edges."""
    return reached(dependents_index(cg), (rank,)) - {rank}
