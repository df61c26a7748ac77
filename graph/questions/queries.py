"""Questions asked of a CacheGraph, each a plain function named for its answer.

``tag=None`` means every loaded tag, each spec counted once; a stack holds a
spec without a tag when it holds it in any tag.
"""

from __future__ import annotations

import itertools
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from operator import attrgetter
from typing import TypeVar

import networkx as nx
import numpy as np

from . import deadline, satisfies
from .attributes import SINGLE
from .dag import all_dependents, dependents_csr
from .errors import AmbiguousHash, BadArgument, HashTooShort
from .model import CacheGraph, MirrorInfo, SpecRecord
from .names import NO_COMPILER, compiler_parts, normalize_compiler, version_key
from .satisfies import Host

T = TypeVar("T")

MIN_PREFIX = 7
DEPTYPES = ("build", "link", "run", "test")


# -- single specs ----------------------------------------------------------------


def spec_by_hash(cg: CacheGraph, text: str) -> SpecRecord | None:
    """The spec with this full hash or unique prefix (7+ characters); None if none.

    A leading ``/`` is accepted, as Spack's command line writes hashes.
    """
    prefix = text.strip().lstrip("/").lower()
    if len(prefix) < MIN_PREFIX:
        raise HashTooShort(prefix, MIN_PREFIX)
    exact = cg.spec(prefix)
    if exact is not None:
        return exact
    start = bisect_left(cg.hashes, prefix)
    matches = list(
        itertools.islice(
            itertools.takewhile(lambda h: h.startswith(prefix), cg.hashes[start : start + 11]), 11
        )
    )
    if len(matches) > 1:
        end = bisect_left(cg.hashes, prefix + "\x7f", start)
        raise AmbiguousHash(prefix, matches[:10], end - start - min(len(matches), 10))
    return cg.spec(matches[0]) if matches else None


# -- spec selections ---------------------------------------------------------------


#: The orderings a spec list may have: field -> the sort key of a spec.
ORDER_KEYS: dict[str, Callable[[SpecRecord], object]] = {
    "package": attrgetter("package"),
    "version": lambda s: version_key(s.version),
    "compiler": lambda s: (
        (compiler_parts(s.compiler)[0], version_key(compiler_parts(s.compiler)[1]))
        if s.compiler
        else ("", ())
    ),
    "target": attrgetter("target"),
    "os": attrgetter("os"),
    "size": attrgetter("size"),
    "hash": attrgetter("hash"),
}


@dataclass(frozen=True)
class SpecQuery:
    """What a spec must match; every field is optional, lists need all their items."""

    package: str | None = None
    version: str | None = None
    compiler: str | None = None
    os: str | None = None
    platform: str | None = None
    target: str | None = None
    stacks: tuple[str, ...] = ()
    exclude_stacks: tuple[str, ...] = ()
    tag: str | None = None
    variants: tuple[str, ...] = ()
    mirror: str | None = None
    #: a Spack constraint (``graph.constraints``)
    satisfies: str | None = None
    #: a machine whose binaries are wanted
    runs_on: Host | None = None
    #: (field of ORDER_KEYS, descending) pairs; empty for the contract's order
    order: tuple[tuple[str, bool], ...] = ()
    #: set when two constraints cannot both hold (e.g. two different packages)
    impossible: bool = False

    def narrowed(self, **fixed: str | None) -> SpecQuery:
        """This query with more single-valued constraints, e.g. the package of a Package."""
        changes: dict = {}
        for name, value in fixed.items():
            if value is None:
                continue
            mine = getattr(self, name)
            if name == "compiler":
                value, mine = _compiler_key(value), mine and _compiler_key(mine)
            if mine is not None and mine != value:
                changes["impossible"] = True
            changes[name] = value
        return replace(self, **changes)

    def with_stack(self, stack: str) -> SpecQuery:
        return replace(self, stacks=(*self.stacks, stack))


def _compiler_key(name: str) -> str:
    return normalize_compiler(name) or NO_COMPILER


