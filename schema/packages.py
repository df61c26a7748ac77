"""Package, its filter and connection, and the root fields that find packages."""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Annotated

import strawberry
from cachegraph.graph.questions import counts
from cachegraph.graph.questions import dependencies as deps
from strawberry.types import Info

from .context import graph
from .cost import cost, counted
from .counted import StackCount, stack_counts
from .diffs import LookalikeGroup, lookalike_groups
from .facets import FacetValue
from .named import Named, accepts, names
from .nodes import Node, global_id
from .pagination import Connection, Slice
from .specs import SpecGroup

if TYPE_CHECKING:
    from .builds import Compiler, Target
    from .tags import Tag

CompilerRef = Annotated["Compiler", strawberry.lazy(".builds")]
TargetRef = Annotated["Target", strawberry.lazy(".builds")]
TagRef = Annotated["Tag", strawberry.lazy(".tags")]


def _facts(info: Info, name: str, tag: str | None) -> counts.PackageFacts:
    return counts.package_facts(graph(info), name, tag)


@strawberry.type
class Package(SpecGroup, Node):
    is_type_of = accepts("package")

    @strawberry.field
    def id(self) -> strawberry.ID:
        return global_id("Package", self.name)

    @strawberry.field(
        metadata=cost(items=50),
        description="Distinct versions, ordered as Spack orders versions (oldest first).",
    )
    def versions(self, info: Info, tag: str | None = None) -> list[str]:
        return _facts(info, self.name, tag).versions

    @strawberry.field(metadata=cost(items=20))
    def compilers(self, info: Info, tag: str | None = None) -> list[CompilerRef]:
        return names("compiler", _facts(info, self.name, tag).compilers)

    @strawberry.field(metadata=cost(items=20))
    def targets(self, info: Info, tag: str | None = None) -> list[TargetRef]:
        return names("target", _facts(info, self.name, tag).targets)

    @strawberry.field(metadata=cost(items=10))
    def oss(self, info: Info, tag: str | None = None) -> list[str]:
        return _facts(info, self.name, tag).oss

    @strawberry.field(metadata=cost(items=5))
    def platforms(self, info: Info, tag: str | None = None) -> list[str]:
        return _facts(info, self.name, tag).platforms

    @strawberry.field(
        metadata=cost(items=50),
        description="Spec count per stack, like a cache page's num_specs_by_stack; "
        "ordered by stack name.",
    )
    def stacks(self, info: Info, tag: str | None = None) -> list[StackCount]:
        return stack_counts(_facts(info, self.name, tag).stack_counts)

    @strawberry.field(metadata=cost(items=50))
    def tags(self, info: Info) -> list[TagRef]:
        return names("tag", counts.tags_of(graph(info), "package", self.name))

    @strawberry.field(
        metadata=cost(items=50),
        description="Packages that some spec of this one depends on, by name.",
    )
    def dependencies(self, info: Info) -> list[Package]:
        return counted(info, names("package", deps.package_dependencies(graph(info), self.name)))

    @strawberry.field(
        metadata=cost(items=100),
        description="Packages with a spec that depends on a spec of this one.",
    )
    def dependents(self, info: Info) -> list[Package]:
        return counted(info, names("package", deps.package_dependents(graph(info), self.name)))

    @strawberry.field(
        metadata=cost(items=20, walks=True),
        description="Groups of this package's lookalike specs, largest first.",
    )
    def lookalikes(self, info: Info, tag: str | None = None) -> list[LookalikeGroup]:
        return lookalike_groups(info, self.name, tag)


PackageConnection = Connection[Package]


@strawberry.type
class PackageGroup(SpecGroup):
    """A spec group whose packages are listed too (stacks, compilers, targets)."""

    @strawberry.field(metadata=cost(walks=True))
    def packages(
        self,
        info: Info,
        tag: str | None = None,
        first: int | None = 50,
        after: str | None = None,
    ) -> PackageConnection:
        names = counts.packages_with(graph(info), self.kind, self.name, tag)
        return package_connection(info, names, first, after)


def package_connection(
    info: Info, names: list[str], first: int | None, after: str | None
) -> PackageConnection:
    def walk(key: str | None):
        return iter(names[bisect_right(names, key) if key is not None else 0 :])

    return PackageConnection(
        slice=Slice("package", walk, lambda n: n, lambda: len(names), first, after),
        wrap=lambda n: Named("package", n),
    )


@strawberry.input
class PackageFilter:
    name_contains: str | None = strawberry.field(
        default=None, description="Case-insensitive substring of the package name."
    )
    stack: str | None = strawberry.field(
        default=None, description="Packages with at least one spec in this stack."
    )
    compiler: str | None = strawberry.field(
        default=None, description="Packages with at least one spec built with this compiler."
    )
    target: str | None = strawberry.field(
        default=None, description="Packages with at least one spec for this target."
    )
    tag: str | None = strawberry.field(
        default=None, description="Packages with at least one spec in this tag."
    )
    name_prefix: str | None = strawberry.field(
        default=None, description="Case-insensitive start of the package name."
    )


def package_query(f: PackageFilter | None) -> counts.PackageQuery:
    f = f or PackageFilter()
    return counts.PackageQuery(f.name_contains, f.stack, f.compiler, f.target, f.tag, f.name_prefix)


def find_package(info: Info, name: str) -> Package | None:
    return Named("package", name) if counts.package_exists(graph(info), name) else None


@strawberry.type
class PackageQueries:
    @strawberry.field(description="One package by exact name; null when absent.")
    def package(self, info: Info, name: str) -> Package | None:
        return find_package(info, name)

    @strawberry.field(description="Packages, ordered by name.")
    def packages(
        self,
        info: Info,
        filter: PackageFilter | None = None,
        first: int | None = 50,
        after: str | None = None,
    ) -> PackageConnection:
        names = counts.package_names(graph(info), package_query(filter))
        return package_connection(info, names, first, after)

    @strawberry.field(
        description="The first characters of the matching packages' names, each with how "
        "many packages: the letters of a package index, in order.",
        metadata=cost(items=40),
    )
    def package_initials(self, info: Info, filter: PackageFilter | None = None) -> list[FacetValue]:
        initials = counts.package_initials(graph(info), package_query(filter))
        return [FacetValue(value=c, count=n) for c, n in initials]
