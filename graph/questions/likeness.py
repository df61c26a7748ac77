"""How alike specs are: what differs between two, lookalike groups, and the nearest cached specs.

Distance, the rule ``nearest`` ranks by (smaller is nearer; 0 is the same spec), each
attribute's weight being the one ``graph.attributes`` declares:

================= ======================================================
platform          8 when it differs (the binary cannot run at all)
os                4 when it differs
target            0.5 when the cached one is an ancestor of the wanted one (it runs, less
                  tuned); 2 when it is not
compiler          1 for another version, 2 for another compiler
version           3 when it differs
each variant      1 for each variant whose value differs or that one side lacks
each dependency   0.25 for each direct dependency (by name) whose version differs or that
                  one side lacks
================= ======================================================

Ties are broken by the contract's order of specs (package, version, hash).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from ..attributes import COMPARED, SINGLE, own_key
from ..attributes import WEIGHTS as ATTRIBUTE_WEIGHTS
from ..errors import BadArgument
from ..spack import targets as archs
from ..spack.constraints import Constraint, Node
from ..spack.names import compiler_parts
from ..store import walks
from ..store.records import SpecRecord
from ..store.satisfies import holding, node_test, settings
from ..store.view import CacheGraph
from .specs import SpecQuery, select_specs, spec_by_hash

#: the weight of each kind of difference: an attribute's own (declared in graph.attributes),
#: a variant's, a direct dependency's, and the two nearer cases of target and compiler
WEIGHTS = {
    **ATTRIBUTE_WEIGHTS,
    "variant": ATTRIBUTE_WEIGHTS["variants"],
    "dependency": 0.25,
    "runnable target": 0.5,
    "compiler version": 1.0,
}


_SINGLE_COMPARED = [name for name in COMPARED if name in SINGLE]


@dataclass(frozen=True)
class Difference:
    """One attribute that differs: ``version``, ``compiler``, ``target``, ``os``,
    ``platform``, ``variant:NAME`` or ``dependency:NAME``."""

    field: str
    wanted: str | None
    cached: str | None


@dataclass(frozen=True)
class Nearness:
    spec: SpecRecord
    distance: float
    differences: tuple[Difference, ...]


# -- the differences between two specs -------------------------------------------------------


def own_differences(a: SpecRecord, b: SpecRecord) -> list[Difference]:
    """The attributes of its own (not its dependencies') that differ between two specs.

    Parameters
    ----------
    a : SpecRecord
        The wanted spec.
    b : SpecRecord
        The other (cached) spec.

    Returns
    -------
    differences : list of Difference
        One per attribute (per variant for variants) that differs, in the spec string's order.

    Examples
    --------
    >>> a = SpecRecord(hash="a" * 32, package="zlib", version="1.3", versions=("1.3",),
    ...     compiler="gcc@12.1.0", os="rhel8", platform="linux", target="zen2",
    ...     variants=("+pic", "build_system=makefile"))
    >>> b = SpecRecord(hash="b" * 32, package="zlib", version="1.3.1", versions=("1.3.1",),
    ...     compiler="gcc@12.1.0", os="rhel8", platform="linux", target="zen3",
    ...     variants=("~pic", "build_system=makefile"))
    >>> [(d.field, d.wanted, d.cached) for d in own_differences(a, b)]
    [('version', '1.3', '1.3.1'), ('target', 'zen2', 'zen3'), ('variant:pic', '+pic', '~pic')]
    """
    found = [
        Difference(name, mine, theirs)
        for name in _SINGLE_COMPARED
        if (mine := getattr(a, name)) != (theirs := getattr(b, name))
    ]
    mine, theirs = _by_name(a.variants), _by_name(b.variants)
    for name in sorted(mine.keys() | theirs.keys()):
        if settings((mine.get(name, ""),)) != settings((theirs.get(name, ""),)):
            found.append(Difference(f"variant:{name}", mine.get(name), theirs.get(name)))
    return found


def _by_name(variants: Iterable[str]) -> dict[str, str]:
    """name -> the variant as recorded (``+mpi``, ``api=v18``)."""
    return {name: v for v in variants for name in settings((v,))}


def dag_nodes(G: CacheGraph, spec: SpecRecord) -> dict[str, SpecRecord]:
    """name -> node of the spec's DAG below it (the first in spec order when a name repeats).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    spec : SpecRecord
        A spec's record.

    Returns
    -------
    nodes : dict
        package name -> SpecRecord of each node below the spec.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> {name: node.hash[0] for name, node in dag_nodes(G, G.spec("a" * 32)).items()}
    {'gcc': 'g', 'zlib': 'z'}
    """
    found: dict[str, SpecRecord] = {}
    for node in G.records(np.flatnonzero(walks.reached(G.store, [spec.rank]))):
        found.setdefault(node.package, node)
    return found


def _shown(node: SpecRecord | None) -> str | None:
    return None if node is None else f"{node.package}@{node.version}/{node.hash[:7]}"


def spec_diff(G: CacheGraph, a: str, b: str) -> tuple[SpecRecord, SpecRecord, list[Difference]]:
    """What ``spack diff`` shows of two cached specs: their own attributes, then each
    dependency of either DAG (by name) whose node differs, as ``name@version/hash``.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    a : str
        A full hash or unique prefix.
    b : str
        Another.

    Returns
    -------
    diff : tuple of (SpecRecord, SpecRecord, list of Difference)
        The two specs and their differences; BadArgument when either is unknown.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> _, _, found = spec_diff(example_graph(), "a" * 32, "b" * 32)
    >>> [(d.field, d.wanted, d.cached) for d in found]  # doctest: +NORMALIZE_WHITESPACE
    [('version', '1.14.3', '1.12.2'), ('dependency:gcc', 'gcc@12.3.0/ggggggg', None),
     ('dependency:zlib', 'zlib@1.3.1/zzzzzzz', 'zlib@1.2.13/yyyyyyy')]
    """
    first, second = spec_by_hash(G, a), spec_by_hash(G, b)
    for given, found in ((a, first), (b, second)):
        if found is None:
            raise BadArgument(f"no loaded spec has the hash {given.strip()[:40]!r}")
    differences = own_differences(first, second)
    mine, theirs = dag_nodes(G, first), dag_nodes(G, second)
    for name in sorted(mine.keys() | theirs.keys()):
        x, y = mine.get(name), theirs.get(name)
        if x is None or y is None or x.hash != y.hash:
            differences.append(Difference(f"dependency:{name}", _shown(x), _shown(y)))
    return first, second, differences


# -- lookalikes -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LookalikeGroup:
    specs: tuple[SpecRecord, ...]
    #: names of the DAG nodes whose hash differs between the group's specs
    differing: tuple[str, ...]


def lookalikes(G: CacheGraph, package: str, tag: str | None = None) -> list[LookalikeGroup]:
    """Groups of the package's specs alike in every own attribute; the largest first.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    package : str
        A package name.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    groups : list of LookalikeGroup
        The groups of two specs or more, the largest first.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> lookalikes(example_graph(), "zlib")
    []
    """

    def compute() -> list[LookalikeGroup]:
        groups: dict[tuple, list[SpecRecord]] = defaultdict(list)
        for spec in select_specs(G, SpecQuery(package=package, tag=tag)).after(None):
            groups[own_key(spec)].append(spec)
        found = [
            LookalikeGroup(tuple(specs), _differing(G, specs))
            for specs in groups.values()
            if len(specs) > 1
        ]
        found.sort(key=lambda g: (-len(g.specs), g.specs[0].rank))
        return found

    return G.kept(("lookalikes", package, tag), compute)


def _differing(G: CacheGraph, specs: list[SpecRecord]) -> tuple[str, ...]:
    dags = [{name: node.hash for name, node in dag_nodes(G, s).items()} for s in specs]
    names = set().union(*dags)
    return tuple(sorted(n for n in names if len({dag.get(n) for dag in dags}) > 1))


# -- nearest ----------------------------------------------------------------------------------


def distance(differences: Iterable[Difference], wanted_target: str | None = None) -> float:
    """The distance the differences make, by the rule in this module's docstring.

    Parameters
    ----------
    differences : iterable of Difference
        As ``own_differences`` gives them, and the dependencies'.
    wanted_target : str or None, optional
        The wanted spec's target: a cached one it runs (an ancestor) is nearer.

    Returns
    -------
    distance : float
        The sum of the differences' weights (0: the same spec).

    Examples
    --------
    >>> distance([Difference("os", "rhel8", "ubuntu22.04"), Difference("variant:mpi", "+mpi",
    ...     "~mpi"), Difference("target", "zen3", "zen2")], wanted_target="zen3")
    5.5
    """
    total = 0.0
    for d in differences:
        kind = d.field.partition(":")[0]
        if kind == "target":
            runs = (
                wanted_target is not None
                and archs.known(wanted_target)
                and d.cached in archs.ancestors(wanted_target)
            )
            total += WEIGHTS["runnable target" if runs else "target"]
        elif kind == "compiler":
            same_family = (
                d.wanted is not None
                and d.cached is not None
                and compiler_parts(d.wanted)[0] == compiler_parts(d.cached)[0]
            )
            total += WEIGHTS["compiler version" if same_family else "compiler"]
        else:
            total += WEIGHTS[kind]
    return total


def direct_versions(G: CacheGraph, spec: SpecRecord) -> dict[str, str]:
    """name -> version of each spec this one depends on directly.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    spec : SpecRecord
        A spec's record.

    Returns
    -------
    versions : dict
        package name -> version of each direct dependency.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> direct_versions(G, G.spec("a" * 32))
    {'gcc': '12.3.0', 'zlib': '1.3.1'}
    """
    return {node.package: node.version for node in G.records(G.store.children(spec.rank))}


def nearest_to_spec(
    G: CacheGraph,
    wanted: SpecRecord,
    wanted_deps: Mapping[str, str],
    first: int,
    tag: str | None = None,
) -> list[Nearness]:
    """The cached specs of ``wanted``'s package nearest to it (``wanted_deps``: name ->
    version of its direct dependencies), best first.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    wanted : SpecRecord
        The spec wanted (from a lockfile, say).
    wanted_deps : mapping
        name -> version of its direct dependencies.
    first : int
        How many to give at most.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    nearest : list of Nearness
        Best first; ties by package, version, hash.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> [(n.spec.hash[0], n.distance) for n in nearest_to_spec(G, G.spec("y" * 32), {}, 2)]
    [('y', 0.0), ('z', 6.25)]
    """
    found = []
    for spec in _cached_of(G, wanted.package, tag):
        differences = own_differences(wanted, spec)
        theirs = direct_versions(G, spec)
        for name in sorted(wanted_deps.keys() | theirs.keys()):
            if wanted_deps.get(name) != theirs.get(name):
                differences.append(
                    Difference(f"dependency:{name}", wanted_deps.get(name), theirs.get(name))
                )
        found.append(Nearness(spec, distance(differences, wanted.target), tuple(differences)))
    return _best(found, first)


def nearest_to_constraint(
    G: CacheGraph, constraint: Constraint, first: int, tag: str | None = None
) -> list[Nearness]:
    """The cached specs of the constraint's package that break the fewest of its parts.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    constraint : Constraint
        A parsed Spack constraint that names a package.
    first : int
        How many to give at most.
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    nearest : list of Nearness
        Best first; BadArgument when the constraint names no package.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> from cachegraph.graph.spack.constraints import parse
    >>> [(n.spec.hash[0], n.distance) for n in nearest_to_constraint(example_graph(),
    ...     parse("zlib@1.3 +pic"), 2)]
    [('z', 1.0), ('y', 3.0)]
    """
    root = constraint.root
    if root.name is None:
        raise BadArgument("nearest needs a package name in the constraint, e.g. 'hdf5@1.14 +mpi'")
    # A part nothing loaded has (an unknown variant) is one more difference of every spec.
    parts = _parts(G, root)
    holders = [(n, holding(G, n)) for n in constraint.transitive]
    found = []
    for spec in _cached_of(G, root.name, tag):
        at = np.array([spec.rank], np.int64)
        differences = [
            Difference(field, wanted, cached(spec))
            for field, wanted, test, cached in parts
            if not test(at)[0]
        ]
        below = None
        for node, holds in holders:
            if not holds.mask[spec.rank]:
                below = below if below is not None else dag_nodes(G, spec)
                there = below.get(node.name or "")
                differences.append(
                    Difference(f"dependency:{node.name}", _node_text(node), _shown(there))
                )
        found.append(Nearness(spec, distance(differences), tuple(differences)))
    return _best(found, first)


def _cached_of(G: CacheGraph, package: str, tag: str | None) -> Iterable[SpecRecord]:
    """The package's specs some mirror or page holds (in the tag)."""
    query = SpecQuery(package=package, tag=tag)
    return (s for s in select_specs(G, query).after(None) if s.stacks or s.mirrors)


