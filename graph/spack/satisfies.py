"""Which specs satisfy a Spack constraint, or run on a host: what ``select_specs`` needs.

A ``Requirement`` is a constraint turned into what selecting specs uses:
index keys every match has (its package, os, boolean variants), candidate
rank lists (a hash prefix's range, a target range, the specs whose DAG holds a
``^`` node), a test of each candidate, and warnings for the answer. The
cheapest candidate list drives the walk; the test checks the rest.
"""

from __future__ import annotations

import difflib
import functools
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from . import deadline
from . import targets as archs
from .constraints import Constraint, Node, Variant, parse
from .dag import dependents_csr, reached_mask
from .errors import BadArgument
from .model import CacheGraph, IndexKey, SpecRecord
from .names import compiler_parts

Test = Callable[[SpecRecord], bool]

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
    """Sorted ranks among which every match is, and how many, before building them."""

    count: int
    ranks: Callable[[], Sequence[int]]


@dataclass
class Requirement:
    keys: list[IndexKey] = field(default_factory=list)
    candidates: list[Candidates] = field(default_factory=list)
    tests: list[Test] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def requirement(cg: CacheGraph, text: str) -> Requirement:
    """What a spec satisfying ``text`` must be; BadArgument for a bad or unknown part."""
    constraint = parse(text)
    for node in _nodes(constraint):
        check_known(cg, node)
    root = constraint.root
    found = Requirement(keys=_keys(root), tests=[node_test(cg, root)])
    if root.hash is not None:
        found.candidates.append(_hash_candidates(cg, root.hash))
    if root.targets is not None:
        found.candidates.append(_target_candidates(cg, _allowed_targets(root)))
    if constraint.transitive and not cg.deps:
        found.warnings.append(NO_DEPENDENCIES.format(text=text))
    for node in constraint.transitive:
        holders = holding(cg, node)
        found.candidates.append(Candidates(holders.count, holders.ranks))
        found.tests.append(lambda s, mask=holders.mask, rank=cg.rank: mask[rank[s.hash]])
    return found


def runs_on(cg: CacheGraph, host: Host) -> Requirement:
    """Specs a machine can run: built for its target or one the target descends from."""
    allowed = archs.ancestors(host.target)
    return Requirement(
        keys=_keys(Node(os=host.os, platform=host.platform)),
        candidates=[_target_candidates(cg, allowed)],
        tests=[lambda s: s.target in allowed],
    )


def satisfies(cg: CacheGraph, spec: SpecRecord, text: str) -> bool:
    """Whether one spec satisfies ``text``: the whole rule, spec by spec (for checks and tests).

    >>> from cachegraph.graph.model import CacheGraph
    >>> zlib = SpecRecord(hash="a" * 32, package="zlib", version="1.3.1", versions=("1.3.1",),
    ...     compiler="gcc@11.4.0", os="ubuntu22.04", platform="linux", target="zen2",
    ...     variants=("+pic", "build_system=makefile"))
    >>> cg = CacheGraph.of([zlib], {})
    >>> [satisfies(cg, cg.ordered[0], t) for t in ("zlib@1.3", "zlib@1.2", "+pic %gcc@11:",
    ...     "target=x86_64_v3:", "target=:x86_64_v3", "build_system=*", "~pic")]
    [True, False, True, True, False, True, False]
    """
    # The index keys of a requirement only narrow the candidates: its tests check everything.
    return all(test(spec) for test in requirement(cg, text).tests)


# -- one node --------------------------------------------------------------------


def node_test(cg: CacheGraph, node: Node) -> Test:
    """A test of one spec's own attributes and its ``%`` nodes."""
    checks: list[Test] = []
    if node.name is not None:
        checks.append(lambda s, n=node.name: s.package == n)
    if node.hash is not None:
        checks.append(lambda s, h=node.hash: s.hash.startswith(h))
    if node.versions is not None:
        checks.append(lambda s, v=node.versions: v.contains(s.version))
    for variant in node.variants:
        checks.append(_variant_test(variant))
    for name, flags in node.flags.items():
        checks.append(
            lambda s, n=name, f=frozenset(flags): f <= settings(s.variants).get(n, frozenset())
        )
    if node.targets is not None:
        allowed = _allowed_targets(node)
        checks.append(lambda s: s.target in allowed)
    for kind in ("os", "platform"):
        if (value := getattr(node, kind)) is not None:
            checks.append(lambda s, k=kind, v=value: getattr(s, k) == v)
    checks.extend(_direct_test(cg, direct) for direct in node.direct)
    return lambda s: all(check(s) for check in checks)


def _variant_test(variant: Variant) -> Test:
    if variant.values in (("true",), ("false",)) and not variant.exact:
        # Spack writes boolean variants as +name / ~name; so do pages and our mirror reader.
        recorded = ("+" if variant.values == ("true",) else "~") + variant.name
        return lambda s: recorded in s.variants
    name, wanted = variant.name, variant.values
    if wanted is None:
        return lambda s: name in settings(s.variants)
    values = frozenset(wanted)
    if variant.exact:
        return lambda s: settings(s.variants).get(name) == values
    return lambda s: values <= settings(s.variants).get(name, frozenset())


