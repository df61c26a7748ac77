"""The mirrors part of the API on real mirrors: Mirror, Query.mirrors, Spec.mirrors/size/tarball,
transitive dependencies and dependents, Stack.totalBytes and node(id)."""

from __future__ import annotations

import pytest
from cachegraph.graph import MirrorSource, load

from tests.conftest import execute
from tests.mirrors import load_shared, migrate_to_v3, raw_document, raw_nodes

LIBDWARF = "u5uz3dcch5if4eve4sef67o2rf2lbfgh"
GCC = "vd7v4ssgnoqdplgxyig3orum67n4vmhq"


@pytest.fixture(scope="module")
def mirrors_graph(shared_mirrors):
    return load_shared(shared_mirrors)[0]


def test_mirrors_of_a_tag_with_their_counts(mirrors_graph):
    result = execute(
        mirrors_graph,
        '{ mirrors(tag: "test") { name layout specCount totalBytes tag { name } stack { name } } '
        '  none: mirrors(tag: "v0.21.0") { name } }',
    )
    # db7: the 2 specs its index lists (the 4 spec files beside it are not in it)
    counts = {"db7": 2, "future": 0, "legacy": 1, "signed": 6, "unsigned": 6, "v1": 1, "yaml": 1}
    assert result == {
        "data": {
            "mirrors": [
                {"name": f"test/{stack}", "layout": "v2", "specCount": n, "totalBytes": 0.0,
                 "tag": {"name": "test"}, "stack": {"name": stack}}
                for stack, n in counts.items()
            ],
            "none": [],
        }
    }  # fmt: skip


def test_a_spack_1_spec_its_mirrors_tarball_and_dag(mirrors_graph, shared_mirrors):
    assert execute(
        mirrors_graph,
        """query($h: String!) { spec(hash: $h) { specString size tarball compiler { name }
            mirrors { name } dependencies { package { name } }
            withVirtual: dependencies(deptype: "build") { shortHash } dependents { hash } } }""",
        {"h": LIBDWARF},
    ) == {
        "data": {
            "spec": {
                "specString": "libdwarf@20130729%gcc@10.2.1 build_system=generic "
                "arch=test-debian6-m1",
                "size": None,
                # below the mirror's root, as Spack's URLs name it: no server path
                "tarball": "build_cache/test-debian6-m1/gcc-10.2.1/libdwarf-20130729/"
                f"test-debian6-m1-gcc-10.2.1-libdwarf-20130729-{LIBDWARF}.spack",
                "compiler": {"name": "gcc@10.2.1"},
                "mirrors": [{"name": f"test/{m}"} for m in ("signed", "unsigned")],
                "dependencies": [
                    {"package": {"name": "compiler-wrapper"}},
                    {"package": {"name": "gcc"}},
                    {"package": {"name": "gcc-runtime"}},
                    {"package": {"name": "libelf"}},
                ],
                "withVirtual": [{"shortHash": h} for h in ("qeehcxy", "vd7v4ss", "jr3yipy")],
                "dependents": [],
            }
        }
    }  # fmt: skip


def test_a_referenced_compiler_is_in_no_mirror_and_its_dependents_are_transitive(mirrors_graph):
    assert execute(
        mirrors_graph,
        """query($h: String!) { spec(hash: $h) { mirrors { name } size tarball
            direct: dependents { package { name } }
            all: dependents(transitive: true) { package { name } } } }""",
        {"h": GCC},
    ) == {
        "data": {
            "spec": {
                "mirrors": [],
                "size": None,
                "tarball": None,
                "direct": [{"package": {"name": n}} for n in ("gcc-runtime", "libdwarf", "libelf")],
                "all": [{"package": {"name": n}} for n in ("gcc-runtime", "libdwarf", "libelf")],
            }
        }
    }