@dataclass
class SpecSelection:
    """Specs matching a query, in order, counted and walked lazily.

    ``ranks`` is a sorted candidate list (one index); ``test`` checks the rest
    of the query. Walking stops as soon as a page is full. A ``positional``
    selection is a list of matches in another order, which a cursor finds by
    position instead of by rank.
    """

    cg: CacheGraph
    ranks: Sequence[int]
    test: Callable[[SpecRecord], bool] | None = None
    #: the query, when counts of it may be kept on the graph
    query: SpecQuery | None = None
    _count: int | None = field(default=None, repr=False)
    #: what the answer should tell the client (e.g. a question the data cannot answer)
    warnings: tuple[str, ...] = ()
    positional: bool = False

    def count(self) -> int:
        if self._count is None:
            if self.test is None:
                self._count = len(self.ranks)
            elif self.query is None:
                self._count = self._walked()
            else:
                self._count = self.cg.kept(self.query, self._walked)
        return self._count

    def _walked(self) -> int:
        return sum(1 for _ in self.after(None))

    def after(self, hash: str | None) -> Iterator[SpecRecord]:
        """The matching specs that come after the spec with this hash (all when None)."""
        start = 0
        if hash is not None:
            rank = self.cg.rank.get(hash)
            if rank is None:
                raise BadArgument(
                    f"the cursor names spec {hash[:40]}, which is not loaded "
                    "(the data may have been reloaded); start again without 'after'"
                )
            start = self._position(rank) + 1 if self.positional else bisect_right(self.ranks, rank)
        ordered, ranks, test = self.cg.ordered, self.ranks, self.test
        for block in range(start, len(ranks), deadline.EVERY):
            deadline.check()  # a page of a million specs, or a count of them, may take long
            for i in range(block, min(block + deadline.EVERY, len(ranks))):
                spec = ordered[ranks[i]]
                if test is None or test(spec):
                    yield spec

    def _position(self, rank: int) -> int:
        if self.query is None:  # a list made for one request (a search): no kept positions
            positions = _positions(self.ranks, len(self.cg.ordered))
        else:
            positions = self.cg.kept(
                ("positions", self.query), lambda: _positions(self.ranks, len(self.cg.ordered))
            )
        if positions[rank] < 0:
            raise BadArgument("the cursor names a spec that is not in this list; start again")
        return int(positions[rank])


def _positions(ranks: Sequence[int], total: int) -> np.ndarray:
    """Where each rank stands in ``ranks`` (-1 when absent): 4 bytes a spec, not a dict's 100.

    >>> _positions([4, 0, 2], 5).tolist()
    [1, -1, 2, -1, 0]
    """
    positions = np.full(total, -1, np.int32)
    positions[np.asarray(ranks, np.int64)] = np.arange(len(ranks), dtype=np.int32)
    return positions


def select_specs(cg: CacheGraph, q: SpecQuery) -> SpecSelection:
    """The specs matching ``q``, driven by its most selective index, in ``q``'s order."""
    selection = _matching(cg, replace(q, order=()))
    if not q.order or selection.count() == 0:
        return selection
    return cg.kept(("ordered", q), lambda: _ordered(cg, selection, q))


def _ordered(cg: CacheGraph, selection: SpecSelection, q: SpecQuery) -> SpecSelection:
    specs = list(selection.after(None))
    # Stable sorts from the last key to the first; ties stay in contract order.
    for name, descending in reversed(q.order):
        key = ORDER_KEYS[name]
        if name == "size":  # unknown sizes last, either way
            known = [s for s in specs if s.size is not None]
            known.sort(key=key, reverse=descending)
            specs = known + [s for s in specs if s.size is None]
        else:
            specs.sort(key=key, reverse=descending)
    ranks = array("i", [cg.rank[s.hash] for s in specs])
    return SpecSelection(cg, ranks, None, q, warnings=selection.warnings, positional=True)


