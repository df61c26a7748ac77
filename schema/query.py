"""The root Query, merged from each type family's root fields, and the schema."""

from __future__ import annotations

import logging

import strawberry
from graphql import GraphQLError
from strawberry.extensions import MaskErrors
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext, Info

from graph.errors import CacheGraphError

from .builds import BuildQueries, Compiler, Target, find_compiler, find_target
from .context import graph
from .nodes import Node, parse_global_id
from .packages import Package, PackageQueries, find_package
from .specs import Spec, SpecQueries
from .stacks import Stack, StackQueries, find_stack
from .tags import Tag, TagQueries, find_tag

log = logging.getLogger("cachegraph.errors")

_FINDERS = {
    "Package": find_package,
    "Stack": find_stack,
    "Compiler": find_compiler,
    "Target": find_target,
    "Tag": find_tag,
}


@strawberry.type
class NodeQueries:
    @strawberry.field(description="Fetch any object by its global id.")
    def node(self, info: Info, id: strawberry.ID) -> Node | None:
        type_name, key = parse_global_id(id)
        if type_name == "Spec":
            record = graph(info).spec(key)
            return None if record is None else Spec(record=record)
        finder = _FINDERS.get(type_name)
        return None if finder is None else finder(info, key)


Query = merge_types(
    "Query",
    (NodeQueries, TagQueries, PackageQueries, SpecQueries, StackQueries, BuildQueries),
)


def is_client_error(error: GraphQLError) -> bool:
    """Errors the client caused (bad query, bad argument): shown as they are."""
    return error.original_error is None or isinstance(error.original_error, CacheGraphError)


class CacheGraphSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # A client's mistake is not the server's: log only what the server got wrong.
        for error in errors:
            if not is_client_error(error):
                log.error("unexpected error in %s", error.path, exc_info=error.original_error)


def build_schema() -> strawberry.Schema:
    return CacheGraphSchema(
        query=Query,
        types=[Spec, Package, Stack, Compiler, Target, Tag],
        extensions=[
            lambda: MaskErrors(
                should_mask_error=lambda e: not is_client_error(e),
                error_message="Internal server error.",
            )
        ],
    )
