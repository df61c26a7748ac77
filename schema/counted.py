"""A package or a stack with how many specs it has: the rows of per-package and per-stack
counts (a package page's stacks, an impact, a tag diff)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import strawberry

from .named import Named, names

if TYPE_CHECKING:
    from .packages import Package
    from .stacks import Stack

PackageRef = Annotated["Package", strawberry.lazy(".packages")]
StackRef = Annotated["Stack", strawberry.lazy(".stacks")]


@strawberry.type
class StackCount:
    stack: StackRef
    spec_count: int


@strawberry.type
class PackageCount:
    package: PackageRef
    spec_count: int


def stack_counts(counts: list[tuple[str, int]]) -> list[StackCount]:
    return [StackCount(stack=Named("stack", n), spec_count=c) for n, c in counts]


def package_counts(counts: list[tuple[str, int]]) -> list[PackageCount]:
    return [PackageCount(package=Named("package", n), spec_count=c) for n, c in counts]


__all__ = ["PackageCount", "StackCount", "names", "package_counts", "stack_counts"]
