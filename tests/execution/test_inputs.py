"""Arguments converted by functions made once per type (``cachegraph.execution.inputs``)
give what Strawberry's own ``convert_arguments`` gives, for every argument of the schema:
a Strawberry upgrade that converts differently fails here, not in a wrong answer."""

from __future__ import annotations

import graphql
import pytest
import strawberry
from cachegraph.schema import schema
from cachegraph.schema.context import Context
from graphql import parse
from strawberry.relay import GlobalID
from strawberry.types.arguments import convert_arguments

from cachegraph.execution import compiled
from cachegraph.execution.inputs import arguments_converter, identity

SCALARS = {"String": "x", "ID": "i", "Int": 3, "Float": 1.5, "Boolean": True}


def sample(type_: graphql.GraphQLInputType, full: bool) -> object:
    """A raw value of ``type_`` as a client sends it: with every input field when ``full``,
    else with the required ones only."""
    type_ = graphql.get_nullable_type(type_)
    if isinstance(type_, graphql.GraphQLList):
        return [sample(type_.of_type, full), sample(type_.of_type, full)]
    if isinstance(type_, graphql.GraphQLEnumType):
        return list(type_.values)[-1]  # not the first: that is often the default
    if isinstance(type_, graphql.GraphQLInputObjectType):
        return {
            name: sample(field.type, full)
            for name, field in type_.fields.items()
            if full
            or (graphql.is_non_null_type(field.type) and field.default_value is graphql.Undefined)
        }
    return SCALARS.get(type_.name, {"a": [1]})


def arguments() -> list[tuple[str, str]]:
    """(type, field) of every field of the schema that takes arguments."""
    found = []
    for type_ in schema._schema.type_map.values():
        if isinstance(type_, graphql.GraphQLObjectType) and not type_.name.startswith("__"):
            found += [(type_.name, name) for name, f in type_.fields.items() if f.args]
    return found


def strawberrys(given: dict, field) -> dict:
    return convert_arguments(
        given, field.arguments, scalar_registry=schema.schema_converter.scalar_registry,
        config=schema.config,
    )  # fmt: skip


def ours(given: dict, field) -> dict | None:
    names = arguments_converter(field.arguments, schema.config.name_converter)
    if names is None:
        return None
    return {python: convert(given[name]) for name, python, convert in names if name in given}


@pytest.mark.parametrize(("type_name", "field_name"), arguments())
def test_every_argument_converts_as_strawberry_converts_it(type_name, field_name):
    definition = schema._schema.type_map[type_name].fields[field_name]
    field = schema.get_field_for_type(field_name, type_name)
    for full in (True, False):
        raw = {name: sample(a.type, full) for name, a in definition.args.items()}
        given = {n: graphql.coerce_input_value(v, definition.args[n].type) for n, v in raw.items()}
        converted = ours(given, field)
        if converted is None:  # left to Strawberry
            continue
        expected = strawberrys(given, field)
        assert (converted, repr(converted)) == (expected, repr(expected))
    nulls = {n: None for n, a in definition.args.items() if not graphql.is_non_null_type(a.type)}
    if ours(nulls, field) is not None:
        assert ours(nulls, field) == strawberrys(nulls, field)


def test_the_filters_and_orders_of_spec_lists_are_converted_once_per_type():
    field = schema.get_field_for_type("specs", "Query")
    names = arguments_converter(field.arguments, schema.config.name_converter)
    assert names is not None
    converters = {name: convert for name, _, convert in names}
    assert set(converters) == {"filter", "first", "after", "orderBy"}
    assert converters["first"] is identity and converters["filter"] is not identity
    given = {
        "filter": {"package": "zlib", "stacks": ["e4s"], "runsOn": {"target": "zen4"}},
        "orderBy": [{"field": "SIZE"}],
    }
    types = {name: a.type for name, a in schema._schema.query_type.fields["specs"].args.items()}
    coerced = {name: graphql.coerce_input_value(v, types[name]) for name, v in given.items()}
    converted = ours(coerced, field)
    assert converted == strawberrys(coerced, field)
    # A list is copied, as Strawberry copies it: graphql-core shares a default's list.
    assert converted["filter"].stacks == ["e4s"]
    assert converted["filter"].stacks is not coerced["filter"]["stacks"]
    assert converted["filter"].runs_on.os is None  # a field left out: its default


@strawberry.input
class Node:
    name: str
    children: list[Node] | None = None


@strawberry.input
class Optional:
    name: strawberry.Maybe[str]


@strawberry.type
class Tiny:
    @strawberry.field
    def tree(self, node: Node) -> str:
        return repr(node)

    @strawberry.field
    def maybe(self, value: Optional) -> str:
        return repr(value)

    @strawberry.field
    def global_id(self, id: GlobalID) -> str:
        return repr(id)


TINY = strawberry.Schema(query=Tiny)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            '{ tree(node: {name: "a", children: [{name: "b"}]}) }',
            "Node(name='a', children=[Node(name='b', children=None)])",
        ),
        ('{ maybe(value: {name: "a"}) }', "Optional(name=Some('a'))"),
        ('{ globalId(id: "VHlwZTox") }', "GlobalID(type_name='Type', node_id='1')"),
    ],
    ids=["an input holding itself", "Maybe", "GlobalID"],
)
def test_what_is_left_to_strawberry_is_converted_by_strawberry(query, expected):
    name = query.split("(")[0].strip("{ ")
    field = TINY.get_field_for_type(name, "Tiny")
    assert arguments_converter(field.arguments, TINY.config.name_converter) is None
    answer = compiled.plan(TINY, parse(query), None).answer(None, Context(None))
    assert answer == TINY.execute_sync(query).data == {name: expected}
