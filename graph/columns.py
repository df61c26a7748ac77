"""Specs and rank indices as plain columns: what a snapshot stores and a loading process sends.

Columns hold only what ``marshal`` writes (strings, tuples, frozensets, bytes),
so they travel fast; objects the specs share (interned strings, variant tuples,
stack layouts) are written once and come back shared.
"""

from __future__ import annotations

from array import array
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from .model import RECORD_FIELDS, IndexKey, SpecRecord, records_of

#: Every field of a spec record: adding one to SpecRecord adds it here. ``stacks`` is
#: stored apart, as a table of layouts and a row of each.
_FIELDS = RECORD_FIELDS


def spec_columns(specs: list[SpecRecord]) -> dict[str, Any]:
    """The specs as one list per field; their stack layouts as a table and a column of rows."""
    layouts = list(map(attrgetter("stacks"), specs))
    ids = list(map(id, layouts))
    table = dict(zip(ids, layouts, strict=True))  # each layout once, in order of first use
    row = {key: number for number, key in enumerate(table)}
    columns: dict[str, Any] = {
        name: list(map(attrgetter(name), specs)) for name in _FIELDS if name != "stacks"
    }
    columns["layout"] = ranks_bytes(map(row.__getitem__, ids))
    columns["layouts"] = [dict(layout) for layout in table.values()]
    return columns


def spec_records(columns: dict[str, Any]) -> list[SpecRecord]:
    """The specs of ``spec_columns``, in the same order."""
    layouts = [MappingProxyType(layout) for layout in columns["layouts"]]
    stacks = list(map(layouts.__getitem__, ranks_of(columns["layout"])))
    return records_of(
        {**{name: columns[name] for name in _FIELDS if name != "stacks"}, "stacks": stacks}
    )


def index_columns(index: dict[IndexKey, array]) -> dict[IndexKey, bytes]:
    return {key: ranks.tobytes() for key, ranks in index.items()}


def index_of(columns: dict[IndexKey, bytes]) -> dict[IndexKey, array]:
    return {key: ranks_of(data) for key, data in columns.items()}


def ranks_bytes(ranks: Any) -> bytes:
    return array("i", ranks).tobytes()


def ranks_of(data: bytes) -> array:
    ranks = array("i")
    ranks.frombytes(data)
    return ranks
