"""The exceptions graph/ raises; the schema turns them into GraphQL errors."""

from __future__ import annotations


class CacheGraphError(Exception):
    """Base of every error a client caused and can act on."""


class HashTooShort(CacheGraphError):
    def __init__(self, prefix: str, minimum: int) -> None:
        super().__init__(
            f"hash prefix {prefix!r} is {len(prefix)} characters; give at least {minimum}"
        )


class AmbiguousHash(CacheGraphError):
    def __init__(self, prefix: str, candidates: list[str], more: int) -> None:
        listed = ", ".join(candidates) + (f" and {more} more" if more else "")
        super().__init__(f"hash prefix {prefix!r} matches several specs: {listed}")
        self.candidates = candidates


class BadArgument(CacheGraphError):
    """An argument out of its range or of the wrong form."""


class BadRecord(CacheGraphError):
    """A record or file that cannot be loaded; carries where it is."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class TimedOut(CacheGraphError):
    """The operation's time limit passed while it was still working (see ``graph.deadline``)."""

    def __init__(self) -> None:
        super().__init__("the operation ran past its time limit")


class OverBudget(CacheGraphError):
    """An operation's lists returned more objects than its budget (see ``schema.cost.Spent``):
    the operation stops, and its answer is the limit's error."""

    def __init__(self, limit: str, value: int, message: str) -> None:
        super().__init__(message)
        self.limit, self.value, self.message = limit, value, message
