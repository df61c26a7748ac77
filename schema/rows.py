"""A page of specs held as ranks: its JSON built from the store's columns where the query
asks only plain fields, its records made only where something asks for them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from cachegraph.graph.attributes import PLACED
from cachegraph.graph.questions.specs import SpecSelection
from cachegraph.graph.store.columns import Store
from cachegraph.graph.store.records import SpecRecord
from cachegraph.graph.store.view import CacheGraph

from .pagination import Slice

#: GraphQL field -> the store's field, for the Spec fields a page gives as columns: the
#: hash and the single-valued attributes shown as plain strings (version, os, platform)
_COLUMNS = {
    ("hash",): "hash",
    **{(a.name,): a.name for a in PLACED if a.field and not a.many and a.type is str},
}

_PATHS = frozenset(_COLUMNS)


def spec_slice(
    kind: str, selection: SpecSelection, first: int | None, after: str | None
) -> Slice[SpecRecord]:
    """A page of a selection's specs, taken as ranks (``SpecRows``); a cursor names a hash."""
    G = selection.graph
    take = lambda key, n: SpecRows(G, selection.first(key, n))  # noqa: E731
    return Slice(kind, selection.after, lambda s: s.hash, selection.count, first, after, take)


class SpecRows(Sequence):
    """A page of specs held as their ranks. For the compiled plan, which builds the JSON of
    a page asking only the fields in ``_COLUMNS`` (``nodes { hash version }``) from
    ``graphql_columns`` (``cachegraph.execution.compiled``, ``rows``), no record is made;
    for anything else each spec's record, made for the whole page when first asked.

    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> rows = SpecRows(G, np.arange(3))
    >>> rows.graphql_columns[("version",)] == [r.version for r in rows]
    True
    >>> type(rows[1:]).__name__, len(rows[1:]), rows[1:][0] is rows[1]
    ('SpecRows', 2, False)
    """

    __slots__ = ("_graph", "_ranks", "_records")

    def __init__(self, graph: CacheGraph, ranks: np.ndarray) -> None:
        self._graph, self._ranks = graph, ranks
        self._records: list[SpecRecord] | None = None

    def __len__(self) -> int:
        return len(self._ranks)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return SpecRows(self._graph, self._ranks[i])
        return self._made()[i]

    def __iter__(self) -> Iterator[SpecRecord]:
        return iter(self._made())

    def _made(self) -> list[SpecRecord]:
        if self._records is None:
            self._records = self._graph.records(self._ranks)
        return self._records

    @property
    def graphql_columns(self) -> Mapping[tuple[str, ...], list]:
        return _Columns(self._graph.store, self._ranks)


class _Columns(Mapping):
    """The columns of a page of specs, each made when asked."""

    __slots__ = ("_ranks", "_store")

    def __init__(self, store: Store, ranks: np.ndarray) -> None:
        self._store, self._ranks = store, ranks

    def __getitem__(self, path: tuple[str, ...]) -> list:
        values = self._store.field_values(_COLUMNS[path], self._ranks)
        # The plan hands them on unchecked: hashes and these attributes' tables are strings,
        # and a spec lacking one has None (a scan in C, not a test per value).
        if None in values:
            raise KeyError(path)
        return values

    def keys(self) -> frozenset[tuple[str, ...]]:  # no column made to say it is held
        return _PATHS

    def __contains__(self, path: object) -> bool:
        return path in _COLUMNS

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return iter(_COLUMNS)

    def __len__(self) -> int:
        return len(_COLUMNS)