def _matching(cg: CacheGraph, q: SpecQuery) -> SpecSelection:
    if q.impossible:
        return SpecSelection(cg, ())
    keys = [
        (kind, _compiler_key(value) if kind == "compiler" else value, None)
        for kind in SINGLE
        if (value := getattr(q, kind)) is not None
    ]
    keys += [("variant", v, None) for v in q.variants]
    if q.mirror is not None:
        keys.append(("mirror", q.mirror, None))
    keys += [("stack", s, q.tag) for s in q.stacks]
    if q.tag is not None:
        keys.append(("tag", q.tag, None))
    required = [
        satisfies.requirement(cg, q.satisfies) if q.satisfies is not None else None,
        satisfies.runs_on(cg, q.runs_on) if q.runs_on is not None else None,
    ]
    tests: list[Callable[[SpecRecord], bool]] = []
    candidates: list[satisfies.Candidates] = []
    warnings: list[str] = []
    for req in filter(None, required):
        # Its index keys may drive the walk; its tests already check what they say.
        candidates += [
            satisfies.Candidates(len(r := cg.ranks(*k)), lambda r=r: r) for k in req.keys
        ]
        tests += req.tests
        candidates += req.candidates
        warnings += req.warnings
    drivers = [(c, None) for c in candidates]
    drivers += [(satisfies.Candidates(len(r := cg.ranks(*k)), lambda r=r: r), k) for k in keys]
    if not drivers:
        return SpecSelection(
            cg, range(len(cg.ordered)), _test([], q, tests), q, warnings=tuple(warnings)
        )
    driver, driver_key = min(drivers, key=lambda d: d[0].count)
    rest = [k for k in keys if k != driver_key]
    selection = SpecSelection(
        cg, driver.ranks(), _test(rest, q, tests), q, warnings=tuple(warnings)
    )
    if q == SpecQuery(stacks=q.stacks, tag=q.tag) and len(set(q.stacks)) == 2:
        # Two stacks and nothing else: the count is a precomputed overlap.
        selection._count = _pair_counts(cg, q.tag)[tuple(sorted(set(q.stacks)))]
    return selection


def _test(
    keys: list, q: SpecQuery, extra: Sequence[Callable[[SpecRecord], bool]] = ()
) -> Callable[[SpecRecord], bool] | None:
    checks: list[Callable[[SpecRecord], bool]] = list(extra)
    for kind, value, tag in keys:
        if kind in SINGLE:
            attr = SINGLE[kind]
            checks.append(lambda s, a=attr, v=value: getattr(s, a) == v)
        elif kind == "variant":
            checks.append(lambda s, v=value: v in s.variants)
        elif kind == "stack":
            checks.append(lambda s, v=value, t=tag: v in s.stacks_in(t))
        elif kind == "tag":
            checks.append(lambda s, v=value: v in s.stacks)
        elif kind == "mirror":
            checks.append(lambda s, v=value: v in s.mirrors)
    if q.exclude_stacks:
        excluded = frozenset(q.exclude_stacks)
        checks.append(lambda s: excluded.isdisjoint(s.stacks_in(q.tag)))
    if not checks:
        return None
    if len(checks) == 1:
        return checks[0]
    return lambda s: all(check(s) for check in checks)


# -- names, counts and packages ------------------------------------------------------


def _whole(cg: CacheGraph, key: tuple, tag: str | None, compute: Callable[[], T]) -> T:
    """A whole-data answer, memoized for the loaded tags and None (all tags).

    Another tag is empty and cheap to answer; memoizing it would keep every
    name a client invents.
    """
    if tag is None or tag in cg.memoized("loaded tags", lambda: set(tag_names(cg))):
        return cg.memoized(key, compute)
    return compute()


def counts_in_tag(cg: CacheGraph, tag: str, kinds: Iterable[str]) -> dict[str, Counter]:
    """Spec counts per value of each index kind (``stack``: its stacks) within one tag.

    Each value's ranks that are in the tag are counted in C loops over the index,
    many times faster than counting the specs' attributes one by one.
    """
    in_tag = bytearray(len(cg.ordered))
    deque(map(in_tag.__setitem__, cg.ranks("tag", tag), repeat(1)), maxlen=0)
    counts: dict[str, Counter] = {kind: Counter() for kind in kinds}
    for (kind, value, scope), ranks in cg.index.items():
        if kind == "stack" and scope == tag and kind in counts:
            counts[kind][value] = len(ranks)
        elif (
            kind in counts
            and kind != "stack"
            and scope is None
            and (count := sum(map(in_tag.__getitem__, ranks)))
        ):
            counts[kind][value] = count
    return counts


def _scope_counts(cg: CacheGraph, tag: str) -> dict[str, Counter]:
    """Spec counts per value of each attribute, and per stack, within one tag."""
    return _whole(cg, ("scope", tag), tag, lambda: counts_in_tag(cg, tag, (*SINGLE, "stack")))


def _stack_sets(cg: CacheGraph, tag: str | None) -> Counter:
    """How many specs have each set of stacks (in one tag, or in any)."""
    sets: Counter = Counter()
    for layout, n in _layouts(cg):
        if tag is None:
            sets[frozenset().union(*layout.values())] += n
        elif tag in layout:
            sets[layout[tag]] += n
    return sets