@functools.lru_cache(maxsize=1 << 16)  # specs share a few thousand variant tuples
def settings(variants: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Each recorded variant's values: ``cuda_arch=70,80`` and ``cflags="-O3 -g"`` alike.

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


def _direct_test(cg: CacheGraph, direct: Node) -> Test:
    """``%name@versions``: the spec's compiler is that, or a direct dependency satisfies it."""
    own = node_test(cg, direct)
    plain = direct == type(direct)(name=direct.name, versions=direct.versions)
    succ = cg.g.succ

    def test(s: SpecRecord) -> bool:
        if plain and s.compiler is not None:
            family, version = compiler_parts(s.compiler)
            if family == direct.name and (
                direct.versions is None or direct.versions.contains(version)
            ):
                return True
        for child, data in succ["spec", s.hash].items():
            if data["kind"] == "depends_on" and own(cg.ordered[cg.rank[child[1]]]):
                return True
        return False

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


def _hash_candidates(cg: CacheGraph, prefix: str) -> Candidates:
    start = bisect_left(cg.hashes, prefix)
    end = bisect_left(cg.hashes, prefix + "\x7f", start)
    return Candidates(end - start, lambda: sorted(cg.rank[h] for h in cg.hashes[start:end]))


def _target_candidates(cg: CacheGraph, allowed: Iterable[str]) -> Candidates:
    lists = [r for t in allowed if (r := cg.ranks("target", t))]
    return Candidates(
        sum(map(len, lists)),
        lambda: lists[0] if len(lists) == 1 else array("i", sorted(chain.from_iterable(lists))),
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

    #: one byte a rank: 1 for a holder (bytes index faster than a numpy array, one at a time)
    mask: bytes
    count: int

    def ranks(self) -> array:
        """The holders' ranks, in spec order."""
        found = np.flatnonzero(np.frombuffer(self.mask, np.uint8)).astype(np.int32)
        return array("i", found.tobytes())


def holding(cg: CacheGraph, node: Node) -> Holders:
    """The specs whose dependency DAG has a node satisfying ``node``.

    The nodes satisfying it come from the package index (or, for a virtual
    such as ``mpi``, from the providers its edges name), then every spec
    depending on one of them through any chain, by the dependents table. Worked
    out for each request, not kept: a few milliseconds, and a mask of every
    spec per constraint would fill the memory of a server asked many.
    """
    if not cg.deps:
        return Holders(bytes(len(cg.ordered)), 0)
    mask = reached_mask(*dependents_csr(cg), _satisfying_nodes(cg, node))
    return Holders(mask.view(np.uint8).tobytes(), int(np.count_nonzero(mask)))


def _satisfying_nodes(cg: CacheGraph, node: Node) -> list[int]:
    """The ranks of the specs satisfying ``node``; for a virtual name, of its providers."""
    if node.name is None:
        found: Iterable[int] = range(len(cg.ordered))
        if node.hash is not None:
            found = _hash_candidates(cg, node.hash).ranks()
    elif cg.ranks("package", node.name):
        found = cg.ranks("package", node.name)
    else:
        found = virtual_providers(cg).get(node.name, ())
        node = Node(**{**vars(node), "name": None})
    test = node_test(cg, node)
    return [r for r in found if test(cg.ordered[r])]


def virtual_providers(cg: CacheGraph) -> dict[str, list[int]]:
    """virtual (``mpi``, ``c``, ``blas``...) -> the ranks of the specs providing it somewhere."""

    def compute() -> dict[str, list[int]]:
        found: dict[str, set[int]] = {}
        for (_, child), (_, virtuals) in deadline.checked(cg.deps.items()):
            for virtual in virtuals:
                found.setdefault(virtual, set()).add(cg.rank[child])
        return {v: sorted(ranks) for v, ranks in found.items()}

    return cg.memoized("virtual providers", compute)


# -- unknown names are errors, not empty answers ------------------------------------------


def _nodes(constraint: Constraint) -> Iterable[Node]:
    for node in (constraint.root, *constraint.transitive):
        yield node
        yield from node.direct


def check_known(cg: CacheGraph, node: Node) -> None:
    known = variant_names(cg)
    for variant in node.variants:
        if variant.name not in known:
            close = difflib.get_close_matches(variant.name, known, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise BadArgument(f"no loaded spec has a variant {variant.name!r}{hint}")
    for low, high in node.targets or ():
        for end in (low, high):
            if end is not None and not archs.known(end) and not cg.ranks("target", end):
                raise BadArgument(
                    f"unknown target {end!r}: neither archspec nor the loaded data knows it"
                )
            if low != high and end is not None:
                archs.ancestors(end)  # a range needs archspec to know both ends


def variant_names(cg: CacheGraph) -> frozenset[str]:
    """The names of every variant (and compiler flag) some loaded spec records."""

    def compute() -> frozenset[str]:
        recorded = (value for kind, value, tag in cg.index if kind == "variant" and tag is None)
        return frozenset(chain.from_iterable(settings((v,)) for v in recorded))

    return cg.memoized("variant names", compute)
