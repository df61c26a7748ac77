"""The constraint language through the schema: satisfies and runsOn under every spec
connection, orderBy, facets and search. Expected answers come from the raw seed pages."""

from __future__ import annotations

from collections import Counter

import archspec.cpu
import pytest
from cachegraph.graph import load

from tests.conftest import SEEDS, execute
from tests.pages import fake_hash, record, write_page
from tests.rawpages import normalized, raw_pages


@pytest.fixture(scope="module")
def raw():
    """(package, record) of every seed page record: the seeds list each hash once."""
    return [(page.package, r) for page in raw_pages(SEEDS) for r in page.records]


def _version(r: dict) -> tuple:
    return tuple(int(p) for p in r["versions"][0].split("."))


def _contract_order(rows):
    """Package, then version (the seeds' versions are plain numbers), then hash."""
    return sorted(rows, key=lambda pr: (pr[0], _version(pr[1]), pr[1]["hash"]))


def test_satisfies_under_each_connection(run, raw):
    keras = [r for p, r in raw if p == "py-keras"]
    newer = {r["hash"] for r in keras if _version(r) >= (3, 9)}
    query = """{
      specs(filter: {satisfies: "py-keras@3.9:"}, first: 0) { totalCount }
      package(name: "py-keras") { specs(filter: {satisfies: "@3.9: target=x86_64_v3:"}, first: 1000)
        { nodes { hash } } }
      compiler(name: "gcc@11.4.0") { specs(filter: {satisfies: "py-keras@3.9:"}) { totalCount } }
      none: package(name: "py-safetensors") {
        specs(filter: {satisfies: "py-keras"}) { totalCount } }
    }"""
    on_v3 = {
        r["hash"] for r in keras
        if r["hash"] in newer
        and archspec.cpu.TARGETS[r["target"]] >= archspec.cpu.TARGETS["x86_64_v3"]
    }  # fmt: skip
    gcc = [r for r in keras if r["hash"] in newer and normalized(r["compiler"]) == "gcc@11.4.0"]
    found = run(query)["data"]
    assert found["specs"]["totalCount"] == len(newer) > 0
    assert {n["hash"] for n in found["package"]["specs"]["nodes"]} == on_v3
    assert found["compiler"]["specs"]["totalCount"] == len(gcc)
    assert found["none"]["specs"]["totalCount"] == 0


def test_runs_on(run, raw):
    query = '{ specs(filter: {runsOn: {target: "haswell", os: "ubuntu22.04"}}) { totalCount } }'
    expected = [
        r for _, r in raw
        if archspec.cpu.TARGETS["haswell"] >= archspec.cpu.TARGETS[r["target"]]
        and r["os"] == "ubuntu22.04"
    ]  # fmt: skip
    assert run(query) == {"data": {"specs": {"totalCount": len(expected)}}}


@pytest.mark.parametrize(
    ("filter", "message"),
    [
        (
            '{satisfies: "py-keras@@3"}',
            "bad constraint at column 9: an empty version: write "
            "one after '@' or leave '@' out\n  py-keras@@3\n          ^",
        ),
    ],
)
def test_bad_constraints_are_errors_a_person_can_act_on(run, filter, message):
    assert run(f"{{ specs(filter: {filter}) {{ totalCount }} }}") == {
        "data": None,
        "errors": [message],
    }


@pytest.mark.parametrize(
    ("filter", "message"),
    [
        ('{satisfies: "py-keras +nope"}',
         "no loaded spec has a variant 'nope', so nothing matches it (known: "),
        ('{runsOn: {target: "pentium9"}}',
         "archspec does not know a target 'pentium9', so nothing is known to run on it (did "
         "you mean pentium"),
    ],
)  # fmt: skip
def test_unknown_names_answer_empty_with_a_warning(run, filter, message):
    """As ``spack find``: no match, not an error; the warning names the nearest known."""
    found = run(f"{{ specs(filter: {filter}) {{ totalCount }} }}")
    assert found["data"] == {"specs": {"totalCount": 0}}
    assert [w[: len(message)] for w in found["extensions"]["warnings"]] == [message]


def test_order_by_pages_through_every_spec_once(run, raw):
    query = """query($after: String) {
      specs(first: 100, after: $after, orderBy: [{field: TARGET}, {field: HASH, direction: DESC}])
      { totalCount pageInfo { hasNextPage endCursor } nodes { hash } } }"""
    seen, after = [], None
    while True:
        page = run(query, {"after": after})["data"]["specs"]
        seen += [n["hash"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    by_hash_desc = sorted((r for _, r in raw), key=lambda r: r["hash"], reverse=True)
    assert seen == [r["hash"] for r in sorted(by_hash_desc, key=lambda r: r["target"])]
    assert page["totalCount"] == len(raw)


def test_order_by_version_descending_then_the_default_order(run, raw):
    query = """{ package(name: "py-keras") {
      specs(first: 5, orderBy: [{field: VERSION, direction: DESC}]) {
        nodes { hash version } } } }"""
    keras = [(p, r) for p, r in raw if p == "py-keras"]
    ordered = sorted(_contract_order(keras), key=lambda pr: _version(pr[1]), reverse=True)
    expected = [{"hash": r["hash"], "version": r["versions"][0]} for _, r in ordered[:5]]
    assert run(query)["data"]["package"]["specs"]["nodes"] == expected


def test_a_cursor_of_another_ordering_is_refused(run):
    first = run("{ specs(first: 1, orderBy: [{field: OS}]) { pageInfo { endCursor } } }")
    cursor = first["data"]["specs"]["pageInfo"]["endCursor"]
    again = run("query($a: String) { specs(after: $a) { totalCount } }", {"a": cursor})
    assert again == {
        "data": None,
        "errors": ["'after' is a cursor of a spec/os+ list, not of a spec list"],
    }


def _facet(counts: Counter) -> list[dict]:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"value": v, "count": n} for v, n in ranked]


