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
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from ..errors import BadArgument
from ..store import walks
from ..store.records import SpecRecord
from ..store.tables import distinct
from ..store.view import CacheGraph
from . import targets as archs
from .constraints import Constraint, Node, Variant, parse
from .names import NO_COMPILER, compiler_parts

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
    """What a spec satisfying ``text`` must be; BadArgument for a bad or unknown part.

    >>> from cachegraph.graph.store.example import example_graph
    >>> found = requirement(example_graph(), "zlib@1.3: ~pic")
    >>> found.keys
    [('package', 'zlib', None), ('variant', '~pic', None)]
    """
    constraint = parse(text)
    for node in _nodes(constraint):
        check_known(G, node)
    root = constraint.root
    found = Requirement(keys=_keys(root), tests=[node_test(G, root)])
    if root.hash is not None:
        found.candidates.append(_hash_candidates(G, root.hash))
    if root.targets is not None:
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
    allowed = archs.ancestors(host.target)
    return Requirement(
        keys=_keys(Node(os=host.os, platform=host.platform)),
        candidates=[_target_candidates(G, allowed)],
        tests=[_table_test(G, "target", lambda t: t in allowed)],
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
    if node.name is not None:
        checks.append(_equals(G, "package", node.name))
    if node.hash is not None:
        start, end = store.prefixed(node.hash)
        prefixed = np.sort(store.rank_of[start:end])
        checks.append(lambda r: np.isin(r, prefixed))
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
    """``%name@versions``: the spec's compiler is that, or a direct dependency satisfies it."""
    plain = direct == type(direct)(name=direct.name, versions=direct.versions)

    def compiler_ok(name: str) -> bool:
        if not plain or name == NO_COMPILER:
            return False
        family, version = compiler_parts(name)
        return family == direct.name and (
            direct.versions is None or direct.versions.contains(version)
        )

    by_compiler = _table_test(G, "compiler", compiler_ok)
    parents: list[np.ndarray] = []

    def with_such_child() -> np.ndarray:
        # The specs with a direct dependency satisfying the node: its package's specs
        # that do, one step up the dependents.
        if not parents:
            own = node_test(G, direct)
            ranks = G.store.ranks("package", direct.name) if direct.name else np.arange(G.store.n)
            children = ranks[own(np.asarray(ranks, np.int64))]
            parents.append(walks.reached(G.store, children, up=True, steps=1))
        return parents[0]

    def test(ranks: np.ndarray) -> np.ndarray:
        return by_compiler(ranks) | with_such_child()[ranks]

    return test


# -- what narrows the candidates --------------------------------------------------------


def _keys(node: Node) -> list[IndexKey]:
    keys: list[IndexKey] = []
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
    """The specs whose dependency DAG has a node satisfying ``node``.

    The nodes satisfying it come from the package index (or, for a virtual
    such as ``mpi``, from the providers its edges name), then every spec
    depending on one of them through any chain, by the dependents table. Worked
    out for each request, not kept: a few milliseconds, and a mask of every
    spec per constraint would fill the memory of a server asked many.

    >>> from cachegraph.graph.store.example import example_graph
    >>> from cachegraph.graph.spack.constraints import parse
    >>> holding(example_graph(), parse("^zlib@1.3").transitive[0]).ranks().tolist()
    [2]
    """
    store = G.store
    if not store.edge_count:
        return Holders(np.zeros(store.n, bool), 0)
    mask = walks.reached(store, _satisfying_nodes(G, node), up=True)
    return Holders(mask, int(np.count_nonzero(mask)))


def _satisfying_nodes(G: CacheGraph, node: Node) -> np.ndarray:
    """The ranks of the specs satisfying ``node``; for a virtual name, of its providers."""
    store = G.store
    if node.name is None:
        found = np.arange(store.n)
        if node.hash is not None:
            found = _hash_candidates(G, node.hash).ranks()
    elif len(store.ranks("package", node.name)):
        found = store.ranks("package", node.name)
    else:
        found = virtual_providers(G, node.name)
        node = Node(**{**vars(node), "name": None})
    found = np.asarray(found, np.int64)
    return found[node_test(G, node)(found)] if len(found) else found


def virtual_providers(G: CacheGraph, virtual: str) -> np.ndarray:
    """The ranks, in order, of the specs some edge names as providing ``virtual``.

    >>> from cachegraph.graph.store.example import example_graph
    >>> virtual_providers(example_graph(), "c").tolist(), virtual_providers(example_graph(), "x")
    ([0], array([], dtype=int64))
    """
    store = G.store
    code = store.code("virtual", virtual)
    if code is None:
        return np.zeros(0, np.int64)

    def compute() -> np.ndarray:
        provides = store.sets("virtuals").contains(np.array([code]))[store.dep_virtuals]
        return distinct(store.deps[1][provides]).astype(np.int64)

    return G.memoized(("providers", virtual), compute)


# -- unknown names are errors, not empty answers ------------------------------------------


def _nodes(constraint: Constraint) -> Iterable[Node]:
    for node in (constraint.root, *constraint.transitive):
        yield node
        yield from node.direct


def check_known(G: CacheGraph, node: Node) -> None:
    known = variant_names(G)
    for variant in node.variants:
        if variant.name not in known:
            close = difflib.get_close_matches(variant.name, known, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise BadArgument(f"no loaded spec has a variant {variant.name!r}{hint}")
    for low, high in node.targets or ():
        for end in (low, high):
            if end is not None and not archs.known(end) and not len(G.store.ranks("target", end)):
                raise BadArgument(
                    f"unknown target {end!r}: neither archspec nor the loaded data knows it"
                )
            if low != high and end is not None:
                archs.ancestors(end)  # a range needs archspec to know both ends


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
