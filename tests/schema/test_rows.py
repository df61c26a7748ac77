"""A page of specs asking only plain fields is built from the store's columns, with no record
made; asking anything else makes the page's records. Either way the answer is the one the
seeds' pages give (``execute`` also compares the direct path with the standard one)."""

from __future__ import annotations

import json

import pytest
from cachegraph.graph.store.view import CacheGraph
from cachegraph.schema import schema
from cachegraph.schema.context import Context
from graphql import parse

from cachegraph.execution import compiled
from tests.conftest import SEEDS, break_records, execute, load

QUERY = """query($p: String!, $s: String!) { specs(filter: {package: $p, stacks: [$s]}, first: 3)
  { nodes { hash v: version os platform __typename } pageInfo { hasNextPage } } }"""
ASKED = {"p": "py-keras", "s": "ml-darwin-aarch64-mps"}


def listed() -> list[dict]:
    """The seeds' pages' specs of ASKED, as the contract orders them (by hash, one version)."""
    found = {}
    for page in sorted(SEEDS.glob("*.txt")):
        lines = page.read_text().splitlines()
        if f'title: "{ASKED["p"]}"' not in lines:
            continue
        details = next(line for line in lines if line.startswith("spec_details: "))
        for spec in json.loads(details.removeprefix("spec_details: ")):
            if ASKED["s"] in spec["stacks"]:
                found[spec["hash"]] = spec
    return [found[h] for h in sorted(found)]


def direct(graph: CacheGraph, query: str) -> dict | None:
    plan = compiled.plan(schema, parse(query), None)
    assert plan is not None
    return plan.answer(ASKED, Context(graph))


def test_a_page_of_plain_fields_is_the_pages_and_makes_no_record(seeds_graph):
    specs = listed()
    assert len(specs) == 10 and {s["versions"][0] for s in specs} == {"3.9.2"}
    nodes = [
        {"hash": s["hash"], "v": "3.9.2", "os": s["os"], "platform": s["platform"]}
        for s in specs[:3]
    ]
    expected = {"specs": {"nodes": [{**n, "__typename": "Spec"} for n in nodes],
                          "pageInfo": {"hasNextPage": True}}}  # fmt: skip
    assert execute(seeds_graph, QUERY, ASKED) == {"data": expected}
    broken = load([SEEDS])[0]
    broken.store.records = lambda ranks: [None.hash for _ in ranks]  # a record made: a fault
    assert direct(broken, QUERY) == expected


@pytest.mark.parametrize("more", ["compiler { name }", "versions", "id"])
def test_a_page_asking_more_makes_its_records(seeds_graph, more):
    query = QUERY.replace("platform", f"platform {more}")
    assert direct(seeds_graph, query) == execute(seeds_graph, query, ASKED)["data"]
    broken = load([SEEDS])[0]
    break_records(broken)
    assert direct(broken, query) is None  # the standard path reports the fault
