"""Which specs satisfy a Spack constraint, or run on a host: what selecting specs needs.

A ``Requirement`` is a constraint turned into what a selection uses: index keys
every match has (its package, os, boolean variants), candidate rank lists (a
hash prefix's range, a target range, the specs whose DAG holds a ``^`` node), a
test of candidates, and warnings for the answer. The cheapest candidate list
drives the walk; the tests check the rest.

A test takes an array of ranks and answers a mask, reading the store's
columns: what a constraint says of a version, a variant list, a target or a
compiler is worked out once per distinct value in the table (a few thousand),
never per spec.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from ..errors import BadArgument
from ..spack import targets as archs
from ..spack import virtuals as table
from ..spack.constraints import Constraint, Node, Variant, parse
from ..spack.names import NO_COMPILER, compiler_parts
from . import walks
from .records import SpecRecord
from .tables import distinct
from .view import CacheGraph

#: ranks -> whether each satisfies something
Test = Callable[[np.ndarray], np.ndarray]
#: (kind, value, tag) of an index
IndexKey = tuple[str, str, str | None]

NO_DEPENDENCIES = (
    "'^' asks about dependencies, but the loaded data has none (cache pages list no "
    "dependency DAGs), so {text!r} matches nothing; load a mirror (--mirror) to ask it"
)


@dataclass(frozen=True, slots=True)
class Host:
    """A machine: its archspec target, and its os and platform when known."""

    target: str
    os: str | None = None
    platform: str | None = None


@dataclass
class Candidates:
    """Sorted ranks among which every match is, and how many, before making them."""

    count: int
    ranks: Callable[[], np.ndarray]


@dataclass
class Requirement:
    keys: list[IndexKey] = field(default_factory=list)
    candidates: list[Candidates] = field(default_factory=list)
    tests: list[Test] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def requirement(G: CacheGraph, text: str) -> Requirement:
    """What a spec satisfying ``text`` must be; BadArgument for a constraint that does not
    parse. A name nothing loaded has (a variant, os, package...) matches nothing, as in
    Spack, and the answer's warnings name it and the nearest known ones.

    >>> from cachegraph.graph.store.example import example_graph
    >>> found = requirement(example_graph(), "zlib@1.3: ~pic")
    >>> found.keys
    [('package', 'zlib', None), ('variant', '~pic', None)]
    >>> for warning in requirement(example_graph(), "zlib +pic2 os=ubuntu").warnings:
    ...     print(warning)
    no loaded spec has a variant 'pic2', so nothing matches it (did you mean pic?)
    no loaded spec has the os 'ubuntu', so nothing matches it (did you mean ubuntu22.04?)
    """
    constraint = parse(text)
    # Without DAGs, '^' nodes match nothing for that reason alone: NO_DEPENDENCIES says so.
    asked = _nodes(constraint) if G.store.edge_count else [constraint.root, *constraint.root.direct]
    warnings = [w for node in asked for w in unknown_names(G, node)]
    root = constraint.root
    found = Requirement(keys=_keys(G, root), tests=[node_test(G, root)], warnings=warnings)
    if root.hash is not None:
        found.candidates.append(_hash_candidates(G, root.hash))
    virtual = root.name is not None and is_virtual(G, root.name)  # its target is not asked
    if root.targets is not None and not virtual:
        found.candidates.append(_target_candidates(G, _allowed_targets(root)))
    if constraint.transitive and not G.store.edge_count:
        found.warnings.append(NO_DEPENDENCIES.format(text=text))
    for node in constraint.transitive:
        holders = holding(G, node)
        found.candidates.append(Candidates(holders.count, holders.ranks))
        found.tests.append(holders.test)
    return found


def runs_on(G: CacheGraph, host: Host) -> Requirement:
    """Specs a machine can run: built for its target or one the target descends from.

    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> found = runs_on(G, Host("zen3"))
    >>> [r for c in found.candidates for r in c.ranks().tolist()]
    [0, 1, 2, 3, 4]
    """
    warnings = []
    if archs.known(host.target):
        allowed = archs.ancestors(host.target)
    else:  # a machine archspec does not know runs nothing it can vouch for
        allowed = frozenset()
        hint = did_you_mean(host.target, archs.names([]))
        warnings.append(f"archspec does not know a target {host.target!r}, so nothing is "
                        f"known to run on it{hint}")  # fmt: skip
    return Requirement(
        keys=_keys(G, Node(os=host.os, platform=host.platform)),
        candidates=[_target_candidates(G, allowed)],
        tests=[_table_test(G, "target", lambda t: t in allowed)],
        warnings=warnings,
    )


def satisfies(G: CacheGraph, spec: SpecRecord, text: str) -> bool:
    """Whether one loaded spec satisfies ``text``: the whole rule (for checks and tests).

    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> zlib = G.spec("z" * 32)
    >>> [satisfies(G, zlib, t) for t in ("zlib@1.3", "zlib@1.2", "~pic %gcc@11:",
    ...     "target=x86_64_v3:", "target=:x86_64_v3", "build_system=*", "+pic")]
    [True, False, True, True, False, True, False]
    """
    ranks = np.array([spec.rank], np.int64)
    # The index keys of a requirement only narrow the candidates: its tests check everything.
    return all(bool(test(ranks)[0]) for test in requirement(G, text).tests)


# -- one node --------------------------------------------------------------------


def node_test(G: CacheGraph, node: Node) -> Test:
    """A test of specs' own attributes and their ``%`` nodes."""
    checks: list[Test] = []
    store = G.store
    if node.hash is not None:
        start, end = store.prefixed(node.hash)
        prefixed = np.sort(store.rank_of[start:end])
        checks.append(lambda r: np.isin(r, prefixed))
    if node.name is not None and is_virtual(G, node.name):
        # Spec._satisfies: a concrete spec satisfies a virtual when its package provides
        # one intersecting it; nothing else of the virtual's node is asked.
        provides = provider_mask(G, node.name, node.versions)
        return _all([*checks, lambda r: provides[r]])
    if node.name is not None:
        checks.append(_equals(G, "package", node.name))
    if node.versions is not None:
        checks.append(_table_test(G, "version", node.versions.contains))
    for variant in node.variants:
        checks.append(_variants_test(G, _variant_test(variant)))
    for name, flags in node.flags.items():
        wanted = frozenset(flags)
        checks.append(_variants_test(G, lambda v, n=name, f=wanted: f <= settings(v).get(n, EMPTY)))
    if node.targets is not None:
        allowed = _allowed_targets(node)
        checks.append(_table_test(G, "target", allowed.__contains__))
    for kind in ("os", "platform"):
        if (value := getattr(node, kind)) is not None:
            checks.append(_equals(G, kind, value))
    checks.extend(_direct_test(G, direct) for direct in node.direct)
    return _all(checks)


