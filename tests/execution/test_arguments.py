"""Arguments read by a function made once per field (``cachegraph.execution.arguments``) give
what graphql-core's ``get_argument_values`` gives, for every argument of the schema served,
written as literals holding variables or as constants, every variable given, some null, some
left out: a graphql-core upgrade that reads them differently fails here."""

from __future__ import annotations

import graphql
import pytest
from cachegraph.schema import schema
from graphql import GraphQLError, get_argument_values, get_variable_values, parse, print_ast
from graphql.utilities import ast_from_value

from cachegraph.execution.arguments import reader
from tests.execution.test_inputs import arguments, sample

GRAPHQL = schema._schema


def literal(type_: graphql.GraphQLInputType, full: bool, variables: dict, inline: bool) -> str:
    """A literal of ``type_`` as a client writes one: each scalar or enum a new variable
    (its type and value put in ``variables``), or inlined as a constant; lists of two;
    input objects with every field when ``full``, else the required ones."""
    nullable = graphql.get_nullable_type(type_)
    if isinstance(nullable, graphql.GraphQLList):
        items = [literal(nullable.of_type, full, variables, inline) for _ in range(2)]
        return f"[{', '.join(items)}]"
    if isinstance(nullable, graphql.GraphQLInputObjectType):
        fields = [
            f"{name}: {literal(field.type, full, variables, inline)}"
            for name, field in nullable.fields.items()
            if full or graphql.is_required_input_field(field)
        ]
        return f"{{{', '.join(fields)}}}"
    value = sample(type_, full)
    plain = graphql.is_enum_type(nullable) or graphql.is_specified_scalar_type(nullable)
    if inline and plain:  # a custom scalar's sample has no literal: a variable still
        return print_ast(ast_from_value(graphql.coerce_input_value(value, type_), type_))
    name = f"v{len(variables)}"
    variables[name] = (str(type_), value)
    return f"${name}"


def outcome(call):
    try:
        return call()
    except GraphQLError as error:
        return ("error", error.message)


@pytest.mark.parametrize(("type_name", "field_name"), arguments())
@pytest.mark.parametrize("full", [True, False], ids=["full", "required"])
@pytest.mark.parametrize("inline", [False, True], ids=["variables", "constants"])
def test_every_argument_is_read_as_graphql_core_reads_it(type_name, field_name, full, inline):
    definition = GRAPHQL.type_map[type_name].fields[field_name]
    variables: dict = {}
    given = [
        f"{name}: {literal(a.type, full, variables, inline)}"
        for name, a in definition.args.items()
        if full or graphql.is_required_argument(a)
    ]
    declared = ", ".join(f"${n}: {t}" for n, (t, _) in variables.items())
    text = f"query{f'({declared})' if declared else ''} {{ {field_name}({', '.join(given)}) }}"
    if not given:
        text = text.replace("()", "")
    operation = parse(text).definitions[0]
    node = operation.selection_set.selections[0]
    read = reader(definition, node)
    values = {n: v for n, (_, v) in variables.items()}
    nulls = {n: None for n in values}
    some = dict(list(values.items())[::2])  # every other variable left out
    for inputs in (values, nulls, some):
        coerced = get_variable_values(GRAPHQL, operation.variable_definitions or (), inputs)
        if isinstance(coerced, list):  # a null or missing non-null: never executed
            continue
        expected = outcome(lambda c=coerced: get_argument_values(definition, node, c))
        assert outcome(lambda c=coerced: read(c)) == expected


def test_the_scoped_filter_is_read_without_graphql_core():
    """The benchmark's scoped question takes the short way (else the test above would compare
    graphql-core with itself for it)."""
    text = """query($p: String!, $s: String!, $c: String!) { specs(filter:
      {package: $p, stacks: [$s], compiler: $c}, first: 20) { totalCount } }"""
    operation = parse(text).definitions[0]
    definition = GRAPHQL.query_type.fields["specs"]
    read = reader(definition, operation.selection_set.selections[0])
    assert read.__name__ == "read"
    coerced = get_variable_values(
        GRAPHQL, operation.variable_definitions, {"p": "zlib", "s": "e4s", "c": "gcc@13"}
    )
    read_so = read(coerced)
    assert read_so == get_argument_values(
        definition, operation.selection_set.selections[0], coerced
    )
    assert read_so["filter"]["stacks"] == ["e4s"] and read_so["first"] == 20
