"""Facets: the counts a faceted search shows beside each value of each attribute."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import strawberry
from cachegraph.graph.questions import facets
from strawberry.types import Info

from .context import graph
from .cost import cost
from .pagination import first_of
from .specs import SpecFilter, spec_query


@strawberry.type(
    description="One value of an attribute and how many specs have it; lists are ordered by "
    "count, largest first, then value."
)
class FacetValue:
    value: str
    count: int


FIRST = "Only the values with the largest counts, at most this many; all when null."


def _values(name: str, description: str):
    def resolve(
        self: Facets,
        first: Annotated[int | None, strawberry.argument(FIRST)] = None,
    ) -> list[FacetValue]:
        values = first_of(self.found.values[name], first)
        return [FacetValue(value=v, count=n) for v, n in values]

    return strawberry.field(resolver=resolve, description=description)


@strawberry.type
class Facets:
    found: strawberry.Private[facets.Facets]

    @strawberry.field
    def spec_count(self) -> int:
        return self.found.spec_count

    packages: list[FacetValue] = _values("package", "Package names.")
    versions: list[FacetValue] = _values("version", "Versions, as recorded.")
    compilers: list[FacetValue] = _values(
        "compiler", "Compilers by normalized name; 'none' for specs built without one."
    )
    targets: list[FacetValue] = _values("target", "Targets.")
    oss: list[FacetValue] = _values("os", "Operating systems.")
    platforms: list[FacetValue] = _values("platform", "Platforms.")
    stacks: list[FacetValue] = _values("stack", "Stacks (in the tag, when one is given).")
    variants: list[FacetValue] = _values(
        "variant", "Variant settings as recorded ('+mpi', 'build_system=cmake')."
    )
    mirrors: list[FacetValue] = _values("mirror", "Mirrors holding the specs.")


@strawberry.type
class FacetQueries:
    @strawberry.field(
        metadata=cost(walks=True),
        description="Counts of each attribute's values among the specs that pass the filter "
        "(each spec counted once).",
    )
    def facets(
        self, info: Info, filter: SpecFilter | None = None, tag: str | None = None
    ) -> Facets:
        query = spec_query(filter)
        if tag is not None:
            query = query.narrowed(tag=tag)
        return Facets(found=facets.facets(graph(info), replace(query, order=())))
