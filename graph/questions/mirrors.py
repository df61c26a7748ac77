"""Mirrors and sizes: which mirrors hold a spec, and what a mirror or a stack holds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..store.records import MirrorInfo
from ..store.view import CacheGraph


def mirror_names(G: CacheGraph, tag: str | None = None) -> list[str]:
    """Names of the loaded mirrors (of one tag), sorted.

    >>> from cachegraph.graph.store.example import example_graph
    >>> mirror_names(example_graph()), mirror_names(example_graph(), "v1")
    (['develop/e4s', 'develop/ml'], [])
    """
    return [name for name, m in G.mirrors.items() if tag is None or m.tag == tag]


def mirrors_of(G: CacheGraph, hash: str) -> list[MirrorInfo]:
    """The mirrors holding this spec, by name.

    >>> from cachegraph.graph.store.example import example_graph
    >>> [m.name for m in mirrors_of(example_graph(), "a" * 32)]
    ['develop/e4s', 'develop/ml']
    """
    spec = G.spec(hash)
    return [] if spec is None else [G.mirrors[m] for m in sorted(spec.mirrors)]


@dataclass(frozen=True)
class Holding:
    """How many specs something holds and the sum of their known sizes in bytes."""

    spec_count: int
    total_bytes: float


def _holding(G: CacheGraph, ranks: np.ndarray) -> Holding:
    return Holding(len(ranks), float(np.nansum(G.store.size[ranks])) if len(ranks) else 0.0)


def mirror_holding(G: CacheGraph, name: str) -> Holding:
    """The specs a mirror holds and their bytes.

    >>> from cachegraph.graph.store.example import example_graph
    >>> mirror_holding(example_graph(), "develop/e4s")
    Holding(spec_count=2, total_bytes=1250.0)
    """
    if name not in G.mirrors:
        return Holding(0, 0.0)
    return G.memoized(("mirror holding", name), lambda: _holding(G, G.store.ranks("mirror", name)))


def stack_holding(G: CacheGraph, stack: str, tag: str | None = None) -> Holding:
    """The specs a stack holds (in one tag) and their bytes.

    >>> from cachegraph.graph.store.example import example_graph
    >>> stack_holding(example_graph(), "e4s", "develop")
    Holding(spec_count=2, total_bytes=1250.0)
    """
    return G.kept(("stack holding", stack, tag),
                  lambda: _holding(G, G.store.ranks("stack", stack, tag)))  # fmt: skip
