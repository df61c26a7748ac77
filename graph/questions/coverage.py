"""How much of an environment the cache holds: each concrete spec a hit or a miss, and why.

A spec is a hit when a loaded mirror or page holds its hash (in the tag, and in
one of the stacks, when those are given). A miss says why, the first that
applies:

- ``held only in tag T`` / ``held only in stacks A, B``: the cache has it, out of scope;
- ``known only as a dependency of cached specs``: a node of cached DAGs, held by no mirror;
- ``the same spec is cached as HASH7 (its dependencies differ)``: a lookalike is held;
- ``not in any loaded mirror``.

A spec the lockfile marks ``external`` is neither: Spack never installs one from a
cache (``spack buildcache push`` skips externals, ``_specs_to_be_packaged`` in
``cmd/buildcache.py``; ``install_root_node`` in ``binary_distribution.py`` skips them), so
externals are counted apart, and a root (not itself external) is cached with its whole
DAG when every spec below it but its externals is a hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import deadline
from ..attributes import own_key
from ..sources.lockfiles import Environment, walk
from ..store.records import SpecRecord
from ..store.view import CacheGraph
from .specs import SpecQuery, select_specs


@dataclass(frozen=True)
class Entry:
    hash: str
    #: the environment's own record of the spec (None for a bare hash)
    wanted: SpecRecord | None
    #: the cached spec, for a hit
    spec: SpecRecord | None
    reason: str | None
    #: marked external in the environment: neither a hit nor a miss
    external: bool = False


@dataclass(frozen=True)
class Coverage:
    entries: tuple[Entry, ...]
    #: roots whose whole DAG (in the environment) is a hit
    cached_roots: tuple[str, ...]

    @property
    def hits(self) -> list[Entry]:
        return [e for e in self.entries if e.spec is not None]

    @property
    def externals(self) -> list[Entry]:
        return [e for e in self.entries if e.external]

    @property
    def misses(self) -> list[Entry]:
        return [e for e in self.entries if e.spec is None and not e.external]

    @property
    def hit_bytes(self) -> float:
        """The sum of the hits' known sizes (see ``unknown_sizes``)."""
        return float(sum(e.spec.size or 0 for e in self.hits))

    @property
    def unknown_sizes(self) -> int:
        """How many hits have no known size (an index record or a page gives none)."""
        return sum(e.spec.size is None for e in self.hits)


EXTERNAL = "external: installed outside Spack, never from a cache"


def held(spec: SpecRecord, tag: str | None, stacks: Sequence[str] | None) -> bool:
    """Whether a mirror or page holds the spec, in the tag and one of the stacks when given.

    Parameters
    ----------
    spec : SpecRecord
        A spec's record.
    tag : str or None
        The tag the spec must be in; None: any.
    stacks : sequence of str or None
        Stacks (of the tag) one of which must hold it, when given.

    Returns
    -------
    held : bool
        Whether it is held where asked.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> zlib = example_graph().spec("z" * 32)
    >>> held(zlib, "develop", None), held(zlib, "v1", ["ml"]), held(zlib, None, ["e4s"])
    (True, False, True)
    """
    if tag is not None and tag not in spec.stacks:
        return False
    if stacks:
        return not spec.stacks_in(tag).isdisjoint(stacks)
    return bool(spec.stacks or spec.mirrors)


def coverage(
    G: CacheGraph,
    env: Environment,
    tag: str | None = None,
    stacks: Sequence[str] | None = None,
) -> Coverage:
    """Each concrete spec of ``env`` as a hit or a miss (roots first, then in file order).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    env : Environment
        An environment as ``sources.lockfiles.read_lockfile`` reads a ``spack.lock``.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.
    stacks : sequence of str or None, optional
        Only the specs held in one of these stacks (when given and not empty).

    Returns
    -------
    coverage : Coverage
        An entry a concrete spec (hit, miss with its reason, or external) and the roots cached with
        their whole DAG.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> wanted = {h * 32: G.spec(h * 32) for h in "az"} | {"x" * 32: G.spec("y" * 32)}
    >>> env = Environment(4, ("a" * 32,), wanted, {"a" * 32: (("zlib", "z" * 32),)})
    >>> found = coverage(G, env, "develop")
    >>> [(e.hash[0], e.spec is not None, e.reason) for e in found.entries], found.cached_roots
    ... # doctest: +NORMALIZE_WHITESPACE
    ([('a', True, None), ('z', True, None), ('x', False, 'not in any loaded mirror')],
     ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',))

    An external (here ``x``) is neither a hit nor a miss, and keeps no root from being cached:

    >>> env = Environment(4, ("a" * 32,), wanted, {"a" * 32: (("x", "x" * 32),)},
    ...                   frozenset({"x" * 32}))
    >>> found = coverage(G, env, "develop")
    >>> len(found.hits), len(found.externals), len(found.misses), len(found.cached_roots)
    (2, 1, 0, 1)
    """
    cached = _records(G, list(env.specs))
    entries = [
        Entry(hash, record, None, EXTERNAL, external=True)
        if hash in env.externals
        else _entry(G, hash, record, tag, stacks, cached[i])
        for i, (hash, record) in enumerate(env.specs.items())
    ]
    hit = {e.hash for e in entries if e.spec is not None}
    return Coverage(tuple(entries), cached_roots(env, hit))


