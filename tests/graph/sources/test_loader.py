"""The loader on real pages: every record kept, counts equal to each page's own meta."""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest
from cachegraph.graph import load
from cachegraph.graph.questions.counts import package_facts, spec_count
from cachegraph.graph.questions.specs import SpecQuery, select_specs
from cachegraph.graph.sources.rows import page_row, well_formed_rows

from tests.conftest import SEEDS, SHARED_DATA
from tests.rawpages import RawPage, current_name, normalized, raw_pages, spec_file_nodes

SHARED_PAGES = raw_pages(SHARED_DATA) if SHARED_DATA.is_dir() else []


def _check_page_against_graph(graph, page: RawPage) -> None:
    query = SpecQuery(package=page.package, tag=page.tag)
    loaded = list(select_specs(graph, query).after(None))
    assert sorted(s.hash for s in loaded) == sorted(r["hash"] for r in page.records)
    assert len(loaded) == page.meta["num_specs"]
    facts = package_facts(graph, page.package, page.tag)
    assert dict(facts.stack_counts) == page.meta["num_specs_by_stack"]
    assert set(facts.versions) == set(page.meta["versions"])
    # listed under Spack's current names (oneapi@... is intel-oneapi-compilers@...)
    listed = {current_name(normalized(c)) for c in page.meta["compilers"]} - {None}
    assert set(facts.compilers) == listed
    for raw in page.records:
        spec = graph.spec(raw["hash"])
        assert (spec.package, spec.version, spec.compiler, spec.os, spec.platform, spec.target) == (
            page.package,
            raw["versions"][0],
            normalized(raw["compiler"]),
            raw["os"],
            raw["platform"],
            raw["target"],
        )
        assert spec.variants == tuple(raw["variants"])
        assert spec.stacks[page.tag] == frozenset(raw["stacks"])


@pytest.mark.parametrize("page", raw_pages(SEEDS), ids=lambda p: p.package)
def test_each_seed_page_loads_whole(seeds_graph, page):
    _check_page_against_graph(seeds_graph, page)


def test_seeds_totals(seeds_graph):
    assert len(seeds_graph.all_specs()) == 454
    assert seeds_graph.names("package") == [
        "py-keras",
        "py-ml-dtypes",
        "py-pdm-backend",
        "py-safetensors",
    ]
    assert seeds_graph.names("tag") == ["develop"]


@pytest.mark.parametrize("page", SHARED_PAGES, ids=lambda p: f"{p.tag}/{p.package}")
def test_each_shared_page_loads_whole(data_graph, page):
    _check_page_against_graph(data_graph, page)


def test_shared_data_totals_equal_the_files(shared_data, data_graph):
    pages = raw_pages(shared_data)
    hashes = {r["hash"] for p in pages for r in p.records}
    hashes |= {n["hash"] for n in spec_file_nodes(shared_data)}
    assert {s.hash for s in data_graph.all_specs()} == hashes
    for tag in {p.tag for p in pages}:
        in_tag = {r["hash"] for p in pages if p.tag == tag for r in p.records}
        assert spec_count(data_graph, "tag", tag) == len(in_tag)


def test_report_of_the_shared_data(shared_data):
    _, report = load([shared_data])
    assert (report.pages, report.spec_files, report.specs, report.unresolved) == (45, 3, 322, 42)
    assert report.ok
    # The oldest page names 42 spec files that are not in the sample: each is reported.
    assert {p.path for p in report.problems} == {str(shared_data / "util-macros" / "index.md")}
    assert all(p.severity == "warning" and "is not present" in p.message for p in report.problems)


def test_same_hash_in_several_tags_is_one_spec(data_graph):
    spec = data_graph.spec("g4pwbsmxaamadmea7doeibzwo5brc45y")  # amg2013, two tags
    assert sorted(spec.stacks) == ["develop-2023-05-14", "v0.20.0"]


@pytest.mark.parametrize(
    ("hash", "variant"),
    [
        ("brkxkr24rphjezejrig3biua3424fgjv", "patches:=5c7a3c0"),
        ("25bnm64okxma3jos6rylejskbzn4oqps", "processes:=eett,eevvjj,ppllj,tbw"),
        ("mj2kfipwxzmolp3wccmhjufuiqplscst", "libs=shared,static"),
        ("ulda3wxbktrgkjsc4pe7gn5nt62zibeq", "cuda_arch=80"),
    ],
)
def test_variants_are_kept_as_recorded(data_graph, hash, variant):
    assert variant in data_graph.spec(hash).variants


