"""The root Query, merged from each type family's root fields, and the schema."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import strawberry
from cachegraph.graph.errors import CacheGraphError
from graphql import GraphQLError
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext, Info

from .builds import BuildQueries, Compiler, Target, find_compiler, find_target
from .changes import ChangeQueries, ChangeSubscriptions
from .context import Context, graph, with_warnings
from .coverage import CoverageQueries
from .diffs import DiffQueries
from .facets import FacetQueries
from .mirrors import Mirror, MirrorQueries, find_mirror
from .nodes import Node, parse_global_id
from .packages import Package, PackageQueries, find_package
from .specs import Spec, SpecQueries
from .stacks import Stack, StackQueries, find_stack
from .status import StatusQueries
from .tags import Tag, TagQueries, find_tag

log = logging.getLogger("cachegraph.errors")

_FINDERS = {
    "Package": find_package,
    "Stack": find_stack,
    "Compiler": find_compiler,
    "Target": find_target,
    "Tag": find_tag,
    "Mirror": find_mirror,
}


@strawberry.type
class NodeQueries:
    @strawberry.field(description="Fetch any object by its global id.")
    def node(self, info: Info, id: strawberry.ID) -> Node | None:
        type_name, key = parse_global_id(id)
        if type_name == "Spec":
            record = graph(info).spec(key)
            return None if record is None else record
        finder = _FINDERS.get(type_name)
        return None if finder is None else finder(info, key)


Query = merge_types(
    "Query",
    (
        NodeQueries,
        TagQueries,
        PackageQueries,
        SpecQueries,
        StackQueries,
        BuildQueries,
        MirrorQueries,
        FacetQueries,
        CoverageQueries,
        DiffQueries,
        StatusQueries,
        ChangeQueries,
    ),
)

Subscription = merge_types("Subscription", (ChangeSubscriptions,))


def is_client_error(error: GraphQLError) -> bool:
    """Errors the client caused (bad query, bad argument, bad variable): shown as they are.

    A variable that does not coerce carries graphql-core's own GraphQLError (from the
    scalar) as its original error: that is the client's input, not a server fault.
    """
    original = error.original_error
    return original is None or isinstance(original, CacheGraphError | GraphQLError)


def is_bad_input(error: GraphQLError) -> bool:
    """A variable missing, of the wrong type or out of range (graphql-core's words)."""
    return error.message.startswith("Variable '$")


def masked(error: GraphQLError, request_id: str | None) -> GraphQLError:
    """What a client sees of an error: its own as it is (a bad variable coded BAD_USER_INPUT);
    one the server made as a message and the request id.

    The id is also on the log line with the real error, so an operator can find it.
    """
    if is_client_error(error):
        if is_bad_input(error) and not (error.extensions or {}).get("code"):
            extensions = {**(error.extensions or {}), "code": "BAD_USER_INPUT"}
            return GraphQLError(error.message, error.nodes, path=error.path, extensions=extensions)
        return error
    extensions = {"code": "INTERNAL_SERVER_ERROR"}
    if request_id:
        extensions["requestId"] = request_id
    message = "Internal server error" + (f" (request id {request_id})." if request_id else ".")
    return GraphQLError(message, nodes=error.nodes, path=error.path, extensions=extensions)


class CacheGraphSchema(strawberry.Schema):
    """Logs what the server got wrong and shows the client only a masked error.

    Masking here, not in an extension, covers errors raised by extensions too.
    """

    def execute_sync(self, query, variable_values=None, context_value=None, *args, **kwargs):
        result = super().execute_sync(query, variable_values, context_value, *args, **kwargs)
        known = isinstance(context_value, Context)
        if result.errors:
            request_id = context_value.request_id if known else None
            result.errors = [masked(e, request_id) for e in result.errors]
        return with_warnings(result, context_value) if known else result

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # A client's mistake is not the server's: log only what the server got wrong.
        for error in errors:
            if not is_client_error(error):
                log.error("unexpected error in %s", error.path, exc_info=error.original_error)


def build_schema(extensions: Sequence = ()) -> strawberry.Schema:
    """The schema, with the Strawberry extensions that whoever executes it needs."""
    return CacheGraphSchema(
        query=Query,
        subscription=Subscription,
        types=[Spec, Package, Stack, Compiler, Target, Tag, Mirror],
        extensions=list(extensions),
    )
