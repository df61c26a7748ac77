"""The graph: specs and everything they relate to, plus the indices queries run on.

Nodes are ``(kind, name)`` tuples. Every relation is an edge, and each edge's
data says its ``kind``:

=================  ==========================  ======================================
edge               kind                        data besides ``kind``
=================  ==========================  ======================================
spec -> spec       ``depends_on``              ``deptypes``, ``virtuals`` (frozensets)
spec -> package    ``package``
spec -> compiler   ``compiler``                (no edge when the spec has none)
spec -> target     ``target``
spec -> os         ``os``
spec -> platform   ``platform``
spec -> stack      ``stack``                   ``tags``: the tags it holds the spec in
spec -> tag        ``tag``
spec -> mirror     ``mirror``
mirror -> tag      ``tag``
mirror -> stack    ``stack``                   ``tags``: the mirror's one tag
=================  ==========================  ======================================

Mirror nodes carry a ``mirror`` attribute (a ``MirrorInfo``); no other node has
attributes. A spec's record (a compact SpecRecord with interned strings) is
found by its hash (``CacheGraph.spec``); resolvers of relations walk the edges.

The graph never changes after it is built, so edges of equal data share one
attribute dict, nodes one empty attribute dict, and specs alike (same
attributes, stack layout and mirrors, no dependencies) one successor dict;
the dicts are built beforehand and handed to NetworkX through its documented
factory hooks (``CacheDiGraph``): a million specs cost their adjacency, not
ten million calls and copies of ``{"kind": "package"}``. The rank indices (specs in contract
order per attribute value) are caches of the same relations that make a
filtered, paged answer cost in proportion to the answer; answers that are
costly to compute are memoized on the graph.
"""

from __future__ import annotations

from array import array
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from itertools import compress, repeat
from operator import attrgetter, itemgetter, not_
from sys import intern
from types import MappingProxyType
from typing import Any

import networkx as nx

from .attributes import ATTRIBUTES, COMPARED, SINGLE
from .bounded import SHARED, BoundedCache
from .errors import BadRecord
from .names import NO_COMPILER, version_key

EMPTY: frozenset[str] = frozenset()
NO_LAYOUT: Mapping[str, frozenset[str]] = MappingProxyType({})


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
    #: Specs with the same layout share one mapping: it is never changed in place.
    stacks: Mapping[str, frozenset[str]] = field(default_factory=lambda: NO_LAYOUT)
    #: the stacks that hold it in any tag
    all_stacks: frozenset[str] = EMPTY
    #: Where the record came from, for reports ("path" or "path#node").
    source: str = ""
    #: False for a spec known only from a spec file or index node.
    from_page: bool = True
    #: the binary tarball's size in bytes, when a source says
    size: float | None = None
    #: where the tarball is, in the first mirror (by name) holding it
    tarball: str = ""
    #: names of the mirrors holding it
    mirrors: frozenset[str] = EMPTY

    @property
    def compiler_key(self) -> str:
        return self.compiler or NO_COMPILER

    def stacks_in(self, tag: str | None) -> frozenset[str]:
        return self.all_stacks if tag is None else self.stacks.get(tag, EMPTY)


#: every field of a record, in the order it declares them
RECORD_FIELDS = tuple(f.name for f in fields(SpecRecord))
_DEFAULTS = {
    f.name: f.default if f.default_factory is MISSING else f.default_factory()
    for f in fields(SpecRecord)
    if f.default is not MISSING or f.default_factory is not MISSING
}
_SINGLE_NAMES = tuple(a.name for a in ATTRIBUTES if not a.many)


def records_of(columns: Mapping[str, list], **same: Any) -> list[SpecRecord]:
    """Records made from one list per field, the fields in ``same`` having one value for all
    and the others their default: a million records are made in one C loop.

    >>> [r] = records_of({"hash": ["a" * 32], "version": ["1.3"], "versions": [("1.3",)],
    ...     "compiler": [None], "os": ["rhel8"], "platform": ["linux"], "target": ["zen2"],
    ...     "variants": [()]}, package="zlib")
    >>> r.package, r.version, r.source, r.stacks
    ('zlib', '1.3', '', mappingproxy({}))
    """
    values = {**_DEFAULTS, **same}
    missing = [n for n in RECORD_FIELDS if n not in columns and n not in values]
    if missing:
        raise ValueError(f"records need a column or a value for each of {missing}")
    if len(set(map(len, columns.values()))) > 1:
        raise ValueError("records need columns of one length")
    given = [columns[n] if n in columns else repeat(values[n]) for n in RECORD_FIELDS]
    # Positional, for speed; the order is the one the record declares.
    return list(map(SpecRecord, *given))


