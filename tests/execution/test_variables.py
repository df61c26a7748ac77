"""Variables coerced by a function made once per operation (``cachegraph.execution.variables``)
give what graphql-core's ``get_variable_values`` gives, values and errors, on the schema
served: a graphql-core upgrade that coerces differently fails here, not in a wrong answer."""

from __future__ import annotations

import math

import pytest
from cachegraph.schema import schema
from graphql import GraphQLError, get_variable_values, parse, print_ast

from cachegraph.execution.variables import coercer

GRAPHQL = schema._schema
PLAIN = "$s: String!, $i: ID, $n: Int, $f: Float, $b: Boolean!"
#: variables as clients send them: plain, missing, null, of another type, out of range
GIVEN = [
    {"s": "x", "b": True},
    {"s": "x", "i": "7", "n": 3, "f": 1.5, "b": False},
    {"s": "x", "i": None, "n": None, "f": None, "b": True},
    {"s": "", "i": 7, "n": 2**31, "f": 2, "b": True},  # an int ID, a large Int, an int Float
    {"s": "x", "n": -(2**31), "f": math.inf, "b": True},
    {"s": "x", "n": 1.0, "b": 1},  # a float Int, an int Boolean
    {"s": "x", "n": True, "b": True},  # a bool is an int in Python, not in GraphQL
    {"s": None, "b": True},
    {"b": True},
    {"s": ["x"], "b": True, "extra": {"a": 1}},
    {},
]


def definitions(variables: str):
    return parse(f"query ({variables}) {{ __typename }}").definitions[0].variable_definitions


def same(a, b) -> bool:
    if isinstance(a, list) or isinstance(b, list):  # errors: compared by what they say
        return [e.message for e in a] == [e.message for e in b]
    return a.coerced == b.coerced and shown(a.sources) == shown(b.sources)


def default(signature) -> str | None:
    return print_ast(signature.default.literal) if signature.default else None


def shown(sources: dict) -> dict:
    """A VariableValues' sources as values: graphql-core makes a new signature each time,
    equal to another only by its parts."""
    return {
        name: (s.signature.name, str(s.signature.type), default(s.signature), repr(s.value))
        for name, s in sources.items()
    }


@pytest.mark.parametrize("given", GIVEN)
@pytest.mark.parametrize(
    "variables",
    [
        PLAIN,
        "$s: String!, $b: Boolean!, $p: String",
        # not plain: left to graphql-core whole
        f"{PLAIN}, $filter: SpecFilter",
        f"{PLAIN}, $l: [String!]",
        '$s: String = "d", $b: Boolean!',
    ],
)
def test_variables_are_coerced_as_graphql_core_coerces_them(variables: str, given: dict) -> None:
    nodes = definitions(variables)
    found = coercer(GRAPHQL, nodes)(given)
    expected = get_variable_values(GRAPHQL, nodes, given)
    assert same(found, expected), (found, expected)
    if isinstance(expected, list):
        assert all(isinstance(e, GraphQLError) for e in found)


def test_plain_variables_take_the_short_way() -> None:
    """Whether ``coercer`` gives graphql-core's function or its own: only plain operations
    get their own (else the test above would compare graphql-core with itself)."""
    assert coercer(GRAPHQL, definitions(PLAIN)).__name__ == "coerce"
    for other in ("$filter: SpecFilter", "$l: [String!]", '$s: String = "d"'):
        assert coercer(GRAPHQL, definitions(other)).__name__ == "general"
