"""Spec lookups, filters and the spec connection, through the real schema."""

from __future__ import annotations

from dataclasses import fields

import pytest
from cachegraph.graph import load
from cachegraph.graph.attributes import ATTRIBUTES, SINGLE
from cachegraph.graph.questions.specs import SpecQuery
from cachegraph.schema.specs import SpecFilter

from tests.conftest import SEEDS, execute
from tests.pages import fake_hash, record, write_page
from tests.rawpages import raw_pages

SEED_RECORDS = [(p.package, r) for p in raw_pages(SEEDS) for r in p.records]


def contract_order(items):
    """Package name, then version, then hash: the seeds' versions are plain numbers."""
    return sorted(
        items,
        key=lambda pr: (pr[0], tuple(map(int, pr[1]["versions"][0].split("."))), pr[1]["hash"]),
    )


NEOVERSE = """{ specs(filter: {package: "py-ml-dtypes", target: "neoverse_v1"}) {
  totalCount nodes { hash shortHash version compiler { name } os platform target { name }
                     variants stacks { name } tags { name } specString } } }"""


def test_a_filter_answers_whole_specs_in_contract_order(run):
    def spec(hash, version):
        return {
            "hash": hash,
            "shortHash": hash[:7],
            "version": version,
            "compiler": {"name": "gcc@11.4.0"},
            "os": "ubuntu22.04",
            "platform": "linux",
            "target": {"name": "neoverse_v1"},
            "variants": ["build_system=python_pip"],
            "stacks": [{"name": "e4s-neoverse_v1"}, {"name": "root"}],
            "tags": [{"name": "develop"}],
            "specString": f"py-ml-dtypes@{version}%gcc@11.4.0 build_system=python_pip "
            "arch=linux-ubuntu22.04-neoverse_v1",
        }

    assert run(NEOVERSE) == {
        "data": {
            "specs": {
                "totalCount": 6,
                "nodes": [
                    spec("kuu4vbx3bx66rigjlr5pxz4q4ljyybpp", "0.3.1"),
                    spec("moxa3nurrmfsfajqcg43avttwd57nasl", "0.3.1"),
                    spec("vjoxg4c75vlhj7dep6sthhvkwhl5qkfu", "0.3.1"),
                    spec("7cijijpjz75nzdp4erfq4xm7ubnq4kdg", "0.4.0"),
                    spec("iy5fms5os6dnlfh4g235jcva6sdykpwp", "0.4.0"),
                    spec("pb64bp3smofm6ntcxrfrydfprdvmty74", "0.4.0"),
                ],
            }
        }
    }


@pytest.mark.parametrize(
    "text", ["22xqlomma3rncrgywukvxs53oiorwmgd", "22xqlom", "/22xqlomma", "22XQLOM"]
)
def test_spec_by_full_hash_or_prefix(run, text):
    assert run(
        "query($h: String!) { spec(hash: $h) { hash package { name } compiler { name } "
        "specString } }",
        {"h": text},
    ) == {
        "data": {
            "spec": {
                "hash": "22xqlomma3rncrgywukvxs53oiorwmgd",
                "package": {"name": "py-keras"},
                "compiler": None,
                "specString": "py-keras@3.9.2 backend=torch build_system=python_pip "
                "arch=linux-ubuntu24.04-aarch64",
            }
        }
    }


@pytest.mark.parametrize("text", ["zzzzzzz", "22xqlommzzzzzzzzzzzzzzzzzzzzzzzz", "2" * 40])
def test_an_unknown_hash_is_null(run, text):
    assert run("query($h: String!) { spec(hash: $h) { hash } }", {"h": text}) == {
        "data": {"spec": None}
    }


def test_a_short_prefix_is_an_error(run):
    assert run('{ spec(hash: "22xqlo") { hash } }') == {
        "data": {"spec": None},
        "errors": ["hash prefix '22xqlo' is 6 characters; give at least 7"],
    }


