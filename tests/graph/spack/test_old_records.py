"""Records older than Spack 1.0 answered as Spack 1.1 answers them (issue 37, item 7).

1. ``^zlib-api`` and ``^mpi`` need an edge labelled with the virtual (``Spec._satisfies`` keys
   ``lhs_edges`` by each edge's ``virtuals``). Spack labels old edges only when it reads a
   spec file of format 1-3 (``SpecfileV1.load``, ``SpecfileV2.load`` call
   ``reconstruct_virtuals_on_edges``); a build-cache index is read by
   ``Database._read_from_file`` (``BinaryCacheIndex._associate_built_specs_with_mirror``,
   ``BuildCacheDatabase``), whose ``_assign_dependencies`` keeps the edges' recorded virtuals
   (none, in a database of version 6) and reconstructs nothing.
2. ``%`` on a record whose compiler is only a recorded node (``annotations.compiler`` of an
   index converted by Spack >= 1.0, ``original_specfile_version`` < 5): ``Spec._satisfies``
   compares that bare ``name@version`` node (``compiler_node_attribute``) with the parsed
   node, whose legacy name the parser renamed (``LEGACY_COMPILER_TO_BUILTIN``: ``%oneapi``
   is ``intel-oneapi-compilers``), and ``%c`` asks ``pkg.provided`` of that bare node.

Every expected answer is worked out here from the JSON files themselves.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, load
from cachegraph.graph.questions import specs

from tests.conftest import execute

TABLE = json.loads((Path(__file__).parents[3] / "graph" / "spack" / "virtuals.json").read_text())


def _found(graph, text: str) -> set[str]:
    return {s.hash for s in specs.select_specs(graph, specs.SpecQuery(satisfies=text)).after(None)}


def _provides(package: str) -> set[str]:
    return {v for v, rows in TABLE["providers"].items() for p, _, _ in rows if p == package}


# -- 1. an index of database version 6 against the same specs' spec files ----------------------


@pytest.fixture(scope="module")
def old_files(shared_data: Path) -> list[Path]:
    """The real spec files of format 2 (Spack 0.17-0.20): adiak over mpich and mvapich2."""
    files = sorted(shared_data.rglob("spec-*.json"))
    assert files and {json.loads(p.read_text())["spec"]["_meta"]["version"] for p in files} == {2}
    return files


@pytest.fixture(scope="module")
def old_nodes(old_files: list[Path]) -> dict[str, dict]:
    nodes: dict[str, dict] = {}
    for path in old_files:
        for node in json.loads(path.read_text())["spec"]["nodes"]:
            nodes.setdefault(node["hash"], node)
    return nodes


@pytest.fixture(scope="module")
def old_index(tmp_path_factory, old_nodes: dict[str, dict]) -> Path:
    """The index ``spack buildcache update-index`` of Spack 0.19-0.20 writes for those spec
    files (database version 6): each node, as read, is its record's ``spec``."""
    root = tmp_path_factory.mktemp("db6")
    (root / "build_cache").mkdir()
    installs = {
        h: {"spec": node, "ref_count": 0, "in_buildcache": True} for h, node in old_nodes.items()
    }
    doc = {"database": {"version": "6", "installs": installs}}
    (root / "build_cache" / "index.json").write_text(json.dumps(doc))
    return root


@pytest.fixture(scope="module")
def from_index(old_index: Path):
    graph, report = load([], [MirrorSource("old", "db6", old_index)], processes=1)
    assert report.errors == []
    return graph


@pytest.fixture(scope="module")
def from_files(old_files: list[Path]):
    graph, report = load(old_files, processes=1)
    assert report.errors == []
    return graph


def _above(nodes: dict[str, dict], edges: set[tuple[str, str]]) -> set[str]:
    """The parents of ``edges`` and every spec above them through link edges."""
    found = {parent for parent, _ in edges}
    while True:
        more = {
            h for h, n in nodes.items()
            for d in n.get("dependencies", []) if d["hash"] in found and "link" in d["type"]
        } - found  # fmt: skip
        if not more:
            return found
        found |= more