@pytest.mark.parametrize("name", ["amr-interpolation", "analytics"])
def test_a_root_depends_transitively_on_every_other_node_of_its_spec_file(
    mirrors_graph, shared_mirrors, name
):
    nodes = raw_nodes(raw_document(shared_mirrors / "specfiles" / f"{name}.spec.json"))
    root, rest = nodes[0]["hash"], {n["hash"] for n in nodes[1:]}
    query = """query($h: String!) { spec(hash: $h) { dependencies(transitive: true) { hash }
               direct: dependencies { hash } dependencyCount(transitive: true)
               dependentCount(transitive: true) } }"""
    found = execute(mirrors_graph, query, {"h": root})["data"]["spec"]
    assert {d["hash"] for d in found["dependencies"]} == rest
    assert (found["dependencyCount"], found["dependentCount"]) == (len(rest), 0)
    assert {d["hash"] for d in found["direct"]} == {d["hash"] for d in nodes[0]["dependencies"]}
    # Every node of the file reaches back to the root through its dependents.
    for hash in rest:
        back = execute(
            mirrors_graph,
            "query($h: String!) { spec(hash: $h) { dependents(transitive: true) { hash } } }",
            {"h": hash},
        )["data"]["spec"]["dependents"]
        assert root in {d["hash"] for d in back}


def test_a_mirror_pages_its_specs_and_is_found_again_by_id(mirrors_graph):
    first = execute(
        mirrors_graph,
        '{ mirror(name: "test/db7") { id specs(first: 1) { totalCount nodes { shortHash } '
        'pageInfo { hasNextPage endCursor } } } nobody: mirror(name: "nope") { name } }',
    )["data"]
    assert first["nobody"] is None
    specs = first["mirror"]["specs"]
    # Held by db7 (what its index lists), in spec order: libdwarf, libelf.
    assert (specs["totalCount"], [n["shortHash"] for n in specs["nodes"]]) == (2, ["sk2gqqz"])
    rest = execute(
        mirrors_graph,
        'query($a: String) { mirror(name: "test/db7") { specs(after: $a) { '
        "nodes { shortHash } } } }",
        {"a": specs["pageInfo"]["endCursor"]},
    )
    assert rest["data"]["mirror"]["specs"]["nodes"] == [{"shortHash": "rqh2vuf"}]
    again = execute(
        mirrors_graph,
        "query($id: ID!) { node(id: $id) { ... on Mirror { name layout location } } }",
        {"id": first["mirror"]["id"]},
    )["data"]["node"]
    assert (again["name"], again["layout"]) == ("test/db7", "v2")
    assert again["location"] == "test/db7/build_cache"  # under its name: no server path


def test_sizes_add_up_over_a_v3_mirror(shared_mirrors, tmp_path):
    sizes: dict[str, int] = {}
    v3 = migrate_to_v3(
        shared_mirrors / "v2_layout/unsigned/build_cache",
        tmp_path / "v3",
        lambda hash: sizes.setdefault(hash, 2**31 + 10 * len(sizes)),
    )
    graph = load([], [MirrorSource("site", "e4s", v3, "e4s-v3")])[0]
    result = execute(
        graph,
        """{ mirrors { name layout specCount totalBytes }
             stack(name: "e4s") { totalBytes inSite: totalBytes(tag: "site")
                                  none: totalBytes(tag: "x") }
             spec(hash: "u5uz3dc") { size } }""",
    )
    total = float(sum(sizes.values()))
    assert result == {
        "data": {
            "mirrors": [{"name": "e4s-v3", "layout": "v3", "specCount": 6, "totalBytes": total}],
            "stack": {"totalBytes": total, "inSite": total, "none": 0.0},
            "spec": {"size": float(sizes[LIBDWARF])},
        }
    }
    assert len(sizes) == 6  # every held spec has a manifest with its tarball


def test_the_mirror_filter_narrows_any_connection(mirrors_graph):
    result = execute(
        mirrors_graph,
        '{ specs(filter: {mirror: "test/yaml"}) { totalCount nodes { package { name } version } } '
        '  package(name: "libelf") { specs(filter: {mirror: "test/v1"}) { '
        "nodes { shortHash } } } }",
    )
    assert result == {
        "data": {
            "specs": {
                "totalCount": 1,
                "nodes": [{"package": {"name": "zlib"}, "version": "1.2.11"}],
            },
            "package": {"specs": {"nodes": [{"shortHash": "haahnjw"}]}},
        }
    }