EMPTY: frozenset[str] = frozenset()


def _all(checks: Sequence[Test]) -> Test:
    if len(checks) == 1:
        return checks[0]

    def test(ranks: np.ndarray) -> np.ndarray:
        mask = np.ones(len(ranks), bool)
        for check in checks:
            at = np.flatnonzero(mask)  # each check only sees what the others left
            if not len(at):
                break
            mask[at] = check(ranks[at])
        return mask

    return test


def _equals(G: CacheGraph, kind: str, value: str) -> Test:
    code = G.store.code(kind, value)
    column = G.store.codes[kind]
    if code is None:
        return lambda r: np.zeros(len(r), bool)
    return lambda r: column[r] == code


def _table_test(G: CacheGraph, kind: str, accepts: Callable[[str], bool]) -> Test:
    """A test of one attribute's value, asked once per distinct value met."""
    values, column = G.store.strings(kind).values, G.store.codes[kind]
    known = np.zeros(len(values), np.int8)  # 0: not asked yet, 1: no, 2: yes

    def test(ranks: np.ndarray) -> np.ndarray:
        codes = column[ranks]
        new = distinct(codes[known[codes] == 0])
        for code in new.tolist():
            known[code] = 2 if accepts(values[code]) else 1
        return known[codes] == 2

    return test


