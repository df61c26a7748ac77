"""The graph: specs and what they relate to, plus the indices queries run on.

Nodes are ``(kind, name)`` tuples -- ``("spec", hash)``, ``("package", name)``,
``("stack", name)``, ``("compiler", name)``, ``("target", name)``, ``("tag", name)``
-- and every edge carries its ``kind``:

- spec -> package ``of``; spec -> compiler ``built_with``; spec -> target ``for``;
- spec -> tag ``listed_in``; spec -> stack ``in`` with ``tags``, the tags in
  which the stack holds the spec;
- spec -> spec ``depends_on`` with ``deptypes`` (build, link, run, test).

The data never changes after it is built, so the indices are built once, and
answers that are costly to compute are memoized on the graph.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from sys import intern
from typing import Any

import networkx as nx

from .errors import BadRecord
from .names import NO_COMPILER, version_key

EMPTY: frozenset[str] = frozenset()


@dataclass(slots=True, eq=False)
class SpecRecord:
    """One spec, however many pages and tags list it."""

    hash: str
    package: str
    version: str
    versions: tuple[str, ...]
    compiler: str | None
    os: str
    platform: str
    target: str
    variants: tuple[str, ...]
    #: tag -> the stacks that hold this spec in that tag; a key for every tag listing it.
    stacks: dict[str, frozenset[str]] = field(default_factory=dict)
    #: the stacks that hold it in any tag
    all_stacks: frozenset[str] = EMPTY
    #: Where the record came from, for reports ("path" or "path#node").
    source: str = ""
    #: False for a spec known only from a spec file or index node.
    from_page: bool = True

    @property
    def compiler_key(self) -> str:
        return self.compiler or NO_COMPILER

    def stacks_in(self, tag: str | None) -> frozenset[str]:
        return self.all_stacks if tag is None else self.stacks.get(tag, EMPTY)


def sort_key(spec: SpecRecord) -> tuple:
    """Contract order of specs: package name, then version, then hash."""
    return (spec.package, version_key(spec.version), spec.hash)


# Index keys: (kind, value, tag). ``tag`` is None for "every tag"; only stack
# membership differs by tag -- the other attributes are the spec's own.
IndexKey = tuple[str, str, str | None]


class CacheGraph:
    """The loaded data: a NetworkX graph and the indices derived from it."""

    def __init__(self, g: nx.DiGraph) -> None:
        self.g = g
        specs = [data["record"] for node, data in g.nodes(data=True) if node[0] == "spec"]
        specs.sort(key=sort_key)
        #: every spec in contract order; a spec's rank is its position here
        self.ordered: list[SpecRecord] = specs
        self.rank: dict[str, int] = {s.hash: i for i, s in enumerate(specs)}
        #: hashes in string order, for prefix lookups
        self.hashes: list[str] = sorted(self.rank)
        self.index: dict[IndexKey, array] = _build_index(specs)
        self.memo: dict[Any, Any] = {}

    def spec(self, hash: str) -> SpecRecord | None:
        rank = self.rank.get(hash)
        return None if rank is None else self.ordered[rank]

    def ranks(self, kind: str, value: str, tag: str | None = None) -> array:
        """Sorted ranks of the specs with this attribute (empty when none)."""
        return self.index.get((kind, value, tag), _NO_RANKS)

    def names(self, kind: str) -> list[str]:
        """Every name of one node kind, sorted."""
        return self.memoized(
            ("nodes", kind), lambda: sorted(name for k, name in self.g.nodes if k == kind)
        )

    def memoized(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per graph: the data never changes after loading."""
        try:
            return self.memo[key]
        except KeyError:
            value = self.memo[key] = compute()
            return value

    def __repr__(self) -> str:
        return f"<CacheGraph {len(self.ordered)} specs, {len(self.names('tag'))} tags>"


_NO_RANKS = array("i")


def _build_index(specs: list[SpecRecord]) -> dict[IndexKey, array]:
    index: dict[IndexKey, array] = {}
    get = index.get
    # Ranks are appended in increasing order, so every index comes out sorted.
    for rank, s in enumerate(specs):
        keys = [
            ("package", s.package, None),
            ("version", s.version, None),
            ("compiler", s.compiler_key, None),
            ("os", s.os, None),
            ("platform", s.platform, None),
            ("target", s.target, None),
        ]
        keys += [("variant", v, None) for v in s.variants]
        for tag, stacks in s.stacks.items():
            keys.append(("tag", tag, None))
            keys += [("stack", stack, tag) for stack in stacks]
        keys += [("stack", stack, None) for stack in s.all_stacks]
        for key in keys:
            ranks = get(key)
            if ranks is None:
                ranks = index[key] = array("i")
            ranks.append(rank)
    return index


