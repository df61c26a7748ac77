"""How a request is executed: limits, caches, the direct path, the time limit, and where it
runs. One entry point, ``Executor.answer``; the app owns one Executor."""

from .executor import (
    BadRequest,
    Budgets,
    Executor,
    Operation,
    schema_extensions,
)
from .limits import LimitExceeded, Limits

__all__ = [
    "BadRequest",
    "Budgets",
    "Executor",
    "LimitExceeded",
    "Limits",
    "Operation",
    "schema_extensions",
]