def _variants_test(G: CacheGraph, accepts: Callable[[tuple[str, ...]], bool]) -> Test:
    """A test of specs' variant lists, asked once per distinct list met."""
    rows, column = G.store.variant_tuples(), G.store.variants
    known = np.zeros(len(rows), np.int8)

    def test(ranks: np.ndarray) -> np.ndarray:
        codes = column[ranks]
        new = distinct(codes[known[codes] == 0])
        for code in new.tolist():
            known[code] = 2 if accepts(rows[code]) else 1
        return known[codes] == 2

    return test


def _variant_test(variant: Variant) -> Callable[[tuple[str, ...]], bool]:
    if variant.values in (("true",), ("false",)) and not variant.exact:
        # Spack writes boolean variants as +name / ~name; so do pages and our mirror reader.
        recorded = ("+" if variant.values == ("true",) else "~") + variant.name
        return lambda v: recorded in v
    name, wanted = variant.name, variant.values
    if wanted is None:
        return lambda v: name in settings(v)
    values = frozenset(wanted)
    if variant.exact:
        return lambda v: settings(v).get(name) == values
    return lambda v: values <= settings(v).get(name, EMPTY)


def settings(variants: Iterable[str]) -> dict[str, frozenset[str]]:
    """Each recorded variant's values: ``cuda_arch=70,80`` and ``cflags="-O3 -g"`` alike.

    Asked once per distinct variant list of the store, never kept: the lists a
    client sends (a lockfile's) would otherwise fill a cache.

    >>> found = settings(("+mpi", "cuda_arch=70,80", "libs:=a,b", 'cflags="-O3 -g"', "k='x+y'"))
    >>> {name: sorted(values) for name, values in found.items()}  # doctest: +NORMALIZE_WHITESPACE
    {'mpi': ['true'], 'cuda_arch': ['70', '80'], 'libs': ['a', 'b'], 'cflags': ['-O3', '-g'],
     'k': ['x+y']}
    """
    found: dict[str, frozenset[str]] = {}
    for variant in variants:
        if variant[:1] in ("+", "~"):
            found[variant[1:]] = frozenset({"true" if variant[0] == "+" else "false"})
            continue
        name, _, value = variant.partition("=")
        name = name.rstrip(":")
        if value[:1] in ("'", '"') and value[-1:] == value[:1]:
            found[name] = frozenset(value[1:-1].split())
        else:
            found[name] = frozenset(v for v in value.split(",") if v)
    return found


def _direct_test(G: CacheGraph, direct: Node) -> Test:
    """``%name@versions``, as ``Spec._satisfies`` reads a direct edge: on a spec of format 5
    (Spack >= 1.0), a direct dependency satisfies it, with the edge's virtuals and deptypes
    asked; on an older spec, the compiler it records does (its name and versions only)."""
    plain = (direct.hash, direct.variants, direct.flags, direct.targets, direct.os,
             direct.platform, direct.direct) == (None, [], {}, None, None, None, [])  # fmt: skip
    virtual = direct.name is not None and is_virtual(G, direct.name)

    def compiler_ok(name: str) -> bool:
        # Spack 1.1 compares the recorded compiler node (``compiler_node_attribute``, e.g.
        # ``oneapi@2024.1``) with the parsed node, whose legacy name the parser has already
        # renamed (%oneapi is intel-oneapi-compilers): the names never meet, and a legacy
        # name is no package, so it provides no %c either.
        if not plain or name == NO_COMPILER:
            return False
        family, version = compiler_parts(name)
        if virtual:  # %c, %fortran: the compiler's package provides it, to a bare node
            return any(
                p.package == family
                and _bare_node_meets(p.when, version)
                and (direct.versions is None or p.versions is None
                     or direct.versions.intersects(p.versions))
                for p in table.providers(direct.name)
            )  # fmt: skip
        return family == direct.name and (
            direct.versions is None or direct.versions.contains(version)
        )

    by_compiler = _table_test(G, "compiler", compiler_ok)
    new = new_format(G)
    parents: list[np.ndarray] = []

    def with_such_child() -> np.ndarray:
        # The specs with such a direct edge: the edges to a child satisfying the node,
        # their parents.
        if not parents:
            edges = _edges_to(G, direct, direct=True)
            if direct.deptypes:
                bits = G.store.deptype_mask(direct.deptypes)
                missing = {*direct.deptypes} - set(G.store.strings("deptype").values)
                edges = edges[:0] if missing else edges[(G.store.dep_types[edges] & bits) == bits]
            mask = np.zeros(G.store.n, bool)
            mask[edge_parents(G)[edges]] = True
            parents.append(mask)
        return parents[0]

    def test(ranks: np.ndarray) -> np.ndarray:
        found = np.zeros(len(ranks), bool)
        recent = new[ranks]
        if recent.any():
            found[recent] = with_such_child()[ranks[recent]]
        if not recent.all():
            found[~recent] = by_compiler(ranks[~recent])
        return found

    return test


