"""What differs and what a change reaches: specDiff, lookalikes, impact, tagDiff."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated

import strawberry
from cachegraph.graph.questions import impact, likeness, tags
from cachegraph.graph.questions.specs import SpecSelection
from strawberry.types import Info

from .context import graph, warn
from .cost import cost
from .counted import CountRows, PackageCount, StackCount, stack_counts
from .coverage import Difference
from .named import Named
from .pagination import first_of
from .rows import spec_slice
from .specs import SpecConnection

if TYPE_CHECKING:
    from .packages import Package
    from .specs import Spec
    from .stacks import Stack
    from .tags import Tag

SpecRef = Annotated["Spec", strawberry.lazy(".specs")]
PackageRef = Annotated["Package", strawberry.lazy(".packages")]
StackRef = Annotated["Stack", strawberry.lazy(".stacks")]
TagRef = Annotated["Tag", strawberry.lazy(".tags")]


def ranks_connection(
    info: Info, kind: str, ranks: tuple[int, ...], first: int | None, after: str | None
):
    """A spec connection over ranks already in spec order."""
    found = SpecSelection(graph(info), ranks)
    return SpecConnection(slice=spec_slice(kind, found, first, after))


@strawberry.type
class SpecDiff:
    a: SpecRef
    b: SpecRef
    differences: list[Difference] = strawberry.field(metadata=cost(items=20))


@strawberry.type(
    description="Specs identical in every own attribute (version, compiler, variants, os, "
    "platform, target) that differ only in their dependencies."
)
class LookalikeGroup:
    group: strawberry.Private[likeness.LookalikeGroup]

    @strawberry.field(metadata=cost(items=10))
    def specs(self) -> list[SpecRef]:
        return list(self.group.specs)

    @strawberry.field(
        metadata=cost(items=10),
        description="Names of the dependencies whose nodes differ between the group's specs, "
        "ordered by name.",
    )
    def differing_dependencies(self) -> list[str]:
        return list(self.group.differing)


@strawberry.type
class Impact:
    found: strawberry.Private[impact.Impact]
    #: what was asked (the constraint, the tag): the key the rows are kept under
    asked: strawberry.Private[tuple[str, str | None]]

    @strawberry.field
    def spec_count(self) -> int:
        return len(self.found.ranks)

    @strawberry.field
    def specs(self, info: Info, first: int | None = 50, after: str | None = None) -> SpecConnection:
        return ranks_connection(info, "impact", self.found.ranks, first, after)

    @strawberry.field(
        metadata=cost(items=100),
        description="Spec counts per package, ordered by count, largest first, then name.",
    )
    def packages(self, info: Info) -> list[PackageCount]:
        # Kept as the impact is: a library every spec links reaches every package, 50,000 at
        # a million specs; as columns, whose JSON the compiled plan builds without an
        # object per row.
        key = ("impact's packages", *self.asked)
        return graph(info).kept(key, lambda: CountRows("package", self.found.packages))

    @strawberry.field(
        metadata=cost(items=100), description="Spec counts per stack, largest first, then name."
    )
    def stacks(self) -> list[StackCount]:
        return stack_counts(self.found.stacks)


@strawberry.type
class PackageChange:
    package: PackageRef
    added: int
    removed: int
    kept: int


@strawberry.type
class StackChange:
    stack: StackRef
    added: int
    removed: int
    kept: int


@strawberry.enum
class ChangeOrder(enum.Enum):
    NAME = "name"
    MOST_CHANGED = strawberry.enum_value(
        "most changed", description="Most specs added and removed first, then by name."
    )

    @property
    def most(self) -> bool:
        return self is ChangeOrder.MOST_CHANGED


@strawberry.type
class TagDiff:
    old: strawberry.Private[str]
    new: strawberry.Private[str]
    found: strawberry.Private[tags.TagDiff]

    @strawberry.field(name="from")
    def from_(self) -> TagRef:
        return Named("tag", self.old)

    @strawberry.field
    def to(self) -> TagRef:
        return Named("tag", self.new)

    @strawberry.field
    def added(self, info: Info, first: int | None = 50, after: str | None = None) -> SpecConnection:
        return ranks_connection(info, "added", self.found.added, first, after)

    @strawberry.field
    def removed(
        self, info: Info, first: int | None = 50, after: str | None = None
    ) -> SpecConnection:
        return ranks_connection(info, "removed", self.found.removed, first, after)

    @strawberry.field
    def kept(self, info: Info, first: int | None = 50, after: str | None = None) -> SpecConnection:
        return ranks_connection(info, "kept", self.found.kept, first, after)

    @strawberry.field(
        metadata=cost(items=1000),
        description="Per package: specs added, removed and kept; packages with any, by name "
        "unless asked.",
    )
    def packages(
        self, info: Info, order: ChangeOrder = ChangeOrder.NAME, first: int | None = None
    ) -> list[PackageChange]:
        found = tags.changes(graph(info), self.found, "package", most_changed=order.most)
        return [PackageChange(package=Named("package", n), added=a, removed=r, kept=k)
                for n, a, r, k in first_of(found, first)]  # fmt: skip

    @strawberry.field(
        metadata=cost(items=100),
        description="Per stack: specs added and kept (held in 'to'), removed (held in 'from'); "
        "stacks with any, by name unless asked.",
    )
    def stacks(
        self, info: Info, order: ChangeOrder = ChangeOrder.NAME, first: int | None = None
    ) -> list[StackChange]:
        scope = (self.old, self.new)
        found = tags.changes(graph(info), self.found, "stack", scope, most_changed=order.most)
        return [StackChange(stack=Named("stack", n), added=a, removed=r, kept=k)
                for n, a, r, k in first_of(found, first)]  # fmt: skip


@strawberry.type
class DiffQueries:
    @strawberry.field(
        metadata=cost(walks=True),
        description="What differs between two cached specs (hashes or unique prefixes), as "
        "spack diff shows it.",
    )
    def spec_diff(self, info: Info, a: str, b: str) -> SpecDiff | None:
        first, second, differences = likeness.spec_diff(graph(info), a, b)
        return SpecDiff(a=first, b=second, differences=[Difference.of(d) for d in differences])

    @strawberry.field(
        metadata=cost(walks=True),
        description="Cached specs with a dependency satisfying the constraint, as Spack's "
        "'^' finds one (link and run dependencies, transitively, and the spec's own build "
        "dependencies), e.g. 'openssl@3.0:3.0.99'.",
    )
    def impact(self, info: Info, spec: str, tag: str | None = None) -> Impact:
        found = impact.impact(graph(info), spec, tag)
        for message in found.warnings:
            warn(info, message)
        return Impact(found=found, asked=(spec, tag))

    @strawberry.field(
        metadata=cost(walks=True),
        description="Specs added, removed and kept from one tag to another.",
    )
    def tag_diff(
        self, info: Info, from_: Annotated[str, strawberry.argument(name="from")], to: str
    ) -> TagDiff:
        return TagDiff(old=from_, new=to, found=tags.tag_diff(graph(info), from_, to))


def lookalike_groups(info: Info, package: str, tag: str | None) -> list[LookalikeGroup]:
    return [LookalikeGroup(group=g) for g in likeness.lookalikes(graph(info), package, tag)]
