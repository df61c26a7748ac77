"""The loaded data as a NetworkX graph: ``CacheGraph``, a read-only view over the store.

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
attributes.

NetworkX reads a graph's structure through three mappings, ``_node``, ``_succ``
(``_adj``) and ``_pred``; its views and algorithms use only the ``Mapping``
protocol on them. Here those mappings are computed from the store's columns
when read: ``G.succ["spec", h]`` is worked out from that spec's row and its
dependency row, ``G.pred["package", "zlib"]`` walks zlib's slice of the package
index in rank order, each at a cost in proportion to what is read. Nothing is
copied: the store holds every relation once, and this is how NetworkX sees it.
Setting those three attributes is an internal of NetworkX (3.x, pinned in
``pyproject.toml``; ``tests/graph/store/test_view.py`` checks it against an eager
``DiGraph`` of the same data). The graph is frozen (``nx.freeze``), and every
attribute dict a reader gets raises NetworkX's frozen-graph error when written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import networkx as nx
import numpy as np

from ..attributes import NODE_KINDS
from ..bounded import SHARED, BoundedCache
from ..spack.names import NO_COMPILER
from .columns import Store
from .records import MirrorInfo, SpecRecord

Node = tuple[str, str]
#: The kinds of node, in the order the graph lists them.
KINDS = ("spec", *NODE_KINDS, "stack", "tag", "mirror")
#: bytes of answers keyed by what clients send (filtered counts, a package's facts) kept
#: on a graph, unless the server sets another budget
KEPT_BYTES = 256 * 2**20


def _frozen(*_args: Any, **_kwargs: Any) -> None:
    raise nx.NetworkXError("Frozen graph can't be modified")


class FrozenDict(dict):
    """An attribute dict of the frozen graph: reads as a dict, raises on every write."""

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _frozen
    __ior__ = _frozen  # type: ignore[assignment]


NO_ATTRIBUTES = FrozenDict()
#: the attributes a spec has an edge to a node of
_NODE_ATTRS = NODE_KINDS
_EDGE = {kind: FrozenDict(kind=kind) for kind in (*_NODE_ATTRS, "tag", "mirror")}


class CacheGraph(nx.DiGraph):
    """The store as a read-only NetworkX DiGraph, and the answers kept for it.

    Made without a store it is a plain DiGraph: NetworkX makes one so for a
    subgraph view or a copy.
    """

    def __init__(self, store: Store | None = None) -> None:
        super().__init__()
        if store is None:
            return
        self.store = store
        #: the loaded mirrors by name, in name order
        self.mirrors: dict[str, MirrorInfo] = {m.name: m for m in store.mirrors}
        self._edge_data: dict[Any, FrozenDict] = {}
        self._node = _Nodes(self)
        self._succ = _Adjacencies(self, self._out)
        self._pred = _Adjacencies(self, self._in)
        self.graph = FrozenDict()
        nx.freeze(self)
        #: answers worked out once per graph (the data never changes after loading)
        self.memo: dict[Any, Any] = {}
        #: answers keyed by what clients send, bounded by bytes (see ``kept``)
        self.kept_answers = BoundedCache(KEPT_BYTES)

    # -- specs -----------------------------------------------------------------------------

    def spec(self, hash: str) -> SpecRecord | None:
        """The spec with this full hash, or None."""
        rank = self.store.rank(hash) if isinstance(hash, str) else None
        return None if rank is None else self.store.record(rank)

    def records(self, ranks: Any) -> list[SpecRecord]:
        """The records of these ranks, in their order."""
        return self.store.records(ranks)

    def all_specs(self) -> list[SpecRecord]:
        """Every spec's record, in rank order (made now: for scripts and checks, not requests)."""
        return self.store.records(np.arange(self.store.n))

    @property
    def spec_count(self) -> int:
        return self.store.n

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
        return f"<CacheGraph {self.store.n} specs, {self.store.edge_count} dependency edges>"

    # -- what the mappings are made of ---------------------------------------------------------

    def names(self, kind: str) -> list[str]:
        """Every node name of one kind but specs, sorted."""

        def compute() -> list[str]:
            if kind == "mirror":
                return list(self.mirrors)
            found = self.store.names(kind)
            if kind in ("stack", "tag"):
                found = sorted({*found, *(getattr(m, kind) for m in self.store.mirrors)})
            return found

        return self.memoized(("node names", kind), compute)

    def has(self, node: Any) -> bool:
        if type(node) is not tuple or len(node) != 2 or not isinstance(node[1], str):
            return False
        kind, name = node
        if kind == "spec":
            return self.store.rank(name) is not None
        if kind == "mirror":
            return name in self.mirrors
        if kind in ("stack", "tag") and any(getattr(m, kind) == name for m in self.store.mirrors):
            return True
        if kind not in KINDS or (kind == "compiler" and name == NO_COMPILER):
            return False
        return len(self.store.ranks(kind, name)) > 0

    def _rank(self, node: Any) -> int:
        if not self.has(node):
            raise KeyError(node)
        return self.store.rank(node[1]) if node[0] == "spec" else -1

    def dependency_data(self, types: int, virtuals: int) -> FrozenDict:
        key = ("depends_on", types, virtuals)
        found = self._edge_data.get(key)
        if found is None:
            store = self.store
            found = self._edge_data[key] = FrozenDict(
                kind="depends_on",
                deptypes=store.deptype_sets()[types],
                virtuals=store.virtual_sets()[virtuals],
            )
        return found

    def stack_data(self, tags: frozenset[str]) -> FrozenDict:
        found = self._edge_data.get(tags)
        if found is None:
            found = self._edge_data[tags] = FrozenDict(kind="stack", tags=tags)
        return found

    def _out(self, node: Node) -> Mapping[Node, FrozenDict]:
        rank = self._rank(node)
        if node[0] == "mirror":
            m = self.mirrors[node[1]]
            held = self.stack_data(frozenset({m.tag}))
            return FrozenDict({("tag", m.tag): _EDGE["tag"], ("stack", m.stack): held})
        if rank < 0:
            return NO_ATTRIBUTES
        store = self.store
        [spec] = store.records([rank])
        out: dict[Node, FrozenDict] = {(a, getattr(spec, a)): _EDGE[a] for a in _NODE_ATTRS
                                       if getattr(spec, a) is not None}  # fmt: skip
        for tag in spec.stacks:
            out["tag", tag] = _EDGE["tag"]
        for stack in spec.all_stacks:
            held = frozenset(t for t, stacks in spec.stacks.items() if stack in stacks)
            out["stack", stack] = self.stack_data(held)
        for mirror in spec.mirrors:
            out["mirror", mirror] = _EDGE["mirror"]
        children, types, virtuals = store.edges(rank)
        edges = zip(store.hash_list(children), types.tolist(), virtuals.tolist(), strict=True)
        for hash, t, v in edges:
            out["spec", hash] = self.dependency_data(t, v)
        return FrozenDict(out)

    def _in(self, node: Node) -> Mapping[Node, FrozenDict]:
        rank = self._rank(node)
        kind, name = node
        store = self.store
        if kind == "spec":
            parents, types, virtuals = store.in_edges(rank)
            return _Ranked(
                self, parents, lambda i: self.dependency_data(int(types[i]), int(virtuals[i]))
            )
        if kind in _NODE_ATTRS:
            return _Ranked(self, store.ranks(kind, name), lambda i: _EDGE[kind])
        if kind == "mirror":
            return _Ranked(self, store.ranks("mirror", name), lambda i: _EDGE["mirror"])
        mirrors = {("mirror", m.name): m for m in store.mirrors if getattr(m, kind) == name}
        ranks = store.ranks(kind, name)
        if kind == "tag":
            extra = {n: _EDGE["tag"] for n in mirrors}
            return _Ranked(self, ranks, lambda i: _EDGE["tag"], extra)
        # stack: each spec's edge says the tags it is held in there
        layouts = store.layout_objects()
        layout = store.layout

        def stack_edge(i: int) -> FrozenDict:
            held, _ = layouts[layout[ranks[i]]]
            return self.stack_data(frozenset(t for t, stacks in held.items() if name in stacks))

        extra = {n: self.stack_data(frozenset({m.tag})) for n, m in mirrors.items()}
        return _Ranked(self, ranks, stack_edge, extra)


