"""Facets: the counts a faceted search shows beside each value of each attribute."""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Annotated

import strawberry
from cachegraph.graph.attributes import ATTRIBUTES
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


#: The facets that are no attribute: their field names and descriptions
OWN = {
    "stack": ("stacks", "Stacks (in the tag, when one is given)."),
    "mirror": ("mirrors", "Mirrors holding the specs."),
}


def _facet_fields(cls: type) -> type:
    """Give Facets a field per facet, in ``graph.questions.facets.FACETS``' order: the
    attributes' names and descriptions from their rows (graph.attributes)."""
    named = {a.kind: (a.facet_name, a.facet) for a in ATTRIBUTES} | OWN
    declared = {}
    for kind in facets.FACETS:
        name, description = named[kind]
        declared[name] = list[FacetValue]
        setattr(cls, name, _values(kind, description))
    cls.__annotations__ = {**inspect.get_annotations(cls), **declared}
    return cls


@strawberry.type
@_facet_fields
class Facets:
    found: strawberry.Private[facets.Facets]

    @strawberry.field
    def spec_count(self) -> int:
        return self.found.spec_count


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
