"""Stacks, their per-package counts and their overlaps."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import strawberry
from cachegraph.graph.questions import counts, overlaps
from cachegraph.graph.questions import mirrors as holdings
from strawberry.types import Info

from .context import graph
from .cost import cost
from .counted import StackCount
from .named import Named, accepts, names
from .nodes import Node, global_id
from .packages import PackageGroup

if TYPE_CHECKING:
    from .tags import Tag

TagRef = Annotated["Tag", strawberry.lazy(".tags")]


@strawberry.type
class Stack(PackageGroup, Node):
    is_type_of = accepts("stack")

    @strawberry.field
    def id(self) -> strawberry.ID:
        return global_id("Stack", self.name)

    @strawberry.field(metadata=cost(walks=True))
    def package_count(self, info: Info, tag: str | None = None) -> int:
        return len(counts.packages_with(graph(info), "stack", self.name, tag))

    @strawberry.field(
        metadata=cost(walks=True),
        description="Sum of the known tarball sizes of its specs, in bytes.",
    )
    def total_bytes(self, info: Info, tag: str | None = None) -> float:
        return holdings.stack_holding(graph(info), self.name, tag).total_bytes

    @strawberry.field(metadata=cost(items=50))
    def tags(self, info: Info) -> list[TagRef]:
        return names("tag", counts.tags_of(graph(info), "stack", self.name))

    @strawberry.field(
        metadata=cost(items=100),
        description="Every other stack that shares at least one spec with this one, largest first.",
    )
    def overlaps(self, info: Info, tag: str | None = None) -> list[StackOverlap]:
        return overlaps.overlaps_of(graph(info), self.name, tag)


# A StackOverlap's objects are the graph's Overlap records themselves, worked out at
# load: an answer of every overlap allocates nothing but its JSON.
@strawberry.type
class StackOverlap:
    shared_spec_count: int
    jaccard: float = strawberry.field(
        description="shared / union of the two stacks' specs, between 0 and 1."
    )

    @classmethod
    def is_type_of(cls, obj: object, info: object) -> bool:
        return isinstance(obj, overlaps.Overlap | cls)

    @strawberry.field(metadata=cost(items=2), description="The two stacks, ordered by name.")
    def stacks(self: overlaps.Overlap, info: Info) -> list[Stack]:
        # Made once per pair and graph: an answer of every overlap asks for each.
        made = graph(info).memoized("overlap stacks", dict)
        found = made.get(self.pair)
        if found is None:
            found = made[self.pair] = names("stack", self.pair)
        return found


def find_stack(info: Info, name: str) -> Stack | None:
    return Named("stack", name) if counts.spec_count(graph(info), "stack", name) else None


@strawberry.type
class StackQueries:
    @strawberry.field
    def stack(self, info: Info, name: str) -> Stack | None:
        return find_stack(info, name)

    @strawberry.field(metadata=cost(items=100), description="Stacks, ordered by name.")
    def stacks(self, info: Info, tag: str | None = None) -> list[Stack]:
        return names("stack", counts.names_in_scope(graph(info), "stack", tag))

    @strawberry.field(
        metadata=cost(items=1000),
        description="Every pair among the given stacks (all stacks when omitted) that shares at\n"
        "least one spec, largest sharedSpecCount first, ties by the pair's names.",
    )
    def stack_overlaps(
        self, info: Info, stacks: list[str] | None = None, tag: str | None = None
    ) -> list[StackOverlap]:
        return overlaps.stack_overlaps(graph(info), stacks, tag)


__all__ = ["Stack", "StackCount", "StackOverlap", "StackQueries", "find_stack"]