@dataclass(frozen=True, slots=True)
class MirrorInfo:
    """A build-cache mirror as loaded: the attributes of its graph node."""

    name: str
    location: str
    layout: str  # "v2" or "v3"
    tag: str
    stack: str


#: (deptypes, virtuals) of a dependency edge
DepTypes = tuple[frozenset[str], frozenset[str]]


def sort_key(spec: SpecRecord) -> tuple:
    """Contract order of specs: package name, then version, then hash."""
    return (spec.package, version_key(spec.version), spec.hash)


# Index keys: (kind, value, tag). ``tag`` is None for "every tag"; only stack
# membership differs by tag -- the other attributes are the spec's own.
IndexKey = tuple[str, str, str | None]


class CacheGraph:
    """The loaded data: a NetworkX graph and the indices derived from it."""

    def __init__(
        self,
        ordered: list[SpecRecord],
        index: dict[IndexKey, array],
        deps: dict[tuple[str, str], DepTypes],
        hashes: list[str] | None = None,
        mirrors: Iterable[MirrorInfo] = (),
    ) -> None:
        """A graph of specs already in contract order and their index (see ``of``)."""
        #: every spec in contract order; a spec's rank is its position here
        self.ordered = ordered
        in_order = list(map(attrgetter("hash"), ordered))
        self.rank: dict[str, int] = dict(zip(in_order, range(len(ordered)), strict=True))
        #: hashes in string order, for prefix lookups
        self.hashes: list[str] = sorted(in_order) if hashes is None else hashes
        self.index = index
        self.deps = deps
        self.mirrors: dict[str, MirrorInfo] = {m.name: m for m in sorted(mirrors, key=_name)}
        self.g: nx.DiGraph = graph_of(ordered, index, deps, self.mirrors.values())
        self.memo: dict[Any, Any] = {}
        #: answers keyed by what clients send, bounded by bytes (see ``kept``)
        self.kept_answers = BoundedCache(KEPT_BYTES)

    @classmethod
    def of(
        cls,
        records: Iterable[SpecRecord],
        deps: dict[tuple[str, str], DepTypes],
        mirrors: Iterable[MirrorInfo] = (),
    ) -> CacheGraph:
        """The graph of these records, dependencies ((parent, child) -> DepTypes) and mirrors."""
        return cls(*ordered_index(records), deps, mirrors=mirrors)

    def spec(self, hash: str) -> SpecRecord | None:
        rank = self.rank.get(hash)
        return None if rank is None else self.ordered[rank]

    def ranks(self, kind: str, value: str, tag: str | None = None) -> array:
        """Sorted ranks of the specs with this attribute (empty when none)."""
        return self.index.get((kind, value, tag), _NO_RANKS)

    def names(self, kind: str) -> list[str]:
        """Every name of one node kind, sorted."""
        if kind == "spec":
            return self.hashes
        # The attribute nodes are those of the index: far fewer keys than nodes.
        return self.memoized(("nodes", kind), lambda: sorted(_node_names(self.index, kind)))

    def memoized(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` once per graph: the data never changes after loading."""
        try:
            return self.memo[key]
        except KeyError:
            value = self.memo[key] = compute()
            return value

    def kept(self, key: Any, compute: Callable[[], Any]) -> Any:
        """``compute()``, kept while it fits in ``kept_answers``' byte budget.

        For answers keyed by what a client sends (a filter, a name), which
        ``memoized`` would keep forever however many a client invents.
        """
        return self.kept_answers.kept(key, compute)

    def __repr__(self) -> str:
        return f"<CacheGraph {len(self.ordered)} specs, {len(self.names('tag'))} tags>"


# What kept answers refer to (a selection's graph, a list's records) is the graph's own.
SHARED.update({CacheGraph, SpecRecord})


def ordered_index(records: Iterable[SpecRecord]) -> tuple[list[SpecRecord], dict[IndexKey, array]]:
    """The records in contract order, and the rank index over them."""
    specs = sorted(records, key=sort_key)
    return specs, rank_index(specs)


_NO_RANKS = array("i")
#: bytes of answers keyed by what clients send (filtered counts, a package's facts) kept
#: on a graph, unless the server sets another budget
KEPT_BYTES = 256 * 2**20


def rank_index(specs: list[SpecRecord], first: int = 0) -> dict[IndexKey, array]:
    """Where each attribute value is: the ranks of the specs with it, the first being ``first``."""
    ranks = list(range(first, first + len(specs)))  # one int object per rank, shared by every index
    index: dict[IndexKey, array] = {}
    # Ranks go in increasing order, so every index comes out sorted.
    for kind, attr in SINGLE.items():
        values = list(map(attrgetter(attr), specs))
        groups: dict[str, list[int]] = {value: [] for value in set(values)}
        deque(map(list.append, map(groups.__getitem__, values), ranks), maxlen=0)
        index.update(((kind, value, None), array("i", found)) for value, found in groups.items())
    for attr, keys_of in _SETS:
        lists: dict[IndexKey, list[int]] = {}
        # Specs share their variant tuples and stack layouts, so each distinct
        # one works out its keys once.
        appends: dict[int, list[Callable[[int], None]]] = {}
        for rank, value in zip(ranks, map(attrgetter(attr), specs), strict=True):
            found = appends.get(id(value))
            if found is None:
                found = appends[id(value)] = [
                    lists.setdefault(key, []).append for key in keys_of(value)
                ]
            for append in found:
                append(rank)
        index.update((key, array("i", found)) for key, found in lists.items())
    return index


def _variant_keys(variants: tuple[str, ...]) -> list[IndexKey]:
    return [("variant", v, None) for v in variants]


def _stack_keys(stacks: Mapping[str, frozenset[str]]) -> list[IndexKey]:
    keys: list[IndexKey] = [("stack", s, None) for s in frozenset().union(*stacks.values())]
    for tag, members in stacks.items():
        keys.append(("tag", tag, None))
        keys += [("stack", s, tag) for s in members]
    return keys


def _mirror_keys(mirrors: frozenset[str]) -> list[IndexKey]:
    return [("mirror", m, None) for m in mirrors]


#: (attribute, its index keys) of those it has several of
_SETS: list[tuple[str, Callable[[Any], list[IndexKey]]]] = [
    ("variants", _variant_keys),
    ("stacks", _stack_keys),
    ("mirrors", _mirror_keys),
]


class GraphBuilder:
    """Collects records, then builds the graph once; says what it could not take.

    Records stay compact while loading (a spec listed again only updates its
    stack sets); the NetworkX graph is built in one pass at the end.
    """

    def __init__(self) -> None:
        self.records: dict[str, SpecRecord] = {}
        self.deps: dict[tuple[str, str], DepTypes] = {}
        self.mirrors: dict[str, MirrorInfo] = {}
        self._stack_sets: dict[frozenset[str], frozenset[str]] = {}
        self._tuples: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._layouts: dict[frozenset, Mapping[str, frozenset[str]]] = {frozenset(): NO_LAYOUT}
        self._transitions: dict[tuple[int, str, frozenset[str]], Mapping] = {}
        self._unions: dict[tuple[frozenset[str], Iterable[str]], frozenset[str]] = {}
        self._first: dict[str, dict[tuple[str, ...], tuple[Mapping, frozenset[str]]]] = {}
        self._again: dict[tuple, tuple[Mapping, frozenset[str]]] = {}

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
        record.stacks, record.all_stacks = self._listed_again(record, tag, tuple(stacks))
        return problems

    def add_listings(
        self,
        records: list[SpecRecord],
        stacks: list[tuple[str, ...]],
        tag: str,
        known: list[SpecRecord | None],
    ) -> bool:
        """Add one page's records of ``tag`` at once, ``known`` being what each hash has already.

        What ``add_listing`` does for each, when it would neither warn nor refuse
        (every known one is a page's record that agrees); else adds nothing and
        returns False, for the caller to add them one by one.
        """
        new = [k is None for k in known]
        if not all(new):
            old = list(map(not_, new))
            again = list(compress(known, old))
            if not all(map(attrgetter("from_page"), again)) or list(map(_SAME, again)) != list(
                map(_SAME, compress(records, old))
            ):
                return False
            _place(again, list(map(self._listed_again, again, repeat(tag), compress(stacks, old))))
            records, stacks = list(compress(records, new)), list(compress(stacks, new))
        self.add_first_listings(records, stacks, tag)
        return True

    def add_first_listings(
        self, records: list[SpecRecord], stacks: list[tuple[str, ...]], tag: str
    ) -> None:
        """Add specs listed for the first time, by one page of ``tag``, with interned fields.

        What ``add_listing`` does for a hash not known yet, for a page at a time:
        the few thousand stack lists a tag has are each worked out once.
        """
        known = self._first.setdefault(tag, {})
        layouts = list(map(known.get, stacks))
        if None in layouts:
            for i, listed in enumerate(stacks):
                if layouts[i] is None:
                    merged = self._union(EMPTY, listed)
                    layouts[i] = known[listed] = (self._layout(NO_LAYOUT, tag, merged), merged)
        _place(records, layouts)
        self.records.update(zip(map(attrgetter("hash"), records), records, strict=True))

    def shared_tuple(self, values: tuple[str, ...]) -> tuple[str, ...]:
        """One tuple of interned strings for equal ones: variant lists repeat across specs."""
        found = self._tuples.get(values)
        if found is None:
            found = self._tuples[values] = tuple(map(intern, values))
        return found

    def shared_tuples(self, values: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        """``shared_tuple`` of each: nearly all are known, so they are looked up in one pass."""
        found = list(map(self._tuples.get, values))
        if None in found:
            found = [
                self.shared_tuple(v) if f is None else f for v, f in zip(values, found, strict=True)
            ]
        return found

    def add_node_spec(self, record: SpecRecord) -> SpecRecord:
        """Add a spec from a spec file or index node, unless a page or node gave it already."""
        known = self.records.get(record.hash)
        if known is not None:
            return known
        record.from_page = False
        self.records[record.hash] = record = self._intern(record)
        return record

    def add_dependency(
        self, parent: str, child: str, deptypes: Iterable[str], virtuals: Iterable[str] = ()
    ) -> None:
        key = (parent, child)
        types, provided = self.deps.get(key, (EMPTY, EMPTY))
        self.deps[key] = (
            self._union(types, frozenset(deptypes)),
            self._union(provided, frozenset(virtuals)),
        )

    def add_mirror(self, mirror: MirrorInfo) -> None:
        self.mirrors[mirror.name] = mirror

    def add_held(self, record: SpecRecord, mirror: str, size: float | None, tarball: str) -> None:
        """``mirror`` holds this spec, its tarball at ``tarball`` (size in bytes, if known)."""
        first = not record.mirrors or mirror < min(record.mirrors)
        record.mirrors = self._union(record.mirrors, (mirror,))
        if size is not None and (record.size is None or first):
            record.size = size
        if tarball and (not record.tarball or first):
            record.tarball = tarball

    def build(self) -> CacheGraph:
        return CacheGraph.of(self.records.values(), self.deps, self.mirrors.values())

    def _intern(self, r: SpecRecord) -> SpecRecord:
        for name in _SINGLE_NAMES:
            value = getattr(r, name)
            if value is not None:
                setattr(r, name, intern(value))
        r.versions = self.shared_tuple(r.versions)
        r.variants = self.shared_tuple(r.variants)
        return r

    def _listed_again(
        self, record: SpecRecord, tag: str, stacks: tuple[str, ...]
    ) -> tuple[Mapping[str, frozenset[str]], frozenset[str]]:
        """A known record's layout and stack set once ``stacks`` of ``tag`` also hold it."""
        key = (id(record.stacks), id(record.all_stacks), tag, stacks)
        found = self._again.get(key)
        if found is None:
            merged = self._union(record.stacks.get(tag, EMPTY), stacks)
            layout = self._layout(record.stacks, tag, merged)
            found = self._again[key] = (layout, self._union(record.all_stacks, merged))
        return found

    def _layout(
        self, layout: Mapping[str, frozenset[str]], tag: str, stacks: frozenset[str]
    ) -> Mapping[str, frozenset[str]]:
        # A layout with one tag's stacks set; specs share a few thousand layouts,
        # each one mapping. Layouts live as long as the builder, so ids are stable keys.
        key = (id(layout), tag, stacks)
        found = self._transitions.get(key)
        if found is None:
            new = {**layout, intern(tag): stacks}
            found = self._layouts.setdefault(frozenset(new.items()), MappingProxyType(new))
            self._transitions[key] = found
        return found

    def _union(self, known: frozenset[str], more: Iterable[str]) -> frozenset[str]:
        # Specs share a few hundred stack sets: each union is worked out once,
        # and each set is one object, which keeps a large load fast and small.
        key = (known, more if isinstance(more, tuple | frozenset) else tuple(more))
        found = self._unions.get(key)
        if found is None:
            union = known.union(more)
            found = self._unions[key] = self._stack_sets.setdefault(union, union)
        return found


def _place(records: list[SpecRecord], layouts: list[tuple[Mapping, frozenset[str]]]) -> None:
    """Give each record its stack layout and stack set, in C loops."""
    deque(map(setattr, records, repeat("stacks"), map(itemgetter(0), layouts)), maxlen=0)
    deque(map(setattr, records, repeat("all_stacks"), map(itemgetter(1), layouts)), maxlen=0)


_NODE_KINDS = {"package", "stack", "compiler", "target", "tag", "os", "platform", "mirror"}


def _node_names(index: dict[IndexKey, array], kind: str) -> list[str]:
    """Names of the attribute nodes of one kind: those of the index (``none`` is no compiler)."""
    if kind not in _NODE_KINDS:
        return []
    return [value for k, value, tag in index if k == kind and tag is None and value != NO_COMPILER]


def _name(item: Any) -> str:
    return item.name


class CacheDiGraph(nx.DiGraph):
    """A DiGraph made from node and adjacency dicts built beforehand, by NetworkX's factory hooks.

    NetworkX documents its dict factories (``node_dict_factory``,
    ``adjlist_outer_dict_factory``...) as the way to change the dicts a graph is
    made of. Here they hand ``DiGraph.__init__`` the dicts ``graph_of`` built in
    C-speed passes over the rank index, instead of NetworkX filling empty ones edge
    by edge (``add_edges_from`` costs about 3 µs an edge: half a minute for the
    ten million edges of a million specs). ``DiGraph.__init__`` asks for the
    successors' dict first, then the predecessors'; ``tests/graph/test_model.py``
    fails loudly on a NetworkX that no longer does (``pyproject.toml`` pins 3.x).
    Made without dicts, it is a plain DiGraph.
    """

    def __init__(
        self, nodes: dict | None = None, succ: dict | None = None, pred: dict | None = None
    ) -> None:
        self._prebuilt = ({} if nodes is None else nodes, [succ or {}, pred or {}])
        super().__init__()
        del self._prebuilt

    def node_dict_factory(self) -> dict:
        prebuilt = getattr(self, "_prebuilt", None)
        return {} if prebuilt is None else prebuilt[0]

    def adjlist_outer_dict_factory(self) -> dict:
        prebuilt = getattr(self, "_prebuilt", None)
        return {} if prebuilt is None else prebuilt[1].pop(0)


#: the kinds of nodes a spec has one edge to per value, found in the rank index
_EDGE_KINDS = ("package", "compiler", "target", "os", "platform", "tag", "mirror")


def graph_of(
    specs: list[SpecRecord],
    index: dict[IndexKey, array],
    deps: dict[tuple[str, str], DepTypes],
    mirrors: Iterable[MirrorInfo],
) -> nx.DiGraph:
    """The frozen graph of these specs (in rank order), their dependencies and mirrors.

    Node and edge kinds are in the module's docstring. The in-edges of each
    attribute node come from the rank index, the cache of the same relation; specs
    with the same attributes, stack layout and mirrors and no dependencies share
    one successor dict, and nodes with no edge one way share one empty dict (the
    graph is frozen: none is ever changed).

    >>> a = SpecRecord(hash="a" * 32, package="zlib", version="1.3", versions=("1.3",),
    ...     compiler="gcc@13", os="ubuntu24.04", platform="linux", target="x86_64_v3",
    ...     variants=(), stacks={"v1": frozenset({"e4s"})}, all_stacks=frozenset({"e4s"}))
    >>> g = graph_of([a], rank_index([a]), {}, [])
    >>> sorted(kind for kind, _ in g.succ["spec", "a" * 32])
    ['compiler', 'os', 'package', 'platform', 'stack', 'tag', 'target']
    >>> g.edges[("spec", "a" * 32), ("stack", "e4s")], list(g.pred["package", "zlib"])
    ({'kind': 'stack', 'tags': frozenset({'v1'})}, [('spec', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')])
    """
    none: dict = {}  # every node's attributes but a mirror's; every empty adjacency
    spec_nodes = [("spec", s.hash) for s in specs]  # by rank
    nodes = dict.fromkeys(spec_nodes, none)
    succ = nodes.copy()
    pred = nodes.copy()
    data = {kind: {"kind": kind} for kind in _EDGE_KINDS}
    for (kind, value, tag), ranks in index.items():
        if tag is None and kind in data and not (kind == "compiler" and value == NO_COMPILER):
            node = (kind, value)
            nodes[node], succ[node] = none, none
            pred[node] = dict.fromkeys(map(spec_nodes.__getitem__, ranks), data[kind])
    # Specs share a few thousand stack layouts: each works out its tag and stack edges once.
    layouts: dict[int, tuple[dict, list]] = {}  # id -> (its out-edges, the spec nodes with it)
    stack_data: dict[frozenset[str], dict] = {}
    for node, s in zip(spec_nodes, specs, strict=True):
        found = layouts.get(id(s.stacks))
        if found is None:
            found = layouts[id(s.stacks)] = (_layout_edges(s.stacks, data["tag"], stack_data), [])
        found[1].append(node)
    for edges, members in layouts.values():
        for end, edge in edges.items():
            if end[0] == "stack":
                if end not in pred:
                    nodes[end], succ[end], pred[end] = none, none, {}
                pred[end].update(dict.fromkeys(members, edge))
    # Each spec's out-edges, one dict for specs alike.
    alike: dict[tuple, dict] = {}
    for node, s in zip(spec_nodes, specs, strict=True):
        key = (s.package, s.compiler, s.target, s.os, s.platform, id(s.stacks), s.mirrors)
        found = alike.get(key)
        if found is None:
            found = alike[key] = {
                ("package", s.package): data["package"],
                ("target", s.target): data["target"],
                ("os", s.os): data["os"],
                ("platform", s.platform): data["platform"],
                **layouts[id(s.stacks)][0],
            }
            if s.compiler:
                found["compiler", s.compiler] = data["compiler"]
            for mirror in s.mirrors:
                found["mirror", mirror] = data["mirror"]
        succ[node] = found
    for m in mirrors:
        node, tag, stack = ("mirror", m.name), ("tag", m.tag), ("stack", m.stack)
        nodes[node] = {"mirror": m}
        pred.setdefault(node, none)
        succ[node] = {tag: data["tag"], stack: {"kind": "stack", "tags": frozenset({m.tag})}}
        for end in (tag, stack):
            nodes.setdefault(end, none)
            succ.setdefault(end, none)
            if pred.get(end, none) is none:
                pred[end] = {}
            pred[end][node] = succ[node][end]
    # Dependencies: a spec with some gets its own successor dict, its child a predecessor one.
    shared: dict[DepTypes, dict] = {}
    own: set[tuple[str, str]] = set()
    for (parent, child), types in deps.items():
        edge = shared.get(types)
        if edge is None:
            edge = shared[types] = {
                "kind": "depends_on",
                "deptypes": types[0],
                "virtuals": types[1],
            }
        p, c = ("spec", parent), ("spec", child)
        if p not in own:
            succ[p] = dict(succ[p])
            own.add(p)
        succ[p][c] = edge
        if pred[c] is none:
            pred[c] = {}
        pred[c][p] = edge
    return nx.freeze(CacheDiGraph(nodes, succ, pred))


def _layout_edges(
    layout: Mapping[str, frozenset[str]], tag_edge: dict, stack_data: dict[frozenset[str], dict]
) -> dict[tuple[str, str], dict]:
    """The tag and stack edges of a spec with this layout (tag -> the stacks holding it there)."""
    edges: dict[tuple[str, str], dict] = {("tag", tag): tag_edge for tag in layout}
    for stack in frozenset().union(*layout.values()):
        tags = frozenset(t for t, held in layout.items() if stack in held)
        found = stack_data.get(tags)
        if found is None:
            found = stack_data[tags] = {"kind": "stack", "tags": tags}
        edges["stack", stack] = found
    return edges


_SAME = attrgetter("package", *COMPARED)


def _differences(known: SpecRecord, new: SpecRecord) -> list[str]:
    return [
        f"hash {known.hash}: {name} is {getattr(new, name)!r} here "
        f"but {getattr(known, name)!r} in {known.source}; keeping the first"
        for name in COMPARED
        if getattr(known, name) != getattr(new, name)
    ]
