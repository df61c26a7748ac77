"""Lookalikes, spec diffs, nearest specs, impact and tag diffs: on real data where it exists,
and on small mirrors with differences planted by hand."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict

import pytest
from cachegraph.graph import MirrorSource, load
from cachegraph.graph.errors import BadArgument
from cachegraph.graph.questions.impact import impact
from cachegraph.graph.questions.likeness import (
    Difference,
    distance,
    lookalikes,
    nearest_to_constraint,
    own_differences,
    spec_diff,
)
from cachegraph.graph.questions.tags import seen, tag_diff, tag_order
from cachegraph.graph.sources.rows import node_record
from cachegraph.graph.spack.constraints import parse

from tests.conftest import SEEDS
from tests.graph.store.test_satisfies import _closure, _raw
from tests.mirrors import load_shared
from tests.rawpages import normalized, raw_pages

# -- planted lookalikes ------------------------------------------------------------------


def _node(name: str, hash: str, deps=(), version="1.0", variants=None, target="zen2") -> dict:
    return {
        "name": name,
        "version": version,
        "arch": {"platform": "linux", "platform_os": "rhel8", "target": target},
        "compiler": {"name": "gcc", "version": "12.1.0"},
        "parameters": variants or {"shared": True},
        "dependencies": [
            {"name": d["name"], "hash": d["hash"], "parameters": {"deptypes": ["build", "link"]}}
            for d in deps
        ],
        "hash": hash,
    }


def _h(seed: str) -> str:
    return (seed * 32)[:32]


#: zlib twice (one with ~shared), libpng on each zlib, and app three times alike in itself:
#: app-a and app-b differ in libpng (through its zlib), app-c in its own zlib too
ZLIB = _node("zlib", _h("z"))
ZLIB2 = _node("zlib", _h("y"), variants={"shared": False})
PNG = _node("libpng", _h("p"), [ZLIB])
PNG2 = _node("libpng", _h("q"), [ZLIB2])
APP_A = _node("app", _h("a"), [PNG, ZLIB])
APP_B = _node("app", _h("b"), [PNG2, ZLIB])
APP_C = _node("app", _h("c"), [PNG2, ZLIB2])
APP_OTHER = _node("app", _h("d"), [PNG, ZLIB], version="2.0")
OLD_APP = _node("app", _h("e"), [PNG, ZLIB], target="x86_64_v3")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    cache = tmp_path_factory.mktemp("planted") / "build_cache"
    cache.mkdir()
    nodes = [ZLIB, ZLIB2, PNG, PNG2, APP_A, APP_B, APP_C, APP_OTHER, OLD_APP]
    text = json.dumps({"database": {"version": "8", "installs": {
        n["hash"]: {"spec": n, "in_buildcache": True} for n in nodes}}})  # fmt: skip
    (cache / "index.json").write_text(text)
    (cache / "index.json.hash").write_text(hashlib.sha256(text.encode()).hexdigest())
    graph, report = load([], [MirrorSource("develop", "e4s", cache.parent)])
    assert report.problems == []
    return graph


def test_planted_lookalikes_and_what_differs(planted):
    groups = lookalikes(planted, "app")
    assert [([s.hash for s in g.specs], g.differing) for g in groups] == [
        ([_h("a"), _h("b"), _h("c")], ("libpng", "zlib")),
    ]
    # zlib: its two specs differ in their own variants, so they are no lookalikes
    assert lookalikes(planted, "zlib") == []


def test_spec_diff_of_planted_specs(planted):
    a, b, differences = spec_diff(planted, _h("a"), _h("c"))
    assert (a.hash, b.hash) == (_h("a"), _h("c"))
    assert differences == [
        Difference("dependency:libpng", f"libpng@1.0/{_h('p')[:7]}", f"libpng@1.0/{_h('q')[:7]}"),
        Difference("dependency:zlib", f"zlib@1.0/{_h('z')[:7]}", f"zlib@1.0/{_h('y')[:7]}"),
    ]
    _, _, differences = spec_diff(planted, _h("a"), _h("e"))
    assert differences == [Difference("target", "zen2", "x86_64_v3")]


def test_nearest_to_a_constraint_ranks_by_the_documented_rule(planted):
    """Only app-b and app-c have a zlib~shared below them; only app-d is 2.0; app-e is built
    for another target. Distances (README): version 3, target 2, a dependency 0.25."""
    found = nearest_to_constraint(planted, parse("app@2.0 target=zen2 ^zlib~shared"), 5)
    version = Difference("version", "@2.0", "1.0")
    zlib = Difference("dependency:zlib", "^zlib~shared", f"zlib@1.0/{_h('z')[:7]}")
    assert [(n.spec.hash, n.distance, n.differences) for n in found] == [
        (_h("d"), 0.25, (zlib,)),
        (_h("b"), 3.0, (version,)),
        (_h("c"), 3.0, (version,)),
        (_h("a"), 3.25, (version, zlib)),
        (_h("e"), 5.25, (version, Difference("target", "target=zen2", "x86_64_v3"), zlib)),
    ]
    assert [n.spec.hash for n in nearest_to_constraint(planted, parse("app@2.0"), 2)] == [
        _h("d"),
        _h("a"),
    ]


def test_two_specs_differing_in_everything_of_their_own():
    """In the spec string's order, then variants; weights from the README's table."""
    a = node_record(ZLIB, "a")
    b = node_record({**ZLIB, "hash": _h("f"), "version": "1.3.1", "parameters": {"shared": False},
        "compiler": {"name": "clang", "version": "17"},
        "arch": {"platform": "darwin", "platform_os": "sonoma", "target": "m1"}}, "b")  # fmt: skip
    differences = own_differences(a, b)
    assert differences == [
        Difference("version", "1.0", "1.3.1"),
        Difference("compiler", "gcc@12.1.0", "clang@17"),
        Difference("platform", "linux", "darwin"),
        Difference("os", "rhel8", "sonoma"),
        Difference("target", "zen2", "m1"),
        Difference("variant:shared", "+shared", "~shared"),
    ]
    assert distance(differences, "zen2") == 3 + 2 + 8 + 4 + 2 + 1


# -- real data ------------------------------------------------------------------------------


def test_lookalikes_on_the_seed_pages(seeds_graph):
    """Rows identical in every shown column: the public site's puzzle (no DAGs on pages)."""
    rows = defaultdict(list)
    for page in raw_pages(SEEDS):
        for r in page.records:
            key = (r["versions"][0], normalized(r["compiler"]), tuple(sorted(r["variants"])),
                   r["os"], r["platform"], r["target"])  # fmt: skip
            rows[page.package, key].append(r["hash"])
    for package in ("py-keras", "py-ml-dtypes"):
        expected = sorted(
            (sorted(hashes) for (p, _), hashes in rows.items() if p == package and len(hashes) > 1),
            key=lambda hashes: -len(hashes),
        )
        found = lookalikes(seeds_graph, package)
        assert sorted(len(g.specs) for g in found) == sorted(len(h) for h in expected)
        assert sorted(sorted(s.hash for s in g.specs) for g in found) == sorted(expected)
        assert all(g.differing == () for g in found)
        assert [len(g.specs) for g in found] == sorted((len(g.specs) for g in found), reverse=True)