def _bare_node_meets(when: str, version: str) -> bool:
    """Whether a recorded compiler, a bare ``name@version`` node (``compiler_node_attribute``),
    meets a ``provides(..., when=...)`` condition: ``pkg.provided``'s ``self.satisfies(when)``
    asks variants the node does not have (gcc's ``languages=c``), so only a condition on the
    version alone, or none, is met.

    >>> _bare_node_meets("", "10.2.1"), _bare_node_meets("@10:", "10.2.1")
    (True, True)
    >>> _bare_node_meets("languages=c", "10.2.1"), _bare_node_meets("@:9", "10.2.1")
    (False, False)
    """
    if not when:
        return True
    try:
        node = parse(when).root
    except BadArgument:
        return False
    bare = Node(versions=node.versions, direct=node.direct)  # deps=False: its % not asked
    return vars(node) == vars(bare) and (node.versions is None or node.versions.contains(version))


# -- what Spack >= 1.0 records differently -------------------------------------------------


def new_format(G: CacheGraph) -> np.ndarray:
    """Per rank, whether the spec is of spec format 5 (Spack >= 1.0): its compiler is a
    dependency providing c, cxx or fortran, or it records no compiler at all. Older specs
    (formats 1-4, the public site's pages) record one, and no compiler node.

    >>> from cachegraph.graph.store.example import example_graph
    >>> new_format(example_graph()).tolist()
    [True, False, True, False, True]
    """

    def compute() -> np.ndarray:
        store = G.store
        none = store.code("compiler", NO_COMPILER)
        found = np.zeros(store.n, bool) if none is None else store.codes["compiler"] == none
        languages = [recorded_virtual(G, v) for v in ("c", "cxx", "fortran")]
        found[edge_parents(G)[np.logical_or.reduce(languages)]] = True
        return found

    return G.memoized("spec format 5", compute)


def edge_parents(G: CacheGraph) -> np.ndarray:
    """The parent rank of each edge, by its position in ``deps``."""

    def compute() -> np.ndarray:
        indptr = G.store.deps[0]
        return np.repeat(np.arange(G.store.n, dtype=np.int64), np.diff(indptr))

    return G.memoized("edge parents", compute)


def recorded_virtual(G: CacheGraph, virtual: str) -> np.ndarray:
    """Per edge, whether it names ``virtual`` among what it provides: as recorded, or as
    Spack's reader labelled an old spec file's edge (``virtuals.reconstructed``). Edges of
    an index keep what it records, as Spack's ``Database`` reads them."""
    store = G.store
    code = store.code("virtual", virtual)
    if code is None:
        return np.zeros(len(store.dep_types), bool)
    # one per virtual the loaded data names: a bounded key
    return G.memoized(("recorded virtual", code), lambda: (
        store.sets("virtuals").contains(np.array([code]))[store.dep_virtuals]))  # fmt: skip