def _layouts(cg: CacheGraph) -> list[tuple[Mapping[str, frozenset[str]], int]]:
    """Each stack layout (tag -> stacks) of the specs, and how many specs have it.

    Specs share a few thousand layouts: counting them once answers every tag.
    """

    def compute() -> list[tuple[Mapping[str, frozenset[str]], int]]:
        layouts = list(map(attrgetter("stacks"), cg.ordered))
        by_id = dict(zip(map(id, layouts), layouts, strict=True))
        return [(by_id[i], n) for i, n in Counter(map(id, layouts)).items()]

    return cg.memoized("layouts", compute)


def spec_count(cg: CacheGraph, kind: str, name: str, tag: str | None = None) -> int:
    """How many specs have this package, compiler, target, stack... (in one tag)."""
    if kind == "compiler":
        name = _compiler_key(name)
    if tag is None or kind == "stack":
        return len(cg.ranks(kind, name, tag))
    if kind == "tag":
        return len(cg.ranks("tag", name)) if name == tag else 0
    return _scope_counts(cg, tag)[kind][name]


def names_in_scope(cg: CacheGraph, kind: str, tag: str | None = None) -> list[str]:
    """Sorted names of the packages, stacks, compilers, targets... with a spec in scope.

    ``none`` is never a compiler name.
    """

    def compute() -> list[str]:
        if tag is None:
            names = {value for k, value, t in cg.index if k == kind and t is None}
        else:
            names = set(_scope_counts(cg, tag)[kind])
        if kind == "compiler":
            names.discard(NO_COMPILER)
        return sorted(names)

    return _whole(cg, ("names", kind, tag), tag, compute)


def tag_names(cg: CacheGraph) -> list[str]:
    return cg.names("tag")


@dataclass(frozen=True)
class Stats:
    package_count: int
    spec_count: int
    stack_count: int
    compiler_count: int
    target_count: int
    tag_count: int


def stats(cg: CacheGraph, tag: str | None = None) -> Stats:
    """Totals over everything loaded, or over one tag."""
    tags = tag_names(cg) if tag is None else [tag] if cg.ranks("tag", tag) else []
    return Stats(
        package_count=len(names_in_scope(cg, "package", tag)),
        spec_count=len(cg.ordered) if tag is None else len(cg.ranks("tag", tag)),
        stack_count=len(names_in_scope(cg, "stack", tag)),
        compiler_count=len(names_in_scope(cg, "compiler", tag)),
        target_count=len(names_in_scope(cg, "target", tag)),
        tag_count=len(tags),
    )


def packages_with(cg: CacheGraph, kind: str, name: str, tag: str | None = None) -> list[str]:
    """Sorted names of the packages with at least one spec of this stack, compiler, target..."""
    if kind == "compiler":
        name = _compiler_key(name)

    def compute() -> list[str]:
        query = (
            SpecQuery(tag=tag).with_stack(name)
            if kind == "stack"
            else (SpecQuery(tag=tag).narrowed(**{kind: name}))
        )
        # Specs come in package order, so distinct names come out sorted.
        return list(dict.fromkeys(s.package for s in select_specs(cg, query).after(None)))

    return cg.kept(("packages", kind, name, tag), compute)


@dataclass(frozen=True)
class PackageQuery:
    name_contains: str | None = None
    stack: str | None = None
    compiler: str | None = None
    target: str | None = None
    tag: str | None = None


def package_names(cg: CacheGraph, q: PackageQuery) -> list[str]:
    """Sorted names of the packages matching every part of ``q``."""
    sets = [
        set(packages_with(cg, kind, value, q.tag))
        for kind in ("stack", "compiler", "target")
        if (value := getattr(q, kind)) is not None
    ]
    names = names_in_scope(cg, "package", q.tag)
    if q.name_contains:
        needle = q.name_contains.lower()
        names = [n for n in names if needle in n.lower()]
    return [n for n in names if all(n in s for s in sets)]


def package_exists(cg: CacheGraph, name: str) -> bool:
    return bool(cg.ranks("package", name))


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