FACETS = """query($filter: SpecFilter, $tag: String) { facets(filter: $filter, tag: $tag) {
  specCount packages { value count } versions { value count } compilers { value count }
  targets { value count } oss { value count } platforms { value count } stacks { value count }
  variants { value count } mirrors { value count } } }"""


@pytest.mark.parametrize(
    ("filter", "keep"),
    [
        (None, lambda p, r: True),
        (
            {"satisfies": "py-keras@3.9: backend=jax"},
            lambda p, r: (
                p == "py-keras" and _version(r) >= (3, 9) and "backend=jax" in r["variants"]
            ),
        ),
        (
            {"package": "py-ml-dtypes", "stacks": ["ml-linux-x86_64-cpu"]},
            lambda p, r: p == "py-ml-dtypes" and "ml-linux-x86_64-cpu" in r["stacks"],
        ),
    ],
)
def test_facets_count_each_value_among_the_filtered_specs(run, raw, filter, keep):
    rows = [(p, r) for p, r in raw if keep(p, r)]
    expected = {
        "specCount": len(rows),
        "packages": _facet(Counter(p for p, _ in rows)),
        "versions": _facet(Counter(r["versions"][0] for _, r in rows)),
        "compilers": _facet(Counter(normalized(r["compiler"]) or "none" for _, r in rows)),
        "targets": _facet(Counter(r["target"] for _, r in rows)),
        "oss": _facet(Counter(r["os"] for _, r in rows)),
        "platforms": _facet(Counter(r["platform"] for _, r in rows)),
        "stacks": _facet(Counter(s for _, r in rows for s in r["stacks"])),
        "variants": _facet(Counter(v for _, r in rows for v in r["variants"])),
        "mirrors": [],
    }
    for tag in (None, "develop"):  # the seeds are one tag: the same counts either way
        assert run(FACETS, {"filter": filter, "tag": tag}) == {"data": {"facets": expected}}
    assert rows


def test_facets_of_a_tag_not_loaded_are_empty(run):
    found = run(FACETS, {"tag": "v0.1.0"})["data"]["facets"]
    assert found["specCount"] == 0 and found["packages"] == [] and found["variants"] == []


# -- search ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mpi_pages(tmp_path_factory):
    """mpi, mpileaks, openmpi and a package with +mpi: one word ranks them all differently."""
    root = tmp_path_factory.mktemp("mpi")
    for package, variants in [
        ("openmpi", ()), ("mpileaks", ()), ("mpi", ()), ("hdf5", ("+mpi",)), ("zlib", ("+pic",))
    ]:  # fmt: skip
        hashes = [fake_hash(f"{package.replace('-', '')}{i}"[:32]) for i in "xy"]
        write_page(root, package, "develop", [record(h, variants=variants) for h in hashes])
    graph, report = load([root])
    assert report.problems == []
    return graph


SEARCH = """query($t: String!, $after: String) { search(text: $t, first: 3, after: $after) {
  totalCount pageInfo { hasNextPage endCursor } nodes { package { name } } } }"""


def test_search_ranks_exact_names_first_and_pages(mpi_pages):
    names, after = [], None
    while True:
        page = execute(mpi_pages, SEARCH, {"t": "MPI", "after": after})["data"]["search"]
        names += [n["package"]["name"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    # 0: the name; 1: the start of a name; 2: inside a name; 3: inside a variant
    assert names == ["mpi", "mpi", "mpileaks", "mpileaks", "openmpi", "openmpi", "hdf5", "hdf5"]
    assert page["totalCount"] == 8


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mpileaks 1.0", ["mpileaks", "mpileaks"]),
        ("openmpix", ["openmpi"]),  # a hash prefix: openmpixaaa...
        ("pic zlib", ["zlib", "zlib"]),
        ("mpi 9.9", []),
    ],
)
def test_search_needs_every_word(mpi_pages, text, expected):
    found = execute(mpi_pages, SEARCH, {"t": text, "after": None})["data"]["search"]
    assert [n["package"]["name"] for n in found["nodes"]] == expected


def test_an_empty_search_is_an_error(run):
    assert run('{ search(text: "  ") { totalCount } }') == {
        "data": None,
        "errors": ["the search text is empty: give a package name, version or hash"],
    }


def test_facet_lists_take_the_largest_counts_first(run, raw):
    targets = Counter(r["target"] for _, r in raw)
    query = (
        "{ facets { none: targets(first: 0) { value } top: targets(first: 2) { value count } } }"
    )
    assert run(query) == {"data": {"facets": {"none": [], "top": _facet(targets)[:2]}}}
    assert run("{ facets { targets(first: -1) { value } } }") == {
        "data": None,
        "errors": ["'first' must be 0 or more, got -1"],
    }


def test_a_cursor_of_another_search_is_refused(mpi_pages):
    first = execute(mpi_pages, SEARCH, {"t": "mpi", "after": None})["data"]["search"]
    cursor = first["pageInfo"]["endCursor"]  # an mpi spec: in no list of "zlib"
    assert execute(mpi_pages, SEARCH, {"t": "zlib", "after": cursor}) == {
        "data": None,
        "errors": ["the cursor names a spec that is not in this list; start again"],
    }
