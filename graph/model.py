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

    def add(key: IndexKey, rank: int) -> None:
        ranks = index.get(key)
        if ranks is None:
            ranks = index[key] = array("i")
        ranks.append(rank)

    # Ranks are appended in increasing order, so every index comes out sorted.
    for rank, s in enumerate(specs):
        add(("package", s.package, None), rank)
        add(("version", s.version, None), rank)
        add(("compiler", s.compiler_key, None), rank)
        add(("os", s.os, None), rank)
        add(("platform", s.platform, None), rank)
        add(("target", s.target, None), rank)
        for variant in s.variants:
            add(("variant", variant, None), rank)
        for tag, stacks in s.stacks.items():
            add(("tag", tag, None), rank)
            for stack in stacks:
                add(("stack", stack, tag), rank)
        for stack in s.all_stacks:
            add(("stack", stack, None), rank)
    return index


class GraphBuilder:
    """Collects records into a graph; says what it could not take."""

    def __init__(self) -> None:
        self.g = nx.DiGraph()
        self.spec_count = 0
        self._stack_sets: dict[frozenset[str], frozenset[str]] = {}

    def spec(self, hash: str) -> SpecRecord | None:
        data = self.g.nodes.get(("spec", hash))
        return None if data is None else data["record"]

    def add_listing(self, record: SpecRecord, tag: str, stacks: Iterable[str]) -> list[str]:
        """Add a spec as a page lists it in ``tag``; return warnings about it.

        A hash listed again (another tag, another page) adds its stack
        membership; one already known under another package raises BadRecord.
        """
        known = self.spec(record.hash)
        if known is not None and known.package != record.package:
            raise BadRecord(
                f"hash {record.hash} is listed under package {record.package!r} "
                f"but already under {known.package!r} ({known.source}); record skipped"
            )
        problems = []
        if known is None:
            record = self._intern(record)
            self._add_spec_node(record)
        elif not known.from_page:
            # Known so far only from a spec file: the page's record is the one to show.
            record = self._intern(record)
            record.stacks, record.all_stacks = known.stacks, known.all_stacks
            self._unlink_attributes(record.hash)
            self.g.nodes[("spec", record.hash)]["record"] = record
            self._link_attributes(record)
        else:
            problems = _differences(known, record)
            record = known
        self._list_in(record, tag, stacks)
        return problems

    def add_node_spec(self, record: SpecRecord) -> SpecRecord:
        """Add a spec from a spec file or index node, unless a page or node gave it already."""
        known = self.spec(record.hash)
        if known is not None:
            return known
        record = self._intern(record)
        record.from_page = False
        self._add_spec_node(record)
        return record

    def add_dependency(self, parent: str, child: str, deptypes: Iterable[str]) -> None:
        u, v = ("spec", parent), ("spec", child)
        data = self.g.get_edge_data(u, v)
        types = frozenset(deptypes) | (data["deptypes"] if data else EMPTY)
        self.g.add_edge(u, v, kind="depends_on", deptypes=types)

    def build(self) -> CacheGraph:
        return CacheGraph(self.g)

    def _intern(self, r: SpecRecord) -> SpecRecord:
        r.package, r.version, r.os = intern(r.package), intern(r.version), intern(r.os)
        r.platform, r.target = intern(r.platform), intern(r.target)
        r.compiler = intern(r.compiler) if r.compiler else None
        r.variants = tuple(intern(v) for v in r.variants)
        return r

    def _add_spec_node(self, r: SpecRecord) -> None:
        self.g.add_node(("spec", r.hash), record=r)
        self.spec_count += 1
        self._link_attributes(r)

    def _link_attributes(self, r: SpecRecord) -> None:
        node = ("spec", r.hash)
        self.g.add_edge(node, ("package", r.package), kind="of")
        self.g.add_edge(node, ("target", r.target), kind="for")
        if r.compiler:
            self.g.add_edge(node, ("compiler", r.compiler), kind="built_with")

    def _unlink_attributes(self, hash: str) -> None:
        node = ("spec", hash)
        kinds = {"of", "for", "built_with"}
        stale = [v for _, v, kind in self.g.out_edges(node, data="kind") if kind in kinds]
        self.g.remove_edges_from((node, v) for v in stale)

    def _list_in(self, r: SpecRecord, tag: str, stacks: Iterable[str]) -> None:
        node = ("spec", r.hash)
        merged = self._shared(r.stacks.get(tag, EMPTY) | frozenset(stacks))
        r.stacks[intern(tag)] = merged
        r.all_stacks = self._shared(r.all_stacks | merged)
        self.g.add_edge(node, ("tag", tag), kind="listed_in")
        for stack in merged:
            edge = self.g.get_edge_data(node, ("stack", stack))
            tags = (edge["tags"] if edge else EMPTY) | {tag}
            self.g.add_edge(node, ("stack", stack), kind="in", tags=tags)

    def _shared(self, stacks: frozenset[str]) -> frozenset[str]:
        # Specs share a few dozen stack sets; one object each keeps a large load small.
        return self._stack_sets.setdefault(stacks, stacks)


_COMPARED = ("version", "compiler", "os", "platform", "target", "variants")


def _differences(known: SpecRecord, new: SpecRecord) -> list[str]:
    return [
        f"hash {known.hash}: {name} is {getattr(new, name)!r} here "
        f"but {getattr(known, name)!r} in {known.source}; keeping the first"
        for name in _COMPARED
        if getattr(known, name) != getattr(new, name)
    ]
