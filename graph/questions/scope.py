"""Where specs are held: which stack layouts hold given stacks in a tag, and counts of the
stacks of a set of specs.

A spec's stacks per tag is its *layout*, one of a few thousand the store lists
once each (``Store.sets("layouts")``); a question about stacks is answered for
every layout once, and then read for each spec by its layout code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from ..store.view import CacheGraph

EMPTY: frozenset[str] = frozenset()


def _pairs(G: CacheGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(layout, tag, stack set) of every (tag, stack set) pair of every layout."""

    def compute() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        store = G.store
        layouts = store.sets("layouts")
        width = max(len(store.sets("stacks")), 1)
        members = layouts.members.astype(np.int64)
        return layouts.owners(), members // width, members % width

    return G.memoized("layout pairs", compute)


def layouts_holding(
    G: CacheGraph, stacks: Sequence[str], tag: str | None, any_of: bool = False
) -> np.ndarray:
    """For each layout, whether it holds every one of ``stacks`` (any one, with ``any_of``)
    in ``tag`` (in any tag when None).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    stacks : sequence of str
        Stack names.
    tag : str or None
        The tag the stacks are held in; None: any.
    any_of : bool, optional
        Any one of the stacks is enough.

    Returns
    -------
    holding : numpy.ndarray
        One bool per layout code.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> holds = layouts_holding(G, ["e4s", "ml"], "develop")
    >>> [G.store.hash(r)[0] for r in np.flatnonzero(holds[G.store.layout])]
    ['a']
    """
    stacks = tuple(dict.fromkeys(stacks))
    # Kept (within the byte budget: the names are a client's): a filter by stack asked
    # this on every request, a tenth of the "scoped" question's time (issue 43).
    return G.kept(("layouts holding", stacks, tag, any_of),
                  lambda: _shared(_layouts_holding(G, stacks, tag, any_of)))  # fmt: skip


def _shared(array: np.ndarray) -> np.ndarray:
    """``array``, read-only: kept, it is every later request's."""
    array.flags.writeable = False
    return array


def _layouts_holding(
    G: CacheGraph, stacks: tuple[str, ...], tag: str | None, any_of: bool
) -> np.ndarray:
    store = G.store
    owner, tags, sets = _pairs(G)
    count = len(store.sets("layouts"))
    tag_code = None if tag is None else store.code("tag", tag)
    if tag is not None and tag_code is None:
        return np.zeros(count, bool)
    in_tag = np.ones(len(tags), bool) if tag_code is None else tags == tag_code
    found = np.zeros(count, bool) if any_of else np.ones(count, bool)
    stack_sets = store.sets("stacks")
    for stack in stacks:
        code = store.code("stack", stack)
        if code is None:
            if not any_of:
                return np.zeros(count, bool)
            continue
        holds = stack_sets.contains(np.array([code]))[sets] & in_tag
        here = np.bincount(owner[holds], minlength=count) > 0
        found = found | here if any_of else found & here
    return found


def layouts_in_tag(G: CacheGraph, tag: str) -> np.ndarray:
    """For each layout, whether it lists ``tag``.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    tag : str
        A tag.

    Returns
    -------
    listing : numpy.ndarray
        One bool per layout code.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> int(layouts_in_tag(G, "develop")[G.store.layout].sum())
    2
    """
    store = G.store
    owner, tags, _ = _pairs(G)
    count = len(store.sets("layouts"))
    code = store.code("tag", tag)
    if code is None:
        return np.zeros(count, bool)
    return np.bincount(owner[tags == code], minlength=count) > 0


def stack_counts(G: CacheGraph, ranks: np.ndarray, tag: str | None) -> Counter:
    """How many of these specs each stack holds (in ``tag``, or in any).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    ranks : numpy.ndarray
        The store ranks of the specs to count.
    tag : str or None
        The tag whose stacks count; None: any.

    Returns
    -------
    counts : Counter
        stack -> how many of the specs it holds.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> stack_counts(G, np.arange(5), None), stack_counts(G, np.arange(5), "develop")
    (Counter({'e4s': 4, 'ml': 1}), Counter({'e4s': 2, 'ml': 1}))
    """
    objects = G.store.layout_objects()
    codes, counts = np.unique(G.store.layout[np.asarray(ranks, np.int64)], return_counts=True)
    found: Counter = Counter()
    for code, n in zip(codes.tolist(), counts.tolist(), strict=True):
        layout, every = objects[code]
        for stack in every if tag is None else layout.get(tag, EMPTY):
            found[stack] += n
    return found


def layout_counts(G: CacheGraph) -> list[tuple[int, int]]:
    """(layout code, how many specs have it) of each layout some spec has.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.

    Returns
    -------
    counts : list of (int, int)
        (layout code, spec count), by code.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> layout_counts(example_graph())
    [(0, 1), (1, 1), (2, 1), (3, 2)]
    """

    def compute() -> list[tuple[int, int]]:
        counts = np.bincount(G.store.layout, minlength=len(G.store.sets("layouts")))
        return [(c, int(counts[c])) for c in np.flatnonzero(counts).tolist()]

    return G.memoized("layout counts", compute)
