"""Facet counts: how many of the selected specs have each value of each attribute.

The numbers a faceted search shows beside its checkboxes. Over the whole
cache (or one tag) they are the lengths of the rank indices, which the graph
already holds; under a filter they are counted over the matching specs, a
cost in proportion to the answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter

from . import deadline
from .attributes import SINGLE
from .model import CacheGraph, SpecRecord
from .queries import SpecQuery, counts_in_tag, select_specs

#: facet -> the values one spec has of it (stacks are those of the query's tag)
FACETS: dict[str, Callable[[SpecRecord, str | None], Iterable[str]]] = {
    **{kind: lambda s, tag, value=attrgetter(attr): (value(s),) for kind, attr in SINGLE.items()},
    "stack": lambda s, tag: s.stacks_in(tag),
    "variant": lambda s, tag: s.variants,
    "mirror": lambda s, tag: s.mirrors,
}


@dataclass(frozen=True)
class Facets:
    spec_count: int
    #: facet -> (value, count), largest count first, then value
    values: dict[str, list[tuple[str, int]]]


def facets(cg: CacheGraph, q: SpecQuery) -> Facets:
    """Counts of each facet's values among the specs matching ``q``, each spec counted once.

    >>> from cachegraph.graph.model import SpecRecord
    >>> def spec(h, package, target):
    ...     return SpecRecord(hash=h * 32, package=package, version="1.0", versions=("1.0",),
    ...         compiler=None, os="rhel8", platform="linux", target=target, variants=("+mpi",))
    >>> cg = CacheGraph.of([spec("a", "zlib", "zen2"), spec("b", "zlib", "zen3"),
    ...     spec("c", "hdf5", "zen3")], {})
    >>> found = facets(cg, SpecQuery())
    >>> found.spec_count, found.values["package"], found.values["target"]
    (3, [('zlib', 2), ('hdf5', 1)], [('zen3', 2), ('zen2', 1)])
    >>> facets(cg, SpecQuery(package="zlib")).values["target"]
    [('zen2', 1), ('zen3', 1)]
    """
    if q == SpecQuery(tag=q.tag):
        return cg.kept(("facets", q.tag), lambda: _whole(cg, q.tag))
    counts = {name: Counter() for name in FACETS}
    spec_count = 0
    for spec in select_specs(cg, q).after(None):
        spec_count += 1
        for name, values in FACETS.items():
            counts[name].update(values(spec, q.tag))
    return Facets(spec_count, {name: _ranked(c) for name, c in counts.items()})


def _whole(cg: CacheGraph, tag: str | None) -> Facets:
    """Every facet over all specs (or one tag's), from the lengths of the rank indices."""
    counts = {name: Counter() for name in FACETS}
    if tag is None:
        for (kind, value, scope), ranks in deadline.checked(cg.index.items()):
            if kind in counts and scope is None:
                counts[kind][value] = len(ranks)
        return Facets(len(cg.ordered), {name: _ranked(c) for name, c in counts.items()})
    counts = counts_in_tag(cg, tag, FACETS)
    return Facets(len(cg.ranks("tag", tag)), {name: _ranked(c) for name, c in counts.items()})


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
