"""What a resolver needs from the request: the graph it runs on, and where warnings go."""

from __future__ import annotations

from cachegraph.graph.store.view import CacheGraph
from strawberry.types import ExecutionResult, Info


def graph(info: Info) -> CacheGraph:
    """The graph this request started on; a reload mid-request does not change it."""
    return info.context["graph"]


def warn(info: Info, message: str) -> None:
    """Tell the client something about its answer (in ``extensions.warnings``), once."""
    warnings = info.context.setdefault("warnings", [])
    if message not in warnings:
        warnings.append(message)


def with_warnings(result: ExecutionResult, context: dict) -> ExecutionResult:
    """The result with the warnings its resolvers gave, in its ``extensions``."""
    if context.get("warnings"):
        result.extensions = {**(result.extensions or {}), "warnings": context["warnings"]}
    return result