def _reconstructed(nodes: dict[str, dict], virtual: str) -> set[tuple[str, str]]:
    """The edges ``reconstruct_virtuals_on_edges`` labels ``virtual``: the parent's package
    depends on it, the child's provides it."""
    return {
        (h, d["hash"]) for h, n in nodes.items() for d in n.get("dependencies", [])
        if virtual in TABLE["needs"].get(n["name"], ()) and virtual in _provides(d["name"])
    }  # fmt: skip


@pytest.mark.parametrize("virtual", ["zlib-api", "mpi", "iconv"])
def test_an_old_index_names_no_virtual_on_its_edges(old_nodes, from_index, from_files, virtual):
    """``^virtual``: none from the index, as ``Database._read_from_file`` reads version 6 with
    ``SpecfileV3.read_specfile_dep_specs`` (virtuals ``[]``) and reconstructs nothing; from the
    spec files, what ``SpecfileV2.load``'s ``reconstruct_virtuals_on_edges`` labels."""
    assert not any(d.get("parameters") for h in old_nodes for d in _edges(old_nodes, h))
    assert _found(from_index, f"^{virtual}") == set()
    labelled = _reconstructed(old_nodes, virtual)
    assert labelled
    assert _found(from_files, f"^{virtual}") == _above(old_nodes, labelled)
    for child in {old_nodes[c]["name"] for _, c in labelled}:  # ^[virtuals=zlib-api] zlib
        text = f"^[virtuals={virtual}] {child}"
        to_child = {e for e in labelled if old_nodes[e[1]]["name"] == child}
        assert (_found(from_index, text), _found(from_files, text)) == (
            set(), _above(old_nodes, to_child))  # fmt: skip


def test_the_spack_answers_over_the_old_specs_in_full(old_nodes, from_index, from_files):
    """(from the index, from the spec files) for each constraint: ``Spec._satisfies`` asks a
    virtual of the labelled edges only, a name of any edge, and a virtual as the spec itself
    of ``pkg.provides``."""
    names = {h: n["name"] for h, n in old_nodes.items()}
    adiaks = {h for h, n in names.items() if n == "adiak"}
    libxml2 = {h for h, n in names.items() if n == "libxml2"}
    mpis = {h for h, n in names.items() if n in ("mpich", "mvapich2")}
    zlib_users = adiaks | libxml2 | mpis  # libxml2 links zlib, the MPIs link libxml2
    assert len(adiaks) == len(libxml2) == len(mpis) == 3
    expected = {
        "^zlib-api": (set(), zlib_users),
        "^[virtuals=zlib-api] zlib": (set(), zlib_users),
        "^zlib": (zlib_users, zlib_users),  # a name: no virtual asked
        "^mpi": (set(), adiaks),
        "^mpich": ({h for h in adiaks if "mpich" in _deps(old_nodes, h)},) * 2,
        "mpi": (mpis, mpis),  # a virtual as the spec itself: pkg.provides, no edge asked
        "zlib-api": ({h for h, n in names.items() if n == "zlib"},) * 2,
    }
    for text, (index_answer, files_answer) in expected.items():
        assert (_found(from_index, text), _found(from_files, text)) == (
            index_answer, files_answer), text  # fmt: skip


def _deps(nodes: dict[str, dict], hash: str) -> set[str]:
    return {d["name"] for d in _edges(nodes, hash)}


def _edges(nodes: dict[str, dict], hash: str) -> list[dict]:
    return nodes[hash].get("dependencies", [])


def test_edges_show_the_virtuals_spack_holds(old_nodes, from_index, from_files):
    """The API's ``dependencyEdges.virtuals``: as Spack holds the edge after reading."""
    [h] = [h for h, n in old_nodes.items() if n["name"] == "libxml2" and "7.5.0" in str(n)]
    edges = "dependencyEdges { spec { package { name } } virtuals }"
    query = f'{{ spec(hash: "{h}") {{ {edges} }} }}'
    index = execute(from_index, query)["data"]["spec"]["dependencyEdges"]
    files = execute(from_files, query)["data"]["spec"]["dependencyEdges"]
    assert {e["spec"]["package"]["name"]: e["virtuals"] for e in index} == {
        "libiconv": [], "xz": [], "zlib": []}  # fmt: skip
    assert {e["spec"]["package"]["name"]: e["virtuals"] for e in files} == {
        "libiconv": ["iconv"], "xz": [], "zlib": ["zlib-api"]}  # fmt: skip