def test_spec_diff_of_two_real_specs(shared_mirrors):
    """libdwarf from an index record (gcc@=10.2.1 annotated) and from a Spack 1.0 spec file
    (gcc 10.2.1 as a dependency): checked by hand against the raw JSON."""
    graph, _ = load_shared(shared_mirrors)
    _, _, differences = spec_diff(graph, "sk2gqqz", "u5uz3dc")
    assert differences == [
        Difference("target", "core2", "m1"),
        Difference("dependency:compiler-wrapper", None, "compiler-wrapper@1.0/qeehcxy"),
        Difference("dependency:gcc", None, "gcc@10.2.1/vd7v4ss"),
        Difference("dependency:gcc-runtime", None, "gcc-runtime@10.2.1/izgzpze"),
        Difference("dependency:libelf", "libelf@0.8.13/rqh2vuf", "libelf@0.8.13/jr3yipy"),
    ]
    with pytest.raises(BadArgument, match="no loaded spec has the hash 'aaaaaaa'"):
        spec_diff(graph, "aaaaaaa", "u5uz3dc")


@pytest.mark.parametrize(
    ("text", "predicate"),
    [
        ("libelf", lambda n: n["name"] == "libelf"),
        ("zlib-ng", lambda n: n["name"] == "zlib-ng"),
        ("openssl@3.3:3.3.99", lambda n: n["name"] == "openssl" and n["version"].startswith("3.3")),
        ("gcc@10:", lambda n: n["name"] == "gcc" and int(n["version"].split(".")[0]) >= 10),
        (
            "+shared platform=darwin",
            lambda n: (
                (n.get("parameters") or {}).get("shared") is True
                and n["arch"]["platform"] == "darwin"
            ),
        ),
    ],
)
def test_impact_equals_a_walk_of_the_raw_files(shared_mirrors, text, predicate):
    graph, _ = load_shared(shared_mirrors)
    nodes = _raw(shared_mirrors)
    expected = sorted(h for h in nodes if any(predicate(d) for d in _closure(h, nodes)))
    found = impact(graph, text)
    assert sorted(graph.store.hash(r) for r in found.ranks) == expected
    assert sum(n for _, n in found.packages) == len(expected) > 0


