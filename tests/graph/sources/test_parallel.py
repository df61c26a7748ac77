"""A tree of pages read in two processes loads what one process loads, problems included."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from cachegraph.graph import CacheGraph, LoadReport, SpecRecord, load
from cachegraph.graph.sources.parallel import Helper

from cachegraph.synth import synthesize

from ...conftest import execute


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    synthesize(out, 2000, 2, 11)
    return out


@pytest.fixture
def tree(generated: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(generated, tmp_path / "tree"))


def loaded(tree: Path, processes: int) -> tuple[CacheGraph, LoadReport]:
    graph, report = load([tree], processes=processes)
    report.seconds = 0.0
    return graph, report


def fields(graph: CacheGraph) -> list[tuple]:
    return [tuple(getattr(s, f) for f in SpecRecord.__slots__) for s in graph.all_specs()]


def assert_same_load(tree: Path) -> LoadReport:
    (one, one_report), (two, two_report) = loaded(tree, 1), loaded(tree, 2)
    assert fields(two) == fields(one)
    a, b = one.store.arrays, two.store.arrays
    assert a.keys() == b.keys() and all(
        np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f") for k in a
    )
    assert sorted(two.nodes) == sorted(one.nodes)
    assert two_report == one_report
    query = "{ stats { specCount packageCount } stackOverlaps(first: 3) { sharedSpecCount } }"
    assert execute(two, query) == execute(one, query)
    return two_report


def page(tree: Path, package: str, tag: str = "develop") -> Path:
    return tree / tag / package / "specs.md"


def rows_of(path: Path) -> list[dict]:
    line = next(x for x in path.read_text().splitlines() if x.startswith("spec_details: "))
    return json.loads(line.removeprefix("spec_details: "))


def write_rows(path: Path, rows: list[dict]) -> None:
    lines = path.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("spec_details: "))
    lines[at] = "spec_details: " + json.dumps(rows)
    path.write_text("\n".join(lines) + "\n")


def packages(tree: Path) -> list[str]:
    return sorted(p.name for p in (tree / "develop").iterdir())


def test_the_halves_are_read_in_two_processes_and_joined(tree: Path):
    graph, report = load([tree], processes=2)
    assert report.specs == graph.spec_count == 2000
    assert report.pages == len(list(tree.rglob("*.md"))) and not report.problems
    assert_same_load(tree)


def test_pages_with_problems_report_them_in_the_order_one_process_does(tree: Path):
    names = packages(tree)
    first, last = page(tree, names[0]), page(tree, names[-1])
    rows = rows_of(first)
    rows[0]["hash"] = "not-a-hash"
    write_rows(first, rows)
    page(tree, names[1]).write_text("---\ntitle: broken\n")
    rows = rows_of(last)
    rows[-1]["versions"] = []
    write_rows(last, rows)
    report = assert_same_load(tree)
    hash = rows[-1]["hash"]
    assert [(Path(p.path).parent.name, p.message.split(": ")[0]) for p in report.errors] == [
        (names[0], "record 1 (not-a-hash)"),
        (names[1], "front matter is not closed by a '---' line"),
        (names[-1], f"record {len(rows)} ({hash})"),
    ]


def test_a_hash_listed_in_both_halves_is_decided_as_by_one_process(tree: Path):
    names = packages(tree)
    first, last = page(tree, names[0]), page(tree, names[-1])
    write_rows(last, rows_of(last) + rows_of(first)[:1])
    report = assert_same_load(tree)
    assert "already under" in report.errors[0].message


def test_a_folder_that_misnames_its_package_still_gives_contract_order(tree: Path):
    names = packages(tree)
    for tag in tree.iterdir():
        if (tag / names[0]).exists():
            (tag / names[0]).rename(tag / "zzz")
    graph, _ = load([tree], processes=2)
    assert graph.all_specs()[0].package == names[0]
    assert_same_load(tree)


def test_spec_files_and_the_pages_naming_them_load_as_in_one_process(shared_data: Path):
    assert_same_load(shared_data)


def test_mirrors_read_in_two_processes_load_as_in_one(tmp_path: Path):
    from cachegraph.graph.sources.mirrors import mirrors_file

    from cachegraph.synthmirror import synthesize_mirrors

    synthesize_mirrors(tmp_path, 2000, seed=3)
    mirrors = mirrors_file(tmp_path / "mirrors.yaml")
    (one, one_report), (two, two_report) = (load([], mirrors, processes=n) for n in (1, 2))
    one_report.seconds = two_report.seconds = 0.0
    assert two_report == one_report and not one_report.problems
    assert fields(two) == fields(one)
    a, b = one.store.arrays, two.store.arrays
    assert all(np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f") for k in a)


def test_the_second_process_is_out_of_reach_of_a_terminals_ctrl_c(tree: Path):
    """Ctrl-C at a terminal signals its foreground group: the second process has a session
    of its own, and the first ends it. In the group, a Ctrl-C while it was still importing
    printed a KeyboardInterrupt traceback (a CI run of the Ctrl-C tests)."""
    helper = Helper([(0, str(next(tree.rglob("*.md"))))])
    try:
        assert os.getsid(helper.process.pid) == helper.process.pid != os.getsid(0)
        assert helper.result() is not None
    finally:
        helper.stop()


def test_a_second_process_that_fails_is_said_and_its_part_read_here(
    tree: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    """A second process that ends without its rows (here: a Python that exits at once, as
    one killed for memory would) costs time, not data: its part is read in this process,
    and the log says so."""
    one, one_report = loaded(tree, 1)
    monkeypatch.setattr("sys.executable", "/bin/false")
    two, two_report = loaded(tree, 2)
    assert fields(two) == fields(one) and two_report == one_report
    said = [r.getMessage() for r in caplog.records if "second loading process" in r.message]
    assert len(said) == 1 and said[0].startswith(
        "the second loading process did not send its rows (it ended with status 1): reading its "
    ), said
    assert said[0].endswith(" files and 0 mirrors in this process")
