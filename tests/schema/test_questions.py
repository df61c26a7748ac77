"""The questions only a graph answers, through the schema: coverage of a real lockfile given as
JSON, nearest, specDiff, lookalikes, impact, tagDiff, firstSeen and lastSeen."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from cachegraph.graph import MirrorSource, load

from tests.conftest import SHARED, execute
from tests.rawpages import raw_pages

MPIGDB = SHARED / "lockfiles" / "robertu94+mpigdb.spack.lock"


@pytest.fixture(scope="module")
def mirrors(shared_mirrors):
    unsigned = MirrorSource("test", "e4s", shared_mirrors / "v2_layout" / "unsigned")
    return load([], [unsigned])[0]


COVERAGE = """query($lock: JSON, $specs: [String!], $tag: String) {
  coverage(lockfile: $lock, specs: $specs, tag: $tag) {
    total hitCount missCount externalCount hitBytes cachedRoots
    entries { hash name version hit external reason spec { shortHash }
      nearest(first: 1) { spec { hash } } }
  } }"""


def test_coverage_of_a_real_lockfile_given_as_json(mirrors):
    """No spec of mpigdb's environment is in the test mirror: every entry is a miss, roots
    first, but the 14 its lockfile marks external (Spack never installs one from a cache)."""
    if not MPIGDB.exists():
        pytest.skip(f"{MPIGDB} is absent")
    doc = json.loads(MPIGDB.read_text())
    roots = list(dict.fromkeys(r["hash"] for r in doc["roots"]))
    order = [*roots, *(h for h in doc["concrete_specs"] if h not in roots)]
    found = execute(mirrors, COVERAGE, {"lock": doc})["data"]["coverage"]
    externals = {h for h, n in doc["concrete_specs"].items() if n.get("external")}
    assert len(externals) == 14
    counts = ("total", "hitCount", "missCount", "externalCount")
    assert tuple(found[c] for c in counts) == (58, 0, 44, 14)
    assert {e["hash"] for e in found["entries"] if e["external"]} == externals
    assert [e["hash"] for e in found["entries"]] == order
    assert found["entries"][0] == {
        "hash": roots[0],
        "name": doc["concrete_specs"][roots[0]]["name"],
        "version": doc["concrete_specs"][roots[0]]["version"],
        "hit": False,
        "external": False,
        "reason": "not in any loaded mirror",
        "spec": None,
        "nearest": [],
    }
    assert found["cachedRoots"] == [] and found["hitBytes"] == 0


def test_coverage_of_hashes(mirrors):
    specs = ["u5uz3dcch5if4eve4sef67o2rf2lbfgh", "/vd7v4ssgnoqdplgxyig3orum67n4vmhq", "a" * 32]
    found = execute(mirrors, COVERAGE, {"specs": specs})["data"]["coverage"]
    assert [(e["hash"][:7], e["name"], e["hit"], e["reason"]) for e in found["entries"]] == [
        ("u5uz3dc", "libdwarf", True, None),
        ("vd7v4ss", "gcc", False, "known only as a dependency of cached specs, held by no mirror"),
        ("aaaaaaa", "", False, "not in any loaded mirror"),
    ]


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({}, "give either 'lockfile' (a spack.lock's JSON) or 'specs' (hashes)"),
        ({"lock": {"_meta": {}}}, "not a spack.lock: it has no 'concrete_specs' mapping"),
        ({"lock": [1, 2]}, "not a spack.lock: it has no 'concrete_specs' mapping"),
    ],
)
def test_bad_coverage_arguments(mirrors, variables, message):
    assert execute(mirrors, COVERAGE, variables) == {"data": None, "errors": [message]}


def test_spec_diff_and_nearest_of_a_cached_hash(mirrors):
    query = """{ specDiff(a: "sk2gqqz", b: "u5uz3dc") { a { shortHash } b { shortHash }
                 differences { field wanted cached } }
               nearest(hash: "sk2gqqz", first: 2) { spec { shortHash } distance } }"""
    found = execute(mirrors, query)["data"]
    assert found["specDiff"]["differences"][0] == {
        "field": "target",
        "wanted": "core2",
        "cached": "m1",
    }
    assert [f["field"] for f in found["specDiff"]["differences"]] == [
        "target",
        "dependency:compiler-wrapper",
        "dependency:gcc",
        "dependency:gcc-runtime",
        "dependency:libelf",
    ]
    # itself first; then the other libdwarf: target 2, three more dependencies 0.75
    assert found["nearest"] == [
        {"spec": {"shortHash": "sk2gqqz"}, "distance": 0.0},
        {"spec": {"shortHash": "u5uz3dc"}, "distance": 2.75},
    ]


def test_nearest_of_an_unknown_hash_says_what_to_do(mirrors):
    assert execute(mirrors, '{ nearest(hash: "aaaaaaaaa") { distance } }') == {
        "data": None,
        "errors": [
            "no loaded spec has the hash 'aaaaaaaaa': for a spec the cache does not know, ask "
            "nearest(spec:) with its constraint, or coverage with its lockfile"
        ],
    }


def test_impact_pages_and_counts(mirrors):
    query = """query($after: String) { impact(spec: "libelf") { specCount
      packages { package { name } specCount } stacks { stack { name } specCount }
      specs(first: 1, after: $after) {
        pageInfo { hasNextPage endCursor } nodes { shortHash } } } }"""
    first = execute(mirrors, query)["data"]["impact"]
    assert first["specCount"] == 2
    assert first["packages"] == [{"package": {"name": "libdwarf"}, "specCount": 2}]
    assert first["stacks"] == [{"stack": {"name": "e4s"}, "specCount": 2}]
    after = first["specs"]["pageInfo"]["endCursor"]
    second = execute(mirrors, query, {"after": after})["data"]["impact"]["specs"]
    assert [first["specs"]["nodes"][0]["shortHash"], second["nodes"][0]["shortHash"]] == [
        "sk2gqqz",
        "u5uz3dc",
    ]
    assert second["pageInfo"]["hasNextPage"] is False


def test_impact_on_pages_reaches_nothing_and_says_why(run):
    assert run('{ impact(spec: "py-keras") { specCount } }') == {
        "data": {"impact": {"specCount": 0}},
        "extensions": {"warnings": ["the loaded data has no dependency DAGs: nothing is reached"]},
    }


def test_lookalikes_through_the_package(run):
    found = run(
        '{ package(name: "py-keras") { lookalikes { specs { hash } differingDependencies } } }'
    )
    groups = found["data"]["package"]["lookalikes"]
    assert groups and all(g["differingDependencies"] == [] for g in groups)
    sizes = [len(g["specs"]) for g in groups]
    assert sizes == sorted(sizes, reverse=True) and min(sizes) >= 2


def test_tag_diff_and_first_and_last_seen(shared_data, data_graph):
    by_tag = defaultdict(set)
    for page in raw_pages(shared_data):
        by_tag[page.tag] |= {r["hash"] for r in page.records}
    query = """{ tagDiff(from: "v0.21.0", to: "v0.22.0") { from { name } to { name }
      added(first: 0) { totalCount } removed(first: 0) { totalCount } kept(first: 1000) {
        totalCount nodes { hash firstSeen { name } lastSeen { name } } }
      packages { package { name } added removed kept } stacks { stack { name } added removed kept }
      most: packages(order: MOST_CHANGED, first: 3) { package { name } added removed kept }
      busiest: stacks(order: MOST_CHANGED, first: 2) { stack { name } added removed kept }
    } }"""
    found = execute(data_graph, query)["data"]["tagDiff"]
    old, new = by_tag["v0.21.0"], by_tag["v0.22.0"]
    assert (found["from"], found["to"]) == ({"name": "v0.21.0"}, {"name": "v0.22.0"})
    assert found["added"]["totalCount"] == len(new - old)
    assert found["removed"]["totalCount"] == len(old - new)
    assert {n["hash"] for n in found["kept"]["nodes"]} == old & new
    packages = defaultdict(lambda: [0, 0, 0])
    for page in raw_pages(shared_data):
        for r in page.records:
            h = r["hash"]
            if page.tag == "v0.22.0":
                packages[page.package][0 if h not in old else 2] += 1
            elif page.tag == "v0.21.0" and h not in new:
                packages[page.package][1] += 1
    assert found["packages"] == [
        {"package": {"name": p}, "added": a, "removed": r, "kept": k}
        for p, (a, r, k) in sorted(packages.items())
    ]
    most = sorted(packages.items(), key=lambda item: (-item[1][0] - item[1][1], item[0]))[:3]
    assert found["most"] == [
        {"package": {"name": p}, "added": a, "removed": r, "kept": k} for p, (a, r, k) in most
    ]
    stacks = defaultdict(lambda: [0, 0, 0])  # added and kept in v0.22.0, removed in v0.21.0
    for page in raw_pages(shared_data):
        for r in page.records:
            h = r["hash"]
            for stack in r["stacks"]:
                if page.tag == "v0.22.0":
                    stacks[stack][0 if h not in old else 2] += 1
                elif page.tag == "v0.21.0" and h not in new:
                    stacks[stack][1] += 1
    assert found["stacks"] == [
        {"stack": {"name": st}, "added": a, "removed": r, "kept": k}
        for st, (a, r, k) in sorted(stacks.items())
    ]
    busiest = sorted(stacks.items(), key=lambda item: (-item[1][0] - item[1][1], item[0]))[:2]
    assert found["busiest"] == [
        {"stack": {"name": st}, "added": a, "removed": r, "kept": k} for st, (a, r, k) in busiest
    ]
    for node in found["kept"]["nodes"]:  # both tags hold it: seen no later than v0.21.0...
        tags = [t for t, hashes in by_tag.items() if node["hash"] in hashes]
        assert node["firstSeen"]["name"] in tags and node["lastSeen"]["name"] in tags
