"""Package fields, the package filter and connection."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conftest import execute
from tests.rawpages import raw_pages, spec_file_nodes

PACKAGE = """{ package(name: "py-ml-dtypes") {
  name specCount versions compilers { name } targets { name } oss platforms
  stacks { stack { name } specCount } tags { name } dependencies { name } dependents { name }
  specs(first: 2, filter: {target: "neoverse_v1"}) { totalCount nodes { hash } } } }"""


def test_a_package_with_all_its_counts(run):
    counts = {
        "e4s": 22,
        "e4s-neoverse_v1": 6,
        "ml-darwin-aarch64-mps": 11,
        "ml-linux-aarch64-cpu": 30,
        "ml-linux-aarch64-cuda": 27,
        "ml-linux-x86_64-cpu": 40,
        "ml-linux-x86_64-cuda": 30,
        "ml-linux-x86_64-rocm": 20,
        "root": 129,
    }
    assert run(PACKAGE) == {
        "data": {
            "package": {
                "name": "py-ml-dtypes",
                "specCount": 129,
                "versions": ["0.3.1", "0.4.0"],
                "compilers": [
                    {"name": "apple-clang@16.0.0"},
                    {"name": "gcc@11.4.0"},
                    {"name": "gcc@13.2.0"},
                ],
                "targets": [{"name": "aarch64"}, {"name": "neoverse_v1"}, {"name": "x86_64_v3"}],
                "oss": ["sequoia", "ubuntu22.04", "ubuntu24.04"],
                "platforms": ["darwin", "linux"],
                "stacks": [{"stack": {"name": s}, "specCount": n} for s, n in counts.items()],
                "tags": [{"name": "develop"}],
                "dependencies": [],
                "dependents": [],
                "specs": {
                    "totalCount": 6,
                    "nodes": [
                        {"hash": "kuu4vbx3bx66rigjlr5pxz4q4ljyybpp"},
                        {"hash": "moxa3nurrmfsfajqcg43avttwd57nasl"},
                    ],
                },
            }
        }
    }


def test_package_counts_equal_each_pages_meta_in_every_tag(data_graph, shared_data):
    for page in raw_pages(shared_data):
        result = execute(
            data_graph,
            "query($n: String!, $t: String) { package(name: $n) { "
            "specCount(tag: $t) stacks(tag: $t) { stack { name } specCount } } }",
            {"n": page.package, "t": page.tag},
        )
        stacks = sorted(page.meta["num_specs_by_stack"].items())
        assert result == {
            "data": {
                "package": {
                    "specCount": page.meta["num_specs"],
                    "stacks": [{"stack": {"name": s}, "specCount": n} for s, n in stacks],
                }
            }
        }, page.path


def test_versions_are_ordered_oldest_first(data_graph):
    # cusz: 0.3 (develop-2023-05-14), 0.3.1 (v0.21.0), 0.6.0 (develop); amg2013: "master".
    assert execute(
        data_graph,
        '{ a: package(name: "cusz") { versions } b: package(name: "amg2013") { versions } }',
    ) == {"data": {"a": {"versions": ["0.3", "0.3.1", "0.6.0"]}, "b": {"versions": ["master"]}}}


def test_an_absent_package_is_null(run):
    assert run('{ package(name: "py-nope") { name } }') == {"data": {"package": None}}


@pytest.mark.parametrize(
    ("package_filter", "names"),
    [
        ({}, ["py-keras", "py-ml-dtypes", "py-pdm-backend", "py-safetensors"]),
        ({"nameContains": "ML"}, ["py-ml-dtypes"]),
        ({"stack": "e4s"}, ["py-ml-dtypes", "py-pdm-backend"]),
        ({"compiler": "gcc@=13.2.0"}, ["py-ml-dtypes", "py-safetensors"]),
        ({"compiler": "none"}, ["py-keras", "py-pdm-backend"]),
        ({"target": "neoverse_v2"}, ["py-pdm-backend"]),
        ({"stack": "e4s", "compiler": "gcc@11.4.0"}, ["py-ml-dtypes"]),
        ({"tag": "develop", "nameContains": "S"}, ["py-keras", "py-ml-dtypes", "py-safetensors"]),
        ({"tag": "v0.21.0"}, []),
        ({"namePrefix": "PY-S"}, ["py-safetensors"]),
        ({"namePrefix": "py-", "nameContains": "ker"}, ["py-keras"]),
        ({"namePrefix": "keras"}, []),
    ],
)
def test_the_package_filter(run, package_filter, names):
    result = run(
        "query($f: PackageFilter) { packages(filter: $f) { totalCount nodes { name } } }",
        {"f": package_filter},
    )
    assert result == {
        "data": {"packages": {"totalCount": len(names), "nodes": [{"name": n} for n in names]}}
    }


def test_walking_packages_one_at_a_time(run):
    seen, after = [], None
    while True:
        page = run(
            "query($a: String) { packages(first: 1, after: $a) { "
            "pageInfo { hasNextPage endCursor } nodes { name } } }",
            {"a": after},
        )
        page = page["data"]["packages"]
        seen += [n["name"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == ["py-keras", "py-ml-dtypes", "py-pdm-backend", "py-safetensors"]


@pytest.mark.parametrize("tag", [None, "develop"])
def test_package_initials_count_each_letters_packages(data_graph, shared_data, tag):
    names = {p.package for p in raw_pages(shared_data) if p.records and tag in (None, p.tag)}
    if tag is None:  # the spec files' dependencies are specs too, in no tag
        names |= {node["name"] for node in spec_file_nodes(shared_data)}
    letters = Counter(name[0] for name in names)
    query = """query($t: String, $l: String) {
      packageInitials(filter: {tag: $t}) { value count }
      packages(filter: {tag: $t, namePrefix: $l}, first: 1000) { nodes { name } } }"""
    letter = max(letters, key=lambda c: (letters[c], c))
    assert execute(data_graph, query, {"t": tag, "l": letter.upper()}) == {
        "data": {
            "packageInitials": [{"value": c, "count": n} for c, n in sorted(letters.items())],
            "packages": {"nodes": [{"name": n} for n in sorted(names) if n.startswith(letter)]},
        }
    }