def test_pages_without_a_root_stack(data_graph):
    facts = package_facts(data_graph, "abyss", "develop")
    assert facts.stack_counts == [("aws-ahug", 4), ("aws-ahug-aarch64", 22)]


def test_spec_files_give_dependency_edges_exactly(shared_data, data_graph):
    from cachegraph.graph.questions.dependencies import dependencies

    nodes = spec_file_nodes(shared_data)
    assert nodes
    for node in nodes:
        expected = sorted(d["hash"] for d in node.get("dependencies", []))
        assert sorted(s.hash for s in dependencies(data_graph, node["hash"])) == expected


def test_a_spec_file_node_listed_by_a_page_keeps_the_page_record(data_graph):
    # xz olptpbs is in develop/adiak/spec-0.json and on the v0.18.0 xz page.
    spec = data_graph.spec("olptpbsse74hpreilbfo4qmlqexihzye")
    assert (spec.package, spec.compiler, sorted(spec.stacks)) == ("xz", "gcc@7.5.0", ["v0.18.0"])
    assert spec.from_page


@pytest.mark.parametrize(
    "page", raw_pages(SEEDS) + SHARED_PAGES, ids=lambda p: f"{p.path.parent.name}/{p.path.name}"
)
def test_a_page_read_column_by_column_gives_the_records_of_row_by_row(page: RawPage):
    listed = well_formed_rows(page.records, page.package)
    assert listed is not None
    one_by_one = [page_row(row, page.package) for row in page.records]
    names = list(listed.columns)
    assert [
        (h, *(listed.columns[n][i] for n in names), listed.variants[i], listed.stacks[i])
        for i, h in enumerate(listed.hashes)
    ] == [(h, *(found[n] for n in names), found["variants"], s) for h, found, s, _ in one_by_one]


@pytest.mark.parametrize(
    "change",
    [
        {"hash": "X" * 32},
        {"versions": ["1", "2"]},
        {"versions": "1.0"},
        {"os": " centos8"},
        {"compiler": 7},
        {"stacks": ["e4s", None]},
        {"variants": "+mpi"},
    ],
    ids=str,
)
def test_a_page_with_one_unusual_row_is_read_row_by_row(change: dict):
    rows = [dict(r) for r in raw_pages(SEEDS)[0].records]
    rows[-1].update(change)
    assert well_formed_rows(rows, "p") is None
    assert well_formed_rows(rows[:-1], "p") is not None


GIVEN_BACK = """
import json, os, sys
import numpy as np
from cachegraph.graph.memory import large_blocks_unmapped
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
def given_back(size):
    block = np.ones(24 << 20, np.uint8)
    del block  # with glibc's moving threshold, the next blocks up to 24 MiB come from the heap
    block = np.ones(size, np.uint8)
    held = rss()
    del block
    return held - rss()
def measured():
    # The same steps with a block glibc never maps (64 KiB) give nothing back: what they
    # show is the noise of pages the interpreter touches meanwhile.
    noise = abs(given_back(64 << 10))
    return {"given_back": given_back(16 << 20), "noise": noise}
if sys.argv[1] == "loading":
    with large_blocks_unmapped():
        print(json.dumps(measured()))
elif sys.argv[1] == "loaded":
    with large_blocks_unmapped():
        pass
    print(json.dumps(measured()))
else:
    print(json.dumps(measured()))
"""
MiB = 1 << 20


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's malloc settings: this is a Linux machine with glibc only",
)
@pytest.mark.parametrize(
    ("when", "given_back"), [("loading", 16 * MiB), ("loaded", 0), ("glibc's default", 0)]
)
def test_a_loads_large_blocks_go_back_to_the_system_when_freed(when, given_back):
    """A load's columns, once freed, leave the process (its RSS after a load at 250k mirror
    specs: 592 MB with glibc's default, 318 MB with large blocks always mapped); once
    loaded, an answer's temporary arrays reuse the process's memory. Each case runs in a
    process of its own: the setting is the process's. A 16 MiB block freed gives back all
    of it or nothing: the bounds are the noise measured in that process, and a MiB."""
    ran = subprocess.run(
        [sys.executable, "-c", GIVEN_BACK, when], capture_output=True, text=True, check=True
    )
    measured = json.loads(ran.stdout)
    margin = measured["noise"] + MiB
    assert margin < 8 * MiB, measured  # else this machine cannot tell all from nothing
    assert abs(measured["given_back"] - given_back) <= margin, measured
