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