# What kept answers refer to (a selection's graph, a list's records) is the graph's own.
SHARED.update({CacheGraph, SpecRecord, Store})


class _Nodes(Mapping):
    """``G._node``: every node, specs first in rank order; mirrors carry their MirrorInfo."""

    def __init__(self, graph: CacheGraph) -> None:
        self.graph = graph

    def __getitem__(self, node: Node) -> FrozenDict:
        if not self.graph.has(node):
            raise KeyError(node)
        if node[0] == "mirror":
            return FrozenDict(mirror=self.graph.mirrors[node[1]])
        return NO_ATTRIBUTES

    def __contains__(self, node: object) -> bool:
        return self.graph.has(node)

    def __iter__(self) -> Iterator[Node]:
        store = self.graph.store
        for start in range(0, store.n, 4096):
            ranks = np.arange(start, min(start + 4096, store.n))
            yield from (("spec", h) for h in store.hash_list(ranks))
        for kind in KINDS[1:]:
            yield from ((kind, name) for name in self.graph.names(kind))

    def __len__(self) -> int:
        return self.graph.store.n + sum(len(self.graph.names(k)) for k in KINDS[1:])


class _Adjacencies(Mapping):
    """``G._succ`` or ``G._pred``: node -> its neighbours and edge data, made when read."""

    def __init__(self, graph: CacheGraph, of: Callable[[Node], Mapping]) -> None:
        self.graph, self.of = graph, of

    def __getitem__(self, node: Node) -> Mapping[Node, FrozenDict]:
        return self.of(node)

    def __contains__(self, node: object) -> bool:
        return self.graph.has(node)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.graph._node)

    def __len__(self) -> int:
        return len(self.graph._node)


class _Ranked(Mapping):
    """Neighbours that are specs of a rank list (sorted), then a few others, with edge data."""

    def __init__(
        self,
        graph: CacheGraph,
        ranks: np.ndarray,
        data: Callable[[int], FrozenDict],
        extra: Mapping[Node, FrozenDict] | None = None,
    ) -> None:
        self.graph, self.ranks, self.data, self.extra = graph, ranks, data, extra or {}

    def _at(self, node: object) -> int:
        """The position of a spec node in ``ranks``; -1 when it is not there."""
        if type(node) is not tuple or len(node) != 2 or node[0] != "spec":
            return -1
        rank = self.graph.store.rank(node[1]) if isinstance(node[1], str) else None
        if rank is None:
            return -1
        at = int(np.searchsorted(self.ranks, rank))
        return at if at < len(self.ranks) and self.ranks[at] == rank else -1

    def __getitem__(self, node: Node) -> FrozenDict:
        at = self._at(node)
        if at >= 0:
            return self.data(at)
        return self.extra[node]

    def __contains__(self, node: object) -> bool:
        return self._at(node) >= 0 or node in self.extra

    def __iter__(self) -> Iterator[Node]:
        store = self.graph.store
        for start in range(0, len(self.ranks), 4096):
            yield from (("spec", h) for h in store.hash_list(self.ranks[start : start + 4096]))
        yield from self.extra

    def __len__(self) -> int:
        return len(self.ranks) + len(self.extra)
