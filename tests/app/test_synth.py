"""cachegraph synth writes page trees that load whole, with the shapes of the real pages."""

from __future__ import annotations

from cachegraph.cli import main
from graph import load
from graph.queries import SpecQuery, select_specs, stack_overlaps


def test_synth_writes_a_tree_that_loads_whole(tmp_path, capsys):
    assert main(["synth", str(tmp_path), "--specs", "3000", "--tags", "2", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    graph, report = load([tmp_path])
    assert report.problems == []  # every meta agrees with its spec_details
    assert len(graph.ordered) == 3000
    assert report.tags == ["develop", "develop-2025-01-01"]
    develop = {s.hash for s in select_specs(graph, SpecQuery(tag="develop")).after(None)}
    snapshot = {
        s.hash for s in select_specs(graph, SpecQuery(tag="develop-2025-01-01")).after(None)
    }
    assert out == (
        f"develop: {len(develop):,} specs, develop-2025-01-01: {len(snapshot):,} specs; "
        "3,000 distinct\n"
    )
    assert 0.5 < len(develop & snapshot) / len(snapshot) < 0.7  # dated snapshots share ~60%
    for spec in graph.ordered:
        for stacks in spec.stacks.values():
            assert "root" in stacks and 2 <= len(stacks) <= 4
    assert len({s.compiler for s in graph.ordered}) >= 10
    assert stack_overlaps(graph)


def test_synth_is_deterministic(tmp_path):
    from cachegraph.synth import synthesize

    assert synthesize(tmp_path / "a", 500, seed=1) == synthesize(tmp_path / "b", 500, seed=1)
    assert (tmp_path / "a").rglob("*.md").__next__().read_text() == (
        tmp_path / "b" / next((tmp_path / "a").rglob("*.md")).relative_to(tmp_path / "a")
    ).read_text()