def cached_roots(env: Environment, hit: set[str]) -> tuple[str, ...]:
    """The roots of ``env`` whose every spec below them, externals aside, is in ``hit``.

    Parameters
    ----------
    env : Environment
        A lockfile's environment.
    hit : set of str
        The hashes found in the cache.

    Returns
    -------
    tuple of str
        Those roots, in the lockfile's order.

    Examples
    --------
    >>> env = Environment(4, ("a", "x"), {}, {"a": (("b", "b"),), "b": (), "x": ()})
    >>> cached_roots(env, {"a", "b"})
    ('a',)
    """
    # A spec neither hit nor external holds back every root above it: spread from those up
    # once (a walk below each root took a tenth of a 500-spec lockfile's coverage).
    users: dict[str, list[str]] = {}
    for parent, deps in env.dependencies.items():
        for _, child in deps:
            users.setdefault(child, []).append(parent)
    nodes = dict.fromkeys([*env.dependencies, *users])
    missing = [h for h in nodes if h not in hit and h not in env.externals]
    held_back = walk(missing, lambda h: users.get(h, ()))
    return tuple(r for r in env.roots if r not in env.externals and r not in held_back)


def hashes_coverage(
    G: CacheGraph, hashes: Sequence[str], tag: str | None = None,
    stacks: Sequence[str] | None = None,
) -> Coverage:  # fmt: skip
    """The same for a list of full hashes (no environment: no lookalikes, no roots).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    hashes : sequence of str
        Full hashes, each with or without a leading ``/``.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.
    stacks : sequence of str or None, optional
        Only the specs held in one of these stacks (when given and not empty).

    Returns
    -------
    coverage : Coverage
        An entry a distinct hash, in the order given; no roots.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> found = hashes_coverage(example_graph(), ["/" + "g" * 32, "b" * 32], tag="develop")
    >>> [e.reason for e in found.entries]  # doctest: +NORMALIZE_WHITESPACE
    ['known only as a dependency of cached specs, held by no mirror',
     'held only in tag v1']
    """
    found = []
    distinct = list(dict.fromkeys(h.strip().lstrip("/").lower() for h in hashes))
    for hash, spec in zip(deadline.checked(distinct), _records(G, distinct), strict=True):
        found.append(_entry(G, hash, spec, tag, stacks, spec))
    return Coverage(tuple(found), ())


def _records(G: CacheGraph, hashes: list[str]) -> list[SpecRecord | None]:
    """The cached record of each hash, None where none is: looked up and made column by
    column (one by one, the records of a 500-spec lockfile's hits were a fifth of its
    coverage's time)."""
    ranks = G.store.ranks_of(hashes)
    known = ranks >= 0
    made = iter(G.records(ranks[known]))
    return [next(made) if k else None for k in known.tolist()]


def _entry(
    G: CacheGraph, hash: str, wanted: SpecRecord | None, tag: str | None, stacks,
    spec: SpecRecord | None,
) -> Entry:  # fmt: skip
    if spec is not None and held(spec, tag, stacks):
        return Entry(hash, wanted or spec, spec, None)
    return Entry(hash, wanted or spec, None, _why(G, hash, spec, wanted, tag, stacks))


def _why(G, hash, spec, wanted, tag, stacks) -> str:
    if spec is not None and (spec.stacks or spec.mirrors):
        if tag is not None and tag not in spec.stacks:
            return "held only in tag " + ", ".join(sorted(spec.stacks))
        return "held only in stacks " + ", ".join(sorted(spec.stacks_in(tag)))
    if spec is not None:
        return "known only as a dependency of cached specs, held by no mirror"
    if wanted is not None:
        key = own_key(wanted)
        for other in select_specs(G, SpecQuery(package=wanted.package, tag=tag)).after(None):
            if own_key(other) == key and held(other, tag, stacks):
                return f"the same spec is cached as {other.hash[:7]} (its dependencies differ)"
    return "not in any loaded mirror"


def dependents_in(env: Environment) -> dict[str, int]:
    """How many specs of the environment depend on each, directly or not: the misses that
    hold most of it back rank first.

    Parameters
    ----------
    env : Environment
        An environment as ``sources.lockfiles.read_lockfile`` reads a ``spack.lock``.

    Returns
    -------
    dependents : dict
        DAG hash -> how many specs of the environment depend on it, directly or not.

    Examples
    --------
    >>> env = Environment(4, ("a",), {"a": None, "b": None, "c": None},
    ...                   {"a": (("b", "b"),), "b": (("c", "c"),), "c": ()})
    >>> dependents_in(env)
    {'a': 0, 'b': 1, 'c': 2}
    """
    users = env.dependents()
    return {hash: len(walk(users[hash], users.__getitem__)) for hash in env.specs}