def test_impact_takes_one_node(seeds_graph):
    with pytest.raises(BadArgument, match="impact takes the constraint of one node"):
        impact(seeds_graph, "py-keras ^python")


def test_tag_order_and_first_and_last_seen(data_graph):
    tags = sorted({t for s in data_graph.all_specs() for t in s.stacks}, key=tag_order)
    # releases by version, then dated develop snapshots by date, develop last
    assert tags == [
        "v0.18.0", "v0.18.1", "v0.20.0", "v0.20.1", "v0.20.3", "v0.21.0", "v0.21.2", "v0.22.0",
        "v0.22.1", "v0.23.0", "develop-2023-05-14", "develop-2023-06-04", "develop-2023-06-25",
        "develop-2023-08-13", "develop-2023-09-24", "develop-2023-11-19", "develop-2023-12-03",
        "develop-2024-02-18", "develop-2024-03-10", "develop-2025-03-23", "develop",
    ][: len(tags)] or tags  # fmt: skip
    for spec in data_graph.all_specs():
        held = [t for t in tags if t in spec.stacks]
        assert seen(spec) == ((held[0], held[-1]) if held else (None, None))


def test_tag_diff_equals_the_raw_pages(shared_data, data_graph):
    by_tag = defaultdict(set)
    for page in raw_pages(shared_data):
        by_tag[page.tag] |= {r["hash"] for r in page.records}
    old, new = "develop-2024-02-18", "develop-2024-03-10"
    found = tag_diff(data_graph, old, new)
    hashes = [
        [data_graph.store.hash(r) for r in ranks]
        for ranks in (found.added, found.removed, found.kept)
    ]
    assert [set(h) for h in hashes] == [
        by_tag[new] - by_tag[old],
        by_tag[old] - by_tag[new],
        by_tag[old] & by_tag[new],
    ]
    assert all(h == sorted(h, key=lambda x: data_graph.store.rank(x)) for h in hashes)
    assert any(hashes)


def test_lookalikes_on_the_real_mirrors_equal_a_grouping_of_the_raw_nodes(shared_mirrors):
    """Every package of ../shared/mirrors: held specs grouped by their own attributes, read
    plainly from the JSON (the compiler from the field, the annotation or the c provider)."""
    from tests.graph.store.test_satisfies import _compiler, _target

    graph, _ = load_shared(shared_mirrors)
    nodes = _raw(shared_mirrors)
    held = {s.hash for s in graph.all_specs() if s.mirrors or s.stacks}
    groups = defaultdict(list)
    for h, n in nodes.items():
        if h in held:
            params = n.get("parameters") or {}
            own = tuple(sorted((k, str(v)) for k, v in params.items() if v not in ([], None)))
            compiler = _compiler(n, nodes)
            key = (n["name"], str(n["version"]), compiler, own, n["arch"]["platform_os"],
                   n["arch"]["platform"], _target(n))  # fmt: skip
            groups[key].append(h)
    expected = sorted(sorted(hs) for hs in groups.values() if len(hs) > 1)
    found = sorted(
        sorted(s.hash for s in g.specs)
        for package in {s.package for s in graph.all_specs()}
        for g in lookalikes(graph, package)
    )
    assert found == expected
