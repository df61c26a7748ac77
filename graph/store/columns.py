"""The loaded data, held once, in columns: ``Store``.

Every spec is a row, in contract order (package, version, hash): its rank.
Each attribute is a column of integer codes into one table of distinct strings
(``graph.store.tables``); a spec's variants, its stacks in each tag (its
*layout*) and its mirrors are codes into tables of distinct sets. Dependencies
are compressed sparse rows, each edge with its deptype bits and a code of its
virtuals, and the same edges reversed for dependents. Sizes and tarballs are a
column each.

What a query looks up -- the specs of a package, of a stack in a tag, of a
variant -- is an ``Index`` per kind: for each code, its specs in rank order, a
slice of one array. The indices are derived from the columns once, by a
stable sort on the codes, and saved with them.

Nothing here makes a Python object per spec: ``records`` makes ``SpecRecord``s
for the rows asked for, and the tables make an object per distinct value (a
stack layout, a variant list) the first time one is asked for. Every array is a
plain numpy array, so a snapshot is the arrays' bytes, read back at restart
(``graph.snapshot``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType

import numpy as np

from ..attributes import SINGLE
from ..spack.names import NO_COMPILER
from . import levels
from .records import MirrorInfo, SpecRecord
from .tables import Sets, Strings

#: the single-valued attributes, each a column of codes into a table of its own
ATTRS: tuple[str, ...] = tuple(SINGLE)
#: every string table: the attributes', and those of the sets' members and of sources
STRINGS: tuple[str, ...] = (
    *ATTRS,
    "variant",
    "tag",
    "stack",
    "mirror",
    "virtual",
    "deptype",
    "file",
)
#: every table of sets: name -> the string table its members are codes of ("" for pairs)
SETS: dict[str, str] = {
    "variants": "variant",  # a spec's variants, as recorded
    "stacks": "stack",  # the stacks holding a spec in one tag, sorted
    "layouts": "",  # a spec's (tag, stack set) pairs: tag * len(stacks) + stack set
    "mirrors": "mirror",  # the mirrors holding a spec, sorted
    "virtuals": "virtual",  # what a dependency edge provides, sorted
}
#: the kinds of index: an attribute's, and those of a spec's several values
INDEX_KINDS: tuple[str, ...] = (*ATTRS, "variant", "tag", "stack", "mirror", "stack@tag")
#: deptype -> its bit in an edge's ``deps.types``
DEPTYPE_BITS = {"build": 1, "link": 2, "run": 4, "test": 8}


class Index:
    """Specs per code in rank order: code ``c``'s are ``order[ptr[c]:ptr[c + 1]]``.

    >>> index = Index.of(np.array([1, 0, 1, 2]), 4)
    >>> index.ranks(1).tolist(), index.counts().tolist()
    ([0, 2], [1, 2, 1, 0])
    """

    __slots__ = ("order", "ptr")

    def __init__(self, ptr: np.ndarray, order: np.ndarray) -> None:
        self.ptr, self.order = ptr, order

    @classmethod
    def of(cls, codes: np.ndarray, size: int, ranks: np.ndarray | None = None) -> Index:
        """The index of ``codes`` (one per rank, or per ``ranks`` given in increasing order)."""
        # A stable sort of 16-bit keys is a radix sort: several times faster than of wider ones.
        codes = np.asarray(codes, np.uint16 if size <= 1 << 16 else np.int64)
        order = np.argsort(codes, kind="stable").astype(np.int32)
        if ranks is not None:
            order = np.asarray(ranks, np.int32)[order]
        ptr = np.zeros(size + 1, np.int64)
        np.cumsum(np.bincount(codes, minlength=size), out=ptr[1:])
        return cls(ptr, order)

    def ranks(self, code: int) -> np.ndarray:
        # ``item`` gives Python ints: indexing gives NumPy scalars, each an object to make
        return self.order[self.ptr.item(code) : self.ptr.item(code + 1)]

    def count(self, code: int) -> int:
        return self.ptr.item(code + 1) - self.ptr.item(code)

    def counts(self) -> np.ndarray:
        return np.diff(self.ptr)


_NO_RANKS = np.zeros(0, np.int32)


def explode(sets: Sets, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position, member) of every member of the set each of ``codes`` names.

    >>> s = Sets.from_rows([(5, 6), (), (7,)])
    >>> [a.tolist() for a in explode(s, np.array([2, 0, 1]))]
    [[0, 1, 1], [7, 5, 6]]
    """
    lengths = sets.lengths()[codes]
    total = int(lengths.sum())
    owners = np.repeat(np.arange(len(codes), dtype=np.int64), lengths)
    starts = sets.indptr[codes] - (np.cumsum(lengths) - lengths)
    positions = np.repeat(starts, lengths) + np.arange(total)
    return owners, sets.members[positions]


