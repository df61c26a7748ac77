"""What a field may cost, declared on the field itself: ``strawberry.field(metadata=cost(...))``.

Whoever executes a request measures an operation before running it: how many
objects each list field returns for one parent (its ``first``, else what is
declared here), and whether a field may walk the whole data (then the answer
is never guessed to be quick). A list-returning field without a declaration
fails a test, so a new field cannot be forgotten.

>>> cost(items=10)
{'cost': Cost(items=10, walks=False)}
>>> Cost(walks=WHEN_TRANSITIVE).may_walk({"transitive": True}), Cost().may_walk({})
(True, False)

A declared size is a guess made before running: a spec's transitive dependents are
declared 100 and may be 25,000. Fields whose size the data decides (dependents and
dependencies) count what they return with ``counted``, against the operation's
``max_cost`` (``Spent``, in the context): past it the operation stops with that limit's
error, whatever the guess was.
"""

from __future__ import annotations

from collections.abc import Sized
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from cachegraph.graph.errors import OverBudget

T = TypeVar("T", bound=Sized)

#: A connection's ``edges`` or ``nodes``: the page its ``first`` sized, already counted.
PAGE = "page"
#: Walks only when the field's ``transitive`` argument is true (a spec's direct ones are a lookup).
WHEN_TRANSITIVE = "transitive"


@dataclass(frozen=True)
class Cost:
    #: objects one call returns (a mean may be fractional), for a list field without
    #: ``first``; PAGE for a page's items
    items: float | Literal["page"] | None = None
    #: whether one call may walk every spec: True, False, or WHEN_TRANSITIVE
    walks: bool | Literal["transitive"] = False

    def may_walk(self, arguments: dict[str, Any]) -> bool:
        """Whether a call with these arguments may walk every spec (a variable counts as true)."""
        if self.walks == WHEN_TRANSITIVE:
            return arguments.get("transitive", False) is not False
        return bool(self.walks)


def cost(items: float | Literal["page"] | None = None, walks: bool | str = False) -> dict:
    """The field metadata declaring a cost."""
    return {"cost": Cost(items, walks)}


#: What a field that declares nothing costs: one object, no walk.
UNDECLARED = Cost()


def declared(metadata: Any) -> Cost | None:
    """The Cost declared in a field's metadata, if any."""
    return (metadata or {}).get("cost")


class Spent:
    """Objects the data-sized lists of one operation returned so far, within ``budget``.

    >>> spent = Spent(100)
    >>> spent.add(60)
    >>> spent.add(60)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cachegraph.graph.errors.OverBudget: the query's lists returned more than 100 objects ...
    """

    def __init__(self, budget: int) -> None:
        self.budget, self.items = budget, 0

    def add(self, items: int) -> None:
        self.items += items
        if self.items > self.budget:
            raise OverBudget(
                "max_cost",
                self.budget,
                f"the query's lists returned more than {self.budget:,} objects (dependents "
                "and dependencies, transitive most of all, fan out with the data): ask about "
                "fewer specs, or for direct ones",
            )


def counted(info: Any, items: T) -> T:
    """``items``, counted against the operation's budget when it has one (``Spent`` under
    the context's ``spent``); OverBudget past it."""
    context = getattr(info, "context", None)
    spent = getattr(context, "spent", None)
    if spent is not None:
        spent.add(len(items))
    return items
