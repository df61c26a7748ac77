"""What a resolver needs from the request: the graph it runs on."""

from __future__ import annotations

from strawberry.types import Info

from graph.model import CacheGraph


def graph(info: Info) -> CacheGraph:
    """The graph this request started on; a reload mid-request does not change it."""
    return info.context["graph"]