def test_an_ambiguous_prefix_is_an_error_naming_the_candidates(tmp_path):
    hashes = [fake_hash("abcdefgh" + c) for c in "xyz"]
    write_page(tmp_path, "pkg", "develop", [record(h) for h in hashes])
    graph = load([tmp_path])[0]
    assert execute(graph, '{ spec(hash: "abcdefg") { hash } }') == {
        "data": {"spec": None},
        "errors": ["hash prefix 'abcdefg' matches several specs: " + ", ".join(hashes)],
    }
    assert execute(graph, '{ spec(hash: "abcdefghy") { hash } }') == {
        "data": {"spec": {"hash": hashes[1]}}
    }


@pytest.mark.parametrize(
    ("spec_filter", "keep"),
    [
        ({"compiler": "gcc@=13.2.0"}, lambda p, r: r["compiler"] == "gcc@13.2.0"),
        ({"compiler": "gcc@13.2.0"}, lambda p, r: r["compiler"] == "gcc@13.2.0"),
        ({"compiler": "none"}, lambda p, r: r["compiler"] == "none"),
        ({"os": "sequoia", "platform": "darwin"}, lambda p, r: r["os"] == "sequoia"),
        ({"version": "0.3.1"}, lambda p, r: r["versions"] == ["0.3.1"]),
        ({"stacks": ["e4s", "root"]}, lambda p, r: "e4s" in r["stacks"]),
        (
            {"stacks": ["e4s"], "excludeStacks": ["ml-linux-x86_64-cpu"]},
            lambda p, r: "e4s" in r["stacks"] and "ml-linux-x86_64-cpu" not in r["stacks"],
        ),
        ({"variants": ["backend=jax"]}, lambda p, r: "backend=jax" in r["variants"]),
        (
            {"variants": ["backend=jax", "build_system=python_pip"], "target": "aarch64"},
            lambda p, r: "backend=jax" in r["variants"] and r["target"] == "aarch64",
        ),
        ({"tag": "develop", "package": "py-keras"}, lambda p, r: p == "py-keras"),
        ({"tag": "v0.21.0"}, lambda p, r: False),
        ({"stacks": ["no-such-stack"]}, lambda p, r: False),
        ({"package": "py-keras", "compiler": "gcc@13.2.0"}, lambda p, r: False),
    ],
)
def test_every_filter_matches_the_pages(run, spec_filter, keep):
    expected = [r["hash"] for p, r in contract_order(SEED_RECORDS) if keep(p, r)]
    result = run(
        "query($f: SpecFilter) { specs(filter: $f, first: 1000) { totalCount nodes { hash } } }",
        {"f": spec_filter},
    )
    assert result.pop("data") == {
        "specs": {"totalCount": len(expected), "nodes": [{"hash": h} for h in expected]}
    }
    # a tag or stack nothing loaded has answers empty, and says so (issue 28)
    unknown = {"tag": "v0.21.0"}, {"stacks": ["no-such-stack"]}
    if spec_filter in unknown:
        [warning] = result.pop("extensions")["warnings"]
        assert warning.startswith(("no loaded spec has the tag 'v0.21.0', so nothing matches it",
                                   "no loaded spec has the stack 'no-such-stack'"))  # fmt: skip
    assert result == {}


WALK = """query($first: Int, $after: String) { specs(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  edges { cursor node { hash } } } }"""


