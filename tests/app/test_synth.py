"""cachegraph synth writes page trees that load whole, with the shapes of the real pages."""

from __future__ import annotations

from collections import Counter

from cachegraph.graph import load
from cachegraph.graph.questions import dependencies, mirrors
from cachegraph.graph.questions.overlaps import stack_overlaps
from cachegraph.graph.questions.specs import SpecQuery, select_specs
from cachegraph.graph.sources.mirrors import mirrors_file

from cachegraph.cli import main


def test_synth_writes_a_tree_that_loads_whole(tmp_path, capsys):
    assert main(["synth", str(tmp_path), "--specs", "3000", "--tags", "2", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    graph, report = load([tmp_path])
    assert report.problems == []  # every meta agrees with its spec_details
    assert len(graph.all_specs()) == 3000
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
    for spec in graph.all_specs():
        for stacks in spec.stacks.values():
            assert "root" in stacks and 2 <= len(stacks) <= 4
    assert len({s.compiler for s in graph.all_specs()}) >= 10
    assert stack_overlaps(graph)


def test_synth_short_writes_pages_of_short_records_that_load_whole(tmp_path, capsys):
    """The shape of issue 40 item 1: ~35 records a page of ~460 bytes, as the public site
    writes them (its tarball URL), few variants."""
    import orjson

    args = ["synth", str(tmp_path), "--specs", "3000", "--tags", "2", "--seed", "4", "--short"]
    assert main(args) == 0
    capsys.readouterr()
    graph, report = load([tmp_path])
    assert report.problems == []
    assert len(graph.all_specs()) == 3000
    pages = list(tmp_path.glob("*/*/specs.md"))
    rows = []
    for page in pages:
        line = next(x for x in page.read_text().splitlines() if x.startswith("spec_details: "))
        found = orjson.loads(line.removeprefix("spec_details: "))
        rows += found
        assert 400 < len(line) / len(found) < 520  # bytes a record, as written
    assert 30 < len(rows) / len(pages) <= 45
    assert len(rows) == report.records
    assert all(r["tarball"].endswith(f"-{r['hash']}.spack") for r in rows)
    assert {len(r["variants"]) for r in rows} == {1, 2}


def test_synth_is_deterministic(tmp_path):
    from cachegraph.synth import synthesize

    assert synthesize(tmp_path / "a", 500, seed=1) == synthesize(tmp_path / "b", 500, seed=1)
    assert (tmp_path / "a").rglob("*.md").__next__().read_text() == (
        tmp_path / "b" / next((tmp_path / "a").rglob("*.md")).relative_to(tmp_path / "a")
    ).read_text()


def test_synth_mirror_writes_v2_and_v3_mirrors_that_load_whole(tmp_path, capsys):
    assert main(["synth", str(tmp_path), "--specs", "2000", "--mirror", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == f"12 mirrors listed in {tmp_path / 'mirrors.yaml'} (--mirrors-file)"
    graph, report = load([], mirrors_file(tmp_path / "mirrors.yaml"))
    assert report.problems == []
    assert 2000 <= len(graph.all_specs()) <= 2001  # a lookalike's rebuilt dependency may end it
    layouts = {m.tag: m.layout for m in graph.mirrors.values()}
    assert layouts == {"develop": "v2", "develop-2025-01-01": "v3"}
    held = {name: mirrors.mirror_holding(graph, name).spec_count for name in graph.mirrors}
    assert sorted(lines[:-1]) == sorted(f"{name}: {n:,} specs held" for name, n in held.items())
    built = [s for s in graph.all_specs() if s.package.startswith("lib-")]
    direct = [len(dependencies.dependencies(graph, s.hash)) for s in built]
    assert min(direct) == 3 and max(direct) <= 18  # wrapper, compiler, runtime + 0-15 more
    # Spack 1.0 shape: the compiler is a dependency providing c, and held by no mirror.
    assert {s.compiler for s in built} == {"gcc@11.4.0", "gcc@13.2.0", "gcc@12.4.0", "gcc@15.0.0"}
    assert all(not s.mirrors for s in graph.all_specs() if s.package == "gcc")
    # About a quarter are lookalikes: the same own attributes as another spec of the package.
    own = Counter((s.package, s.version, s.compiler, s.target, s.variants) for s in built)
    twins = sum(n for n in own.values() if n > 1)
    assert 0.3 < twins / len(built) < 0.6  # each lookalike and the spec it copies
    v3 = [s for s in graph.all_specs() if any(m.startswith("develop-2025") for m in s.mirrors)]
    assert v3 and all(s.size and s.size > 0 for s in v3)