def is_virtual(G: CacheGraph, name: str) -> bool:
    """Whether ``name`` is a virtual package: no loaded spec is of a package so named, and
    Spack's package repository (``graph/spack/virtuals.json``) or an edge says it is one.

    >>> from cachegraph.graph.store.example import example_graph
    >>> [is_virtual(example_graph(), n) for n in ("mpi", "c", "zlib", "zlib-api", "nothing")]
    [True, True, False, True, False]
    """
    if G.store.code("package", name) is not None and len(G.store.ranks("package", name)):
        return False
    return name in table.names() or G.store.code("virtual", name) is not None


def provider_mask(G: CacheGraph, virtual: str, versions=None) -> np.ndarray:
    """Per rank, whether the spec provides ``virtual`` (at some of ``versions``): its
    package's ``provides(...)`` whose condition the spec meets, or, for a package Spack's
    repository does not list as a provider of it, an edge naming it so.

    The example's gcc records no ``languages`` variant, so it meets none of gcc's
    ``provides("c", when="languages=c")``: the edge naming c does not make it a provider.

    >>> from cachegraph.graph.store.example import example_graph
    >>> [np.flatnonzero(provider_mask(example_graph(), v)).tolist() for v in ("zlib-api", "c")]
    [[3, 4], []]
    """

    def compute() -> np.ndarray:
        store = G.store
        found = np.zeros(store.n, bool)
        for provision in table.providers(virtual):
            ranks = np.asarray(store.ranks("package", provision.package), np.int64)
            if not len(ranks):
                continue
            if (
                versions is not None
                and provision.versions is not None
                and not (versions.intersects(provision.versions))
            ):
                continue
            if provision.when:
                ranks = ranks[_when_test(G, provision.when)(ranks)]
            found[ranks] = True
        if versions is None:  # an edge says it provides the virtual, at some version
            children = store.deps[1][recorded_virtual(G, virtual)]
            listed = [store.code("package", p.package) for p in table.providers(virtual)]
            listed = np.array([c for c in listed if c is not None], np.int64)
            found[children[~np.isin(store.codes["package"][children], listed)]] = True
        return found

    return G.kept(("providers", virtual, str(versions)), compute)


def _when_test(G: CacheGraph, when: str) -> Test:
    """A test of a ``provides(..., when=...)`` condition on the provider's own node (its
    ``%`` and ``^`` parts are not asked); always true for one that does not parse."""
    try:
        node = parse(when).root
    except BadArgument:
        return lambda r: np.ones(len(r), bool)
    return node_test(G, Node(**{**vars(node), "direct": [], "name": None}))


def virtual_providers(G: CacheGraph, virtual: str) -> np.ndarray:
    """The ranks, in order, of the specs providing ``virtual``.

    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> virtual_providers(G, "zlib-api").tolist(), virtual_providers(G, "x")
    ([3, 4], array([], dtype=int64))
    """
    if not is_virtual(G, virtual):
        return np.zeros(0, np.int64)
    return np.flatnonzero(provider_mask(G, virtual)).astype(np.int64)


# -- what narrows the candidates --------------------------------------------------------


def _keys(G: CacheGraph, node: Node) -> list[IndexKey]:
    keys: list[IndexKey] = []
    if node.name is not None and is_virtual(G, node.name):
        return keys
    if node.name is not None:
        keys.append(("package", node.name, None))
    keys += [(kind, value, None) for kind in ("os", "platform")
             if (value := getattr(node, kind)) is not None]  # fmt: skip
    for v in node.variants:
        if v.values in (("true",), ("false",)) and not v.exact:
            keys.append(("variant", ("+" if v.values == ("true",) else "~") + v.name, None))
    return keys


def _hash_candidates(G: CacheGraph, prefix: str) -> Candidates:
    start, end = G.store.prefixed(prefix)
    return Candidates(end - start, lambda: np.sort(G.store.rank_of[start:end]))


def _target_candidates(G: CacheGraph, allowed: Iterable[str]) -> Candidates:
    lists = [r for t in allowed if len(r := G.store.ranks("target", t))]
    return Candidates(
        sum(map(len, lists)),
        lambda: (
            lists[0]
            if len(lists) == 1
            else np.sort(np.concatenate(lists or [np.zeros(0, np.int32)]))
        ),
    )