def package_facts(cg: CacheGraph, name: str, tag: str | None = None) -> PackageFacts:
    def compute() -> PackageFacts:
        specs = list(select_specs(cg, SpecQuery(package=name, tag=tag)).after(None))
        stacks = Counter(stack for s in specs for stack in s.stacks_in(tag))
        return PackageFacts(
            spec_count=len(specs),
            versions=sorted({s.version for s in specs}, key=version_key),
            compilers=sorted({s.compiler for s in specs if s.compiler}),
            targets=sorted({s.target for s in specs}),
            oss=sorted({s.os for s in specs}),
            platforms=sorted({s.platform for s in specs}),
            stack_counts=sorted(stacks.items()),
        )

    return cg.kept(("package", name, tag), compute)


def tags_of(cg: CacheGraph, kind: str, name: str) -> list[str]:
    """Sorted tags in which this package or stack has at least one spec."""
    if kind == "stack":
        return [t for t in tag_names(cg) if cg.ranks("stack", name, t)]

    def compute() -> list[str]:
        specs = select_specs(cg, SpecQuery().narrowed(**{kind: name})).after(None)
        return sorted({t for s in specs for t in s.stacks})

    return cg.kept(("tags", kind, name), compute)


# -- stack overlaps ------------------------------------------------------------------


@dataclass(frozen=True)
class Overlap:
    """Two stacks sharing specs; served as the GraphQL StackOverlap itself."""

    pair: tuple[str, str]  # ordered by name
    shared_spec_count: int
    jaccard: float


def _pair_counts(cg: CacheGraph, tag: str | None) -> Counter:
    def compute() -> Counter:
        # Specs share a few hundred stack sets: count the sets, then their pairs.
        pairs: Counter = Counter()
        for stacks, n in _stack_sets(cg, tag).items():
            for pair in itertools.combinations(sorted(stacks), 2):
                pairs[pair] += n
        return pairs

    return _whole(cg, ("pairs", tag), tag, compute)


def stack_overlaps(
    cg: CacheGraph, stacks: Sequence[str] | None = None, tag: str | None = None
) -> list[Overlap]:
    """Every pair among ``stacks`` (all when None) sharing a spec, largest first."""
    if stacks is None:
        return _whole(cg, ("overlaps", tag), tag, lambda: _overlaps(cg, None, tag))
    return _overlaps(cg, set(stacks), tag)


def _overlaps(cg: CacheGraph, wanted: set[str] | None, tag: str | None) -> list[Overlap]:
    found = []
    for (a, b), shared in _pair_counts(cg, tag).items():
        if wanted is None or (a in wanted and b in wanted):
            union = spec_count(cg, "stack", a, tag) + spec_count(cg, "stack", b, tag) - shared
            found.append(Overlap((a, b), shared, shared / union))
    found.sort(key=lambda o: (-o.shared_spec_count, o.pair))
    return found


def overlaps_of(cg: CacheGraph, stack: str, tag: str | None = None) -> list[Overlap]:
    """Every other stack sharing a spec with ``stack``, largest first."""
    return [o for o in stack_overlaps(cg, None, tag) if stack in o.pair]


# -- dependencies --------------------------------------------------------------------


def _check_deptype(deptype: str | None) -> None:
    if deptype is not None and deptype not in DEPTYPES:
        raise BadArgument(f"unknown deptype {deptype!r}; use one of {', '.join(DEPTYPES)}")


def _in_order(cg: CacheGraph, nodes: Iterable[tuple[str, str]]) -> list[SpecRecord]:
    ordered, rank = cg.ordered, cg.rank
    return [ordered[r] for r in sorted(rank[hash] for _, hash in nodes)]


def _children(cg: CacheGraph, deptype: str | None) -> Callable[[tuple[str, str]], Iterator]:
    _check_deptype(deptype)
    succ = cg.g.succ

    def children(node: tuple[str, str]) -> Iterator[tuple[str, str]]:
        for child, data in succ[node].items():
            if data["kind"] == "depends_on" and (deptype is None or deptype in data["deptypes"]):
                yield child

    return children


def _parents(cg: CacheGraph, deptype: str | None) -> Callable[[tuple[str, str]], Iterable]:
    # Only specs depend on a spec, so every in-edge of a spec node is a depends_on edge.
    _check_deptype(deptype)
    pred = cg.g.pred
    if deptype is None:
        return pred.__getitem__
    return lambda node: (p for p, data in pred[node].items() if deptype in data["deptypes"])


