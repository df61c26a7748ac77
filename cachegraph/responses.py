"""Answers kept for repeated operations while the graph they came from is served.

The data never changes between reloads, so an answer depends only on the
operation (query, variables, operation name) and the graph: dashboards that
poll the same questions are answered without executing them again.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any

from strawberry.types import ExecutionResult


class ResponseCache:
    """A least-recently-used map of operation -> result, emptied when the graph changes."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._graph: weakref.ref | None = None
        self._results: OrderedDict[Any, ExecutionResult] = OrderedDict()

    def get(self, graph: object, key: Any) -> ExecutionResult | None:
        if self._graph is None or self._graph() is not graph:
            # A reload swapped the graph: nothing kept so far holds for the new one.
            self._results.clear()
            self._graph = weakref.ref(graph)
            return None
        found = self._results.get(key)
        if found is not None:
            self._results.move_to_end(key)
        return found

    def put(self, graph: object, key: Any, result: ExecutionResult) -> None:
        """Keep an answer without errors (errors carry request ids and may be transient)."""
        if self.size <= 0 or result.errors or self._graph is None or self._graph() is not graph:
            return
        self._results[key] = result
        if len(self._results) > self.size:
            self._results.popitem(last=False)
