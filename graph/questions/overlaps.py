"""How stacks overlap: the specs each pair of stacks shares, and its Jaccard index."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..store.view import CacheGraph
from .scope import EMPTY, layout_counts


@dataclass(frozen=True)
class Overlap:
    """Two stacks sharing specs; served as the GraphQL StackOverlap itself."""

    pair: tuple[str, str]  # ordered by name
    shared_spec_count: int
    jaccard: float


def loaded_tag(G: CacheGraph, tag: str | None) -> bool:
    """Whether ``tag`` is None (every tag) or one the data has: an answer for another is
    empty, and keeping it would keep every name a client invents.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    tag : str or None
        A tag, or None for every tag.

    Returns
    -------
    loaded : bool
        Whether an answer for it can hold specs.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> [loaded_tag(example_graph(), t) for t in (None, "v1", "v2")]
    [True, True, False]
    """
    return tag is None or tag in G.memoized("loaded tags", lambda: set(G.store.names("tag")))


def pair_counts(G: CacheGraph, tag: str | None) -> Counter:
    """Specs per pair of stacks holding them both (in ``tag``, or in any).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    tag : str or None
        Only the specs in this tag; None: any.

    Returns
    -------
    pairs : Counter
        (stack, stack) sorted -> how many specs both hold.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> pair_counts(example_graph(), None)
    Counter({('e4s', 'ml'): 1})
    """

    def compute() -> Counter:
        # Specs share a few hundred stack layouts: count the layouts, then their pairs.
        objects = G.store.layout_objects()
        pairs: Counter = Counter()
        for code, n in layout_counts(G):
            layout, every = objects[code]
            stacks = every if tag is None else layout.get(tag, EMPTY)
            for pair in itertools.combinations(sorted(stacks), 2):
                pairs[pair] += n
        return pairs

    return G.memoized(("pairs", tag), compute) if loaded_tag(G, tag) else Counter()


def stack_overlaps(
    G: CacheGraph, stacks: Sequence[str] | None = None, tag: str | None = None
) -> list[Overlap]:
    """Every pair among ``stacks`` (all when None) sharing a spec, largest first.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    stacks : sequence of str or None, optional
        The stacks to pair; None: every stack.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    overlaps : list of Overlap
        The pairs sharing a spec, largest first.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> stack_overlaps(example_graph())
    [Overlap(pair=('e4s', 'ml'), shared_spec_count=1, jaccard=0.25)]
    """
    if stacks is None:
        if not loaded_tag(G, tag):
            return []
        return G.memoized(("overlaps", tag), lambda: _overlaps(G, None, tag))
    return _overlaps(G, set(stacks), tag)


def _overlaps(G: CacheGraph, wanted: set[str] | None, tag: str | None) -> list[Overlap]:
    found = []
    for (a, b), shared in pair_counts(G, tag).items():
        if wanted is None or (a in wanted and b in wanted):
            union = (
                len(G.store.ranks("stack", a, tag)) + len(G.store.ranks("stack", b, tag)) - shared
            )
            found.append(Overlap((a, b), shared, shared / union))
    found.sort(key=lambda o: (-o.shared_spec_count, o.pair))
    return found


def overlaps_of(G: CacheGraph, stack: str, tag: str | None = None) -> list[Overlap]:
    """Every other stack sharing a spec with ``stack``, largest first.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    stack : str
        A stack name.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    overlaps : list of Overlap
        Largest first.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> [o.pair for o in overlaps_of(example_graph(), "ml")]
    [('e4s', 'ml')]
    """
    return [o for o in stack_overlaps(G, None, tag) if stack in o.pair]