def dependency_edges(
    cg: CacheGraph, hash: str
) -> list[tuple[SpecRecord, frozenset[str], frozenset[str]]]:
    """(dependency, deptypes, virtuals) of each direct dependency, in contract order.

    >>> from cachegraph.graph.model import SpecRecord
    >>> def spec(h, name):
    ...     return SpecRecord(hash=h * 32, package=name, version="1", versions=("1",),
    ...         compiler=None, os="o", platform="p", target="t", variants=())
    >>> cg = CacheGraph.of([spec("a", "app"), spec("c", "gcc")],
    ...     {("a" * 32, "c" * 32): (frozenset({"build"}), frozenset({"c", "cxx"}))})
    >>> [(s.package, sorted(t), sorted(v)) for s, t, v in dependency_edges(cg, "a" * 32)]
    [('gcc', ['build'], ['c', 'cxx'])]
    """
    edges = [
        (cg.rank[child[1]], data["deptypes"], data["virtuals"])
        for child, data in cg.g.succ["spec", hash].items()
        if data["kind"] == "depends_on"
    ]
    return [(cg.ordered[rank], types, virtuals) for rank, types, virtuals in sorted(edges)]


def dependencies(
    cg: CacheGraph, hash: str, deptype: str | None = None, transitive: bool = False
) -> list[SpecRecord]:
    """The specs this spec depends on (of one deptype), in contract order.

    With ``transitive``, every node of its DAG but itself, reached through edges
    of that deptype. The walk follows ``depends_on`` edges of the graph.
    """
    return _in_order(cg, _reached(("spec", hash), _children(cg, deptype), transitive))


def dependents(
    cg: CacheGraph, hash: str, deptype: str | None = None, transitive: bool = False
) -> list[SpecRecord]:
    """The specs that depend on this spec (by one deptype), in contract order.

    With ``transitive``, through any chain of such edges.
    """
    if transitive and deptype is None:
        return list(map(cg.ordered.__getitem__, all_dependents(cg, cg.rank[hash]).tolist()))
    return _in_order(cg, _reached(("spec", hash), _parents(cg, deptype), transitive))


def dependency_count(
    cg: CacheGraph, hash: str, deptype: str | None = None, transitive: bool = False
) -> int:
    """How many specs ``dependencies`` gives, without ordering them."""
    return len(_reached(("spec", hash), _children(cg, deptype), transitive))


def dependent_count(
    cg: CacheGraph, hash: str, deptype: str | None = None, transitive: bool = False
) -> int:
    """How many specs ``dependents`` gives, without ordering them."""
    if transitive and deptype is None:
        return len(all_dependents(cg, cg.rank[hash]))
    return len(_reached(("spec", hash), _parents(cg, deptype), transitive))


def _reached(
    start: tuple[str, str],
    neighbors: Callable[[tuple[str, str]], Iterable],
    transitive: bool,
) -> list[tuple[str, str]] | set[tuple[str, str]]:
    """The neighbors of ``start``, or (transitive) every node reachable from it but itself.

    The walk goes a whole frontier at a time, each node's neighbors added to a set
    in C (``set.update``), not edge by edge as ``nx.descendants`` does: the
    dependents of a library every spec links are hundreds of thousands of edges.

    >>> succ = nx.DiGraph([("a", "b"), ("b", "c"), ("a", "c")]).succ.__getitem__
    >>> sorted(_reached("a", succ, True)), _reached("c", succ, True), _reached("a", succ, False)
    (['b', 'c'], set(), ['b', 'c'])
    """
    if not transitive:
        return list(neighbors(start))
    seen: set[tuple[str, str]] = set()
    frontier: Iterable[tuple[str, str]] = (start,)
    while frontier:
        deadline.check()
        found: set[tuple[str, str]] = set()
        for node in frontier:
            found.update(neighbors(node))
        frontier = found - seen
        seen |= frontier
    seen.discard(start)
    return seen


def package_dependencies(cg: CacheGraph, name: str) -> list[str]:
    """Sorted names of the packages that some spec of this package depends on."""
    specs = select_specs(cg, SpecQuery(package=name)).after(None)
    succ = cg.g.succ
    found = {child[1] for s in specs for child, data in succ["spec", s.hash].items()
             if data["kind"] == "depends_on"}  # fmt: skip
    return sorted({cg.spec(h).package for h in found} - {name})


