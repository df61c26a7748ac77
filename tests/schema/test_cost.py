"""Costs are declared on the fields: every list says how long it may be, and the fields that
may walk the whole data say so."""

from __future__ import annotations

from cachegraph.schema import schema
from cachegraph.schema.cost import declared
from graphql import GraphQLObjectType, get_nullable_type, is_list_type


def fields():
    for type_ in schema._schema.type_map.values():
        if isinstance(type_, GraphQLObjectType) and not type_.name.startswith("__"):
            for name, definition in type_.fields.items():
                yield type_.name, name, definition, schema.get_field_for_type(name, type_.name)


def test_every_list_field_declares_how_many_items_it_returns():
    undeclared = [
        f"{type_name}.{name}"
        for type_name, name, definition, field in fields()
        if is_list_type(get_nullable_type(definition.type))
        and "first" not in definition.args
        and getattr(declared(field.metadata), "items", None) is None
    ]
    assert undeclared == []


def test_the_fields_that_may_walk_every_spec():
    walking = {
        f"{type_name}.{name}": cost.walks
        for type_name, name, _, field in fields()
        if (cost := declared(field.metadata)) is not None and cost.walks
    }
    assert walking == {
        "Spec.dependencies": "transitive",
        "Spec.dependents": "transitive",
        "Spec.dependencyCount": "transitive",
        "Spec.dependentCount": "transitive",
        "Package.lookalikes": True,
        "SpecConnection.totalCount": True,
        "PackageConnection.totalCount": True,
        "ChangeEventConnection.totalCount": True,  # the generic Connection's; the log is bounded
        "Stack.packages": True,
        "Stack.packageCount": True,
        "Stack.totalBytes": True,
        "Compiler.packages": True,
        "Target.packages": True,
        "Tag.packageCount": True,
        "Mirror.totalBytes": True,
        "Query.search": True,
        "Query.dependencyPath": True,
        "Query.facets": True,
        "Query.coverage": True,
        "Query.nearest": True,
        "Query.specDiff": True,
        "Query.impact": True,
        "Query.tagDiff": True,
    }
