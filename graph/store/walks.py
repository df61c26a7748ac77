"""Walks over the dependency edges, a whole level at a time in numpy.

The store holds dependencies as compressed sparse rows (``Store.deps``: a
spec's children, ``Store.rdeps``: its parents, the link/run ones in a first row
and the others in a second, specs numbered there by level: ``levels``), each
edge with its deptype bits. ``reached`` is
the one walk every question uses -- a spec's DAG, its dependents, the specs
whose DAG holds a node, a lockfile's closure: gather every neighbour of the
frontier in one indexing, drop the seen ones, repeat. The dependents of a
library every spec links are millions of edges; the DAG below one spec is a
few hundred, where this costs a few levels of array calls. A walk that goes
on for many levels (``^``'s, up through a third of a million specs) is handed
to a breadth-first search in C after its first levels: ``reached_far``.
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
    return _levels(indptr, indices, starts, keep, steps)[0]


def _levels(
    indptr: np.ndarray,
    indices: np.ndarray,
    starts: Iterable[int] | np.ndarray,
    keep: np.ndarray | Callable[[np.ndarray], np.ndarray] | None,
    steps: int | None,
    halves: int | None = None,
    budget: float = float("inf"),
) -> tuple[np.ndarray, np.ndarray]:
    """(the mask of ``reached_mask``, the rows found at the last level walked: empty when
    the walk ended). It stops after ``steps`` levels, or the first level past ``budget``
    (edges gathered, and ``LEVEL_COST`` a level). With ``halves`` (n), the table has two
    rows a node, ``i`` and ``n + i`` (``Store.rdeps``), both walked."""
    n = len(indptr) - 1 if halves is None else halves
    seen = np.zeros(n, bool)
    # where each row last stands in ``found``: keeps one of its copies, without a sort
    last = np.empty(n, np.int64)
    given = starts if isinstance(starts, np.ndarray) else np.fromiter(starts, np.int64)
    frontier = distinct(np.asarray(given, np.int64))
    level, spent = 0, 0
    while frontier.size and (steps is None or level < steps) and spent <= budget:
        deadline.check()
        rows = frontier if halves is None else np.concatenate([frontier, frontier + halves])
        positions, found = neighbours(indptr, indices, rows)
        if callable(keep):
            found = found[keep(positions)]
        elif keep is not None:
            found = found[keep[positions]]
        found = found[~seen[found]]
        seen[found] = True
        order = np.arange(found.size)
        last[found] = order
        frontier = found[last[found] == order].astype(np.int64)
        level += 1
        spent += positions.size + LEVEL_COST
    return seen, frontier


#: a level of numpy calls costs about what gathering this many edges does (30 us, 30 ns each)
LEVEL_COST = 1_000
#: the share of a table's edges a walk may take in numpy before ``reached_far`` hands it
#: to the search, whose copy of the table costs about that (a byte or so an edge, where a
#: level costs 30 ns an edge): a spec's DAG, or a few dependents, never pays for the copy
NUMPY_SHARE = 1 / 32
#: scipy's graph searches index rows and edges as 32-bit integers
_INDEX = np.int32


def reached_far(
    indptr: np.ndarray,
    indices: np.ndarray,
    starts: Iterable[int] | np.ndarray,
    budget: float | None = None,
    levelled: int = 0,
) -> np.ndarray:
    """``reached_mask(indptr, indices, starts)``, at a cost that follows the edges reached
    rather than the levels: in numpy while the walk is small (``budget`` edges, by default
    ``NUMPY_SHARE`` of the table's; one level at least), then one breadth-first search in C
    from the rows the last level found. When every edge from a row below ``levelled``
    leads to a higher row (``Store.rdeps``, numbered by level), the rows below the lowest
    the search starts from are not copied for it: it cannot reach them.

    A walk of the dependents ``^`` asks for reaches a third of a million specs at 1M, through
    80-320 levels; each level costs a dozen numpy calls over its edges (27-43 ns an edge).
    The search is scipy's (``scipy.sparse.csgraph.breadth_first_order``: maintained and
    tested, where a loop of our own would need a compiler at install): from a row added after
    the table, whose edges are the rows to go on from. Adding that row copies the table's
    edges once a walk (a memory copy, about 10 ms for 9M edges), which only a walk past the
    budget pays.

    >>> indptr, indices = np.array([0, 1, 2, 3, 4]), np.array([1, 2, 3, 0])  # 0→1→2→3→0
    >>> np.flatnonzero(reached_far(indptr, indices, [0], budget=0)).tolist()
    [0, 1, 2, 3]
    >>> np.flatnonzero(reached_far(indptr, indices, [1], budget=0)).tolist()
    [0, 1, 2, 3]
    >>> indptr, indices = np.array([0, 1, 2, 2]), np.array([1, 2])  # 0→1→2
    >>> np.flatnonzero(reached_far(indptr, indices, [0], budget=0)).tolist()
    [1, 2]
    >>> np.flatnonzero(reached_far(indptr, indices, [0], budget=0, levelled=3)).tolist()
    [1, 2]
    >>> indptr, indices = np.array([0, 1, 2, 3, 4]), np.array([1, 3, 2, 2])  # 0→1→3⇄2
    >>> np.flatnonzero(reached_far(indptr, indices, [1], budget=0, levelled=2)).tolist()
    [2, 3]
    """
    if budget is None:
        budget = len(indices) * NUMPY_SHARE
    # one level at least: a start is marked only when reached, and the search marks its own
    seen, frontier = _levels(indptr, indices, starts, None, None, budget=budget)
    if not frontier.size:
        return seen
    if len(indices) + len(frontier) >= np.iinfo(_INDEX).max:  # too large for scipy's indices
        seen |= _levels(indptr, indices, frontier, None, None)[0]
        seen[frontier] = True
        return seen
    deadline.check()
    low = min(int(frontier.min()), levelled)
    seen[_searched(indptr, indices, frontier, low)] = True
    return seen


def _searched(
    indptr: np.ndarray, indices: np.ndarray, sources: np.ndarray, low: int = 0
) -> np.ndarray:
    """The rows reached from ``sources`` (themselves included) through the table's edges, by
    one breadth-first search from a row added after the others; the rows below ``low``,
    which the search cannot reach, left empty (their edges not copied)."""
    # Imported here: scipy's graph module takes 0.1-0.2 s to import, which only a walk that
    # goes deep needs, not the server's start.
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import breadth_first_order

    # A fresh table of 9M edges costs more in page faults than in copying (20-35 ms at 1M
    # on a busy machine): the rows a walk up cannot reach, about half, are left out.
    n, first = len(indptr) - 1, int(indptr[low])
    edges = len(indices) - first
    table = np.empty(edges + len(sources), _INDEX)
    table[:edges] = indices[first:]
    table[edges:] = sources
    rows = np.empty(n + 2, _INDEX)
    rows[:low] = 0
    np.subtract(indptr[low:], first, out=rows[low : n + 1], casting="unsafe")
    rows[n + 1] = len(table)
    # the search reads rows and columns only: a weight of one for every edge, never stored
    weights = np.broadcast_to(np.float64(1), table.shape)
    graph = csr_array((weights, table, rows), shape=(n + 1, n + 1), copy=False)
    order = breadth_first_order(graph, n, directed=True, return_predecessors=False)
    return order[1:]  # the added row comes first


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
    keep = edge_filter(store, deptypes, up)
    if not up:
        return reached_mask(*store.deps, starts, keep, steps)
    given = starts if isinstance(starts, np.ndarray) else np.fromiter(starts, np.int64)
    rows = store.up_row[np.asarray(given, np.int64)]  # rdeps numbers specs its own way
    linked = store.deptype_mask(("link", "run"))
    if deptypes is not None and not deptypes & ~linked:  # link/run edges only: the first rows
        indptr, indices = store.linked_dependents
        kept = None if deptypes == linked else keep
        return store.ranked(reached_mask(indptr, indices, rows, kept, steps))
    return store.ranked(_levels(*store.rdeps, rows, keep, steps, halves=store.n)[0])