def package_dependents(cg: CacheGraph, name: str) -> list[str]:
    """Sorted names of the packages with a spec that depends on a spec of this package."""
    specs = select_specs(cg, SpecQuery(package=name)).after(None)
    pred = cg.g.pred
    found = {parent[1] for s in specs for parent in pred["spec", s.hash]}
    return sorted({cg.spec(h).package for h in found} - {name})


# -- mirrors and sizes ------------------------------------------------------------------


def mirror_names(cg: CacheGraph, tag: str | None = None) -> list[str]:
    """Names of the loaded mirrors (of one tag), sorted."""
    return [name for name, m in cg.mirrors.items() if tag is None or m.tag == tag]


def mirrors_of(cg: CacheGraph, hash: str) -> list[MirrorInfo]:
    """The mirrors holding this spec, by name: the ends of its ``mirror`` edges."""
    g = cg.g
    return sorted(
        (g.nodes[m]["mirror"] for m, d in g.succ["spec", hash].items() if d["kind"] == "mirror"),
        key=attrgetter("name"),
    )


@dataclass(frozen=True)
class Holding:
    """How many specs something holds and the sum of their known sizes in bytes."""

    spec_count: int
    total_bytes: float


def mirror_holding(cg: CacheGraph, name: str) -> Holding:
    """The specs a mirror holds (its in-edges) and their bytes."""

    def compute() -> tuple[int, float]:  # a plain tuple: a snapshot keeps it
        specs = [cg.spec(h) for _, h in cg.g.pred["mirror", name]]
        return len(specs), float(sum(s.size for s in specs if s.size is not None))

    return Holding(*cg.memoized(("mirror holding", name), compute))


def stack_holding(cg: CacheGraph, stack: str, tag: str | None = None) -> Holding:
    """The specs a stack holds (in one tag) and their bytes: its ``stack`` in-edges."""

    def compute() -> Holding:
        pred = cg.g.pred.get(("stack", stack), {})
        specs = [cg.spec(n[1]) for n, d in pred.items() if n[0] == "spec"
                 and (tag is None or tag in d["tags"])]  # fmt: skip
        return Holding(len(specs), float(sum(s.size for s in specs if s.size is not None)))

    return cg.kept(("stack holding", stack, tag), compute)


def dependency_path(cg: CacheGraph, source: str, target: str) -> list[SpecRecord] | None:
    """A shortest chain of dependencies from one spec to another; None if there is none."""
    start, end = spec_by_hash(cg, source), spec_by_hash(cg, target)
    if start is None or end is None:
        return None
    # Edges from specs lead only to specs or to leaves (packages, stacks...), so
    # every path between two specs is a chain of depends_on edges.
    try:
        path = nx.shortest_path(cg.g, ("spec", start.hash), ("spec", end.hash))
    except nx.NetworkXNoPath:
        return None
    return [cg.ordered[cg.rank[hash]] for _, hash in path]


# -- at load -------------------------------------------------------------------------


_KEPT = ("pairs", "scope", "names", "mirror holding")


def precomputed(cg: CacheGraph) -> dict:
    """What ``precompute`` worked out, as plain dicts and lists (for a snapshot)."""
    found: dict = {}
    for key, value in cg.memo.items():
        if isinstance(key, tuple) and key[0] == "scope":
            found[key] = {kind: dict(counts) for kind, counts in value.items()}
        elif isinstance(key, tuple) and key[0] in _KEPT:
            found[key] = dict(value) if isinstance(value, Counter) else value
    return found


def restore_precomputed(cg: CacheGraph, found: dict) -> None:
    """Memoize what ``precomputed`` gave, so that ``precompute`` has nothing left to do."""
    for key, value in found.items():
        if key[0] == "scope":
            value = {kind: Counter(counts) for kind, counts in value.items()}
        elif key[0] == "pairs":
            value = Counter(value)
        cg.memo[key] = value


def precompute(cg: CacheGraph) -> None:
    """Work out the whole-data answers (overlaps, counts, names) before the first request asks.

    Each is memoized on the graph anyway; this moves their cost (a second or
    two at 1M specs) from the first unlucky request to the load.
    """
    for name in cg.mirrors:
        mirror_holding(cg, name)
    if cg.deps:
        dependents_csr(cg)
    for tag in (None, *tag_names(cg)):
        stack_overlaps(cg, None, tag)
        if tag is not None:
            _scope_counts(cg, tag)
        for kind in (*SINGLE, "stack"):
            names_in_scope(cg, kind, tag)
