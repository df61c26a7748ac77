"""Tags (cache snapshots such as develop or v0.21.0) and the totals over them."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated

import strawberry
from cachegraph.graph.questions import counts
from cachegraph.graph.questions.tags import tags_newest_first
from strawberry.types import Info

from .context import graph
from .cost import cost
from .named import Named, accepts, names
from .nodes import Node, global_id

if TYPE_CHECKING:
    from .stacks import Stack

StackRef = Annotated["Stack", strawberry.lazy(".stacks")]


@strawberry.type
class Tag(Node):
    is_type_of = accepts("tag")
    name: str

    @strawberry.field
    def id(self) -> strawberry.ID:
        return global_id("Tag", self.name)

    @strawberry.field(metadata=cost(items=100))
    def stacks(self, info: Info) -> list[StackRef]:
        return names("stack", counts.names_in_scope(graph(info), "stack", self.name))

    @strawberry.field(metadata=cost(walks=True))
    def package_count(self, info: Info) -> int:
        return len(counts.names_in_scope(graph(info), "package", self.name))

    @strawberry.field
    def spec_count(self, info: Info) -> int:
        return counts.spec_count(graph(info), "tag", self.name)


@strawberry.enum
class TagOrder(enum.Enum):
    NAME = "name"
    NEWEST_FIRST = strawberry.enum_value(
        "newest first",
        description="develop, then dated develop-YYYY-MM-DD snapshots from the latest, then "
        "other names, then releases from the highest version (pages carry no dates).",
    )


# The graph's own totals, as they are: their fields are declared once, there.
Stats = strawberry.type(counts.Stats)


def find_tag(info: Info, name: str) -> Tag | None:
    return Named("tag", name) if counts.spec_count(graph(info), "tag", name) else None


@strawberry.type
class TagQueries:
    @strawberry.field
    def tag(self, info: Info, name: str) -> Tag | None:
        return find_tag(info, name)

    @strawberry.field(metadata=cost(items=100), description="Tags, ordered by name unless asked.")
    def tags(self, info: Info, order: TagOrder = TagOrder.NAME) -> list[Tag]:
        cg = graph(info)
        found = tags_newest_first(cg) if order is TagOrder.NEWEST_FIRST else counts.tag_names(cg)
        return names("tag", found)

    @strawberry.field(description="Totals over everything loaded, or over one tag.")
    def stats(self, info: Info, tag: str | None = None) -> Stats:
        return counts.stats(graph(info), tag)
