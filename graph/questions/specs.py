"""Specs by hash, and selections of specs: those matching a filter, in an order, paged.

``tag=None`` means every loaded tag, each spec counted once; a stack holds a
spec without a tag when it holds it in any tag.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .. import deadline
from ..attributes import ORDERED, SINGLE, with_attributes
from ..errors import AmbiguousHash, BadArgument, HashTooShort
from ..spack.names import NO_COMPILER, compiler_parts, current_compiler, normalize_compiler
from ..store import satisfies
from ..store.records import SpecRecord
from ..store.satisfies import Host, Test
from ..store.view import CacheGraph
from .overlaps import pair_counts
from .scope import layouts_holding, layouts_in_tag

MIN_PREFIX = 7

__all__ = ["Host", "SpecQuery", "SpecSelection", "select_specs", "spec_by_hash"]


def spec_by_hash(G: CacheGraph, text: str) -> SpecRecord | None:
    """The spec with this full hash or unique prefix (7+ characters); None if none.

    A leading ``/`` is accepted, as Spack's command line writes hashes.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    text : str
        A full hash or a unique prefix of 7 characters or more (a leading ``/`` allowed).

    Returns
    -------
    spec : SpecRecord or None
        None when no spec has it; HashTooShort for a prefix under 7 characters,
        AmbiguousHash when several specs have it.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> spec_by_hash(G, "/zzzzzzz").package, spec_by_hash(G, "xxxxxxx")
    ('zlib', None)
    >>> spec_by_hash(G, "zzz")
    Traceback (most recent call last):
    ...
    cachegraph.graph.errors.HashTooShort: hash prefix 'zzz' is 3 characters; give at least 7
    """
    prefix = text.strip().lstrip("/").lower()
    if len(prefix) < MIN_PREFIX:
        raise HashTooShort(prefix, MIN_PREFIX)
    store = G.store
    exact = store.rank(prefix)
    if exact is not None:
        return store.record(exact)
    start, end = store.prefixed(prefix)
    if end - start > 1:
        shown = store.hashes[start : min(end, start + 10)].astype("U32").tolist()
        raise AmbiguousHash(prefix, shown, end - start - len(shown))
    return store.record(int(store.rank_of[start])) if end > start else None


# -- spec selections ---------------------------------------------------------------


@dataclass(frozen=True)
@with_attributes(query=True)
class SpecQuery:
    """What a spec must match; every field is optional, lists need all their items. A field
    per attribute (``graph.attributes``: package, version, compiler, variants...), then these."""

    stacks: tuple[str, ...] = ()
    exclude_stacks: tuple[str, ...] = ()
    tag: str | None = None
    mirror: str | None = None
    #: a Spack constraint (``graph.spack.constraints``)
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
                value, mine = compiler_key(value), mine and compiler_key(mine)
            if mine is not None and mine != value:
                changes["impossible"] = True
            changes[name] = value
        return replace(self, **changes)

    def with_stack(self, stack: str) -> SpecQuery:
        return replace(self, stacks=(*self.stacks, stack))


def compiler_key(name: str) -> str:
    """A compiler name as the index keys it: normalized, ``none`` for no compiler.

    Parameters
    ----------
    name : str
        A compiler as written (``gcc@12``, ``GCC``, ``none``).

    Returns
    -------
    key : str
        The index's key.

    Examples
    --------
    >>> compiler_key("gcc@=13.2.0"), compiler_key("none")
    ('gcc@13.2.0', 'none')
    """
    return normalize_compiler(name) or NO_COMPILER


#: ranks per block a selection tests at once: small first (a default page of 50 and the one
#: more that says whether there is a next), then larger
_FIRST_BLOCK, _LARGEST_BLOCK = 51, 16384


@dataclass
class SpecSelection:
    """Specs matching a query, in order, counted and walked lazily.

    ``ranks`` is a sorted candidate array (one index's slice); ``test`` checks
    the rest of the query, a block of candidates at a time. Walking stops as
    soon as a page is full. A ``positional`` selection is a list of matches in
    another order, which a cursor finds by position instead of by rank.

    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> s = select_specs(G, SpecQuery(variants=("build_system=makefile",), tag="v1"))
    >>> s.count(), [r.version for r in s.after(None)], [r.version for r in s.after("y" * 32)]
    (2, ['1.2.13', '1.3.1'], ['1.3.1'])
    """

    graph: CacheGraph
    ranks: np.ndarray
    test: Test | None = None
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
                self._count = len(self.matching())
            else:
                self._count = self.graph.kept(self.query, lambda: len(self.matching()))
        return self._count

    def matching(self) -> np.ndarray:
        """Every matching rank, in the selection's order."""
        ranks = np.asarray(self.ranks, np.int64)
        if self.test is None:
            return ranks
        found = []
        for start in range(0, len(ranks), _LARGEST_BLOCK):
            deadline.check()  # a count of a million specs may take long
            block = ranks[start : start + _LARGEST_BLOCK]
            found.append(block[self.test(block)])
        return np.concatenate(found) if found else ranks

    def after(self, hash: str | None) -> Iterator[SpecRecord]:
        """The matching specs that come after the spec with this hash (all when None)."""
        for block in self._blocks(hash):
            yield from self.graph.records(block)

    def first(self, hash: str | None, n: int) -> np.ndarray:
        """The ranks of the first ``n`` matching specs after the spec with this hash (from
        the start when None): a page's, without making its records.

        >>> from cachegraph.graph.store.example import example_graph
        >>> s = select_specs(example_graph(), SpecQuery(stacks=("e4s",)))
        >>> s.first(None, 3).tolist() == [r.rank for r in s.after(None)][:3]
        True
        """
        found: list[np.ndarray] = []
        wanted = n
        for block in self._blocks(hash) if n > 0 else ():
            found.append(block[:wanted])
            wanted -= len(found[-1])
            if not wanted:  # before the next block is tested
                break
        if len(found) == 1:  # most pages: no copy
            return found[0]
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    def _blocks(self, hash: str | None) -> Iterator[np.ndarray]:
        """The matching ranks after the spec with this hash, a block at a time: small first,
        as a page needs few."""
        start = 0
        if hash is not None:
            rank = self.graph.store.rank(hash)
            if rank is None:
                raise BadArgument(
                    f"the cursor names spec {hash[:40]}, which is not loaded "
                    "(the data may have been reloaded); start again without 'after'"
                )
            start = (
                self._position(rank) + 1
                if self.positional
                else int(np.searchsorted(self.ranks, rank, side="right"))
            )
        ranks, test, size = self.ranks, self.test, _FIRST_BLOCK
        while start < len(ranks):
            deadline.check()  # a page of a million specs, or a count of them, may take long
            block = np.asarray(ranks[start : start + size])  # int32 from an index: as it is
            start += size
            size = min(size * 4, _LARGEST_BLOCK)
            if test is not None:
                block = block[test(block)]
            yield block

    def _position(self, rank: int) -> int:
        if self.query is None:  # a list made for one request (a search): no kept positions
            positions = _positions(self.ranks, self.graph.store.n)
        else:
            positions = self.graph.kept(
                ("positions", self.query), lambda: _positions(self.ranks, self.graph.store.n)
            )
        if positions[rank] < 0:
            raise BadArgument("the cursor names a spec that is not in this list; start again")
        return int(positions[rank])


def _positions(ranks: Sequence[int], total: int) -> np.ndarray:
    """Where each rank stands in ``ranks`` (-1 when absent): 4 bytes a spec.

    >>> _positions([4, 0, 2], 5).tolist()
    [1, -1, 2, -1, 0]
    """
    positions = np.full(total, -1, np.int32)
    positions[np.asarray(ranks, np.int64)] = np.arange(len(ranks), dtype=np.int32)
    return positions


def select_specs(G: CacheGraph, q: SpecQuery) -> SpecSelection:
    """The specs matching ``q``, driven by its most selective index, in ``q``'s order.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    q : SpecQuery
        Filters, tag, stack and order.

    Returns
    -------
    selection : SpecSelection
        Counted, listed and paged without making a record per spec.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> [s.hash[0] for s in select_specs(G, SpecQuery(stacks=("e4s",))).after(None)]
    ['b', 'a', 'y', 'z']
    >>> order = (("size", True), ("package", False))
    >>> [s.hash[0] for s in select_specs(G, SpecQuery(order=order)).after(None)]
    ['a', 'z', 'g', 'b', 'y']
    """
    selection = _matching(G, replace(q, order=()) if q.order else q)
    if not q.order or selection.count() == 0:
        return selection
    return G.kept(("ordered", q), lambda: _ordered(G, selection, q))


#: The orderings a spec list may have: field -> a sort key per rank, from the columns.
ORDER_KEYS = (*ORDERED, "size", "hash")


def _order_key(G: CacheGraph, name: str, ranks: np.ndarray) -> np.ndarray:
    """Each rank's key of one ordering, as numbers (equal values, equal keys)."""
    store = G.store
    if name == "size":
        return store.size[ranks]
    if name == "hash":
        return store.position_of[ranks].astype(np.int64)
    if name == "compiler":
        return _compiler_order(G)[store.codes["compiler"][ranks]]
    # Tables are sorted (versions in Spack's order): codes order as the values do.
    return store.codes[name][ranks].astype(np.int64)


def _compiler_order(G: CacheGraph) -> np.ndarray:
    """Each compiler code's place among compilers by family, then Spack's version order;
    no compiler first."""
    from ..spack.names import version_key

    def compute() -> np.ndarray:
        names = G.store.strings("compiler").values

        def key(name: str) -> tuple:
            if name == NO_COMPILER:
                return ("", ())
            family, version = compiler_parts(name)
            return (family, version_key(version))

        return np.array(G.store.strings("compiler").sorted_codes(key) if names else [], np.int64)

    return G.memoized("compiler order", compute)


def _ordered(G: CacheGraph, selection: SpecSelection, q: SpecQuery) -> SpecSelection:
    ranks = selection.matching()
    keys = []
    # lexsort's last key is the first: ties stay in contract order (the ranks).
    for name, descending in reversed(q.order):
        key = _order_key(G, name, ranks).astype(np.float64)
        if name == "size":  # unknown sizes last, either way
            unknown = np.isnan(key)
            key = np.where(unknown, 0, -key if descending else key)
            keys += [key, unknown]
            continue
        keys.append(-key if descending else key)
    order = np.lexsort([np.arange(len(ranks)), *keys])
    return SpecSelection(G, ranks[order], None, q, warnings=selection.warnings, positional=True)


def _matching(G: CacheGraph, q: SpecQuery) -> SpecSelection:
    if q.impossible:
        return SpecSelection(G, np.zeros(0, np.int64))
    keys = [
        (kind, value, None) for kind in SINGLE
        if kind != "compiler" and (value := getattr(q, kind)) is not None
    ]  # fmt: skip
    if q.compiler is not None:
        keys += _compiler_keys(G, q.compiler)
    keys += [("variant", v, None) for v in q.variants]
    if q.mirror is not None:
        keys.append(("mirror", q.mirror, None))
    keys += [("stack", s, q.tag) for s in q.stacks]
    if q.tag is not None:
        keys.append(("tag", q.tag, None))
    # Counted from the indices' offsets: only the driver's ranks are made (below).
    counts = [_count(G, key) for key in keys]
    warnings = [
        found for key, count in zip(keys, counts, strict=True)
        if not isinstance(key[1], tuple)  # a compiler recorded under two names: loaded
        and not (key[2] is None and count)  # some spec has it: known
        and (found := satisfies.unknown_value(G, key[0], key[1])) is not None
    ]  # fmt: skip
    tests: list[Test] = []
    candidates: list[satisfies.Candidates] = []
    required = [
        satisfies.requirement(G, q.satisfies) if q.satisfies is not None else None,
        satisfies.runs_on(G, q.runs_on) if q.runs_on is not None else None,
    ]
    for req in filter(None, required):
        # Its index keys may drive the walk; its tests already check what they say.
        candidates += [_candidates(_ranks(G, k)) for k in req.keys]
        tests += req.tests
        candidates += req.candidates
        warnings += req.warnings
    if not candidates and not keys:
        return SpecSelection(
            G, np.arange(G.store.n), _test(G, [], q, tests), q, warnings=tuple(warnings)
        )
    # The driver: the fewest candidates; on a tie, a requirement's, then the first key's.
    sizes = [c.count for c in candidates] + counts
    best = sizes.index(min(sizes))
    driver_key = keys[best - len(candidates)] if best >= len(candidates) else None
    driver = candidates[best].ranks() if driver_key is None else _ranks(G, driver_key)
    rest = [k for k in keys if k != driver_key]
    selection = SpecSelection(G, driver, _test(G, rest, q, tests), q, warnings=tuple(warnings))
    if len(set(q.stacks)) == 2 and q == SpecQuery(stacks=q.stacks, tag=q.tag):
        # Two stacks and nothing else: the count is a precomputed overlap.
        selection._count = pair_counts(G, q.tag)[tuple(sorted(set(q.stacks)))]
    return selection


def _compiler_keys(G: CacheGraph, name: str) -> list[tuple]:
    """The index key of a compiler filter: the compiler as recorded, or, when the loaded specs
    record it under its old and its current name too (``oneapi@2024.2.1`` and
    ``intel-oneapi-compilers@2024.2.1``, ``names.current_compiler``), every spelling, as one
    key whose value is a tuple; either name is accepted."""
    spellings = compiler_spellings(G, name)
    return [("compiler", spellings if len(spellings) > 1 else spellings[0], None)]


def compiler_spellings(G: CacheGraph, name: str) -> tuple[str, ...]:
    """The names the loaded specs record a compiler under, old and current; the name as
    given (normalized) when none does.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    name : str
        A compiler, under its old or its current name.

    Returns
    -------
    names : tuple of str
        The names recorded for it.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> compiler_spellings(example_graph(), "gcc@=11.4.0"), compiler_spellings(example_graph(), "x")
    (('gcc@11.4.0',), ('x',))
    """
    key = compiler_key(name)
    return _spellings(G).get(current_compiler(key)) or (key,)


def _spellings(G: CacheGraph) -> dict[str, tuple[str, ...]]:
    """Current compiler name -> the names the loaded specs record it under, in the store's
    order: worked out once, not on every filter by compiler (a walk over every compiler name
    was a tenth of the "scoped" question's time, issue 43)."""

    def compute() -> dict[str, tuple[str, ...]]:
        found: dict[str, tuple[str, ...]] = {}
        for recorded in G.store.names("compiler"):
            wanted = current_compiler(recorded)
            found[wanted] = (*found.get(wanted, ()), recorded)
        return found

    return G.memoized("compiler spellings", compute)


def _ranks(G: CacheGraph, key: tuple) -> np.ndarray:
    kind, value, tag = key
    if isinstance(value, tuple):  # a compiler under two names: the union of their specs
        return np.unique(np.concatenate([G.store.ranks(kind, v, tag) for v in value]))
    return G.store.ranks(*key)


def _count(G: CacheGraph, key: tuple) -> int:
    """How many specs ``_ranks`` gives for ``key``: a compiler's spellings hold no spec in
    common (a spec has one compiler)."""
    kind, value, tag = key
    if isinstance(value, tuple):
        return sum(G.store.count(kind, v, tag) for v in value)
    return G.store.count(kind, value, tag)


def _candidates(ranks: np.ndarray) -> satisfies.Candidates:
    return satisfies.Candidates(len(ranks), lambda: ranks)


def _test(G: CacheGraph, keys: list, q: SpecQuery, extra: Sequence[Test] = ()) -> Test | None:
    """One test of every key the driving index does not already hold, and of the rest of
    ``q``: each a lookup in a column, or in a mask over a table's rows."""
    store = G.store
    checks: list[Test] = []
    for kind, value, tag in keys:
        if kind in SINGLE and isinstance(value, tuple):
            codes = np.array([store.code(kind, v) for v in value], np.int64)
            checks.append(lambda r, c=codes, col=store.codes[kind]: np.isin(col[r], c))
        elif kind in SINGLE:
            code, column = store.code(kind, value), store.codes[kind]
            checks.append(_none if code is None else lambda r, c=code, col=column: col[r] == c)
        elif kind == "variant":
            code = store.code("variant", value)
            if code is None:
                checks.append(_none)
                continue
            holds = store.sets("variants").contains(np.array([code]))
            checks.append(lambda r, h=holds: h[store.variants[r]])
        elif kind == "mirror":
            code = store.code("mirror", value)
            if code is None:
                checks.append(_none)
                continue
            holds = store.sets("mirrors").contains(np.array([code]))
            checks.append(lambda r, h=holds: h[store.held[r]])
        elif kind == "stack":
            holds = layouts_holding(G, (value,), tag)
            checks.append(lambda r, h=holds: h[store.layout[r]])
        elif kind == "tag":
            holds = layouts_in_tag(G, value)
            checks.append(lambda r, h=holds: h[store.layout[r]])
    if q.exclude_stacks:
        excluded = layouts_holding(G, q.exclude_stacks, q.tag, any_of=True)
        checks.append(lambda r: ~excluded[store.layout[r]])
    # The lookups first, in one test: each costs about what narrowing the ranks down
    # between two of them would (a third of the "scoped" question's walk, issue 43); then
    # the rest of ``q`` (satisfies, runs_on), on what the lookups left.
    tests = [_every(checks)] if checks else []
    tests += extra
    if not tests:
        return None
    return satisfies._all(tests)


def _every(checks: list[Test]) -> Test:
    """A test of every one of ``checks`` (cheap lookups), each on all the ranks."""
    if len(checks) == 1:
        return checks[0]
    first, rest = checks[0], checks[1:]

    def test(ranks: np.ndarray) -> np.ndarray:
        mask = first(ranks)
        for check in rest:
            mask = mask & check(ranks)  # a new array: a check's own result is never changed
        return mask

    return test


def _none(ranks: np.ndarray) -> np.ndarray:
    return np.zeros(len(ranks), bool)
