"""Arguments converted as Strawberry converts them, by functions made once per type.

Strawberry's ``convert_arguments`` works out, on every call, what each argument's type is:
for an input object it resolves each field's type annotation again (``resolve_type``), asks
the name converter for each field's GraphQL name and walks the scalar registry. For the
"scoped" question (a ``SpecFilter`` of three fields) that was 19% of the request's
processor time (issue 43). Here that work is done once per type: ``arguments_converter``
gives functions that do only what Strawberry's conversion does to a value of each type.

Only the shapes whose conversion is plain are covered: built-in scalars and enums (handed on
as they are), lists (copied, as Strawberry copies them), optional types (not ``Maybe``,
which wraps its value), lazy types, and input objects without ``from_input`` (built from
their fields, a field left out getting None when it has no default). Anything else
(custom scalars, ``GlobalID``, ``Maybe``, ``from_input``, an input that contains itself)
gives None, and the caller lets Strawberry convert the arguments as before.

The functions are kept per input type in ``_INPUTS``, per schema (its name converter): as
many as the schema defines input types, which a client chooses among but cannot add to;
they go with their schema.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import MISSING
from typing import Any

from strawberry import ID
from strawberry.schema.name_converter import NameConverter
from strawberry.types.arguments import StrawberryArgument
from strawberry.types.base import StrawberryList, StrawberryOptional, has_object_definition
from strawberry.types.enum import StrawberryEnumDefinition, has_enum_definition
from strawberry.types.lazy_type import LazyType
from strawberry.types.unset import UNSET

#: a GraphQL value (as graphql-core coerced it) -> the resolver's Python value
Convert = Callable[[Any], Any]

#: Python types whose values Strawberry's conversion returns as they are
BUILT_IN_SCALARS = (str, int, float, bool, ID)


def identity(value: Any) -> Any:
    return value


#: a schema's name converter -> input class -> its converter; None when Strawberry must
#: convert it
_INPUTS: weakref.WeakKeyDictionary[NameConverter, dict[type, Convert | None]] = (
    weakref.WeakKeyDictionary()
)


class _Unsupported(Exception):
    """A type whose conversion is left to Strawberry."""


def arguments_converter(
    arguments: list[StrawberryArgument], names: NameConverter
) -> list[tuple[str, str, Convert]] | None:
    """(GraphQL name, Python name, converter) of each argument; None when one of them has a
    type left to Strawberry."""
    try:
        return [
            (names.from_argument(a), a.python_name, _converter(a.type, names, ()))
            for a in arguments
        ]
    except _Unsupported:
        return None


def _converter(type_: Any, names: NameConverter, building: tuple[type, ...]) -> Convert:
    # The order of the tests is Strawberry's (``convert_argument``): Maybe before Optional.
    if type(type_) is StrawberryOptional:  # not Maybe, its subclass, which wraps its value
        return _converter(type_.of_type, names, building)
    if _is_leaf(type_):
        return identity
    if isinstance(type_, StrawberryList):
        of = type_.of_type
        if _is_leaf(of) or (type(of) is StrawberryOptional and _is_leaf(of.of_type)):
            return _copied  # the list is copied: graphql-core shares a default between requests
        return _items(_converter(of, names, building))
    if isinstance(type_, LazyType):
        return _converter(type_.resolve_type(), names, building)
    if has_object_definition(type_):
        return _input(type_, names, building)
    raise _Unsupported(type_)


def _is_leaf(type_: Any) -> bool:
    """A type whose values Strawberry's conversion returns as they are (enums: graphql-core
    has already made their Python values)."""
    return (
        any(type_ is plain for plain in BUILT_IN_SCALARS)
        or isinstance(type_, StrawberryEnumDefinition)
        or has_enum_definition(type_)
    )


def _copied(value: Any) -> Any:
    return value if value is None or value is UNSET else list(value)


def _items(item: Convert) -> Convert:
    def convert(value: Any) -> Any:
        return value if value is None or value is UNSET else [item(x) for x in value]

    return convert


def _input(cls: type, names: NameConverter, building: tuple[type, ...]) -> Convert:
    kept = _INPUTS.setdefault(names, {})
    if cls in kept:
        found = kept[cls]
        if found is None:
            raise _Unsupported(cls)
        return found
    if cls in building:  # an input holding itself: rare, and left to Strawberry
        raise _Unsupported(cls)
    try:
        found = _build_input(cls, names, (*building, cls))
    except _Unsupported:
        if not building:  # a nested failure may be the cycle of an outer type: not kept
            kept[cls] = None
        raise
    kept[cls] = found
    return found


def _build_input(cls: type, names: NameConverter, building: tuple[type, ...]) -> Convert:
    definition = cls.__strawberry_definition__
    if not definition.is_input or definition.from_input is not None:
        raise _Unsupported(cls)
    # As Strawberry's: None for each field with no default, so that an input type's
    # nullable fields need none; the dataclass gives the others their defaults.
    unset = {
        f.python_name: None
        for f in definition.fields
        if f.default_value is MISSING and f.default_factory is MISSING
    }
    fields = {
        names.from_field(f): (
            f.python_name,
            _converter(f.resolve_type(type_definition=definition), names, building),
        )
        for f in definition.fields
    }

    def convert(value: Any) -> Any:
        if value is None or value is UNSET:
            return value
        kwargs = dict(unset)
        for name, given in value.items():
            found = fields.get(name)
            if found is not None:  # graphql-core gives only the type's fields; as Strawberry
                python, field_converter = found
                kwargs[python] = given if field_converter is identity else field_converter(given)
        return cls(**kwargs)

    return convert
