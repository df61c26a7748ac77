"""The Strawberry and graphql-core internals the direct path relies on, checked one by one,
so that an upgrade which changes them fails here, loudly, not in a wrong answer."""

from __future__ import annotations

import inspect
import re
from importlib.metadata import version
from pathlib import Path

import graphql
import pytest
from cachegraph.schema import schema
from strawberry.types.arguments import convert_arguments
from strawberry.types.base import StrawberryObjectDefinition

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def pinned(project: str) -> tuple[str, str]:
    """The (lowest, first excluded) versions pyproject.toml allows for ``project``."""
    found = re.search(rf'"{project}>=([\d.]+),<([\d.]+)"', PYPROJECT.read_text())
    assert found, f"{project} has no pinned range in pyproject.toml"
    return found.group(1), found.group(2)


def release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


@pytest.mark.parametrize("project", ["strawberry-graphql", "graphql-core"])
def test_the_installed_version_is_in_the_pinned_range(project):
    low, high = pinned(project)
    installed = version(project)
    assert release(low) <= release(installed) < release(high), (
        f"{project} {installed} is outside the range the direct path was checked "
        f"against ({low} to {high}): run tests/execution, then widen the pin"
    )


def test_the_resolver_internals_are_as_the_direct_path_reads_them():
    field = schema.get_field_for_type("spec", "Query")
    resolver = field.base_resolver
    assert callable(resolver.wrapped_func)
    assert resolver.info_parameter.name == "info"
    for name in ("self_parameter", "root_parameter", "parent_parameter"):
        assert hasattr(resolver, name), name
    assert (field.python_name, field.is_async, list(field.extensions)) == ("spec", False, [])
    plain = schema.get_field_for_type("hash", "Spec")
    assert (plain.base_resolver, plain.default_resolver) == (None, getattr)


def test_argument_conversion_is_called_as_the_direct_path_calls_it():
    parameters = list(inspect.signature(convert_arguments).parameters)
    assert parameters[:4] == ["value", "arguments", "scalar_registry", "config"]
    field = schema.get_field_for_type("spec", "Query")
    converted = convert_arguments(
        {"hash": "abc"},
        field.arguments,
        scalar_registry=schema.schema_converter.scalar_registry,
        config=schema.config,
    )
    assert converted == {"hash": "abc"}


def test_the_graphql_core_schema_and_values_are_where_the_direct_path_finds_them():
    assert isinstance(schema._schema, graphql.GraphQLSchema)
    assert isinstance(schema._schema.query_type, graphql.GraphQLObjectType)
    definition = schema._schema.query_type.fields["spec"]
    node = graphql.parse('{ spec(hash: "abc") { hash } }').definitions[0].selection_set
    assert graphql.get_argument_values(definition, node.selections[0], None) == {"hash": "abc"}
    assert isinstance(schema.get_type_by_name("Spec"), StrawberryObjectDefinition)