class GraphBuilder:
    """Collects records, then builds the graph once; says what it could not take.

    Records stay compact while loading (a spec listed again only updates its
    stack sets); the NetworkX graph is built in one pass at the end.
    """

    def __init__(self) -> None:
        self.records: dict[str, SpecRecord] = {}
        self.deps: dict[tuple[str, str], frozenset[str]] = {}
        self._stack_sets: dict[frozenset[str], frozenset[str]] = {}

    @property
    def spec_count(self) -> int:
        return len(self.records)

    def spec(self, hash: str) -> SpecRecord | None:
        return self.records.get(hash)

    def add_listing(self, record: SpecRecord, tag: str, stacks: Iterable[str]) -> list[str]:
        """Add a spec as a page lists it in ``tag``; return warnings about it.

        A hash listed again (another tag, another page) adds its stack
        membership; one already known under another package raises BadRecord.
        """
        known = self.records.get(record.hash)
        if known is not None and known.package != record.package:
            raise BadRecord(
                f"hash {record.hash} is listed under package {record.package!r} "
                f"but already under {known.package!r} ({known.source}); record skipped"
            )
        problems = []
        if known is None or not known.from_page:
            # New, or known so far only from a spec file: the page's record is the one to show.
            if known is not None:
                record.stacks, record.all_stacks = known.stacks, known.all_stacks
            self.records[record.hash] = record = self._intern(record)
        else:
            problems = _differences(known, record)
            record = known
        merged = self._shared(record.stacks.get(tag, EMPTY) | frozenset(stacks))
        record.stacks[intern(tag)] = merged
        record.all_stacks = self._shared(record.all_stacks | merged)
        return problems

    def add_node_spec(self, record: SpecRecord) -> SpecRecord:
        """Add a spec from a spec file or index node, unless a page or node gave it already."""
        known = self.records.get(record.hash)
        if known is not None:
            return known
        record.from_page = False
        self.records[record.hash] = record = self._intern(record)
        return record

    def add_dependency(self, parent: str, child: str, deptypes: Iterable[str]) -> None:
        key = (parent, child)
        self.deps[key] = self.deps.get(key, EMPTY) | frozenset(deptypes)

    def build(self) -> CacheGraph:
        return CacheGraph(_graph_of(self.records.values(), self.deps))

    def _intern(self, r: SpecRecord) -> SpecRecord:
        r.package, r.version, r.os = intern(r.package), intern(r.version), intern(r.os)
        r.platform, r.target = intern(r.platform), intern(r.target)
        r.compiler = intern(r.compiler) if r.compiler else None
        r.variants = tuple(intern(v) for v in r.variants)
        return r

    def _shared(self, stacks: frozenset[str]) -> frozenset[str]:
        # Specs share a few dozen stack sets; one object each keeps a large load small.
        return self._stack_sets.setdefault(stacks, stacks)


def _graph_of(
    records: Iterable[SpecRecord], deps: dict[tuple[str, str], frozenset[str]]
) -> nx.DiGraph:
    """The graph of these records, its edges sharing one attribute dict per distinct value.

    NetworkX gives every edge a dict of its own; with several edges a spec,
    that dominates a large load's time and memory. The data never changes
    after loading, so edges of the same kind (and tags, deptypes) share one.
    """
    g = nx.DiGraph()
    of, built_with, for_, listed_in = (
        {"kind": k} for k in ("of", "built_with", "for", "listed_in")
    )
    shared: dict[tuple[str, frozenset[str]], dict] = {}

    def data(kind: str, key: str, values: frozenset[str]) -> dict:
        found = shared.get((kind, values))
        if found is None:
            found = shared[kind, values] = {"kind": kind, key: values}
        return found

    edges: list[tuple[tuple, tuple, dict]] = []
    add = edges.append
    for r in records:
        node = ("spec", r.hash)
        g.add_node(node, record=r)
        add((node, ("package", r.package), of))
        add((node, ("target", r.target), for_))
        if r.compiler:
            add((node, ("compiler", r.compiler), built_with))
        tags_of_stack: dict[str, set[str]] = {}
        for tag, stacks in r.stacks.items():
            add((node, ("tag", tag), listed_in))
            for stack in stacks:
                tags_of_stack.setdefault(stack, set()).add(tag)
        for stack, tags in tags_of_stack.items():
            add((node, ("stack", stack), data("in", "tags", frozenset(tags))))
    for (parent, child), types in deps.items():
        add((("spec", parent), ("spec", child), data("depends_on", "deptypes", types)))
    g.add_nodes_from({v for _, v, _ in edges} - g._node.keys())
    succ, pred = g._succ, g._pred
    for u, v, d in edges:
        succ[u][v] = d
        pred[v][u] = d
    return g


_COMPARED = ("version", "compiler", "os", "platform", "target", "variants")


def _differences(known: SpecRecord, new: SpecRecord) -> list[str]:
    return [
        f"hash {known.hash}: {name} is {getattr(new, name)!r} here "
        f"but {getattr(known, name)!r} in {known.source}; keeping the first"
        for name in _COMPARED
        if getattr(known, name) != getattr(new, name)
    ]
