"""What the query functions keep on a graph: bounded, whatever names clients invent."""

from __future__ import annotations

import pytest

from graph import load, model, queries
from tests.conftest import SEEDS


@pytest.fixture
def graph():
    """A graph of its own: these tests change what it keeps."""
    return load([SEEDS])[0]


def test_answers_for_a_tag_that_is_not_loaded_are_empty_and_not_kept(graph):
    queries.precompute(graph)
    kept = set(graph.memo)
    for tag in ("no-such-tag", "v0.0.0"):
        assert queries.stack_overlaps(graph, None, tag) == []
        assert queries.names_in_scope(graph, "package", tag) == []
    assert set(graph.memo) == kept


def test_answers_keyed_by_client_names_are_kept_up_to_a_bound(graph, monkeypatch):
    monkeypatch.setattr(model, "KEPT", 3)
    for n in range(10):
        assert queries.package_facts(graph, f"no-such-package-{n}").spec_count == 0
    assert len(graph._kept) == 3
