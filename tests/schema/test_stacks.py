"""Stacks, shared specs and overlaps, checked against counts taken from the raw pages."""

from __future__ import annotations

import itertools
from collections import defaultdict

from tests.conftest import SEEDS, execute
from tests.rawpages import raw_pages


def stack_members(pages, tag=None):
    members = defaultdict(set)
    for page in pages:
        if tag is None or page.tag == tag:
            for r in page.records:
                for s in r["stacks"]:
                    members[s].add(r["hash"])
    return members


def expected_overlaps(members):
    found = []
    for a, b in itertools.combinations(sorted(members), 2):
        shared = len(members[a] & members[b])
        if shared:
            found.append(
                {
                    "stacks": [{"name": a}, {"name": b}],
                    "sharedSpecCount": shared,
                    "jaccard": shared / len(members[a] | members[b]),
                }
            )
    return sorted(found, key=lambda o: (-o["sharedSpecCount"], [s["name"] for s in o["stacks"]]))


OVERLAPS = (
    "query($t: String) { stackOverlaps(tag: $t) { stacks { name } sharedSpecCount jaccard } }"
)


def test_stack_overlaps_of_all_stacks(run):
    expected = expected_overlaps(stack_members(raw_pages(SEEDS)))
    assert run(OVERLAPS) == {"data": {"stackOverlaps": expected}}
    assert expected[0] == {
        "stacks": [{"name": "ml-linux-x86_64-cpu"}, {"name": "root"}],
        "sharedSpecCount": 122,
        "jaccard": 122 / 454,
    }


def test_stack_overlaps_per_tag_and_overall_on_many_tags(data_graph, shared_data):
    pages = raw_pages(shared_data)
    for tag in [None, "develop", "v0.20.0", "develop-2025-03-23"]:
        expected = expected_overlaps(stack_members(pages, tag))
        assert execute(data_graph, OVERLAPS, {"t": tag}) == {"data": {"stackOverlaps": expected}}


def test_stack_overlaps_among_given_stacks(run):
    assert run(
        '{ stackOverlaps(stacks: ["ml-linux-x86_64-cpu", "ml-linux-x86_64-rocm", "e4s", '
        '"nope"]) { stacks { name } sharedSpecCount } }'
    ) == {
        "data": {
            "stackOverlaps": [
                {
                    "stacks": [{"name": "ml-linux-x86_64-cpu"}, {"name": "ml-linux-x86_64-rocm"}],
                    "sharedSpecCount": 13,
                }
            ]
        }
    }


STACK = """{ stack(name: "e4s") { name specCount packageCount tags { name }
  packages { totalCount nodes { name } } specs(first: 1) { totalCount nodes { hash } }
  overlaps { stacks { name } sharedSpecCount } } }"""


def test_a_stack_with_its_packages_specs_and_overlaps(run):
    members = stack_members(raw_pages(SEEDS))
    overlaps = [o for o in expected_overlaps(members) if {"name": "e4s"} in o["stacks"]]
    # py-ml-dtypes 0.3.1 comes first; among its e4s specs, the smallest hash.
    first = min(
        r["hash"]
        for p in raw_pages(SEEDS)
        if p.package == "py-ml-dtypes"
        for r in p.records
        if "e4s" in r["stacks"] and r["versions"] == ["0.3.1"]
    )
    assert run(STACK) == {
        "data": {
            "stack": {
                "name": "e4s",
                "specCount": 31,
                "packageCount": 2,
                "tags": [{"name": "develop"}],
                "packages": {
                    "totalCount": 2,
                    "nodes": [{"name": "py-ml-dtypes"}, {"name": "py-pdm-backend"}],
                },
                "specs": {"totalCount": 31, "nodes": [{"hash": first}]},
                "overlaps": [
                    {"stacks": o["stacks"], "sharedSpecCount": o["sharedSpecCount"]}
                    for o in overlaps
                ],
            }
        }
    }


def test_stacks_are_listed_by_name_per_tag(data_graph, shared_data):
    pages = raw_pages(shared_data)
    for tag in [None, "develop", "v0.18.0"]:
        members = stack_members(pages, tag)
        result = execute(
            data_graph,
            "query($t: String) { stacks(tag: $t) { name specCount(tag: $t) } }",
            {"t": tag},
        )
        assert result == {
            "data": {"stacks": [{"name": s, "specCount": len(members[s])} for s in sorted(members)]}
        }


def test_what_one_stack_has_that_another_lacks(run):
    members = stack_members(raw_pages(SEEDS))
    only = members["ml-linux-x86_64-cuda"] - members["ml-linux-x86_64-cpu"]
    result = run(
        '{ specs(first: 1000, filter: {stacks: ["ml-linux-x86_64-cuda"], '
        'excludeStacks: ["ml-linux-x86_64-cpu"]}) { totalCount nodes { hash } } }'
    )
    assert result["data"]["specs"]["totalCount"] == len(only) == 29
    assert {n["hash"] for n in result["data"]["specs"]["nodes"]} == only


def test_an_absent_stack_is_null(run):
    assert run('{ stack(name: "nope") { name } }') == {"data": {"stack": None}}
