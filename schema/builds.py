"""What a spec is built with and for: Compiler and Target."""

from __future__ import annotations

import strawberry
from cachegraph.graph.questions import counts
from cachegraph.graph.spack.names import compiler_parts, current_compiler, normalize_compiler
from strawberry.types import Info

from .context import graph
from .cost import cost
from .named import Named, accepts, names
from .nodes import Node, global_id
from .packages import PackageGroup


@strawberry.type
class Compiler(PackageGroup, Node):
    is_type_of = accepts("compiler")
    name: str = strawberry.field(
        description="Normalized 'family@version', without Spack's '=' marker: 'gcc@13.2.0'."
    )

    @strawberry.field
    def id(self) -> strawberry.ID:
        return global_id("Compiler", self.name)

    @strawberry.field
    def family(self) -> str:
        return compiler_parts(self.name)[0]

    @strawberry.field
    def version(self) -> str:
        return compiler_parts(self.name)[1]


@strawberry.type
class Target(PackageGroup, Node):
    is_type_of = accepts("target")

    @strawberry.field
    def id(self) -> strawberry.ID:
        return global_id("Target", self.name)


def find_compiler(info: Info, name: str) -> Compiler | None:
    key = normalize_compiler(name)
    if key and counts.spec_count(graph(info), "compiler", key):
        return Named("compiler", current_compiler(key))
    return None


def find_target(info: Info, name: str) -> Target | None:
    return Named("target", name) if counts.spec_count(graph(info), "target", name) else None


@strawberry.type
class BuildQueries:
    @strawberry.field(
        description="Accepts 'gcc@13.2.0' and Spack's exact form 'gcc@=13.2.0' alike."
    )
    def compiler(self, info: Info, name: str) -> Compiler | None:
        return find_compiler(info, name)

    @strawberry.field(metadata=cost(items=100), description="Compilers, ordered by name.")
    def compilers(self, info: Info, tag: str | None = None) -> list[Compiler]:
        return names("compiler", counts.names_in_scope(graph(info), "compiler", tag))

    @strawberry.field
    def target(self, info: Info, name: str) -> Target | None:
        return find_target(info, name)

    @strawberry.field(metadata=cost(items=100), description="Targets, ordered by name.")
    def targets(self, info: Info, tag: str | None = None) -> list[Target]:
        return names("target", counts.names_in_scope(graph(info), "target", tag))
