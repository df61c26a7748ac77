"""Every form of build-cache data in the wild: page variants the sample lacks, the oldest
page form with its spec files, and Spack build-cache indices built from real nodes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cachegraph.graph import IndexSource, Problem, load
from cachegraph.graph.questions.dependencies import dependencies

from tests.pages import fake_hash, page_text, record, write_page


def test_records_with_no_stacks_are_specs_of_their_tag(tmp_path):
    write_page(tmp_path, "pkg", "develop", [record(fake_hash("x"), stacks=())])
    graph, report = load([tmp_path])
    spec = graph.spec(fake_hash("x"))
    assert report.problems == []
    assert (spec.stacks, spec.all_stacks) == ({"develop": frozenset()}, frozenset())


@pytest.mark.parametrize(
    ("variant", "compiler", "normalized"),
    [
        ("build_type='dm+sm'", "apple-clang@=15.0.0", "apple-clang@15.0.0"),
        ("amdgpu_target=gfx90a", "clang@=7.0.0", "clang@7.0.0"),
        ("cuda_arch=80", "oneapi@=2024.2.1", "oneapi@2024.2.1"),
        ("patches:=5c7a3c0", "gcc@12.4.0", "gcc@12.4.0"),
    ],
)
def test_variants_and_compilers_as_recorded(tmp_path, variant, compiler, normalized):
    rec = record(fake_hash("v"), compiler=compiler, variants=("+shared", variant))
    write_page(tmp_path, "pkg", "develop", [rec])
    spec = load([tmp_path])[0].spec(fake_hash("v"))
    assert (spec.compiler, spec.variants) == (normalized, ("+shared", variant))


def test_a_meta_that_disagrees_is_a_warning_and_spec_details_win(tmp_path):
    records = [record(fake_hash("m"), stacks=("root", "e4s"))]
    meta = {"num_specs": 3, "num_specs_by_stack": {"root": 3}, "versions": ["1.0"]}
    path = write_page(tmp_path, "pkg", "develop", records, meta)
    graph, report = load([tmp_path])
    assert report.problems == [
        Problem(
            str(path),
            "meta num_specs says 3 but spec_details give 1; using spec_details",
            5,
            "warning",
        ),
        Problem(
            str(path),
            'meta num_specs_by_stack says {"root": 3} but spec_details give '
            '{"e4s": 1, "root": 1}; using spec_details',
            5,
            "warning",
        ),
    ]
    assert report.ok
    assert len(graph.all_specs()) == 1


def test_a_meta_compiler_that_is_not_a_string_is_a_warning_not_a_crash(tmp_path):
    records = [record(fake_hash("c"), compiler="gcc@=11.4.0")]
    path = write_page(tmp_path, "pkg", "develop", records, {"compilers": ["gcc@=11.4.0", 12]})
    graph, report = load([tmp_path])
    assert report.problems == [
        Problem(
            str(path),
            'meta compilers says ["12", "gcc@11.4.0"] but spec_details give ["gcc@11.4.0"]; '
            "using spec_details",
            5,
            "warning",
        )
    ]
    assert graph.spec(fake_hash("c")).compiler == "gcc@11.4.0"


def test_a_page_that_needs_yaml_loads_like_the_json_lines(tmp_path):
    rec = record(fake_hash("y"))
    text = page_text("pkg", "v0.21.0", [rec]).replace(
        "layout: cache\n", "layout: cache\n# a comment\nextra:\n  - 1\n  - 2\n"
    )
    (tmp_path / "specs.md").write_text(text)
    graph, report = load([tmp_path])
    assert report.problems == []
    assert graph.spec(fake_hash("y")).stacks == {"v0.21.0": frozenset({"root"})}


def test_the_same_hash_listed_with_other_attributes_keeps_the_first(tmp_path):
    first = write_page(tmp_path / "a", "pkg", "develop", [record(fake_hash("s"))])
    second = write_page(tmp_path / "b", "pkg", "v1", [record(fake_hash("s"), target="zen4")])
    graph, report = load([tmp_path])
    assert report.problems == [
        Problem(
            str(second),
            f"record 1: hash {fake_hash('s')}: target is 'zen4' here but 'x86_64_v3' "
            f"in {first}; keeping the first",
            6,
            "warning",
        )
    ]
    spec = graph.spec(fake_hash("s"))
    assert (spec.target, sorted(spec.stacks)) == ("x86_64_v3", ["develop", "v1"])


def spec_file_node(name: str, hash: str, deps=()) -> dict:
    return {
        "name": name,
        "version": "1.19.1",
        "hash": hash,
        "arch": {
            "platform": "linux",
            "platform_os": "ubuntu20.04",
            "target": {"name": "x86_64", "vendor": "GenuineIntel"},
        },
        "compiler": {"name": "gcc", "version": "9.3.0"},
        "parameters": {"cflags": [], "shared": True, "libs": ["shared", "static"]},
        "dependencies": [{"name": n, "hash": h, "type": ["build"]} for n, h in deps],
    }


def test_the_oldest_page_form_uses_the_spec_files_beside_it(shared_data, tmp_path):
    folder = tmp_path / "util-macros"
    folder.mkdir()
    shutil.copy(shared_data / "util-macros" / "index.md", folder)
    node = spec_file_node("util-macros", fake_hash("u"))
    (folder / "spec-0.json").write_text(
        json.dumps({"spec": {"_meta": {"version": 2}, "nodes": [node]}})
    )
    graph, report = load([tmp_path])
    assert (report.pages, report.spec_files, report.unresolved) == (1, 1, 41)
    assert all(p.severity == "warning" and "spec-0.json" not in p.message for p in report.problems)
    spec = graph.spec(fake_hash("u"))
    assert (spec.package, spec.version, spec.compiler, spec.target, spec.variants) == (
        "util-macros",
        "1.19.1",
        "gcc@9.3.0",
        "x86_64",
        ("libs=shared,static", "+shared"),
    )


def test_a_spec_file_of_another_package_is_an_error(shared_data, tmp_path):
    shutil.copy(shared_data / "util-macros" / "index.md", tmp_path)
    node = spec_file_node("zlib", fake_hash("w"))
    (tmp_path / "spec-1.json").write_text(json.dumps({"spec": {"nodes": [node]}}))
    report = load([tmp_path])[1]
    assert (
        Problem(
            str(tmp_path / "index.md"), "spec-1.json describes package 'zlib', not 'util-macros'"
        )
        in report.problems
    )


def real_nodes(shared_data: Path) -> list[dict]:
    return json.loads((shared_data / "adiak" / "spec-0.json").read_text())["spec"]["nodes"]


def index_of(nodes: list[dict], version: str = "8") -> dict:
    # Spack's index keeps each node under its hash, dependencies as in spec files.
    return {
        "database": {
            "version": version,
            "installs": {
                n["hash"]: {
                    "spec": {k: v for k, v in n.items() if k != "hash"},
                    "ref_count": 0,
                    "in_buildcache": True,
                }
                for n in nodes
            },
        }
    }


def test_indices_give_stack_membership_per_tag(shared_data, tmp_path):
    nodes = real_nodes(shared_data)  # adiak and its 6 dependencies, all as Spack recorded them
    (tmp_path / "e4s.json").write_text(json.dumps(index_of(nodes)))
    (tmp_path / "mpi.json").write_text(json.dumps(index_of(nodes[1:3], "7")))
    graph, report = load(
        [],
        [
            IndexSource("site", "e4s", tmp_path / "e4s.json"),
            IndexSource("site", "mpi", tmp_path / "mpi.json"),
        ],
    )
    assert report.problems == []
    assert (report.indices, report.specs, report.tags) == (2, 7, ["site"])
    assert {s.hash: sorted(s.stacks["site"]) for s in graph.all_specs()} == {
        n["hash"]: ["e4s", "mpi"] if n in nodes[1:3] else ["e4s"] for n in nodes
    }
    adiak = graph.spec("xki2324ffw7w7mcd2kyrbvmfz2mq7k2r")
    assert [d.package for d in dependencies(graph, adiak.hash)] == ["mpich"]
    assert adiak.variants == ("build_type=RelWithDebInfo", "+mpi", "+shared")


def test_an_index_found_among_the_data_loads_its_specs_with_a_warning(shared_data, tmp_path):
    (tmp_path / "index.json").write_text(json.dumps(index_of(real_nodes(shared_data))))
    graph, report = load([tmp_path])
    assert len(graph.all_specs()) == 7
    assert report.problems == [
        Problem(
            str(tmp_path / "index.json"),
            "an index found among the data joins no stack; give its mirror "
            "as --mirror TAG:STACK=PATH to set its stack membership",
            None,
            "warning",
        )
    ]


def test_index_source_parsing():
    assert IndexSource.parse("v1:e4s=/a=b.json").path.name == "a=b.json"
    with pytest.raises(ValueError, match="expected TAG:STACK=PATH"):
        IndexSource.parse("e4s=/x.json")


def test_dependencies_of_every_deptype_form(tmp_path):
    parent = spec_file_node("a", fake_hash("p"))
    parent["dependencies"] = [
        {"name": "b", "hash": fake_hash("q"), "type": ["build", "link"]},
        {"name": "c", "hash": fake_hash("r"), "parameters": {"deptypes": ["run"], "virtuals": []}},
    ]
    nodes = [parent, spec_file_node("b", fake_hash("q")), spec_file_node("c", fake_hash("r"))]
    (tmp_path / "spec-0.json").write_text(json.dumps({"spec": {"nodes": nodes}}))
    graph = load([tmp_path])[0]
    assert [s.package for s in dependencies(graph, fake_hash("p"))] == ["b", "c"]
    assert [s.package for s in dependencies(graph, fake_hash("p"), "link")] == ["b"]
    assert [s.package for s in dependencies(graph, fake_hash("p"), "run")] == ["c"]


def test_a_page_size_in_bytes_is_the_specs_size_and_a_bad_one_is_named(tmp_path):
    rows = [record(fake_hash("a")), record(fake_hash("b")), record(fake_hash("c"))]
    rows[0]["size"], rows[1]["size"], rows[2]["size"] = 52_428_800, "-", "12 MB"
    path = write_page(tmp_path, "zlib", "develop", rows)
    graph, report = load([tmp_path])
    assert [(s.hash, s.size) for s in graph.all_specs()] == [(fake_hash("a"), 52_428_800.0),
                                                         (fake_hash("b"), None)]  # fmt: skip
    assert report.problems == [
        Problem(
            str(path),
            f"record 3 ({fake_hash('c')}): "
            "'size' must be a number of bytes or '-', not str '12 MB'",
            6,
        )
    ]


def test_a_hash_repeated_within_a_page_is_a_warning_with_the_count(tmp_path):
    rows = [record(fake_hash("a")), record(fake_hash("b")), record(fake_hash("a")),
            record(fake_hash("a"))]  # fmt: skip
    path = write_page(tmp_path, "zlib", "develop", rows)
    graph, report = load([tmp_path])
    assert [s.hash for s in graph.all_specs()] == [fake_hash("a"), fake_hash("b")]
    assert report.problems == [
        Problem(
            str(path),
            f"2 records repeat a hash listed earlier in this page (the first: {fake_hash('a')}); "
            "each spec counts once",
            6,
            "warning",
        )
    ]
