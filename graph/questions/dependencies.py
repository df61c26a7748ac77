"""What a spec depends on and what depends on it, directly or through any chain.

Every walk is ``graph.store.walks.reached`` over the store's dependency rows;
``dependency_path`` asks NetworkX, on the graph itself.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from ..errors import BadArgument
from ..store import walks
from ..store.records import SpecRecord
from ..store.tables import distinct
from ..store.view import CacheGraph
from .specs import spec_by_hash

DEPTYPES = ("build", "link", "run", "test")


def _mask(G: CacheGraph, deptype: str | None) -> int | None:
    if deptype is None:
        return None
    if deptype not in DEPTYPES:
        raise BadArgument(f"unknown deptype {deptype!r}; use one of {', '.join(DEPTYPES)}")
    return G.store.deptype_mask((deptype,))


def _rank(G: CacheGraph, hash: str) -> int:
    rank = G.store.rank(hash)
    if rank is None:
        raise BadArgument(f"no loaded spec has the hash {hash[:40]!r}")
    return rank


def _related(G: CacheGraph, hash: str, deptype: str | None, transitive: bool, up: bool):
    store, mask = G.store, _mask(G, deptype)
    rank = _rank(G, hash)
    if transitive:
        found = walks.reached(store, [rank], up=up, deptypes=mask)
        found[rank] = False
        return np.flatnonzero(found)
    ranks, types, _ = store.in_edges(rank) if up else store.edges(rank)
    return ranks if mask is None else ranks[(types & mask) > 0]


def dependency_edges(
    G: CacheGraph, hash: str
) -> list[tuple[SpecRecord, frozenset[str], frozenset[str]]]:
    """(dependency, deptypes, virtuals) of each direct dependency, in spec order.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    hash : str
        A spec's full DAG hash.

    Returns
    -------
    edges : list of (SpecRecord, frozenset, frozenset)
        (dependency, deptypes, virtuals) of each direct dependency, in spec order.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> [(s.package, sorted(t), sorted(v)) for s, t, v in dependency_edges(example_graph(),
    ...     "a" * 32)]
    [('gcc', ['build'], ['c', 'cxx']), ('zlib', ['build', 'link'], [])]
    """
    store = G.store
    children, types, virtuals = store.edges(_rank(G, hash))
    kinds, provided = store.deptype_sets(), store.virtual_sets()
    return [(spec, kinds[t], provided[v]) for spec, t, v in zip(
        store.records(children), types.tolist(), virtuals.tolist(), strict=True)]  # fmt: skip


def dependencies(
    G: CacheGraph, hash: str, deptype: str | None = None, transitive: bool = False
) -> list[SpecRecord]:
    """The specs this spec depends on (of one deptype), in spec order; with ``transitive``,
    every node of its DAG but itself, reached through edges of that deptype.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    hash : str
        A spec's full DAG hash.
    deptype : str or None, optional
        Only the edges of this dependency type (``build``, ``link``, ``run``, ``test``); None: any.
    transitive : bool, optional
        Every spec reached through the edges, not only the direct ones.

    Returns
    -------
    specs : list of SpecRecord
        In spec order.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> [s.package for s in dependencies(G, "a" * 32, "link")]
    ['zlib']
    >>> [s.hash[0] for s in dependencies(G, "a" * 32, transitive=True)]
    ['g', 'z']
    """
    return G.records(_related(G, hash, deptype, transitive, up=False))


def dependents(
    G: CacheGraph, hash: str, deptype: str | None = None, transitive: bool = False
) -> list[SpecRecord]:
    """The specs that depend on this spec (by one deptype), in spec order; with
    ``transitive``, through any chain of such edges.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    hash : str
        A spec's full DAG hash.
    deptype : str or None, optional
        Only the edges of this dependency type (``build``, ``link``, ``run``, ``test``); None: any.
    transitive : bool, optional
        Every spec reached through the edges, not only the direct ones.

    Returns
    -------
    specs : list of SpecRecord
        In spec order.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> [s.hash[0] for s in dependents(G, "g" * 32)], [s.hash[0] for s in dependents(
    ...     G, "g" * 32, "link", transitive=True)]
    (['a', 'z'], [])
    """
    return G.records(_related(G, hash, deptype, transitive, up=True))


def dependency_count(
    G: CacheGraph, hash: str, deptype: str | None = None, transitive: bool = False
) -> int:
    """How many specs ``dependencies`` gives, without making them.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    hash : str
        A spec's full DAG hash.
    deptype : str or None, optional
        Only the edges of this dependency type (``build``, ``link``, ``run``, ``test``); None: any.
    transitive : bool, optional
        Every spec reached through the edges, not only the direct ones.

    Returns
    -------
    count : int
        How many specs ``dependencies`` gives.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> dependency_count(example_graph(), "a" * 32, transitive=True)
    2
    """
    return len(_related(G, hash, deptype, transitive, up=False))


def dependent_count(
    G: CacheGraph, hash: str, deptype: str | None = None, transitive: bool = False
) -> int:
    """How many specs ``dependents`` gives, without making them.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    hash : str
        A spec's full DAG hash.
    deptype : str or None, optional
        Only the edges of this dependency type (``build``, ``link``, ``run``, ``test``); None: any.
    transitive : bool, optional
        Every spec reached through the edges, not only the direct ones.

    Returns
    -------
    count : int
        How many specs ``dependents`` gives.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> dependent_count(example_graph(), "z" * 32, transitive=True)
    1
    """
    return len(_related(G, hash, deptype, transitive, up=True))


def package_dependencies(G: CacheGraph, name: str) -> list[str]:
    """Sorted names of the packages that some spec of this package depends on.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    name : str
        A package name.

    Returns
    -------
    packages : list of str
        Sorted package names.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> package_dependencies(example_graph(), "hdf5")
    ['gcc', 'zlib']
    """
    return _packages_next_to(G, name, up=False)


def package_dependents(G: CacheGraph, name: str) -> list[str]:
    """Sorted names of the packages with a spec that depends on a spec of this package.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    name : str
        A package name.

    Returns
    -------
    packages : list of str
        Sorted package names.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> package_dependents(example_graph(), "gcc")
    ['hdf5', 'zlib']
    """
    return _packages_next_to(G, name, up=True)


def _packages_next_to(G: CacheGraph, name: str, up: bool) -> list[str]:
    store = G.store
    ranks = store.ranks("package", name)
    indptr, indices = store.rdeps if up else store.deps
    rows = store.dependent_rows(ranks) if up else np.asarray(ranks, np.int64)
    _, found = walks.neighbours(indptr, indices, rows)
    if up:  # rdeps numbers specs by level
        found = store.up_rank[found]
    names = store.strings("package").values
    return [n for c in distinct(store.codes["package"][found]).tolist() if (n := names[c]) != name]


def dependency_path(G: CacheGraph, source: str, target: str) -> list[SpecRecord] | None:
    """A shortest chain of dependencies from one spec to another; None if there is none.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    source : str
        The spec the chain starts from: a full hash or a unique prefix (``spec_by_hash``).
    target : str
        The spec it ends at, the same way.

    Returns
    -------
    path : list of SpecRecord or None
        The specs of the chain, both ends included; None when there is none or either
        spec is unknown.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> [s.package for s in dependency_path(example_graph(), "a" * 32, "g" * 32)]
    ['hdf5', 'gcc']
    """
    start, end = spec_by_hash(G, source), spec_by_hash(G, target)
    if start is None or end is None:
        return None
    # Edges from specs lead only to specs or to leaves (packages, stacks...), so
    # every path between two specs is a chain of depends_on edges.
    try:
        path = nx.shortest_path(G, ("spec", start.hash), ("spec", end.hash))
    except nx.NetworkXNoPath:
        return None
    return G.records([G.store.rank(hash) for _, hash in path])