# -- 2. % on records whose compiler is an annotation -----------------------------------------


@pytest.fixture(scope="module")
def v2_unsigned(shared_mirrors: Path):
    folder = shared_mirrors / "v2_layout" / "unsigned"
    graph, report = load([], [MirrorSource("test", "unsigned", folder)], processes=1)
    assert report.errors == []
    installs = json.loads((folder / "build_cache" / "index.json").read_text())["database"]
    return graph, installs["installs"]


def test_the_mirror_holds_records_whose_compiler_is_an_annotation(v2_unsigned):
    _, installs = v2_unsigned
    noted = {
        h: r["spec"]["annotations"] for h, r in installs.items()
        if "compiler" in r["spec"]["annotations"]
    }  # fmt: skip
    assert {h[:7]: (a["original_specfile_version"], a["compiler"]) for h, a in noted.items()} == {
        "rqh2vuf": (4, "gcc@=10.2.1"),
        "sk2gqqz": (4, "gcc@=10.2.1"),
    }


def _annotated(installs: dict, family: str) -> set[str]:
    return {
        h for h, r in installs.items()
        if r["spec"]["annotations"]["original_specfile_version"] < 5
        and r["spec"]["annotations"]["compiler"].partition("@")[0] == family
    }  # fmt: skip


def _direct(installs: dict, name: str | None = None, virtual: str | None = None) -> set[str]:
    """Format-5 records with a direct edge to ``name`` / labelled ``virtual``."""
    return {
        h for h, r in installs.items()
        if r["spec"]["annotations"]["original_specfile_version"] >= 5
        and any((name is None or d["name"] == name)
                and (virtual is None or virtual in d["parameters"]["virtuals"])
                for d in r["spec"].get("dependencies", []))
    }  # fmt: skip


def test_percent_on_annotated_records_as_spack(v2_unsigned):
    """``Spec._satisfies``: below format 5, ``compiler_node_attribute._satisfies(rhs)``; from
    format 5, ``edges_to_dependencies``. gcc provides ``c`` only ``when="languages=c"``, which
    the bare ``gcc@=10.2.1`` node does not meet; ``%oneapi`` is ``intel-oneapi-compilers``."""
    graph, installs = v2_unsigned
    gcc = _annotated(installs, "gcc") | _direct(installs, name="gcc")
    assert len(_annotated(installs, "gcc")) == 2 and len(gcc) == 5
    expected = {
        "%gcc": gcc,
        "%gcc@10.2.1": gcc,
        "%gcc@11:": set(),
        "%c": _direct(installs, virtual="c"),
        # below format 5 the recorded node alone is compared, the edge's virtuals not asked
        "%c=gcc": _annotated(installs, "gcc") | _direct(installs, name="gcc", virtual="c"),
        "%oneapi": set(),
        "%intel-oneapi-compilers": set(),
        "libelf %gcc": {h for h in gcc if installs[h]["spec"]["name"] == "libelf"},
    }
    assert {text: _found(graph, text) for text in expected} == expected
    assert len(expected["%c"]) == 2


def test_the_annotation_is_the_compiler_shown_and_filtered(v2_unsigned):
    """``Spec.compiler`` (``DeprecatedCompilerSpec``: ``compiler_node_attribute`` below format
    5), the compiler filter and ``specString`` read the annotation; ``%`` agrees with them."""
    graph, installs = v2_unsigned
    query = '{ specs(filter: {compiler: "gcc@10.2.1"}, first: 50) { nodes { hash specString } } }'
    nodes = execute(graph, query)["data"]["specs"]["nodes"]
    annotated = _annotated(installs, "gcc")
    assert annotated <= {n["hash"] for n in nodes}
    for n in nodes:
        if n["hash"] in annotated:
            assert "%gcc@10.2.1" in n["specString"]
            assert _found(graph, n["specString"]) >= {n["hash"]}
