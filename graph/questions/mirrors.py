"""Mirrors and sizes: which mirrors hold a spec, and what a mirror or a stack holds."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np

from ..sources.locations import is_url
from ..store.records import MirrorInfo
from ..store.view import CacheGraph


def mirror_names(G: CacheGraph, tag: str | None = None) -> list[str]:
    """Names of the loaded mirrors (of one tag), sorted.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    names : list of str
        Sorted.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> mirror_names(example_graph()), mirror_names(example_graph(), "v1")
    (['develop/e4s', 'develop/ml'], [])
    """
    return [name for name, m in G.mirrors.items() if tag is None or m.tag == tag]


def mirrors_of(G: CacheGraph, hash: str) -> list[MirrorInfo]:
    """The mirrors holding this spec, by name.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    hash : str
        A spec's full DAG hash.

    Returns
    -------
    mirrors : list of MirrorInfo
        By name.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> [m.name for m in mirrors_of(example_graph(), "a" * 32)]
    ['develop/e4s', 'develop/ml']
    """
    spec = G.spec(hash)
    return [] if spec is None else [G.mirrors[m] for m in sorted(spec.mirrors)]


def mirror_url(mirror: MirrorInfo) -> str:
    """The mirror's root as ``spack mirror add NAME URL`` wants it: the folder that holds
    ``build_cache/`` (v2; Spack adds ``build_cache/`` itself) or ``v3/``, as a URL.

    Parameters
    ----------
    mirror : MirrorInfo
        A loaded mirror.

    Returns
    -------
    url : str
        The root to give ``spack mirror add``.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> info = example_graph().mirrors["develop/e4s"]
    >>> from dataclasses import replace
    >>> mirror_url(replace(info, location="/srv/e4s/build_cache"))
    'file:///srv/e4s'
    >>> mirror_url(replace(info, location="/srv/e4s/build_cache/index.json"))
    'file:///srv/e4s'
    >>> mirror_url(replace(info, location="/srv/my mirror", layout="v3"))
    'file:///srv/my%20mirror'
    """
    if is_url(mirror.location):  # a remote mirror: its root URL, as given
        return mirror.location
    return local_root(mirror).as_uri()


def local_root(mirror: MirrorInfo) -> PurePosixPath:
    """A local mirror's root folder, absolute: the one holding ``build_cache/`` or ``v3/``.

    Parameters
    ----------
    mirror : MirrorInfo
        A local mirror.

    Returns
    -------
    root : PurePosixPath
        The absolute folder holding ``build_cache/`` or ``v3/``.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> from dataclasses import replace
    >>> info = example_graph().mirrors["develop/e4s"]
    >>> local_root(replace(info, location="/srv/e4s/build_cache/index.json"))
    PurePosixPath('/srv/e4s')
    """
    path = PurePosixPath(mirror.location)
    if mirror.layout == "v2":
        if path.suffix == ".json":
            path = path.parent
        if path.name == "build_cache":
            path = path.parent
    if not path.is_absolute():  # read from the server's folder
        path = PurePosixPath(os.path.abspath(path))
    return path


@dataclass(frozen=True)
class Holding:
    """How many specs something holds and the sum of their known sizes in bytes."""

    spec_count: int
    total_bytes: float


def _holding(G: CacheGraph, ranks: np.ndarray) -> Holding:
    return Holding(len(ranks), float(np.nansum(G.store.size[ranks])) if len(ranks) else 0.0)


def mirror_holding(G: CacheGraph, name: str) -> Holding:
    """The specs a mirror holds and their bytes.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    name : str
        A mirror name.

    Returns
    -------
    holding : Holding
        How many specs it holds, and the sum of their known sizes in bytes.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> mirror_holding(example_graph(), "develop/e4s")
    Holding(spec_count=2, total_bytes=1250.0)
    """
    if name not in G.mirrors:
        return Holding(0, 0.0)
    return G.memoized(("mirror holding", name), lambda: _holding(G, G.store.ranks("mirror", name)))


def stack_holding(G: CacheGraph, stack: str, tag: str | None = None) -> Holding:
    """The specs a stack holds (in one tag) and their bytes.

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
    holding : Holding
        How many specs it holds, and the sum of their known sizes in bytes.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> stack_holding(example_graph(), "e4s", "develop")
    Holding(spec_count=2, total_bytes=1250.0)
    """
    return G.kept(("stack holding", stack, tag),
                  lambda: _holding(G, G.store.ranks("stack", stack, tag)))  # fmt: skip


_WATCHES = ("remote mirrors",)


def record_watches(G: CacheGraph, watches: dict) -> None:
    """Keep with ``G`` what is known of its remote mirrors' freshness (name -> MirrorWatch of
    ``graph.sources.remote``): the same mapping across reloads, updated by each check.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    watches : dict
        name -> MirrorWatch of each remote mirror.

    Returns
    -------
    None
        Kept in ``G``'s memo.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> record_watches(G, {"develop/e4s": "watched"})
    >>> mirror_watch(G, "develop/e4s"), mirror_watch(G, "develop/ml")
    ('watched', None)
    """
    G.memo[_WATCHES] = watches


def mirror_watch(G: CacheGraph, name: str):
    """What is known of a remote mirror's freshness; None for a local mirror.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    name : str
        A mirror name.

    Returns
    -------
    watch : MirrorWatch or None
        None for a local mirror.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> mirror_watch(example_graph(), "develop/e4s") is None
    True
    """
    return G.memo.get(_WATCHES, {}).get(name)


def mirror_checks(G: CacheGraph) -> int:
    """How many checks of remote mirrors have been made: what an answer that shows their
    freshness depends on beside the data (0 with no remote mirror).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.

    Returns
    -------
    checks : int
        How many checks of remote mirrors have been made so far.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> mirror_checks(example_graph())
    0
    """
    watches = G.memo.get(_WATCHES)
    return sum(w.checks for w in list(watches.values())) if watches else 0