@pytest.mark.parametrize("first", [7, 50, 454, 1000])
def test_walking_the_connection_visits_every_spec_once_in_order(run, first):
    seen, after, pages = [], None, 0
    while True:
        page = run(WALK, {"first": first, "after": after})["data"]["specs"]
        assert page["totalCount"] == 454
        info = page["pageInfo"]
        assert info["hasPreviousPage"] == (after is not None)
        assert info["startCursor"] == page["edges"][0]["cursor"]
        assert info["endCursor"] == page["edges"][-1]["cursor"]
        seen += [e["node"]["hash"] for e in page["edges"]]
        pages += 1
        if not info["hasNextPage"]:
            break
        after = info["endCursor"]
    assert seen == [r["hash"] for _, r in contract_order(SEED_RECORDS)]
    assert pages == -(-454 // first)


def test_an_edge_cursor_resumes_after_its_spec(run):
    first = run(WALK, {"first": 3})["data"]["specs"]["edges"]
    resumed = run(WALK, {"first": 2, "after": first[0]["cursor"]})["data"]["specs"]["edges"]
    assert [e["node"] for e in resumed] == [e["node"] for e in first[1:3]]


def test_first_zero_gives_an_empty_page_with_counts(run):
    assert run(
        "{ specs(first: 0) { totalCount pageInfo { hasNextPage startCursor endCursor } "
        "nodes { hash } } }"
    ) == {
        "data": {
            "specs": {
                "totalCount": 454,
                "nodes": [],
                "pageInfo": {"hasNextPage": True, "startCursor": None, "endCursor": None},
            }
        }
    }


def test_first_null_means_the_default_fifty(run):
    result = run("{ specs(first: null) { edges { cursor } } }")
    assert len(result["data"]["specs"]["edges"]) == 50


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("first: 1001", "'first' must be between 0 and 1000, got 1001"),
        ("first: -1", "'first' must be between 0 and 1000, got -1"),
        (
            'after: "bm90LWEtY3Vyc29y"',
            "'after' is not a cursor this server issued: "
            "'bm90LWEtY3Vyc29y'; pass the endCursor or an edge cursor of a previous page",
        ),
        (
            'after: "%%%"',
            "'after' is not a cursor this server issued: '%%%'; "
            "pass the endCursor or an edge cursor of a previous page",
        ),
        (
            'after: "Y2cxOnBhY2thZ2U6cHkta2VyYXM="',
            "'after' is a cursor of a package list, not of a spec list",
        ),
        (
            'after: "Y2cxOnNwZWM6enp6enp6enp6enp6enp6enp6enp6enp6enp6enp6eno="',
            "the cursor names spec zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz, which is not loaded "
            "(the data may have been reloaded); start again without 'after'",
        ),
    ],
)
def test_bad_page_arguments_are_errors_that_say_what_to_do(run, arguments, message):
    assert run(f"{{ specs({arguments}) {{ totalCount nodes {{ hash }} }} }}") == {
        "data": None,
        "errors": [message],
    }


def test_shared_specs_are_in_every_stack(run):
    expected = [
        r["hash"]
        for p, r in contract_order(SEED_RECORDS)
        if {"ml-linux-x86_64-cpu", "ml-linux-x86_64-cuda"} <= set(r["stacks"])
    ]
    assert run(
        '{ sharedSpecs(stacks: ["ml-linux-x86_64-cpu", "ml-linux-x86_64-cuda"], '
        "first: 1000) "
        "{ totalCount nodes { hash } } }"
    ) == {
        "data": {
            "sharedSpecs": {"totalCount": len(expected), "nodes": [{"hash": h} for h in expected]}
        }
    }
    assert len(expected) == 82


def test_a_huge_cursor_is_quoted_briefly(run):
    import base64

    # A cursor of this server's form whose kind is half a megabyte long.
    cursor = base64.urlsafe_b64encode(b"cg1:" + b"k" * 500_000 + b":x").decode()
    found = run("query($a: String) { specs(after: $a) { totalCount } }", {"a": cursor})
    assert found["errors"] == [f"'after' is a cursor of a {'k' * 40} list, not of a spec list"]


def test_every_attribute_is_a_filter_and_a_query_field():
    query_fields = {f.name for f in fields(SpecQuery)}
    filter_fields = [f.python_name for f in SpecFilter.__strawberry_definition__.fields]
    assert filter_fields[: len(ATTRIBUTES)] == [a.name for a in ATTRIBUTES]
    assert [k for k in SINGLE if k not in query_fields] == []


def test_stacks_by_tag_are_the_pages(data_graph, shared_data):
    listed: dict[str, dict[str, list[str]]] = {}
    for page in raw_pages(shared_data):
        for row in page.records:
            listed.setdefault(row["hash"], {})[page.tag] = sorted(row["stacks"])
    query = "query($h: String!) { spec(hash: $h) { stacksByTag { tag { name } stacks { name } } } }"
    for hash, layout in sorted(listed.items())[::7]:
        found = execute(data_graph, query, {"h": hash})["data"]["spec"]["stacksByTag"]
        assert found == [
            {"tag": {"name": t}, "stacks": [{"name": s} for s in layout[t]]} for t in sorted(layout)
        ]
