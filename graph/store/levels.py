"""The order the dependents' table (``Store.rdeps``) numbers specs in: by level.

A walk up the dependents (``^``'s, through a third of a million specs at 1M) reads a
spec's row, then each parent's. In rank order (the contract's: by name, version, hash)
a spec's parents lie anywhere among a million rows, and the walk pays a cache miss an
edge. Numbered by level -- every spec after all its link/run dependencies -- the specs a
walk meets at one step are near each other, and so are their rows: the same search took
37 ms against 56 at 1M. Only the table is numbered so; every answer is still in ranks.
"""

from __future__ import annotations

import numpy as np

from .tables import distinct


def upward_order(child: np.ndarray, parent: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """(the ranks of ``n`` specs by level, then rank; how many have a level), given their
    link/run edges (``child[i]`` a dependency of ``parent[i]``): level 0 has no such
    dependency, a spec's level is one more than its highest dependency's. Specs on a cycle
    (bad data) and those above one have none: they come last, by rank. So every edge from
    one of the first specs leads to a later one.

    >>> # 3 depends on 0 and 2, 2 on 1; 4 stands alone
    >>> order, levelled = upward_order(np.array([0, 2, 1]), np.array([3, 3, 2]), 5)
    >>> order.tolist(), levelled
    ([0, 1, 4, 2, 3], 5)
    >>> order, levelled = upward_order(np.array([0, 1, 2]), np.array([1, 0, 1]), 3)  # 0 ⇄ 1 ← 2
    >>> order.tolist(), levelled
    ([2, 0, 1], 1)
    """
    # ranks as given (int32 at the store's finish: this runs beside its other columns)
    child, parent = np.asarray(child), np.asarray(parent)
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(child, minlength=n), out=ptr[1:])
    parents = parent[np.argsort(child)]  # a child's parents in any order
    waiting = np.bincount(parent, minlength=n)  # dependencies not yet given a level
    level = np.full(n, np.iinfo(np.int64).max)  # none yet
    frontier, step = np.flatnonzero(waiting == 0), 0
    while frontier.size:  # Kahn's, a level at a time
        level[frontier] = step
        lengths = ptr[frontier + 1] - ptr[frontier]
        starts = np.repeat(ptr[frontier] - (np.cumsum(lengths) - lengths), lengths)
        above = parents[starts + np.arange(int(lengths.sum()))]
        np.subtract.at(waiting, above, 1)
        above = distinct(above)
        frontier, step = above[waiting[above] == 0], step + 1
    none = np.iinfo(np.int64).max
    return np.argsort(level, kind="stable"), int(np.count_nonzero(level != none))


def inverse(order: np.ndarray) -> np.ndarray:
    """Where each value of a permutation stands.

    >>> inverse(np.array([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    found = np.empty(len(order), np.int32)
    found[order] = np.arange(len(order), dtype=np.int32)
    return found