def _allowed_targets(node: Node) -> frozenset[str]:
    allowed: set[str] = set()
    for low, high in node.targets or ():
        with suppress(BadArgument):  # an end archspec does not know: unknown_names warns
            allowed |= {low} if low == high else archs.in_range(low, high)
    return frozenset(allowed)


# -- ^dependencies -----------------------------------------------------------------------


@dataclass(frozen=True)
class Holders:
    """The specs whose dependency DAG has a node satisfying some node constraint."""

    #: one boolean a rank
    mask: np.ndarray
    count: int

    def ranks(self) -> np.ndarray:
        """The holders' ranks, in spec order."""
        return np.flatnonzero(self.mask)

    def test(self, ranks: np.ndarray) -> np.ndarray:
        return self.mask[ranks]


def holding(G: CacheGraph, node: Node) -> Holders:
    """The specs having a dependency that satisfies ``node``, as ``Spec._satisfies`` looks
    for ``^dep``: among the link and run dependencies, transitively
    (``traverse_edges(deptype=("link", "run"))``), and the spec's own direct build
    dependencies -- not what a build dependency was itself built with.

    The edges to a node satisfying it are found first (for a virtual such as ``mpi``, the
    edges providing it), then their parents, and every spec above those through link and
    run edges. Worked out for each request, not kept: a few milliseconds, and a mask of
    every spec per constraint would fill the memory of a server asked many.

    >>> from cachegraph.graph.store.example import example_graph
    >>> from cachegraph.graph.spack.constraints import parse
    >>> holding(example_graph(), parse("^zlib@1.3").transitive[0]).ranks().tolist()
    [2]
    """
    store = G.store
    if not store.edge_count:
        return Holders(np.zeros(store.n, bool), 0)
    edges = _edges_to(G, node)
    parents = edge_parents(G)[edges]
    types = store.dep_types[edges]
    starts = distinct(parents[(types & store.deptype_mask(("link", "run"))) > 0])
    indptr, indices = store.linked_dependents
    found = walks.reached_far(indptr, indices, store.up_row[starts], levelled=store.up_levelled)
    mask = store.ranked(found)
    mask[starts] = True
    mask[parents[(types & store.deptype_mask(("build",))) > 0]] = True
    return Holders(mask, int(np.count_nonzero(mask)))


def _edges_to(G: CacheGraph, node: Node, direct: bool = False) -> np.ndarray:
    """The edges (positions in ``deps``) whose child satisfies ``node`` and which provide the
    virtuals the node asks (each of ``^[virtuals=...]``; any of ``%c,cxx=``, as
    ``edges_to_dependencies``). A virtual name is an edge providing it, to a provider."""
    store = G.store
    children = store.deps[1]
    if node.name is not None and is_virtual(G, node.name):
        edges = np.flatnonzero(recorded_virtual(G, node.name))
        return edges[provider_mask(G, node.name, node.versions)[children[edges]]]
    if node.name is None:
        ranks = np.arange(store.n, dtype=np.int64)
        if node.hash is not None:
            ranks = np.asarray(_hash_candidates(G, node.hash).ranks(), np.int64)
    else:
        ranks = np.asarray(store.ranks("package", node.name), np.int64)
    if len(ranks):
        ranks = ranks[node_test(G, node)(ranks)]
    # the satisfying nodes' edges from their dependents, as positions in deps
    positions, _ = walks.neighbours(*store.rdeps, store.dependent_rows(ranks))
    edges = np.sort(store.rdep_edge[positions])
    if node.virtuals:
        provided = [recorded_virtual(G, v)[edges] for v in node.virtuals]
        reduce = np.logical_or if direct else np.logical_and
        edges = edges[reduce.reduce(provided)]
    return edges


# -- unknown names match nothing, and the answer says so ------------------------------------


