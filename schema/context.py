"""What a resolver needs from the request: the graph it runs on, and where warnings go."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cachegraph.graph.questions import paths
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
    #: Whether the client is the server's admin (its admin token as a bearer), who sees the
    #: server's paths as the operator gave them.
    admin: bool = False


def graph(info: Info) -> CacheGraph:
    """The graph this request started on; a reload mid-request does not change it."""
    return info.context.graph


def shown_path(info: Info, path: str) -> str:
    """A path as this client may see it: as given to an admin, else without the server's
    folders (``graph.questions.paths``)."""
    return path if info.context.admin else paths.public_path(graph(info), path)


def shown_text(info: Info, text: str) -> str:
    """A message as this client may see it: its paths shown as ``shown_path`` shows them."""
    return text if info.context.admin else paths.public_text(graph(info), text)


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
