"""Variables coerced as graphql-core coerces them, by a function made once per operation.

``get_variable_values`` works out each variable's type from its definition on every call
(``get_variable_signature``: the type looked up in the schema again), checks the input's
nesting depth and runs the general coercion, about 12 µs of the scoped question's 180 µs
in the app (issue 43). Most operations declare only variables of built-in scalar types
without defaults (``$hash: String!``, ``$first: Int``); ``coercer`` gives, for those, a
function that checks each value's Python type and builds the same ``VariableValues``. A
value of any other type (an int for an ``ID``, a float for an ``Int``), a missing non-null
variable, or an operation declaring anything else (input objects, lists, enums, defaults)
goes to ``get_variable_values``, which coerces or reports it as it always did.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from typing import Any

from graphql import (
    GraphQLBoolean,
    GraphQLError,
    GraphQLFloat,
    GraphQLID,
    GraphQLInt,
    GraphQLNonNull,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
    Undefined,
    VariableDefinitionNode,
    get_variable_values,
)
from graphql.execution.get_variable_signature import get_variable_signature
from graphql.execution.values import VariableValues, VariableValueSource

#: the values graphql-core hands on unchanged, by the built-in scalar they are given for
_PLAIN: dict[GraphQLScalarType, Callable[[Any], bool]] = {
    GraphQLString: lambda v: type(v) is str,
    GraphQLID: lambda v: type(v) is str,  # an int is made a str: the general way
    GraphQLBoolean: lambda v: type(v) is bool,
    GraphQLInt: lambda v: type(v) is int and -(2**31) <= v < 2**31,
    GraphQLFloat: lambda v: type(v) is float and math.isfinite(v),
}

#: variables (as the request gave them) -> their VariableValues, or a list of errors
Coerce = Callable[[dict[str, Any]], "VariableValues | list[GraphQLError]"]


def coercer(schema: GraphQLSchema, definitions: Collection[VariableDefinitionNode]) -> Coerce:
    """A function coercing an operation's variables to what ``get_variable_values`` gives.

    >>> from graphql import build_schema, parse
    >>> schema = build_schema("type Query { f(a: String!, b: Int): String }")
    >>> op = parse("query ($a: String!, $b: Int) { f(a: $a, b: $b) }").definitions[0]
    >>> coerce = coercer(schema, op.variable_definitions)
    >>> coerce({"a": "x"}).coerced, coerce({"a": "x", "b": None}).coerced
    ({'a': 'x'}, {'a': 'x', 'b': None})
    >>> coerce({"b": 1})[0].message  # reported by graphql-core
    "Variable '$a' has invalid value: Expected a value of non-null type 'String!' to be provided."
    """

    def general(variables: dict[str, Any]) -> VariableValues | list[GraphQLError]:
        return get_variable_values(schema, definitions, variables)

    plain = []
    for definition in definitions:
        signature = get_variable_signature(schema, definition)
        if isinstance(signature, GraphQLError) or signature.default is not None:
            return general
        required = isinstance(signature.type, GraphQLNonNull)
        scalar = signature.type.of_type if required else signature.type
        test = _PLAIN.get(scalar) if isinstance(scalar, GraphQLScalarType) else None
        if test is None:
            return general
        plain.append((signature.name, signature, required, test))

    def coerce(variables: dict[str, Any]) -> VariableValues | list[GraphQLError]:
        if type(variables) is not dict:
            return general(variables)
        sources: dict[str, VariableValueSource] = {}
        coerced: dict[str, Any] = {}
        for name, signature, required, test in plain:
            value = variables.get(name, Undefined)
            if value is Undefined:
                if required:
                    return general(variables)
                sources[name] = VariableValueSource(signature)
                continue
            if not (test(value) or (value is None and not required)):
                return general(variables)
            sources[name] = VariableValueSource(signature, value)
            coerced[name] = value
        return VariableValues(sources, coerced)

    return coerce
