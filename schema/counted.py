"""A package or a stack with how many specs it has: the rows of per-package and per-stack
counts (a package page's stacks, an impact, a tag diff)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

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


#: GraphQL's Int: 32 bits, signed
_INT_END = 2**31


class CountRows(Sequence):
    """Per-name counts, largest first, as two columns: for the compiled plan, which builds
    their JSON from ``graphql_columns`` (``cachegraph.execution.compiled``, ``rows``)
    without a PackageCount and a Named per row -- an impact of a library every spec links
    has 50,000 package rows at a million specs; for anything else (the standard execution,
    a selection of the package's other fields), each row's object, made when asked.

    >>> rows = CountRows("package", [("zlib", 3), ("hdf5", 1)])
    >>> len(rows), rows[1], rows.graphql_columns[("package", "name")]
    (2, PackageCount(package=Named(kind='package', name='hdf5'), spec_count=1), ['zlib', 'hdf5'])
    """

    __slots__ = ("_counts", "_kind", "_names", "graphql_columns")

    def __init__(self, kind: str, counts: list[tuple[str, int]]) -> None:
        names, numbers = (list(c) for c in zip(*counts, strict=True)) if counts else ([], [])
        self._kind, self._names, self._counts = kind, names, numbers
        # Columns only of values already of their JSON type: names as strings, counts as
        # ints GraphQL's Int holds (the plan passes them on unchecked); else none.
        plain = set(map(type, names)) <= {str} and set(map(type, numbers)) <= {int}
        if plain and numbers and not (min(numbers) >= -_INT_END and max(numbers) < _INT_END):
            plain = False
        self.graphql_columns: dict[tuple[str, ...], list] | None = (
            {(kind, "name"): names, ("specCount",): numbers} if plain else None
        )

    def __len__(self) -> int:
        return len(self._names)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        row = _ROWS[self._kind]
        return row(Named(self._kind, self._names[i]), self._counts[i])


def stack_counts(counts: list[tuple[str, int]]) -> list[StackCount]:
    return [StackCount(stack=Named("stack", n), spec_count=c) for n, c in counts]


def package_counts(counts: list[tuple[str, int]]) -> list[PackageCount]:
    return [PackageCount(package=Named("package", n), spec_count=c) for n, c in counts]


_ROWS: dict[str, Any] = {
    "package": lambda package, count: PackageCount(package=package, spec_count=count),
    "stack": lambda stack, count: StackCount(stack=stack, spec_count=count),
}


__all__ = [
    "CountRows",
    "PackageCount",
    "StackCount",
    "names",
    "package_counts",
    "stack_counts",
]
