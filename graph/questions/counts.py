"""Names and counts: what a tag, a package or a stack holds, and totals.

Over every tag these are lengths of the store's indices; within one tag they
are counted over that tag's specs in numpy, a bincount a kind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..attributes import SINGLE
from ..spack.names import NO_COMPILER, current_compiler, version_key
from ..store.tables import distinct
from ..store.view import CacheGraph
from .overlaps import loaded_tag
from .scope import stack_counts
from .specs import SpecQuery, compiler_key, compiler_spellings, select_specs


def counts_in(G: CacheGraph, ranks: np.ndarray, kinds: Iterable[str], tag: str | None) -> dict:
    """Spec counts per value of each kind (an attribute, ``stack``, ``variant``,
    ``mirror``) among these specs, ``stack`` counting those in ``tag``.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    ranks : numpy.ndarray
        The store ranks of the specs to count.
    kinds : iterable of str
        The kinds to count: attribute names, ``stack``, ``variant``, ``mirror``.
    tag : str or None
        The tag ``stack`` counts its stacks in; None: any tag.

    Returns
    -------
    counts : dict
        kind -> Counter of value -> how many of the specs have it.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> found = counts_in(example_graph(), np.array([1, 2]), ["package", "variant"], None)
    >>> found["package"], found["variant"]["+mpi"]
    (Counter({'hdf5': 2}), 2)
    """
    store = G.store
    ranks = np.asarray(ranks, np.int64)
    counts: dict[str, Counter] = {}
    for kind in kinds:
        if kind in SINGLE:
            values = store.strings(kind).values
            found = np.bincount(store.codes[kind][ranks], minlength=len(values))
        elif kind == "stack":
            counts[kind] = stack_counts(G, ranks, tag)
            continue
        else:
            sets = store.sets("variants" if kind == "variant" else "mirrors")
            column = store.variants if kind == "variant" else store.held
            per_set = np.bincount(column[ranks], minlength=len(sets))
            values = store.strings(kind).values
            found = np.bincount(sets.members, weights=per_set[sets.owners()],
                                minlength=len(values)).astype(np.int64)  # fmt: skip
        counts[kind] = Counter({values[c]: int(found[c]) for c in np.flatnonzero(found).tolist()})
    return counts


def counts_in_tag(G: CacheGraph, tag: str, kinds: Iterable[str]) -> dict[str, Counter]:
    """Spec counts per value of each kind within one tag.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    tag : str
        The tag whose specs are counted.
    kinds : iterable of str
        The kinds to count: attribute names, ``stack``, ``variant``, ``mirror``.

    Returns
    -------
    counts : dict
        kind -> Counter of value -> how many specs of the tag have it.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> counts_in_tag(example_graph(), "develop", ["package"])
    {'package': Counter({'hdf5': 1, 'zlib': 1})}
    """
    return counts_in(G, G.store.ranks("tag", tag), kinds, tag)


def _scope_counts(G: CacheGraph, tag: str) -> dict[str, Counter]:
    """Spec counts per value of each attribute, and per stack, within one tag."""
    kinds = (*SINGLE, "stack")
    if not loaded_tag(G, tag):
        return {kind: Counter() for kind in kinds}
    return G.memoized(("scope", tag), lambda: counts_in_tag(G, tag, kinds))


def spec_count(G: CacheGraph, kind: str, name: str, tag: str | None = None) -> int:
    """How many specs have this package, compiler, target, stack... (in one tag).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    kind : str
        ``package``, ``compiler`` (under its old and its current name alike), ``recorded compiler``,
        ``target``, ``stack``, ``tag``...
    name : str
        A value of ``kind``: a package name, a stack name, a compiler...
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    count : int
        How many specs (in the tag) have the value.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> spec_count(G, "package", "zlib"), spec_count(G, "package", "zlib", "develop")
    (2, 1)
    """
    if kind == "compiler":  # under its old and its current name alike
        names = compiler_spellings(G, name)
        return sum(spec_count(G, "recorded compiler", n, tag) for n in names)
    if kind == "recorded compiler":
        kind = "compiler"
    if tag is None or kind == "stack":
        return len(G.store.ranks(kind, name, tag))
    if kind == "tag":
        return len(G.store.ranks("tag", name)) if name == tag else 0
    return _scope_counts(G, tag)[kind][name]


def names_in_scope(G: CacheGraph, kind: str, tag: str | None = None) -> list[str]:
    """Sorted names of the packages, stacks, compilers, targets... with a spec in scope.

    ``none`` is never a compiler name.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    kind : str
        What ``name`` names: ``package``, ``compiler``, ``target``, ``os``, ``stack``...
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    names : list of str
        Sorted; compilers by Spack's current name, ``none`` left out.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> names_in_scope(G, "compiler"), names_in_scope(G, "stack", "develop")
    (['gcc@12.3.0'], ['e4s', 'ml'])
    """
    if tag is None:
        names = G.memoized(("names", kind), lambda: G.store.names(kind))
    else:
        names = sorted(_scope_counts(G, tag).get(kind, ()))
    if kind != "compiler":
        return names
    # one name per compiler, Spack's current one (oneapi@... is intel-oneapi-compilers@...)
    return sorted({current_compiler(n) for n in names if n != NO_COMPILER})


def tag_names(G: CacheGraph) -> list[str]:
    """Every tag some spec is in or some mirror was given for, sorted: a mirror that failed
    to load still names its tag, with no specs, rather than have it vanish.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.

    Returns
    -------
    tags : list of str
        Sorted, memoized on ``G``.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> tag_names(example_graph())
    ['develop', 'v1']
    """

    def compute() -> list[str]:
        return sorted({*names_in_scope(G, "tag"), *(m.tag for m in G.store.mirrors)})

    return G.memoized("tag names", compute)


@dataclass(frozen=True)
class Stats:
    package_count: int
    spec_count: int
    stack_count: int
    compiler_count: int
    target_count: int
    tag_count: int


def stats(G: CacheGraph, tag: str | None = None) -> Stats:
    """Totals over everything loaded, or over one tag.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    stats : Stats
        Counts of packages, specs, stacks, compilers, targets and tags.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> stats(example_graph())  # doctest: +NORMALIZE_WHITESPACE
    Stats(package_count=3, spec_count=5, stack_count=2, compiler_count=1, target_count=3,
          tag_count=2)
    """
    in_tag = G.store.ranks("tag", tag) if tag is not None else None
    tags = tag_names(G) if tag is None else [tag] if len(in_tag) else []
    return Stats(
        package_count=len(names_in_scope(G, "package", tag)),
        spec_count=G.store.n if tag is None else len(in_tag),
        stack_count=len(names_in_scope(G, "stack", tag)),
        compiler_count=len(names_in_scope(G, "compiler", tag)),
        target_count=len(names_in_scope(G, "target", tag)),
        tag_count=len(tags),
    )


def packages_with(G: CacheGraph, kind: str, name: str, tag: str | None = None) -> list[str]:
    """Sorted names of the packages with at least one spec of this stack, compiler, target...

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    kind : str
        What ``name`` names: ``package``, ``compiler``, ``target``, ``os``, ``stack``...
    name : str
        A value of ``kind``: a package name, a stack name, a compiler...
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    packages : list of str
        Sorted package names, kept on ``G``.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> packages_with(G, "stack", "ml"), packages_with(G, "target", "zen2")
    (['hdf5'], ['zlib'])
    """
    if kind == "compiler":
        name = compiler_key(name)

    def compute() -> list[str]:
        query = (
            SpecQuery(tag=tag).with_stack(name)
            if kind == "stack"
            else SpecQuery(tag=tag).narrowed(**{kind: name})
        )
        ranks = select_specs(G, query).matching()
        codes = distinct(G.store.codes["package"][ranks])  # package codes are in name order
        values = G.store.strings("package").values
        return [values[c] for c in codes.tolist()]

    return G.kept(("packages", kind, name, tag), compute)


@dataclass(frozen=True)
class PackageQuery:
    name_contains: str | None = None
    stack: str | None = None
    compiler: str | None = None
    target: str | None = None
    tag: str | None = None
    name_prefix: str | None = None


def package_names(G: CacheGraph, q: PackageQuery) -> list[str]:
    """Sorted names of the packages matching every part of ``q``.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    q : PackageQuery
        Name part or prefix, stack, compiler, target and tag, each when given.

    Returns
    -------
    packages : list of str
        Sorted package names.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> package_names(example_graph(), PackageQuery(name_contains="LI", tag="v1"))
    ['zlib']
    """
    sets = [
        set(packages_with(G, kind, value, q.tag))
        for kind in ("stack", "compiler", "target")
        if (value := getattr(q, kind)) is not None
    ]
    names = names_in_scope(G, "package", q.tag)
    if q.name_prefix:
        start = q.name_prefix.lower()
        names = [n for n in names if n.lower().startswith(start)]
    if q.name_contains:
        needle = q.name_contains.lower()
        names = [n for n in names if needle in n.lower()]
    return [n for n in names if all(n in s for s in sets)]


def package_initials(G: CacheGraph, q: PackageQuery) -> list[tuple[str, int]]:
    """(first character, how many packages) of the packages matching ``q``, in order: the
    letters of a package index.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    q : PackageQuery
        As ``package_names`` takes it.

    Returns
    -------
    initials : list of (str, int)
        (lower-case first character, how many packages), in order.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> package_initials(example_graph(), PackageQuery())
    [('g', 1), ('h', 1), ('z', 1)]
    """
    initials: dict[str, int] = {}
    for name in package_names(G, q):
        initials[name[0].lower()] = initials.get(name[0].lower(), 0) + 1
    return sorted(initials.items())


def package_exists(G: CacheGraph, name: str) -> bool:
    """Whether some spec is of this package.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    name : str
        A package name.

    Returns
    -------
    exists : bool
        Whether some loaded spec is of the package.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> package_exists(example_graph(), "zlib"), package_exists(example_graph(), "bzip2")
    (True, False)
    """
    return len(G.store.ranks("package", name)) > 0


@dataclass(frozen=True)
class PackageFacts:
    """What a package's page summarizes, computed from its specs."""

    spec_count: int
    versions: list[str]
    compilers: list[str]
    targets: list[str]
    oss: list[str]
    platforms: list[str]
    stack_counts: list[tuple[str, int]]