def _best(found: list[Nearness], first: int) -> list[Nearness]:
    if first < 0:
        raise BadArgument(f"'first' must be 0 or more, got {first}")
    found.sort(key=lambda n: (n.distance, n.spec.rank))
    return found[:first]


def _parts(G: CacheGraph, node: Node) -> list[tuple]:
    """(field, wanted text, test, the cached value) of each part of a node's constraint."""
    parts: list[tuple] = []

    def part(field: str, wanted: str, check: Node, cached) -> None:
        parts.append((field, wanted, node_test(G, check), cached))

    if node.versions is not None:
        part("version", f"@{node.versions}", Node(versions=node.versions),
             lambda s: s.version)  # fmt: skip
    for direct in node.direct:
        part("compiler", f"%{direct.name}" + (f"@{direct.versions}" if direct.versions else ""),
             Node(direct=[direct]), lambda s: s.compiler)  # fmt: skip
    for variant in node.variants:
        shown = _variant_text(variant)
        part(f"variant:{variant.name}", shown, Node(variants=[variant]),
             lambda s, n=variant.name: _by_name(s.variants).get(n))  # fmt: skip
    if node.targets is not None:
        text = ",".join(lo if lo == hi else f"{lo or ''}:{hi or ''}" for lo, hi in node.targets)
        part("target", f"target={text}", Node(targets=node.targets), lambda s: s.target)
    for kind in ("os", "platform"):
        if (value := getattr(node, kind)) is not None:
            part(kind, value, Node(**{kind: value}), lambda s, k=kind: getattr(s, k))
    return parts


def _variant_text(variant) -> str:
    if variant.values in (("true",), ("false",)) and not variant.exact:
        return ("+" if variant.values == ("true",) else "~") + variant.name
    values = "*" if variant.values is None else ",".join(variant.values)
    return f"{variant.name}{':=' if variant.exact else '='}{values}"


def _node_text(node: Node) -> str:
    versions = f"@{node.versions}" if node.versions else ""
    variants = (t if t[0] in "+~" else f" {t}" for t in map(_variant_text, node.variants))
    return f"^{node.name or ''}{versions}" + "".join(variants)
