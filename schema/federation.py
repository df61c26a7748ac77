"""The schema as an Apollo Federation 2 subgraph: entities keyed by their natural ids.

Spec is keyed by hash; Package, Stack, Compiler, Target and Tag by name. A
gateway resolves a reference with ``_entities``, which calls the same finders
as the root fields. Marking the entities changes their type definitions for
the whole process, so a server builds this schema instead of the plain one,
never beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import strawberry
from strawberry.federation.schema_directives import Key
from strawberry.types import Info

from .builds import Compiler, Target, find_compiler, find_target
from .context import graph
from .packages import Package, find_package
from .query import CacheGraphSchema, Query
from .specs import Spec
from .stacks import Stack, find_stack
from .tags import Tag, find_tag


def _find_spec(info: Info, hash: str) -> Spec | None:
    record = graph(info).spec(hash)
    return None if record is None else record


ENTITIES: dict[type, tuple[str, Callable]] = {
    Spec: ("hash", _find_spec),
    Package: ("name", find_package),
    Stack: ("name", find_stack),
    Compiler: ("name", find_compiler),
    Target: ("name", find_target),
    Tag: ("name", find_tag),
}


def _mark_entities() -> None:
    for cls, (key, find) in ENTITIES.items():
        definition = cls.__strawberry_definition__
        if not any(isinstance(d, Key) for d in definition.directives or ()):
            definition.directives = (*(definition.directives or ()), Key(fields=key))

        def resolve_reference(info: Info, _find=find, _key=key, **representation) -> object:
            return _find(info, representation[_key])

        cls.resolve_reference = staticmethod(resolve_reference)


class FederatedSchema(CacheGraphSchema, strawberry.federation.Schema):
    """CacheGraphSchema's error handling on Strawberry's federation schema."""


def build_federated_schema(extensions: Sequence = ()) -> strawberry.Schema:
    _mark_entities()
    return FederatedSchema(
        query=Query,
        types=list(ENTITIES),
        extensions=list(extensions),
    )
