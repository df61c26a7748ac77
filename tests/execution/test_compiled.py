"""The direct path: what gets a Plan, and that a fault gives no answer.

Every query the schema tests run also goes through the direct path (see
``execute`` in tests/conftest.py), which must answer what the standard path does.
"""

from __future__ import annotations

import pytest
import strawberry
from cachegraph.graph import CacheGraph
from cachegraph.schema import schema
from cachegraph.schema.context import Context
from cachegraph.schema.counted import CountRows
from graphql import parse

from cachegraph.execution import compiled
from tests.conftest import execute

HASH = "drrds2oxjpmqdoamsywhkl7us3fa3kor"  # py-ml-dtypes 0.4.0 in the seeds


def answer(graph: CacheGraph, query: str, variables: dict | None = None) -> dict | None:
    plan = compiled.plan(schema, parse(query), None)
    assert plan is not None
    return plan.answer(variables, Context(graph))


def test_fragments_aliases_and_typename_are_answered_as_the_standard_path_does(seeds_graph):
    query = """query($h: String!) {
      first: spec(hash: $h) { ...Build __typename hash }
      again: spec(hash: $h) { ... on Spec { shortHash } ... { version } package { name } }
    }
    fragment Build on Spec { hash compiler { name } target { name } }"""
    expected = {
        "first": {
            "hash": HASH,
            "compiler": {"name": "gcc@13.2.0"},
            "target": {"name": "x86_64_v3"},
            "__typename": "Spec",
        },
        "again": {"shortHash": HASH[:7], "version": "0.4.0", "package": {"name": "py-ml-dtypes"}},
    }
    assert execute(seeds_graph, query, {"h": HASH}) == {"data": expected}
    direct = answer(seeds_graph, query, {"h": HASH})
    assert direct == expected
    # Fields in the order of their first selection, as graphql-core orders them.
    assert list(direct["first"]) == ["hash", "compiler", "target", "__typename"]


@pytest.mark.parametrize(
    "query",
    [
        "{ __schema { queryType { name } } }",
        'query($x: Boolean!) { stack(name: "root") { name @include(if: $x) } }',
        '{ node(id: "U3BlYzp4") { id } }',
        '{ stack(name: "root") { ... on Node { id } } }',
        'mutation { stack(name: "root") { name } }',
    ],
    ids=["introspection", "directive", "abstract type", "fragment on an interface", "mutation"],
)
def test_what_only_the_standard_path_answers_gets_no_plan(query):
    assert compiled.plan(schema, parse(query), None) is None


@pytest.mark.parametrize(
    ("query", "variables"),
    [
        ("query($h: String!) { spec(hash: $h) { hash } }", {"h": 5}),
        ("query($h: String!) { spec(hash: $h) { hash } }", {"h": "ab"}),
        ("{ specs(first: 5000) { nodes { hash } } }", None),
    ],
    ids=["a variable of the wrong type", "a resolver raising", "an argument refused"],
)
def test_a_fault_gives_no_answer_and_the_standard_path_reports_it(seeds_graph, query, variables):
    assert answer(seeds_graph, query, variables) is None
    assert execute(seeds_graph, query, variables)["errors"]


@strawberry.type
class Item:
    name: str


@strawberry.type
class Broken:
    @strawberry.field
    def name(self) -> str:
        return None  # type: ignore[return-value]

    @strawberry.field
    def big(self) -> int:
        return 2**31

    @strawberry.field
    def ratio(self) -> float:
        return float("nan")

    @strawberry.field
    def items(self) -> list[Item]:
        return [Item(name="a"), None]  # type: ignore[list-item]

    @strawberry.field
    def names(self) -> list[str]:
        return ["a", None]  # type: ignore[list-item]

    @strawberry.field
    def maybe(self) -> str | None:
        return None

    @strawberry.field
    def no_items(self) -> list[Item] | None:
        return None

    @strawberry.field
    def sizes(self) -> list[Item]:
        return (Item(name="1"), Item(name="2"))  # type: ignore[return-value]

    @strawberry.field
    def count(self) -> int:
        return -(2**31)

    @strawberry.field
    def share(self) -> float:
        return 0.25

    @strawberry.field
    def flag(self) -> int:
        return True  # type: ignore[return-value]  # an int subclass: serialized, not passed


TINY = strawberry.Schema(query=Broken)


@pytest.mark.parametrize(
    "query", ["{ name }", "{ names }", "{ big }", "{ ratio }", "{ items { name } }"]
)
def test_a_value_the_schema_refuses_gives_no_answer(query):
    assert TINY.execute_sync(query).errors
    assert compiled.plan(TINY, parse(query), None).answer(None, None) is None


def test_values_the_schema_takes_are_answered_as_the_standard_path_does():
    query = "{ maybe noItems { name } sizes { name } count share flag }"
    expected = {
        "maybe": None,
        "noItems": None,
        "sizes": [{"name": "1"}, {"name": "2"}],
        "count": -(2**31),
        "share": 0.25,
        "flag": 1,
    }
    assert TINY.execute_sync(query).data == expected
    assert compiled.plan(TINY, parse(query), None).answer(None, None) == expected


def _rows(selection: str):
    """The compiled plan's builder of PackageCount rows from columns, for a selection."""
    compiler = compiled._Compiler(schema, {})
    [field] = parse("{ x " + selection + " }").definitions[0].selection_set.selections
    return compiler.rows(schema._schema.type_map["PackageCount"], [field.selection_set])


def test_rows_given_as_columns_are_built_from_them_when_they_hold_every_field():
    """A list given as columns (an impact's packages: schema.counted.CountRows) is built from
    them, aliases, order and ``__typename`` as the standard path gives them; a field no
    column holds (a package's id, its versions) leaves the rows to be made object by object."""
    columns = CountRows("package", [("zlib", 3), ("hdf5", 1)]).graphql_columns
    built = _rows("{ n: specCount package { __typename name } __typename }")(columns)
    assert built == [
        {"n": n, "package": {"__typename": "Package", "name": name}, "__typename": "PackageCount"}
        for name, n in [("zlib", 3), ("hdf5", 1)]
    ]
    assert _rows("{ package { name } specCount }")(columns) == [
        {"package": {"name": "zlib"}, "specCount": 3},
        {"package": {"name": "hdf5"}, "specCount": 1},
    ]
    for selection in ["{ package { id } }", "{ package { versions } }", "{ __typename }"]:
        assert _rows(selection)(columns) is None
    # Counts GraphQL's Int does not hold give no columns: the standard path reports them.
    assert CountRows("package", [("zlib", 2**31)]).graphql_columns is None
    assert CountRows("package", []).graphql_columns == {("package", "name"): [], ("specCount",): []}