def _nodes(constraint: Constraint) -> Iterable[Node]:
    for node in (constraint.root, *constraint.transitive):
        yield node
        yield from node.direct


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """The nearest of ``known`` to ``value``, as a hint; a few known ones when none is near.

    >>> did_you_mean("ubuntu2204", ["ubuntu22.04", "rhel8"]), did_you_mean("x", ["a", "b"])
    (' (did you mean ubuntu22.04?)', ' (known: a, b)')
    """
    known = sorted(set(known))
    close = difflib.get_close_matches(value, known, n=3)
    if close:
        return f" (did you mean {', '.join(close)}?)"
    if not known:
        return " (the loaded data has none)"
    return f" (known: {', '.join(known[:5])}{'...' if len(known) > 5 else ''})"


def unknown_value(G: CacheGraph, kind: str, value: str, what: str | None = None) -> str | None:
    """A warning when no loaded spec has ``value`` as its ``kind`` (an os, tag, stack...).

    >>> from cachegraph.graph.store.example import example_graph
    >>> unknown_value(example_graph(), "os", "ubuntu22.04") is None
    True
    >>> unknown_value(example_graph(), "platform", "linx")
    "no loaded spec has the platform 'linx', so nothing matches it (did you mean linux?)"
    """
    if len(G.store.ranks(kind, value)):
        return None
    return (f"no loaded spec has {what or 'the ' + kind} {value!r}, so nothing matches it"
            f"{did_you_mean(value, G.store.names(kind))}")  # fmt: skip


def unknown_names(G: CacheGraph, node: Node) -> list[str]:
    """What in ``node`` no loaded spec has: each a warning naming the nearest known."""
    found = []
    store = G.store
    if node.name is not None and not is_virtual(G, node.name):
        compilers = {compiler_parts(c)[0] for c in store.names("compiler")}
        if not len(store.ranks("package", node.name)) and node.name not in compilers:
            if node.alias in compilers:
                recorded = sorted(
                    c for c in store.names("compiler") if compiler_parts(c)[0] == node.alias
                )
                found.append(
                    f"Spack 1.x reads %{node.alias} as {node.name}, which no loaded spec is or "
                    f"records; as in Spack 1.1, specs older than Spack 1.0, which record "
                    f"{node.alias!r}, do not satisfy it (the compiler filter finds them by "
                    f"the compiler they record: {', '.join(recorded[:5])}"
                    f"{'...' if len(recorded) > 5 else ''})"
                )
            else:
                what = f"a package (Spack 1.x reads %{node.alias} as {node.name})" if (
                    node.alias) else "a package"  # fmt: skip
                found.append(unknown_value(G, "package", node.name, what))
    for virtual in node.virtuals:
        if virtual not in table.names() and store.code("virtual", virtual) is None:
            found.append(f"no package provides a virtual {virtual!r}, so nothing matches it"
                         f"{did_you_mean(virtual, table.names())}")  # fmt: skip
    known = variant_names(G)
    for variant in node.variants:
        if variant.name not in known:
            found.append(f"no loaded spec has a variant {variant.name!r}, so nothing matches "
                         f"it{did_you_mean(variant.name, known)}")  # fmt: skip
    for low, high in node.targets or ():
        for end in dict.fromkeys((low, high)):
            if end is not None and not archs.known(end) and not len(store.ranks("target", end)):
                found.append(
                    f"neither archspec nor the loaded data knows a target {end!r}, "
                    f"so nothing matches it{did_you_mean(end, archs.names(store.names('target')))}"
                )
    for kind in ("os", "platform"):
        if (value := getattr(node, kind)) is not None:
            found.append(unknown_value(G, kind, value))
    return [f for f in found if f is not None]


def variant_names(G: CacheGraph) -> frozenset[str]:
    """The names of every variant (and compiler flag) some loaded spec records.

    >>> from cachegraph.graph.store.example import example_graph
    >>> sorted(variant_names(example_graph()))
    ['build_system', 'mpi', 'pic']
    """

    def compute() -> frozenset[str]:
        recorded = G.store.names("variant")
        return frozenset(chain.from_iterable(settings((v,)) for v in recorded))

    return G.memoized("variant names", compute)