def package_facts(G: CacheGraph, name: str, tag: str | None = None) -> PackageFacts:
    """What a package's page summarizes (in one tag).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    name : str
        A package name.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    facts : PackageFacts
        Its spec count, versions, compilers, targets, oss, platforms and specs per stack.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> facts = package_facts(example_graph(), "zlib")
    >>> facts.versions, facts.targets, facts.stack_counts
    (['1.2.13', '1.3.1'], ['x86_64_v3', 'zen2'], [('e4s', 2)])
    """

    def compute() -> PackageFacts:
        store = G.store
        ranks = select_specs(G, SpecQuery(package=name, tag=tag)).matching()

        def values(kind: str) -> list[str]:
            table = store.strings(kind).values
            return [table[c] for c in distinct(store.codes[kind][ranks]).tolist()]

        return PackageFacts(
            spec_count=len(ranks),
            versions=sorted(values("version"), key=version_key),
            compilers=sorted({current_compiler(c) for c in values("compiler") if c != NO_COMPILER}),
            targets=values("target"),
            oss=values("os"),
            platforms=values("platform"),
            stack_counts=sorted(stack_counts(G, ranks, tag).items()),
        )

    return G.kept(("package", name, tag), compute)


def tags_of(G: CacheGraph, kind: str, name: str) -> list[str]:
    """Sorted tags in which this package or stack has at least one spec.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    kind : str
        ``package``, ``stack``, or another attribute.
    name : str
        A value of ``kind``.

    Returns
    -------
    tags : list of str
        Sorted.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> tags_of(example_graph(), "package", "hdf5"), tags_of(example_graph(), "stack", "ml")
    (['develop', 'v1'], ['develop'])
    """
    if kind == "stack":
        return [t for t in tag_names(G) if len(G.store.ranks("stack", name, t))]

    def compute() -> list[str]:
        ranks = select_specs(G, SpecQuery().narrowed(**{kind: name})).matching()
        objects = G.store.layout_objects()
        found: set[str] = set()
        for code in distinct(G.store.layout[ranks]).tolist():
            found.update(objects[code][0])
        return sorted(found)

    return G.kept(("tags", kind, name), compute)


def precompute(G: CacheGraph) -> None:
    """Work out the whole-data answers (overlaps, counts, names) before the first request
    asks: each is memoized on the graph anyway; this moves their cost to the load.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.

    Returns
    -------
    None
        The answers are memoized on ``G``.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> precompute(G); ("overlaps", None) in G.memo
    True
    """
    from .overlaps import stack_overlaps

    for tag in (None, *tag_names(G)):
        stack_overlaps(G, None, tag)
        if tag is not None:
            _scope_counts(G, tag)
        for kind in (*SINGLE, "stack"):
            names_in_scope(G, kind, tag)
