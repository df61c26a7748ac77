"""What a resolver needs from the request: the graph it runs on, and where warnings go."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cachegraph.graph.store.view import CacheGraph
from strawberry.types import ExecutionResult, Info

if TYPE_CHECKING:
    from .cost import Spent


@dataclass(slots=True)
class Context:
    """One operation's context: what its resolvers read and the warnings they give.

    >>> from cachegraph.graph.store.example import example_graph
    >>> Context(example_graph()).warnings
    []
    """

    graph: CacheGraph
    request_id: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: The executor's parsed and validated document, so Strawberry does not parse it again.
    prepared: Any = None
    #: What the operation's data-sized lists returned, against its cost budget.
    spent: Spent | None = None
    #: The request's tracer (cachegraph.execution.tracing), when the server traces.
    tracing: Any = None


def graph(info: Info) -> CacheGraph:
    """The graph this request started on; a reload mid-request does not change it."""
    return info.context.graph


def warn(info: Info, message: str) -> None:
    """Tell the client something about its answer (in ``extensions.warnings``), once."""
    warnings = info.context.warnings
    if message not in warnings:
        warnings.append(message)


def with_warnings(result: ExecutionResult, context: Context) -> ExecutionResult:
    """The result with the warnings its resolvers gave, in its ``extensions``."""
    if context.warnings:
        result.extensions = {**(result.extensions or {}), "warnings": context.warnings}
    return result
