"""Build a Store from what the sources read: ``StoreBuilder``.

Sources add *rows* as they read them, into growing columns of codes (a page's
rows, an index's nodes, the specs a mirror holds, dependency edges by hash);
nothing is decided per spec while reading. ``finish`` then decides every spec
at once, in numpy: the rows of one hash (other tags, other pages, other
mirrors) become one spec, the first page's record winning, as before; the
stacks holding it in each tag, its mirrors, size and tarball are merged; edges
are resolved by hash; the specs are put in contract order and the indices made.

What is read in a second process is a builder too: ``merge`` takes its
columns, recoding its tables into this one's. Rows carry the position of the
file they came from, so the answer -- problems included -- does not depend on
which process read what.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

import numpy as np

from ..attributes import COMPARED
from ..spack.names import NO_COMPILER, version_key
from . import levels
from .columns import ATTRS, DEPTYPE_BITS, STRINGS, Index, Store, explode
from .records import MirrorInfo
from .tables import CODE, Sets, Strings, dense, recode, set_codes

#: A problem found while building: (sort key, path, message, severity). The key sorts it
#: among the readers' problems: (stage, file position, row, order).
Found = tuple[tuple[int, int, int, int], str, str, str]
#: the key of a problem about a whole file, after those of its rows
WHOLE_FILE = 1 << 30


def _ints(typecode: str) -> array:
    return array(typecode)


class StoreBuilder:
    """Rows as sources read them; ``finish`` makes the Store."""

    def __init__(self) -> None:
        self.strings = {kind: Strings() for kind in STRINGS}
        for name in DEPTYPE_BITS:  # build, link, run, test: bits 0-3
            self.strings["deptype"].code(name)
        self._variant_sets: dict[tuple[str, ...], int] = {}
        self._stack_sets: dict[tuple[str, ...], int] = {}
        self._virtual_sets: dict[tuple[str, ...], int] = {}
        self._deptype_masks: dict[tuple[str, ...], int] = {}
        self.variant_rows: list[tuple[int, ...]] = []
        self.stack_rows: list[tuple[int, ...]] = []
        self.virtual_rows: list[tuple[int, ...]] = []
        self.mirrors: list[MirrorInfo] = []
        #: mirror name -> what goes before each of its tarballs when answered (a remote
        #: mirror's URL): held once here, not in each of its tarballs' rows
        self.tarball_prefixes: dict[str, str] = {}
        #: the position of the source being read: rows sort by it
        self.position = 0
        # records: one row per page row or spec node read
        self.r_hash = bytearray()
        self.r_codes = {a: _ints("I") for a in ATTRS}
        self.r_variants = _ints("I")
        self.r_size = _ints("d")
        self.r_file = _ints("I")
        self.r_number = _ints("i")  # the row (pages) or node (spec files, indices) number
        self.r_page = bytearray()
        self.r_tag = _ints("i")  # pages: the tag listing it; -1 for a node
        self.r_stacks = _ints("i")  # pages: the stack set listing it
        self.r_position = _ints("i")
        # holdings: a mirror holds a spec, in its tag and stack
        self.h_hash = bytearray()
        self.h_mirror = _ints("I")
        self.h_size = _ints("d")
        self.h_tarball = bytearray()
        self.h_tarball_end = _ints("q")
        # dependency edges: the parent's record row, the child's hash
        self.e_parent = _ints("i")
        self.e_child = bytearray()
        self.e_types = bytearray()
        self.e_virtuals = _ints("I")

    # -- codes -------------------------------------------------------------------------------

    def variant_codes(self, rows: Sequence[tuple[str, ...]]) -> list[int]:
        """The code of each variant tuple, as recorded: a large load repeats a few thousand."""
        known = self._variant_sets
        found = list(map(known.get, rows))
        if None in found:
            codes = self.strings["variant"].codes
            for i, row in enumerate(rows):
                if found[i] is None:
                    code = known.get(row)
                    if code is None:
                        code = known[row] = len(self.variant_rows)
                        self.variant_rows.append(tuple(codes(row)))
                    found[i] = code
        return found

    def stack_codes(self, rows: Sequence[tuple[str, ...]]) -> list[int]:
        """The code of each list of stacks a page row gives (as a set)."""
        known = self._stack_sets
        found = list(map(known.get, rows))
        if None in found:
            codes = self.strings["stack"].codes
            for i, row in enumerate(rows):
                if found[i] is None:
                    code = known.get(row)
                    if code is None:
                        code = known[row] = len(self.stack_rows)
                        self.stack_rows.append(tuple(sorted(set(codes(row)))))
                    found[i] = code
        return found

    def virtual_code(self, virtuals: tuple[str, ...]) -> int:
        code = self._virtual_sets.get(virtuals)
        if code is None:
            code = self._virtual_sets[virtuals] = len(self.virtual_rows)
            table = self.strings["virtual"]
            self.virtual_rows.append(tuple(sorted(set(table.codes(virtuals)))))
        return code

    def deptype_masks(self, rows: Sequence[tuple[str, ...]]) -> list[int]:
        """``deptype_mask`` of each: nearly all are known, so they are looked up in one pass."""
        found = list(map(self._deptype_masks.get, rows))
        if None in found:
            found = [
                self.deptype_mask(r) if f is None else f for r, f in zip(rows, found, strict=True)
            ]
        return found

    def virtual_codes(self, rows: Sequence[tuple[str, ...]]) -> list[int]:
        """``virtual_code`` of each, in one pass when all are known."""
        found = list(map(self._virtual_sets.get, rows))
        if None in found:
            found = [
                self.virtual_code(r) if f is None else f for r, f in zip(rows, found, strict=True)
            ]
        return found

    def deptype_mask(self, deptypes: tuple[str, ...]) -> int:
        """The bits of these deptypes; a name Spack does not have takes one of bits 4-7."""
        mask = self._deptype_masks.get(deptypes)
        if mask is None:
            table = self.strings["deptype"]
            codes = [table.code(d) for d in deptypes]
            if max(codes, default=0) >= 8:
                raise ValueError(f"more than eight deptypes: {sorted(table.values)[:12]}")
            mask = self._deptype_masks[deptypes] = sum({1 << c for c in codes})
        return mask

    def file_code(self, path: str) -> int:
        return self.strings["file"].code(path)

    # -- rows --------------------------------------------------------------------------------

    def add_records(
        self,
        hashes: list[str],
        columns: dict[str, list],
        variants: list[int],
        file: int,
        numbers: Sequence[int],
        page: bool,
        sizes: Sequence[float] | None = None,
        tag: str | None = None,
        stacks: Sequence[int] | None = None,
    ) -> None:
        """Rows of records: a page's (``page``, listed in ``tag`` by ``stacks``) or nodes.

        ``columns`` holds each attribute's values (``compiler`` None for none).
        """
        count = len(hashes)
        tag_code = -1 if tag is None else self.strings["tag"].code(tag)
        self.add_rows(
            hashes, columns, variants, np.full(count, file), np.asarray(numbers), page, sizes,
            np.full(count, tag_code), stacks, np.full(count, self.position),
        )  # fmt: skip

    def add_rows(
        self,
        hashes: list[str],
        columns: dict[str, list],
        variants: list[int],
        files: np.ndarray,
        numbers: np.ndarray,
        page: bool,
        sizes: Sequence[float] | None,
        tags: np.ndarray,
        stacks: Sequence[int] | None,
        positions: np.ndarray,
    ) -> None:
        """``add_records`` of rows from several sources at once (pages read together): the
        file code, tag code (-1: none) and load position of each row given."""
        count = len(hashes)
        self.r_hash += "".join(hashes).encode("ascii")
        for a in ATTRS:
            values = columns[a]
            if a == "compiler" and None in values:
                values = [NO_COMPILER if v is None else v for v in values]
            self.r_codes[a].extend(self.strings[a].codes(values))
        self.r_variants.extend(variants)
        if sizes is None:
            _extend(self.r_size, np.full(count, np.nan))
        else:
            self.r_size.extend(sizes)
        _extend(self.r_file, files)
        _extend(self.r_number, numbers)
        self.r_page.extend(b"\x01" * count if page else b"\x00" * count)
        _extend(self.r_tag, tags)
        if stacks is None:
            _extend(self.r_stacks, np.full(count, -1))
        else:
            self.r_stacks.extend(stacks)
        _extend(self.r_position, positions)

    def add_mirror(self, mirror: MirrorInfo, tarball_prefix: str = "") -> int:
        """A mirror read; ``tarball_prefix`` goes before each of its tarballs (``add_held``)
        when they are answered."""
        self.strings["tag"].code(mirror.tag)
        self.strings["stack"].code(mirror.stack)
        self.mirrors.append(mirror)
        if tarball_prefix:
            self.tarball_prefixes[mirror.name] = tarball_prefix
        return self.strings["mirror"].code(mirror.name)

    def add_held(
        self, hashes: list[str], mirror: int, sizes: Sequence[float], tarballs: Sequence[str]
    ) -> None:
        """``mirror`` holds these specs (already read), and their tarballs (below its
        ``tarball_prefix``; "": none) and sizes (NaN: none)."""
        self.h_hash += "".join(hashes).encode("ascii")
        self.h_mirror.extend([mirror] * len(hashes))
        self.h_size.extend(sizes)
        for tarball in tarballs:
            self.h_tarball += tarball.encode()
            self.h_tarball_end.append(len(self.h_tarball))

    def add_edges(
        self, parents: Sequence[int], children: list[str], types: list[int], virtuals: list[int]
    ) -> None:
        """Dependency edges from record rows (as ``add_records`` numbered them: from 0, in
        order) to the specs with these hashes, of these deptype bits and virtual sets."""
        self.e_parent.extend(parents)
        self.e_child += "".join(children).encode("ascii")
        self.e_types += bytes(types)
        self.e_virtuals.extend(virtuals)

    def versions_of(self, hashes: Iterable[str], since: int = 0) -> dict[str, str]:
        """The version of each of these hashes that a row read so far (from row ``since``)
        describes.

        >>> b = StoreBuilder()
        >>> b.add_records(["a" * 32], {**{a: ["x"] for a in ATTRS}, "version": ["1.2"]},
        ...               [0], 0, [0], False)
        >>> b.versions_of(["a" * 32, "b" * 32])
        {'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa': '1.2'}
        """
        wanted = np.array(sorted({h.encode("ascii", "replace") for h in hashes}), "S32")
        read = _hashes(self.r_hash)[since:]
        rows = np.flatnonzero(np.isin(read, wanted))
        versions, codes = self.strings["version"].values, _np(self.r_codes["version"])[since:]
        return {read[row].decode(): versions[codes[row]] for row in rows.tolist()}

    @property
    def record_count(self) -> int:
        return len(self.r_hash) // 32

    # -- what a second process read ---------------------------------------------------------

    def merge(self, other: StoreBuilder) -> None:
        """Add the rows ``other`` read, its codes turned into this builder's; it is emptied
        as it goes (both whole at once were the peak of a load: 2.9 GB at a million specs)."""
        into = {k: np.array(self.strings[k].codes(other.strings[k].values), np.int64)
                for k in STRINGS}  # fmt: skip
        variants = np.array(self.variant_codes([
            tuple(other.strings["variant"].values[c] for c in row) for row in other.variant_rows
        ]), np.int64)  # fmt: skip
        stacks = np.array(self.stack_codes([
            tuple(other.strings["stack"].values[c] for c in row) for row in other.stack_rows
        ]), np.int64)  # fmt: skip
        virtuals = np.array([
            self.virtual_code(tuple(other.strings["virtual"].values[c] for c in row))
            for row in other.virtual_rows
        ], np.int64)  # fmt: skip
        for mirror in other.mirrors:
            self.add_mirror(mirror, other.tarball_prefixes.get(mirror.name, ""))
        rows = self.record_count
        self.r_hash += other.r_hash
        for a in ATTRS:
            _extend(self.r_codes[a], recode(_np(other.r_codes[a]), into[a]))
            other.r_codes[a] = _ints("I")
        _extend(self.r_variants, recode(_np(other.r_variants), variants))
        self.r_size.extend(other.r_size)
        _extend(self.r_file, recode(_np(other.r_file), into["file"]))
        self.r_number.extend(other.r_number)
        self.r_page += other.r_page
        # -1 (a node's: no tag, no stacks) stays -1: the last of each mapping.
        _extend(self.r_tag, np.r_[into["tag"], -1][_np(other.r_tag)])
        _extend(self.r_stacks, np.r_[stacks, -1][_np(other.r_stacks)])
        self.r_position.extend(other.r_position)
        other.drop("r_hash", "r_variants", "r_size", "r_file", "r_number", "r_page", "r_tag")
        other.drop("r_stacks", "r_position")
        self.h_hash += other.h_hash
        _extend(self.h_mirror, recode(_np(other.h_mirror), into["mirror"]))
        self.h_size.extend(other.h_size)
        _extend(self.h_tarball_end, _np(other.h_tarball_end) + len(self.h_tarball))
        self.h_tarball += other.h_tarball
        other.drop("h_hash", "h_mirror", "h_size", "h_tarball_end", "h_tarball")
        _extend(self.e_parent, _np(other.e_parent) + rows)
        other.drop("e_parent")
        self.e_child += other.e_child
        other.drop("e_child")
        types = np.frombuffer(bytes(other.e_types), np.uint8)
        self.e_types += _remap_bits(types, into["deptype"]).tobytes()
        _extend(self.e_virtuals, recode(_np(other.e_virtuals), virtuals))
        other.drop("e_types", "e_virtuals")

    # -- the end -----------------------------------------------------------------------------

    def finish(self) -> tuple[Store, list[Found], int]:
        """The store, the problems found deciding it, and how many page rows were skipped.

        It consumes the builder: each column is emptied once decided, not held through
        the rest of the build (the edges by hash alone are 32 bytes an edge read).
        """
        return _Finisher(self).run()

    def drop(self, *names: str) -> None:
        """Empty these columns (``finish`` is done with them)."""
        for name in names:
            column = getattr(self, name)
            setattr(
                self, name, _ints(column.typecode) if isinstance(column, array) else bytearray()
            )


def _np(values: array) -> np.ndarray:
    return np.frombuffer(values, dtype=values.typecode) if len(values) else np.zeros(0, np.int64)


def _extend(column: array, values: np.ndarray) -> None:
    # No bytes object between: a copy more of each column merged (the peak of a load).
    values = np.ascontiguousarray(values, dtype=column.typecode)
    column.frombytes(memoryview(values).cast("B"))


def _remap_bits(masks: np.ndarray, mapping: np.ndarray) -> np.ndarray:
    out = np.zeros(len(masks), np.uint8)
    for bit in range(min(8, len(mapping))):
        out |= (((masks >> bit) & 1) << int(mapping[bit])).astype(np.uint8)
    return out


def _gathered(
    data: np.ndarray, first: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(blob, offsets): ``data[first[i]:first[i] + lengths[i]]`` of each ``i``, one after
    another.

    Gathered a block at a time as rows of the block's longest length (each a copy of that
    many bytes from where its string starts), then the bytes past each string's end left
    out: four times quicker than gathering byte by byte (a position of 8 bytes a byte), for
    strings as short as tarballs' paths. A block with a longer string is gathered by byte.

    >>> blob, offsets = _gathered(np.frombuffer(b"abcdef", np.uint8), np.array([4, 0, 1]),
    ...                           np.array([2, 0, 2]))
    >>> blob.tobytes(), offsets.tolist()
    (b'efbc', [0, 2, 2, 4])
    """
    count = len(lengths)
    offsets = np.zeros(count + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    blob = np.empty(int(offsets[-1]), np.uint8)
    step = 1 << 14
    for block in range(0, count if len(blob) else 0, step):
        part = slice(block, block + step)
        begin, end = offsets[block], offsets[min(block + step, count)]
        width = int(lengths[part].max())
        if width <= _ROW_BYTES:
            blob[begin:end] = _rows(data, first[part], width)[
                np.arange(width) < lengths[part][:, None]
            ]
        else:
            at = np.repeat(first[part] - offsets[:-1][part], lengths[part])
            blob[begin:end] = data[at + np.arange(begin, end)]
    return blob, offsets


#: the longest string gathered as rows (a block of them is 16,384 times this)
_ROW_BYTES = 1024


def _rows(data: np.ndarray, first: np.ndarray, width: int) -> np.ndarray:
    """The ``width`` bytes from each ``first`` (zeros past the end of ``data``)."""
    if width == 0:
        return np.zeros((len(first), 0), np.uint8)
    last = len(data) - width  # the last start a whole row fits after
    if last >= 0 and (not len(first) or first.max() <= last):
        return np.lib.stride_tricks.sliding_window_view(data, width)[first]
    # near the end: those rows from the end of data padded, the rest as above
    tail_at = max(last, 0)
    tail = np.zeros(len(data) - tail_at + width, np.uint8)
    tail[: len(data) - tail_at] = data[tail_at:]
    rows = np.empty((len(first), width), np.uint8)
    near = first > last
    rows[near] = np.lib.stride_tricks.sliding_window_view(tail, width)[first[near] - tail_at]
    if not near.all():
        rows[~near] = np.lib.stride_tricks.sliding_window_view(data, width)[first[~near]]
    return rows


_NO_BYTES = np.zeros(0, np.uint8)


def _hashes(data: bytearray) -> np.ndarray:
    return np.frombuffer(data, "S32") if data else np.zeros(0, "S32")


def _prefix(hashes: np.ndarray) -> np.ndarray:
    """Each hash's first eight bytes as a big-endian integer: ordered as the hashes are.

    >>> _prefix(np.array([b"abcdefgh" + b"x" * 24], "S32")).tolist() == [
    ...     int.from_bytes(b"abcdefgh", "big")]
    True
    """
    eight = np.ascontiguousarray(hashes.view(np.uint8).reshape(-1, 32)[:, :8])
    return eight.view(">u8").ravel().astype(np.uint64)


def _hash_order(hashes: np.ndarray) -> np.ndarray:
    """``np.argsort(hashes, kind="stable")``, sorted as integers: numpy compares 32-byte
    strings a byte at a time, and a stable sort of them took most of deciding the specs.

    Each hash's first bytes (as many as fit beside the row number) and its row, in one
    integer, are sorted at once: rows of one hash come in the order read, as a stable sort
    keeps them. Only rows whose hashes share those bytes but differ later (a few thousand
    in a million) are sorted again, by the whole hash.

    >>> h = np.array([b"b" * 32, b"a" * 32, b"a" * 8 + b"c" * 24, b"a" * 32, b"a" * 8 + b"b" * 24])
    >>> _hash_order(h).tolist() == np.argsort(h, kind="stable").tolist()
    True
    """
    count = len(hashes)
    row_bits = max(count - 1, 1).bit_length()
    if not count or row_bits > 40:
        return np.argsort(hashes, kind="stable")
    shift = np.uint64(row_bits)
    start = _prefix(hashes) >> shift
    order = np.argsort((start << shift) | np.arange(count, dtype=np.uint64))
    start = start[order]
    shared = np.flatnonzero(start[1:] == start[:-1])  # the next row has the same start
    mixed = shared[hashes[order[shared]] != hashes[order[shared + 1]]]
    if len(mixed):
        runs = np.cumsum(np.r_[True, start[1:] != start[:-1]])  # run of each position
        again = np.flatnonzero(np.isin(runs, runs[mixed]))  # positions in a run to sort again
        rows = order[again]
        order[again] = rows[np.lexsort((hashes[rows], runs[again]))]  # stable: by row within
    return order


class _Finisher:
    """``StoreBuilder.finish`` step by step: each method one decision over every row."""

    def __init__(self, builder: StoreBuilder) -> None:
        self.b = builder
        self.problems: list[Found] = []
        self.arrays: dict[str, np.ndarray] = {}
        self._prefixes: np.ndarray | None = None  # of spec_hashes, made on first lookup
        self._sorted: dict[str, np.ndarray] = {}  # sorted_codes of each table asked

    def run(self) -> tuple[Store, list[Found], int]:
        b = self.b
        self.rows()
        skipped = self.winners()
        self.order()
        # The edges first, then the held rows: each set of columns gone before the next is
        # decided (both with the rows were the peak of a load).
        self.dependencies()
        self.held()
        self.layouts()
        self.compilers_from_dependencies()
        self.tables()
        self.r = None  # the rows' columns: not needed for the indices
        self.indices()
        mirrors = sorted({m.name: m for m in b.mirrors}.values(), key=lambda m: m.name)
        return Store(self.arrays, mirrors), self.problems, skipped

    # -- rows and the spec each becomes -----------------------------------------------------

    def rows(self) -> None:
        b = self.b
        # Views of the builder's columns, not copies: a million rows are some 60 MB.
        cols = {
            "hash": _hashes(b.r_hash),
            **{a: _np(b.r_codes[a]) for a in ATTRS},
            "variants": _np(b.r_variants),
            "size": _np(b.r_size),
            "file": _np(b.r_file),
            "number": _np(b.r_number),
            "page": np.frombuffer(b.r_page, bool) if b.r_page else np.zeros(0, bool),
            "tag": _np(b.r_tag),
            "stacks": _np(b.r_stacks),
            "position": _np(b.r_position),
        }
        position = cols["position"]
        self.read_from = None  # the builder's row of each row, when they were put in order
        if len(position) and np.any(position[1:] < position[:-1]):  # joined from two processes
            order = np.argsort(position, kind="stable")
            cols = {k: v[order] for k, v in cols.items()}
            self.read_from = order
        self.r = cols
        # The builder's columns are the rows' now (or copied into them): not held beside.
        b.drop("r_hash", "r_variants", "r_size", "r_file", "r_number", "r_page", "r_tag")
        b.drop("r_stacks", "r_position")
        b.r_codes = {a: _ints("I") for a in ATTRS}

    def winners(self) -> int:
        """Group rows by hash; each group's first page row is the spec (else its first row).

        A page row naming another package than the hash's first row is skipped (an
        error); one that differs from the spec in another attribute is a warning.
        """
        r = self.r
        count = len(r["hash"])
        order = _hash_order(r["hash"])
        sorted_hashes = r["hash"][order]
        starts_mask = (
            np.r_[True, sorted_hashes[1:] != sorted_hashes[:-1]] if count else np.zeros(0, bool)
        )
        group_sorted = np.cumsum(starts_mask) - 1
        group = np.empty(count, np.int64)
        group[order] = group_sorted
        first = order[starts_mask]
        self.spec_hashes = sorted_hashes[starts_mask]  # sorted: a spec's position
        page = r["page"]
        other_package = page & (r["package"] != r["package"][first][group])
        candidate = page & ~other_package
        winner = first.copy()
        at = np.flatnonzero(candidate[order])
        if len(at):
            groups = group_sorted[at]  # in order: the first of each is where it changes
            firsts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
            winner[groups[firsts]] = order[at[firsts]]
        self.group, self.winner = group, winner
        self.listed = page & ~other_package  # the page rows whose listing counts
        # The record a later row met: the first page row before it, else the group's first.
        met = np.where(winner[group] < np.arange(count), winner[group], first[group])
        for row in np.flatnonzero(other_package).tolist():
            known = met[row]
            h = r["hash"][row].decode()
            self.problem(
                row,
                f"record {r['number'][row]} ({h}): hash {h} is listed under package "
                f"{self.value('package', r['package'][row])!r} but already under "
                f"{self.value('package', r['package'][known])!r} ({self.source(known)}); "
                "record skipped",
            )
        later = np.flatnonzero(candidate & (winner[group] != np.arange(count)))
        known = winner[group[later]]
        # Compared column by column; only the rows that differ somewhere are looked at.
        differs = {name: r[name][later] != r[name][known] for name in COMPARED}
        for at in np.flatnonzero(np.any(list(differs.values()), axis=0)).tolist():
            row, first_row = int(later[at]), int(known[at])
            for name in COMPARED:
                if differs[name][at]:
                    self.problem(
                        row,
                        f"record {r['number'][row]}: hash {r['hash'][row].decode()}: {name} is "
                        f"{self.value(name, r[name][row])!r} here but "
                        f"{self.value(name, r[name][first_row])!r} in {self.source(first_row)}; "
                        "keeping the first",
                        "warning",
                    )
        return int(np.count_nonzero(other_package))

    def value(self, name: str, code: int):
        b = self.b
        if name == "variants":
            return tuple(b.strings["variant"].values[c] for c in b.variant_rows[code])
        value = b.strings[name].values[code]
        return None if name == "compiler" and value == NO_COMPILER else value

    def source(self, row: int) -> str:
        path = self.b.strings["file"].values[self.r["file"][row]]
        return path if self.r["page"][row] else f"{path}#{self.r['number'][row]}"

    def problem(self, row: int, message: str, severity: str = "error", stage: int = 0) -> None:
        r = self.r
        key = (stage, int(r["position"][row]), int(r["number"][row]), len(self.problems))
        path = self.b.strings["file"].values[r["file"][row]]
        self.problems.append((key, path, message, severity))

    # -- mirrors ---------------------------------------------------------------------------

    def held(self) -> None:
        """Which mirrors hold each spec; its size and tarball from the first mirror by name
        that gives one (a mirror's size wins over a page's)."""
        b = self.b
        spec_count = len(self.spec_hashes)
        hashes = _hashes(b.h_hash)
        mirror_names = b.strings["mirror"]
        by_name = mirror_names.sorted_codes()
        spec = self.spec_of(hashes)
        found = spec >= 0
        spec, mirror = spec[found], by_name[_np(b.h_mirror).astype(np.int64)[found]]
        sizes = _np(b.h_size).astype(np.float64)[found]
        ends = _np(b.h_tarball_end).astype(np.int64)
        starts = np.r_[0, ends[:-1]] if len(ends) else ends
        starts, ends = starts[found], ends[found]
        self.holding = (spec, mirror)
        winner = self.winner
        size = self.r["size"][winner].copy()
        order = np.lexsort((mirror, spec))
        with_size = order[~np.isnan(sizes[order])]
        groups, firsts = np.unique(spec[with_size], return_index=True)
        size[groups] = sizes[with_size[firsts]]
        self.spec_size = size
        with_tarball = order[(ends > starts)[order]]
        groups, firsts = np.unique(spec[with_tarball], return_index=True)
        # Each spec's tarball, gathered now in hash order: the held rows' (a path each, 2.8M
        # at a million mirror specs: some 200 MB) are not kept through the rest.
        chosen = with_tarball[firsts]
        first = np.zeros(spec_count, np.int64)
        lengths = np.zeros(spec_count, np.int64)
        first[groups], lengths[groups] = starts[chosen], ends[chosen] - starts[chosen]
        self.tarball_mirror = np.zeros(spec_count, CODE)  # by name: whose prefix it takes
        self.tarball_mirror[groups] = mirror[chosen]
        del hashes, spec, found, sizes, starts, ends, order, with_size, with_tarball, chosen
        held = np.frombuffer(b.h_tarball, np.uint8) if b.h_tarball else _NO_BYTES
        self.tarball = _gathered(held, first, lengths)
        del held
        self.mirror_order = by_name
        b.drop("h_hash", "h_mirror", "h_size", "h_tarball_end", "h_tarball")

    # -- contract order ------------------------------------------------------------------------

    def order(self) -> None:
        """Specs by package name, then Spack's version order, then hash: each spec's rank."""
        b, r, winner = self.b, self.r, self.winner
        package_rank = self.sorted_codes("package")[r["package"][winner]]
        version_rank = self.sorted_codes("version")[r["version"][winner]]
        spec_count = len(self.spec_hashes)
        versions = len(b.strings["version"])
        if len(b.strings["package"]) * versions * spec_count < 1 << 62:
            # one sort of distinct integers, not three stable ones (a spec is its hash's
            # position: the last key)
            key = (package_rank * versions + version_rank) * spec_count + np.arange(spec_count)
            order = np.argsort(key)
        else:
            order = np.lexsort((np.arange(spec_count), version_rank, package_rank))
        rank_of = np.empty(spec_count, np.int64)  # spec (hash position) -> rank
        rank_of[order] = np.arange(spec_count)
        self.rank_of, self.by_rank = rank_of, order  # by_rank: rank -> spec

    def sorted_codes(self, kind: str) -> np.ndarray:
        """``Strings.sorted_codes`` of a table (versions in Spack's order), worked out once
        while the table holds the same strings."""
        table = self.b.strings[kind]
        found = self._sorted.get(kind)
        if found is None or len(found) != len(table):
            found = self._sorted[kind] = table.sorted_codes(
                version_key if kind == "version" else None
            )
        return found

    # -- stacks per tag, and mirrors ---------------------------------------------------------

    def layouts(self) -> None:
        """Each spec's layout (tag -> stacks holding it there) and mirror set, as codes."""
        b, r = self.b, self.r
        spec_count = len(self.spec_hashes)
        stack_table = Sets.from_rows(b.stack_rows)
        page_rows = np.flatnonzero(self.listed & (r["tag"] >= 0))
        page_spec, page_tag = self.group[page_rows], r["tag"][page_rows]
        # The mirrors' listings: their tag, and the one stack each holds its specs in.
        spec, mirror = self.holding
        names = b.strings["mirror"].values
        infos = {m.name: m for m in b.mirrors}
        sorted_names = sorted(names)
        mirror_tag = np.array([b.strings["tag"].find(infos[n].tag) for n in sorted_names], np.int64)
        mirror_stack = np.array(
            [b.strings["stack"].find(infos[n].stack) for n in sorted_names], np.int64
        )
        tags = max(len(b.strings["tag"]), 1)
        keys = np.r_[page_spec * tags + page_tag, spec * tags + mirror_tag[mirror]]
        groups, inverse = dense(keys, spec_count * tags)
        owner, member = explode(stack_table, r["stacks"][page_rows])
        members_owner = np.r_[inverse[: len(page_rows)][owner], inverse[len(page_rows) :]]
        members = np.r_[member.astype(np.int64), mirror_stack[mirror]]
        stack_set, self.stack_sets = set_codes(members_owner, members, len(groups))
        width = len(self.stack_sets)
        layout, self.layout_sets = set_codes(
            groups // tags, (groups % tags) * width + stack_set, spec_count
        )
        self.spec_layout = layout
        self.spec_mirrors, self.mirror_sets = set_codes(spec, mirror, spec_count)

    # -- dependencies ------------------------------------------------------------------------

    def dependencies(self) -> None:
        """Edges by rank, in the order they were read; an unknown child is an error.

        A hash names one spec and its whole DAG, so its edges are those of the first row
        that gave any (another process may have read the same node again); a node that
        names one child twice has one edge, its deptypes and virtuals merged.

        The edges kept are chosen by row, before any is looked at, and only theirs are
        looked up: a million specs held by 2.8 mirrors each are 31M edges read, 11M kept,
        and each array the size of those read was the peak of the load.
        """
        b, r = self.b, self.r
        edge, rows, lengths = self._first_edges()
        child = self.spec_of(_hashes(b.e_child), edge, np.int32)  # by hash where they lie
        missing = np.flatnonzero(child < 0)
        unknown = _hashes(b.e_child)[edge[missing]] if len(missing) else []
        b.drop("e_child")  # 32 bytes an edge read: gone before the rest is made
        types = np.frombuffer(b.e_types, np.uint8)[edge] if b.e_types else _NO_BYTES
        virtuals = _np(b.e_virtuals).astype(np.uint32, copy=False)[edge]
        del edge
        b.drop("e_parent", "e_types", "e_virtuals")
        parent = np.repeat(self.group[rows], lengths)
        if len(missing):
            starts = np.cumsum(lengths) - lengths  # the first kept edge of each row
            owners = rows[np.searchsorted(starts, missing, side="right") - 1]
            for number, (row, child_hash) in enumerate(
                zip(owners.tolist(), unknown.tolist(), strict=True)
            ):
                key = (1, int(r["position"][row]), 0, number)
                self.problems.append((
                    key, b.strings["file"].values[r["file"][row]],
                    f"{self.spec_hashes[self.group[row]].decode()} depends on "
                    f"{child_hash.decode()}, which no loaded node describes; dependency dropped",
                    "error",
                ))  # fmt: skip
            keep = child >= 0
            parent, child, types, virtuals = (a[keep] for a in (parent, child, types, virtuals))
        self.edge_parent = self.rank_of[parent]
        del parent
        self.edge_child = self.rank_of[child]
        self.edge_types, self.edge_virtuals = types, virtuals

    def _first_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(edges, rows, counts): the builder's edges that count, in read order (their
        positions in its edge columns); the rows giving them, in read order; how many each.

        Worked out per row (a row's edges were added together), not by sorting the edges.
        """
        b = self.b
        parents = _np(b.e_parent)  # the builder's row of each edge
        row_count = len(self.group)
        counts = np.bincount(parents, minlength=row_count)  # per builder row
        ptr = np.zeros(row_count + 1, np.int64)
        np.cumsum(counts, out=ptr[1:])
        read_from = self.read_from
        if read_from is not None:  # rows as ``rows`` put them in order
            counts = counts[read_from]
        with_edges = np.flatnonzero(counts)  # rows, in read order
        _, firsts = np.unique(self.group[with_edges], return_index=True)
        rows = np.sort(with_edges[firsts])  # the first row of each spec that gave edges
        lengths = counts[rows]
        starts = ptr[rows if read_from is None else read_from[rows]]
        total = int(lengths.sum())
        kind = np.int32 if len(parents) < 1 << 31 else np.int64
        # each kept edge's position among the edges grouped by row
        edge = np.repeat((starts - (np.cumsum(lengths) - lengths)).astype(kind), lengths)
        edge += np.arange(total, dtype=kind)
        if len(parents) and np.any(parents[1:] < parents[:-1]):  # not added row by row
            edge = np.argsort(parents, kind="stable").astype(kind)[edge]
        return edge, rows, lengths

    def spec_of(
        self, hashes: np.ndarray, at: np.ndarray | None = None, kind: type = np.int64
    ) -> np.ndarray:
        """The spec (hash position) of each hash (of each ``hashes[at]``, when given); -1 for
        one no row has.

        Looked up by the hash's first eight bytes as an integer, then checked whole: numpy
        compares 32-byte strings a byte at a time, and the 19M edges of a million mirror
        specs took 41 s to find their child so, about a quarter of that by integer. Two
        hashes sharing eight bytes (40 bits: about one pair in a million hashes) are told
        apart by the whole-string search, for the few hashes the check leaves.
        """
        count = len(hashes) if at is None else len(at)
        found = np.full(count, -1, kind)
        if not count or not len(self.spec_hashes):
            return found
        if self._prefixes is None:  # sorted as the hashes are: bytes in the same order
            self._prefixes = _prefix(self.spec_hashes)
        last = len(self.spec_hashes) - 1
        step = 1 << 20  # a block at a time: 32 bytes a hash
        for start in range(0, count, step):
            block = hashes[start : start + step] if at is None else hashes[at[start : start + step]]
            # searched in their order: the prefixes are then read front to back, not at
            # random (two to three times quicker a million at a time, the sort included)
            keys = _prefix(block)
            order = np.argsort(keys)
            where = np.empty(len(keys), np.int64)
            where[order] = np.searchsorted(self._prefixes, keys[order])
            where = np.minimum(where, last, out=where)
            del keys, order
            hit = self.spec_hashes[where] == block
            missed = np.flatnonzero(~hit)
            if len(missed):  # absent, or behind another hash of the same first eight bytes
                again = np.minimum(np.searchsorted(self.spec_hashes, block[missed]), last)
                where[missed] = np.where(self.spec_hashes[again] == block[missed], again, -1)
            found[start : start + len(block)] = where
        return found

    def compilers_from_dependencies(self) -> None:
        """A Spack >= 1.0 node records no compiler: it is the dependency providing c, cxx
        or fortran (in that order; the first such edge read), as ``name@version``."""
        b, r = self.b, self.r
        none = b.strings["compiler"].find(NO_COMPILER)
        spec_count = len(self.spec_hashes)
        compiler = r["compiler"][self.winner].copy()
        self.spec_compiler = compiler
        if none is None or not len(self.edge_parent):
            return
        by_rank = self.by_rank
        parent_spec, child_spec = by_rank[self.edge_parent], by_rank[self.edge_child]
        needs = (compiler == none) & ~r["page"][self.winner]
        chosen = np.full(spec_count, -1, np.int64)
        table = b.strings["virtual"]
        virtual_sets = Sets.from_rows(b.virtual_rows)
        for name in ("c", "cxx", "fortran"):
            code = table.find(name)
            if code is None:
                continue
            provides = virtual_sets.contains(np.array([code]))[self.edge_virtuals]
            edges = np.flatnonzero(provides & needs[parent_spec] & (chosen[parent_spec] < 0))
            specs, firsts = np.unique(parent_spec[edges], return_index=True)
            chosen[specs] = child_spec[edges[firsts]]
        specs = np.flatnonzero(chosen >= 0)
        if not len(specs):
            return
        winner = self.winner[chosen[specs]]
        packages, versions = r["package"][winner], r["version"][winner]
        names = [
            f"{b.strings['package'].values[p]}@{b.strings['version'].values[v]}"
            for p, v in zip(packages.tolist(), versions.tolist(), strict=True)
        ]
        compiler[specs] = b.strings["compiler"].codes(names)

    # -- the tables, sorted, and the columns in rank order -----------------------------------------

    def tables(self) -> None:
        """Every table sorted -- strings by name (versions in Spack's order), sets by their
        members -- and every column recoded into them, in rank order: the same store
        whichever order the rows were read in, and codes that compare as the names do."""
        b, r, a = self.b, self.r, self.arrays
        by_rank, winner = self.by_rank, self.winner[self.by_rank]
        spec_count = len(by_rank)
        # First: merging an edge given twice may make a new set of virtuals.
        parent, child, types, edge_virtuals = self._merged_edges(spec_count)
        a["hashes"] = self.spec_hashes
        a["rank_of"] = self.rank_of.astype(np.int32)
        a["position_of"] = by_rank.astype(np.int32)
        remap: dict[str, np.ndarray] = {}
        for kind in STRINGS:
            table = b.strings[kind]
            if kind == "deptype":  # build, link, run, test keep their bits
                remap[kind] = np.arange(len(table))
            else:
                remap[kind] = self.sorted_codes(kind)
            values = [""] * len(table)
            for old, new in enumerate(remap[kind].tolist()):
                values[new] = table.values[old]
            a[f"strings.{kind}.blob"], a[f"strings.{kind}.offsets"] = Strings(values).packed()
        for attr in ATTRS:
            column = self.spec_compiler[by_rank] if attr == "compiler" else r[attr][winner]
            a[f"code.{attr}"] = recode(column, remap[attr])
        # Variant lists keep their recorded order; the lists are sorted among themselves.
        variants = _sorted_rows([tuple(remap["variant"][list(row)].tolist())
                                 for row in b.variant_rows])  # fmt: skip
        self._set_table("variants", variants[0])
        a["code.variants"] = recode(r["variants"][winner], variants[1])
        stacks = _sorted_rows([tuple(sorted(remap["stack"][list(row)].tolist()))
                               for row in self.stack_sets.rows()])  # fmt: skip
        self._set_table("stacks", stacks[0])
        width, new_width = len(self.stack_sets), max(len(stacks[0]), 1)
        layouts = _sorted_rows([
            tuple(sorted(int(remap["tag"][p // width]) * new_width + int(stacks[1][p % width])
                         for p in row))
            for row in self.layout_sets.rows()
        ])  # fmt: skip
        self._set_table("layouts", layouts[0])
        a["code.layout"] = recode(self.spec_layout[by_rank], layouts[1])
        mirrors = _sorted_rows(self.mirror_sets.rows())  # members are in name order already
        self._set_table("mirrors", mirrors[0])
        a["code.mirrors"] = recode(self.spec_mirrors[by_rank], mirrors[1])
        virtuals = _sorted_rows([tuple(sorted(remap["virtual"][list(row)].tolist()))
                                 for row in b.virtual_rows])  # fmt: skip
        self._set_table("virtuals", virtuals[0])
        a["size"] = self.spec_size[by_rank]
        a["from_page"] = r["page"][winner]
        a["source.file"] = recode(r["file"][winner], remap["file"])
        a["source.node"] = np.where(r["page"][winner], 0, r["number"][winner]).astype(np.int32)
        self.tarballs()
        # Dependencies, as rows by parent rank, children in rank order, and reversed.
        a["deps.ptr"] = _ptr(parent, spec_count)
        a["deps.child"] = child.astype(np.int32)
        a["deps.types"] = types
        a["deps.virtuals"] = recode(edge_virtuals, virtuals[1])
        # Reversed: a row per child, its link and run parents (rows 0..n-1: what '^' walks
        # up, one table of its own with no copy), then one of its other parents (n..2n-1);
        # specs numbered there by level (``levels``), so that a walk up reads nearby rows.
        linked = (types & (DEPTYPE_BITS["link"] | DEPTYPE_BITS["run"])) > 0
        ends = [e[linked].astype(np.int32) for e in (child, parent)]
        order, levelled = levels.upward_order(*ends, spec_count)
        del ends
        at = levels.inverse(order)
        row = at[child].astype(np.int64)
        row[~linked] += spec_count
        key = row * max(spec_count, 1)  # in place: at 1M, 90 MB an array of edges
        key += at[parent]
        back = np.argsort(key)
        del key
        a["rdeps.ptr"] = _ptr(row[back], 2 * spec_count)
        a["rdeps.parent"] = at[parent[back]]
        a["rdeps.edge"] = back.astype(np.int64)
        a["rdeps.order"] = order.astype(np.int32)
        a["rdeps.levelled"] = np.array([levelled], np.int64)

    def _merged_edges(self, spec_count: int) -> tuple[np.ndarray, ...]:
        """(parent, child, deptype bits, virtual set) of each edge, by parent then child;
        an edge given twice (a node naming one child twice) once, its types and sets joined."""
        b = self.b
        key = self.edge_parent * max(spec_count, 1) + self.edge_child
        # not a stable sort (twice as long): an edge given twice is merged the same either way
        order = np.argsort(key)
        key = key[order]
        types, virtuals = self.edge_types[order], self.edge_virtuals[order]
        again = np.flatnonzero(key[1:] == key[:-1]) + 1 if len(key) else key
        if len(again):  # rare: merged into the first of each run, the rest dropped
            first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            owner = np.searchsorted(first, again, side="right") - 1
            np.bitwise_or.at(types, first[owner], types[again])
            rows = b.virtual_rows
            for at, other in zip(first[owner].tolist(), again.tolist(), strict=True):
                joined = set(rows[virtuals[at]]) | set(rows[virtuals[other]])
                names = tuple(b.strings["virtual"].values[c] for c in sorted(joined))
                virtuals[at] = b.virtual_code(names)
            keep = np.ones(len(key), bool)
            keep[again] = False
            key, types, virtuals = key[keep], types[keep], virtuals[keep]
        width = max(spec_count, 1)
        return key // width, key % width, types, virtuals

    def tarballs(self) -> None:
        """Each spec's tarball, as one blob in rank order (from the blob in hash order
        ``held`` gathered; in numpy: a mirror's million a Python step each took a second),
        the mirror whose prefix goes before it, and each mirror's prefix (by name)."""
        blob, offsets = self.tarball
        self.tarball = None
        chosen = self.by_rank
        lengths = (offsets[1:] - offsets[:-1])[chosen]
        blob, offsets = _gathered(blob, offsets[:-1][chosen], lengths)
        self.arrays["tarball.blob"], self.arrays["tarball.offsets"] = blob, offsets
        self.arrays["tarball.mirror"] = self.tarball_mirror[chosen]
        self.tarball_mirror = None
        names = sorted(self.b.strings["mirror"].values)
        prefixes = Strings(self.b.tarball_prefixes.get(name, "") for name in names)
        self.arrays["tarball.prefix.blob"], self.arrays["tarball.prefix.offsets"] = (
            prefixes.packed()
        )

    def _set_table(self, name: str, rows: Sequence[tuple[int, ...]]) -> None:
        table = Sets.from_rows(rows)
        self.arrays[f"sets.{name}.indptr"], self.arrays[f"sets.{name}.members"] = (
            table.indptr,
            table.members,
        )

    # -- indices -------------------------------------------------------------------------------

    def indices(self) -> None:
        """Specs per code of every kind, in rank order: one stable sort each."""
        a, b = self.arrays, self.b
        sizes = {kind: len(b.strings[kind]) for kind in STRINGS}
        for attr in ATTRS:
            self._index(attr, Index.of(a[f"code.{attr}"], sizes[attr]))
        variants = Sets(a["sets.variants.indptr"], a["sets.variants.members"])
        owner, member = explode(variants, a["code.variants"].astype(np.int64))
        self._index("variant", Index.of(member, sizes["variant"], owner))
        owner, member = explode(Sets(a["sets.mirrors.indptr"], a["sets.mirrors.members"]),
                                a["code.mirrors"].astype(np.int64))  # fmt: skip
        self._index("mirror", Index.of(member, sizes["mirror"], owner))
        # Per layout: its tags, its stacks in each tag, and its stacks in any tag.
        layouts = Sets(a["sets.layouts.indptr"], a["sets.layouts.members"])
        stacks = Sets(a["sets.stacks.indptr"], a["sets.stacks.members"])
        width = len(stacks)
        stack_count = sizes["stack"]
        tags_of, pairs_of, any_of = [], [], []
        for row in layouts.rows():
            tags_of.append(tuple(p // width for p in row))
            pairs = sorted(
                {(p // width) * stack_count + s for p in row for s in stacks.row(p % width)}
            )
            pairs_of.append(tuple(pairs))
            any_of.append(tuple(sorted({s for p in row for s in stacks.row(p % width)})))
        layout = a["code.layout"].astype(np.int64)
        for kind, rows, size in (("tag", tags_of, sizes["tag"]),
                                 ("stack@tag", pairs_of, sizes["tag"] * stack_count),
                                 ("stack", any_of, stack_count)):  # fmt: skip
            owner, member = explode(Sets.from_rows(rows), layout)
            self._index(kind, Index.of(member, size, owner))

    def _index(self, kind: str, index: Index) -> None:
        self.arrays[f"index.{kind}.ptr"], self.arrays[f"index.{kind}.order"] = (
            index.ptr,
            index.order,
        )


def _sorted_rows(rows: Sequence[tuple[int, ...]]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """The rows sorted, and each old row's position among them.

    >>> _sorted_rows([(3,), (1, 2), ()])
    ([(), (1, 2), (3,)], array([2, 1, 0]))
    """
    order = sorted(range(len(rows)), key=rows.__getitem__)
    position = np.empty(len(rows), np.int64)
    position[order] = np.arange(len(rows))
    return [rows[i] for i in order], position


def _ptr(rows: np.ndarray, size: int) -> np.ndarray:
    ptr = np.zeros(size + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=size), out=ptr[1:])
    return ptr
