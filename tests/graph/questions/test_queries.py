"""What the query functions keep on a graph: bounded, whatever names clients invent."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cachegraph.graph import load
from cachegraph.graph.bounded import approximate_size
from cachegraph.graph.questions import counts, overlaps, scope, specs

from tests.conftest import SEEDS


@pytest.fixture
def graph():
    """A graph of its own: these tests change what it keeps."""
    return load([SEEDS])[0]


def test_answers_for_a_tag_that_is_not_loaded_are_empty_and_not_kept(graph):
    counts.precompute(graph)
    kept = set(graph.memo)
    for tag in ("no-such-tag", "v0.0.0"):
        assert overlaps.stack_overlaps(graph, None, tag) == []
        assert counts.names_in_scope(graph, "package", tag) == []
    assert set(graph.memo) == kept


def test_answers_keyed_by_client_names_are_kept_within_a_byte_budget(graph):
    graph.kept_answers.budget = 200_000
    for n in range(50):
        # A name of 20 kB: a budget by count would keep all fifty (a megabyte).
        name = f"no-such-package-{n}-" + "x" * 20_000
        assert counts.package_facts(graph, name).spec_count == 0
    assert 0 < graph.kept_answers.bytes <= 200_000
    assert len(graph.kept_answers) < 10
    assert graph.kept_answers.evictions == 50 - len(graph.kept_answers)


def test_an_answer_larger_than_an_eighth_of_the_budget_is_not_kept(graph):
    graph.kept_answers.budget = 80_000
    assert counts.package_facts(graph, "x" * 20_000).spec_count == 0
    assert (len(graph.kept_answers), graph.kept_answers.bytes) == (0, 0)


def test_a_kept_selection_is_charged_for_itself_not_for_the_graph_it_refers_to(graph):
    selection = specs.select_specs(graph, specs.SpecQuery(package="py-keras"))
    without_graph = replace(selection, graph=None)
    assert approximate_size(selection) <= approximate_size(without_graph)
    assert approximate_size([*graph.all_specs()]) <= approximate_size(
        [None] * len(graph.all_specs())
    )


def test_a_filter_by_stack_keeps_its_layout_mask_within_the_byte_budget(graph):
    graph.kept_answers.budget = 200_000
    memo = set(graph.memo)
    for n in range(50):  # stacks no spec is in, each named by a client: kept by bytes
        name = f"no-such-stack-{n}-" + "x" * 20_000
        query = specs.SpecQuery(package="py-keras", exclude_stacks=(name,))
        assert next(specs.select_specs(graph, query).after(None)).package == "py-keras"
    assert 0 < graph.kept_answers.bytes <= 200_000 and len(graph.kept_answers) < 20
    assert set(graph.memo) - memo <= {"layout pairs"}  # nothing kept there by a name
    # A kept mask is shared by later requests: nobody may change it.
    mask = scope.layouts_holding(graph, ["root"], None)
    assert mask is scope.layouts_holding(graph, ("root", "root"), None)
    assert mask.any() and not mask.flags.writeable
