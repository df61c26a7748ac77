"""Facet counts: how many of the selected specs have each value of each attribute.

The numbers a faceted search shows beside its checkboxes. Over the whole
cache they are the lengths of the store's indices; under a filter (or in one
tag) they are counted over the matching specs in numpy: a bincount of a
column, or of a table's rows weighted by how many specs have each.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..attributes import PLACED
from ..spack.names import current_compiler
from ..store.view import CacheGraph
from .counts import counts_in
from .specs import SpecQuery, select_specs

#: every facet: the one-valued attributes, a spec's stacks (in the query's tag), the
#: many-valued attributes (variants), its mirrors; attributes in their place
FACETS = (
    *(a.kind for a in PLACED if not a.many),
    "stack",
    *(a.kind for a in PLACED if a.many),
    "mirror",
)


@dataclass(frozen=True)
class Facets:
    spec_count: int
    #: facet -> (value, count), largest count first, then value
    values: dict[str, list[tuple[str, int]]]


def facets(G: CacheGraph, q: SpecQuery) -> Facets:
    """Counts of each facet's values among the specs matching ``q``, each spec counted once.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    q : SpecQuery
        What the specs counted must match.

    Returns
    -------
    facets : Facets
        value -> count for each facet.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> found = facets(G, SpecQuery())
    >>> found.spec_count, found.values["package"], found.values["stack"]
    (5, [('hdf5', 2), ('zlib', 2), ('gcc', 1)], [('e4s', 4), ('ml', 1)])
    >>> facets(G, SpecQuery(package="zlib")).values["target"]
    [('x86_64_v3', 1), ('zen2', 1)]
    """
    if q == SpecQuery():
        return G.kept(("facets", None), lambda: _whole(G))
    if q == SpecQuery(tag=q.tag):
        return G.kept(("facets", q.tag), lambda: _of(G, G.store.ranks("tag", q.tag), q.tag))
    return _of(G, select_specs(G, q).matching(), q.tag)


def _of(G: CacheGraph, ranks: np.ndarray, tag: str | None) -> Facets:
    counts = counts_in(G, ranks, FACETS, tag)
    return Facets(len(ranks), {name: _ranked(_named(name, c)) for name, c in counts.items()})


def _whole(G: CacheGraph) -> Facets:
    """Every facet over all specs, from the lengths of the store's indices."""
    store = G.store
    values = {}
    for kind in FACETS:
        counts = store.index(kind).counts()
        names = store.strings(kind).values
        found = Counter({names[c]: int(counts[c]) for c in np.flatnonzero(counts).tolist()})
        values[kind] = _ranked(_named(kind, found))
    return Facets(store.n, values)


def _named(kind: str, counts: Counter) -> Counter:
    """The compiler facet under Spack's current names: ``oneapi@2024.2.1`` and
    ``intel-oneapi-compilers@2024.2.1`` one value, their counts added (a spec records one
    compiler, so none is counted twice)."""
    if kind != "compiler":
        return counts
    merged: Counter = Counter()
    for name, n in counts.items():
        merged[current_compiler(name)] += n
    return merged


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