class Store:
    """The columns of every loaded spec, their tables, dependencies and indices.

    ``arrays`` names every array (what a snapshot writes); the rest is made
    from them when first asked.
    """

    def __init__(self, arrays: dict[str, np.ndarray], mirrors: Sequence[MirrorInfo]) -> None:
        self.arrays = arrays
        #: the loaded mirrors, by code (sorted by name)
        self.mirrors: list[MirrorInfo] = list(mirrors)
        self.n = len(arrays["position_of"])
        self.hashes: np.ndarray = arrays["hashes"]  # S32, sorted: a spec's is at position_of[rank]
        self.rank_of: np.ndarray = arrays["rank_of"]  # hash position -> rank
        self.position_of: np.ndarray = arrays["position_of"]  # rank -> hash position
        self.codes = {a: arrays[f"code.{a}"] for a in ATTRS}
        self.variants: np.ndarray = arrays["code.variants"]
        self.layout: np.ndarray = arrays["code.layout"]
        self.held: np.ndarray = arrays["code.mirrors"]
        self.size: np.ndarray = arrays["size"]  # NaN: unknown
        self.from_page: np.ndarray = arrays["from_page"]
        self.deps = (arrays["deps.ptr"], arrays["deps.child"])
        self.dep_types: np.ndarray = arrays["deps.types"]
        self.dep_virtuals: np.ndarray = arrays["deps.virtuals"]
        # a row per child: its link and run parents (rows 0..n-1), then its others (n..2n-1);
        # specs numbered there by level (``levels``: row i, parent i is rank up_rank[i]);
        # ``dependent_rows`` gives both of a spec's rows, ``ranked`` a walk's mask by rank
        self.rdeps = (arrays["rdeps.ptr"], arrays["rdeps.parent"])
        self.rdep_edge: np.ndarray = arrays["rdeps.edge"]
        self.up_rank: np.ndarray = arrays["rdeps.order"]
        self.up_row: np.ndarray = levels.inverse(self.up_rank)  # rank -> its number there
        #: the rows below this one are numbered by level: each link/run edge leads up from them
        self.up_levelled = int(arrays["rdeps.levelled"][0])
        self._strings: dict[str, Strings] = {}
        self._sets: dict[str, Sets] = {}
        self._index: dict[str, Index] = {}
        self._objects: dict[str, list] = {}

    # -- tables ----------------------------------------------------------------------------

    def strings(self, kind: str) -> Strings:
        found = self._strings.get(kind)
        if found is None:
            a = self.arrays
            found = Strings.unpacked(a[f"strings.{kind}.blob"], a[f"strings.{kind}.offsets"])
            self._strings[kind] = found
        return found

    def sets(self, name: str) -> Sets:
        found = self._sets.get(name)
        if found is None:
            a = self.arrays
            found = self._sets[name] = Sets(a[f"sets.{name}.indptr"], a[f"sets.{name}.members"])
        return found

    def index(self, kind: str) -> Index:
        found = self._index.get(kind)
        if found is None:
            a = self.arrays
            found = self._index[kind] = Index(a[f"index.{kind}.ptr"], a[f"index.{kind}.order"])
        return found

    def code(self, kind: str, name: str) -> int | None:
        """The code of ``name`` in a string table; None when nothing loaded has it."""
        return self.strings(kind).find(name)

    def ranks(self, kind: str, name: str, tag: str | None = None) -> np.ndarray:
        """The ranks, in order, of the specs with this attribute value, variant, tag,
        mirror or stack (in ``tag``, or in any tag); empty when none."""
        found = self._indexed(kind, name, tag)
        return _NO_RANKS if found is None else found[0].ranks(found[1])

    def count(self, kind: str, name: str, tag: str | None = None) -> int:
        """How many specs ``ranks`` gives, without making them."""
        found = self._indexed(kind, name, tag)
        return 0 if found is None else found[0].count(found[1])

    def _indexed(self, kind: str, name: str, tag: str | None) -> tuple[Index, int] | None:
        """The index holding these specs and their code in it; None when there are none."""
        if kind == "stack" and tag is not None:
            stack, in_tag = self.code("stack", name), self.code("tag", tag)
            if stack is None or in_tag is None:
                return None
            return self.index("stack@tag"), in_tag * len(self.strings("stack")) + stack
        code = self.code(kind, name)
        return None if code is None else (self.index(kind), code)

    def names(self, kind: str) -> list[str]:
        """The values of a kind that some spec has, sorted (``none`` is no compiler)."""
        counts = self.index(kind).counts()
        values = self.strings(kind).values
        found = [values[c] for c in np.flatnonzero(counts).tolist()]
        return [v for v in found if v != NO_COMPILER] if kind == "compiler" else found

    # -- the objects a row's fields are, one per distinct value --------------------------

    def _table(self, name: str, make) -> list:
        found = self._objects.get(name)
        if found is None:
            found = self._objects[name] = make()
        return found

    def variant_tuples(self) -> list[tuple[str, ...]]:
        def make() -> list[tuple[str, ...]]:
            values = self.strings("variant").values
            return [tuple(map(values.__getitem__, row)) for row in self.sets("variants").rows()]

        return self._table("variants", make)

    def layout_objects(self) -> list[tuple[Mapping[str, frozenset[str]], frozenset[str]]]:
        """Per layout code: tag -> the stacks holding a spec there, and every such stack."""

        def make() -> list:
            tags, stacks = self.strings("tag").values, self.stack_sets()
            width = len(self.sets("stacks"))
            made = []
            for row in self.sets("layouts").rows():
                layout = {tags[p // width]: stacks[p % width] for p in row}
                made.append((MappingProxyType(layout), frozenset().union(*layout.values())))
            return made

        return self._table("layouts", make)

    def stack_sets(self) -> list[frozenset[str]]:
        def make() -> list[frozenset[str]]:
            names = self.strings("stack").values
            return [frozenset(map(names.__getitem__, row)) for row in self.sets("stacks").rows()]

        return self._table("stacks", make)

    def mirror_sets(self) -> list[frozenset[str]]:
        def make() -> list[frozenset[str]]:
            names = [m.name for m in self.mirrors]
            return [frozenset(map(names.__getitem__, row)) for row in self.sets("mirrors").rows()]

        return self._table("mirrors", make)

    def virtual_sets(self) -> list[frozenset[str]]:
        def make() -> list[frozenset[str]]:
            names = self.strings("virtual").values
            return [frozenset(map(names.__getitem__, row)) for row in self.sets("virtuals").rows()]

        return self._table("virtuals", make)

    def deptype_sets(self) -> list[frozenset[str]]:
        """Per deptype bit mask (0-255), the deptypes it names."""

        def make() -> list[frozenset[str]]:
            names = self.strings("deptype").values
            return [frozenset(n for b, n in enumerate(names) if mask >> b & 1) for mask in
                    range(256)]  # fmt: skip

        return self._table("deptypes", make)

    def deptype_mask(self, deptypes: Iterable[str]) -> int:
        """The bits of these deptypes (0 for none this data has)."""
        table = self.strings("deptype")
        return sum(1 << c for d in deptypes if (c := table.find(d)) is not None)

    # -- rows --------------------------------------------------------------------------------

    def hash(self, rank: int) -> str:
        return self.hashes[self.position_of[rank]].decode()

    def field_values(self, name: str, ranks: np.ndarray) -> list:
        """One field of these ranks' records, as ``records`` would give it: ``hash`` or a
        single-valued attribute (``ATTRS``), made column-wise without the records."""
        if name == "hash":
            return self.hash_list(ranks)
        return self.attribute_objects(name).take(self.codes[name].take(ranks)).tolist()

    def hash_list(self, ranks: np.ndarray) -> list[str]:
        return [h.decode() for h in self.hashes.take(self.position_of.take(ranks)).tolist()]

    def rank(self, hash: str) -> int | None:
        """The rank of the spec with this full hash; None when none has it."""
        key = hash.encode("ascii", "replace")
        at = self.hashes.searchsorted(key).item()  # the method: np.searchsorted wraps it
        if at < self.n and self.hashes[at] == key:
            return self.rank_of.item(at)
        return None

    def ranks_of(self, hashes: Sequence[str]) -> np.ndarray:
        """The rank of each full hash, -1 where no spec has it: one search for them all.

        >>> from cachegraph.graph.store.example import example_graph
        >>> store = example_graph().store
        >>> found = store.ranks_of(["z" * 32, "q" * 32, "z" * 33, "Z" * 32])
        >>> found.tolist() == [store.rank("z" * 32), -1, -1, -1]
        True
        """
        # A key of another length never matches: it is made empty, not cut to 32 bytes.
        keys = np.array([h.encode("ascii", "replace") if len(h) == 32 else b"" for h in hashes],
                        "S32")  # fmt: skip
        if not self.n or not len(keys):
            return np.full(len(keys), -1, np.int64)
        at = np.minimum(np.searchsorted(self.hashes, keys), self.n - 1)
        return np.where(self.hashes[at] == keys, self.rank_of[at], -1).astype(np.int64)

    def prefixed(self, prefix: str) -> tuple[int, int]:
        """(start, end): the positions in hash order of the hashes starting with ``prefix``."""
        key = prefix.encode("ascii", "replace")
        start = int(np.searchsorted(self.hashes, key))
        end = int(np.searchsorted(self.hashes, key + b"\xff", side="left"))
        return start, end

    def record(self, rank: int) -> SpecRecord:
        return self.records(np.array([rank], np.int64))[0]

    def records(self, ranks: Sequence[int] | np.ndarray) -> list[SpecRecord]:
        """The records of these ranks, in their order: column by column, in C loops (a few
        ranks one by one: a column's numpy call costs more than a row's Python)."""
        ranks = np.asarray(ranks, np.int64)
        if len(ranks) <= 8:
            return [self._record(rank) for rank in ranks.tolist()]
        columns: dict[str, list] = {"hash": self.hash_list(ranks)}
        for a in ATTRS:  # a table of objects, taken from by codes: one C loop a column
            columns[a] = self.attribute_objects(a).take(self.codes[a].take(ranks)).tolist()
        versions = self._table("versions", lambda: [(v,) for v in self.strings("version")])
        columns["versions"] = list(map(versions.__getitem__, self.codes["version"][ranks].tolist()))
        columns["variants"] = list(
            map(self.variant_tuples().__getitem__, self.variants[ranks].tolist())
        )
        layouts = list(map(self.layout_objects().__getitem__, self.layout[ranks].tolist()))
        columns["stacks"] = [layout for layout, _ in layouts]
        columns["all_stacks"] = [every for _, every in layouts]
        columns["source"] = self.sources(ranks)
        columns["from_page"] = self.from_page[ranks].tolist()
        sizes = self.size[ranks]
        columns["size"] = [None if s != s else s for s in sizes.tolist()]  # NaN: unknown
        columns["tarball"] = self.tarballs(ranks)
        columns["mirrors"] = list(map(self.mirror_sets().__getitem__, self.held[ranks].tolist()))
        columns["rank"] = ranks.tolist()
        return list(map(SpecRecord, *(columns[f] for f in SpecRecord.__slots__)))

    def _record(self, rank: int) -> SpecRecord:
        """One record, field by field (what ``records`` does for many)."""
        coded = self._table("coded", self._coded)
        fields = [self.hashes[self.position_of.item(rank)].decode()]
        fields += [table[column.item(rank)] for column, table in coded]
        layout, every = self.layout_objects()[self.layout.item(rank)]
        file, node = self.arrays["source.file"].item(rank), self.arrays["source.node"].item(rank)
        files = self.strings("file").values
        size = self.size.item(rank)
        offsets, blob = self.arrays["tarball.offsets"], self.arrays["tarball.blob"]
        start, end = offsets.item(rank), offsets.item(rank + 1)
        tarball = ""
        if end > start:
            prefix = self.tarball_prefixes()[self.arrays["tarball.mirror"].item(rank)]
            tarball = prefix + blob[start:end].tobytes().decode()
        return SpecRecord(
            *fields,
            stacks=layout,
            all_stacks=every,
            source=files[file] if node <= 0 else f"{files[file]}#{node}",
            from_page=bool(self.from_page.item(rank)),
            size=None if size != size else size,  # NaN: unknown
            tarball=tarball,
            mirrors=self.mirror_sets()[self.held.item(rank)],
            rank=rank,
        )

    def _coded(self) -> list[tuple[np.ndarray, list]]:
        """(column, its values) of each coded field of a record, in SpecRecord's order after
        the hash: each attribute (graph.attributes), then versions."""
        versions = self._table("versions", lambda: [(v,) for v in self.strings("version")])
        by_field = {a: (self.codes[a], self.attribute_values(a)) for a in ATTRS}
        by_field["versions"] = (self.codes["version"], versions)
        by_field["variants"] = (self.variants, self.variant_tuples())
        order = SpecRecord.__slots__[1 : SpecRecord.__slots__.index("versions") + 1]
        return [by_field[name] for name in order]

    def attribute_objects(self, kind: str) -> np.ndarray:
        """``attribute_values`` as an array of objects, to take from by codes."""
        return self._table(f"objects {kind}", lambda: np.array(self.attribute_values(kind), object))

    def attribute_values(self, kind: str) -> list[str | None]:
        """An attribute's table as record fields show it: ``none`` is no compiler."""

        def make() -> list[str | None]:
            values = list(self.strings(kind).values)
            return (
                [None if v == NO_COMPILER else v for v in values] if kind == "compiler" else values
            )

        return self._table(f"values {kind}", make)

    def sources(self, ranks: np.ndarray) -> list[str]:
        files = self.strings("file").values
        found = self.arrays["source.file"][ranks].tolist()
        nodes = self.arrays["source.node"][ranks].tolist()
        return [
            files[f] if n <= 0 else f"{files[f]}#{n}" for f, n in zip(found, nodes, strict=True)
        ]

    def tarballs(self, ranks: np.ndarray) -> list[str]:
        """Each rank's tarball ("": none known): the URL of a remote mirror's (its mirror's
        prefix, held once, then the path within it), the path of a local one's."""
        blob, offsets = self.arrays["tarball.blob"], self.arrays["tarball.offsets"]
        starts, ends = offsets[ranks].tolist(), offsets[ranks + 1].tolist()
        prefixes = self.tarball_prefixes()
        mirrors = self.arrays["tarball.mirror"][ranks].tolist()
        return [
            prefixes[m] + blob[a:b].tobytes().decode() if b > a else ""
            for a, b, m in zip(starts, ends, mirrors, strict=True)
        ]

    def tarball_prefixes(self) -> list[str]:
        """Per mirror code, what goes before each tarball it gives: a remote mirror's URL."""

        def make() -> list[str]:
            a = self.arrays
            return Strings.unpacked(a["tarball.prefix.blob"], a["tarball.prefix.offsets"]).values

        return self._table("tarball_prefixes", make)

    # -- dependencies ------------------------------------------------------------------------

    def children(self, rank: int) -> np.ndarray:
        """The ranks (in order) of the specs this one depends on directly."""
        ptr, child = self.deps
        return child[ptr[rank] : ptr[rank + 1]]

    def parents(self, rank: int) -> np.ndarray:
        """The ranks (in order) of the specs depending on this one directly."""
        return self.in_edges(rank)[0]

    def edges(self, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(child ranks, deptype bits, virtual set codes) of a spec's dependency edges."""
        ptr, child = self.deps
        at = slice(ptr[rank], ptr[rank + 1])
        return child[at], self.dep_types[at], self.dep_virtuals[at]

    def in_edges(self, rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(parent ranks, in order; deptype bits, virtual set codes) of the edges into a spec."""
        ptr, parent = self.rdeps
        row = int(self.up_row[rank])
        other = row + self.n
        at = np.r_[ptr[row] : ptr[row + 1], ptr[other] : ptr[other + 1]]
        ranks = self.up_rank[parent[at]]
        order = np.argsort(ranks, kind="stable")
        edges = self.rdep_edge[at[order]]
        return ranks[order], self.dep_types[edges], self.dep_virtuals[edges]

    def dependent_rows(self, ranks: np.ndarray) -> np.ndarray:
        """The rows of ``rdeps`` holding these specs' parents: the link/run row and the other.

        >>> from cachegraph.graph.store.example import example_graph
        >>> store = example_graph().store  # the hdf5 specs (ranks 1, 2) after what they link
        >>> store.up_row.tolist(), store.dependent_rows(np.array([0, 2])).tolist()
        ([0, 3, 4, 1, 2], [0, 4, 5, 9])
        """
        rows = self.up_row[np.asarray(ranks, np.int64)].astype(np.int64)
        return np.concatenate([rows, rows + self.n])

    def ranked(self, mask: np.ndarray) -> np.ndarray:
        """A mask over ``rdeps``'s numbering (a walk up) as a mask over ranks.

        >>> from cachegraph.graph.store.example import example_graph
        >>> store = example_graph().store
        >>> mask = np.zeros(store.n, bool)
        >>> mask[store.up_row[[1, 3]]] = True
        >>> np.flatnonzero(store.ranked(mask)).tolist()
        [1, 3]
        """
        return mask[self.up_row]

    @property
    def linked_dependents(self) -> tuple[np.ndarray, np.ndarray]:
        """(row pointers, parents) of the link and run edges only, by child: the first half of
        ``rdeps``'s rows, a table of its own (what ``^`` walks up), numbered as ``rdeps``
        (``up_row``, ``ranked``)."""
        ptr, parent = self.rdeps
        return ptr[: self.n + 1], parent[: ptr[self.n]]

    @property
    def edge_count(self) -> int:
        return len(self.deps[1])

    def __repr__(self) -> str:
        return f"<Store {self.n} specs, {self.edge_count} dependency edges>"
