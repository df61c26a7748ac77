"""The store gives the same record of a spec whichever way it is asked: one by one, or a
column at a time for many."""

from __future__ import annotations

import numpy as np
import pytest
from cachegraph.graph.store.records import SpecRecord

from tests.mirrors import load_shared


def fields(records: list[SpecRecord]) -> list[list]:
    return [[getattr(r, f) for f in SpecRecord.__slots__] for r in records]


@pytest.fixture(scope="module")
def graphs(shared_mirrors, data_graph):
    return [load_shared(shared_mirrors)[0], data_graph]


def test_records_one_by_one_equal_records_made_by_columns(graphs):
    for graph in graphs:
        store = graph.store
        ranks = np.arange(store.n)
        assert store.n > 8
        assert fields([store._record(r) for r in ranks.tolist()]) == fields(store.records(ranks))
        assert fields(store.records(ranks[:3])) == fields(store.records(ranks)[:3])


def test_the_ranks_of_many_hashes_are_each_hash_s_own(graphs, seeds_graph):
    """One search for many hashes (coverage's) finds each spec's rank, and none for a hash
    no spec has, one of another length or case, or one of the same bytes as another's."""
    for graph in [*graphs, seeds_graph]:
        store = graph.store
        held = [s.hash for s in graph.all_specs()]
        absent = [h[:31] + ("a" if h[31] != "a" else "b") for h in held[:50]]
        absent = [h for h in absent if store.rank(h) is None]
        odd = [held[0][:31], held[0] + "a", held[0].upper(), "é" * 32, "", "/" + held[0][1:]]
        asked = [*held[::-1], *absent, *odd, held[0]]
        assert store.ranks_of(asked).tolist() == [
            -1 if (r := store.rank(h)) is None else r for h in asked
        ]
        assert store.ranks_of(held).tolist() == [s.rank for s in graph.all_specs()]
        assert store.ranks_of([]).tolist() == []
