"""A field's arguments read from the query as graphql-core reads them, by a function made
once per field of a compiled operation.

``get_argument_values`` walks each argument's literal on every call: for the "scoped"
question's ``filter: {package: $p, stacks: [$s], compiler: $c}`` a map of the literal's
fields, a look-up of each field's definition and default, and a coercion call per value,
about 6% of the request's processor time in the app (issue 43). ``reader`` walks the
literal once: constant parts are coerced then, and each answer only fills the variables in.

Only the common shapes are read so: literals (constant, or input objects and lists holding
variables) of built-in input types, every variable given a value. Anything else -- a
variable left out (a default applies, or an error), a null where a non-null type is
expected, a one-of input object, a custom scalar's literal holding variables -- is read by
``get_argument_values``, which coerces or reports it as it always did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import (
    FieldNode,
    GraphQLField,
    GraphQLInputType,
    ListValueNode,
    ObjectValueNode,
    Undefined,
    ValueNode,
    VariableNode,
    get_argument_values,
    is_input_object_type,
    is_list_type,
    is_non_null_type,
    is_required_argument,
    is_required_input_field,
)
from graphql.execution.values import VariableValues
from graphql.utilities.coerce_input_value import coerce_default_value, coerce_input_literal

#: a field's arguments, by their Python names, given the operation's coerced variables
Read = Callable[[VariableValues | None], dict[str, Any]]
#: one literal's value, given the coerced variables by name
_Get = Callable[[dict[str, Any]], Any]


class _Other(Exception):
    """A literal left to graphql-core."""


class _Missing(Exception):
    """A variable without a value, or null where the type wants a value: graphql-core
    decides what that means (a default, a null, an error)."""


def reader(definition: GraphQLField, node: FieldNode) -> Read:
    """A function giving what ``get_argument_values(definition, node, variables)`` gives.

    >>> from graphql import build_schema, parse
    >>> schema = build_schema('''input F { a: String, b: [Int!], c: Int = 3 }
    ...   type Query { f(x: F!, n: Int = 1): String }''')
    >>> op = parse('query ($a: String, $b: Int!) { f(x: {a: $a, b: [$b, 2]}) }').definitions[0]
    >>> read = reader(schema.query_type.fields["f"], op.selection_set.selections[0])
    >>> from graphql import get_variable_values
    >>> read(get_variable_values(schema, op.variable_definitions, {"a": "z", "b": 1}))
    {'x': {'a': 'z', 'b': [1, 2], 'c': 3}, 'n': 1}
    """

    def general(variables: VariableValues | None) -> dict[str, Any]:
        return get_argument_values(definition, node, variables)

    given = {argument.name.value: argument.value for argument in node.arguments or ()}
    parts: list[tuple[str, _Get]] = []
    try:
        for name, argument in definition.args.items():
            out = argument.out_name or name
            if name in given:
                parts.append((out, _literal(given[name], argument.type)))
            elif is_required_argument(argument):
                raise _Other  # validation refuses it; graphql-core says why
            elif (default := coerce_default_value(argument)) is not Undefined:
                parts.append((out, _Constant(default)))
    except Exception:  # _Other, or a default graphql-core cannot coerce: it says so each time
        return general

    def read(variables: VariableValues | None) -> dict[str, Any]:
        coerced = variables.coerced if variables is not None else {}
        try:
            return {out: get(coerced) for out, get in parts}
        except _Missing:
            return general(variables)

    return read


class _Constant:
    """The getter of a value that holds no variable: the same for every answer."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self, _coerced: dict[str, Any]) -> Any:
        return self.value


def _literal(node: ValueNode, type_: GraphQLInputType) -> _Get:
    """The function giving the value of ``node`` as ``type_`` (what coerce_input_literal
    gives when every variable has a value)."""
    if not holds_variables(node):
        value = coerce_input_literal(node, type_)
        if value is Undefined:
            raise _Other
        return _Constant(value)
    if isinstance(node, VariableNode):
        name, required = node.name.value, is_non_null_type(type_)

        def variable(coerced: dict[str, Any]) -> Any:
            value = coerced.get(name, Undefined)
            if value is Undefined or (value is None and required):
                raise _Missing
            return value

        return variable
    if is_non_null_type(type_):
        return _literal(node, type_.of_type)  # holding variables: no null literal
    if is_list_type(type_):
        item = type_.of_type
        if not isinstance(node, ListValueNode):  # a value given for a list: a list of one
            one = _literal(node, item)
            return lambda coerced: [one(coerced)]
        items = [_literal(value, item) for value in node.values]
        return lambda coerced: [get(coerced) for get in items]
    if is_input_object_type(type_) and isinstance(node, ObjectValueNode) and not type_.is_one_of:
        fields = {field.name.value: field.value for field in node.fields}
        if not fields.keys() <= type_.fields.keys():
            raise _Other
        parts: list[tuple[str, _Get]] = []
        for name, field in type_.fields.items():
            out = field.out_name or name
            if name in fields:
                parts.append((out, _literal(fields[name], field.type)))
            elif is_required_input_field(field):
                raise _Other
            elif (default := coerce_default_value(field)) is not Undefined:
                parts.append((out, _Constant(default)))
        out_type = type_.out_type
        # The constant fields (most of a filter's: their defaults) made once, in the type's
        # order; each answer copies them and fills in the fields holding variables.
        template = {out: get.value if type(get) is _Constant else None for out, get in parts}
        varying = [(out, get) for out, get in parts if type(get) is not _Constant]

        def value(coerced: dict[str, Any]) -> Any:
            found = template.copy()
            for out, get in varying:
                found[out] = get(coerced)
            return out_type(found)

        return value
    raise _Other


def holds_variables(node: ValueNode) -> bool:
    """Whether a literal names a variable anywhere in it."""
    if isinstance(node, VariableNode):
        return True
    if isinstance(node, ListValueNode):
        return any(holds_variables(v) for v in node.values)
    if isinstance(node, ObjectValueNode):
        return any(holds_variables(f.value) for f in node.fields)
    return False
