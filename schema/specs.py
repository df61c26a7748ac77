"""Spec, its filter and connection, and the root fields that find specs."""

from __future__ import annotations

import enum
import inspect
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from cachegraph.graph.attributes import ATTRIBUTES, PLACED, SINGLE, Attribute, spec_string
from cachegraph.graph.questions import counts
from cachegraph.graph.questions import dependencies as deps
from cachegraph.graph.questions import mirrors as holdings
from cachegraph.graph.questions.search import search as search_specs
from cachegraph.graph.questions.specs import (
    ORDER_KEYS,
    Host,
    SpecQuery,
    SpecSelection,
    select_specs,
    spec_by_hash,
)
from cachegraph.graph.questions.tags import seen
from cachegraph.graph.spack.names import current_compiler
from cachegraph.graph.store.records import SpecRecord
from strawberry.types import Info

from .changes import spec_moments
from .context import graph, warn
from .cost import WHEN_TRANSITIVE, cost, counted
from .named import Named, names
from .nodes import Node, global_id
from .pagination import Connection
from .rows import spec_slice

if TYPE_CHECKING:
    from .builds import Compiler, Target
    from .mirrors import Mirror
    from .packages import Package
    from .stacks import Stack
    from .tags import Tag

PackageRef = Annotated["Package", strawberry.lazy(".packages")]
StackRef = Annotated["Stack", strawberry.lazy(".stacks")]
CompilerRef = Annotated["Compiler", strawberry.lazy(".builds")]
TargetRef = Annotated["Target", strawberry.lazy(".builds")]
TagRef = Annotated["Tag", strawberry.lazy(".tags")]
MirrorRef = Annotated["Mirror", strawberry.lazy(".mirrors")]

DEPTYPE = "One of build, link, run, test; all deptypes when omitted."
TRANSITIVE = "Every spec reached through any chain of such edges, not only direct ones."


# A Spec's objects are the graph's SpecRecords themselves: fields that are plain
# record attributes need no resolver, which makes large pages several times faster.
def _attribute_fields(cls: type) -> type:
    """Give the Spec type a field per attribute it shows as a plain value (graph.attributes),
    in their place, after the hash; ``versions`` follows ``version``."""
    own = dict(inspect.get_annotations(cls))
    declared = {"hash": own.pop("hash")}
    for a in PLACED:
        if a.field:
            declared[a.name] = list[str] if a.many else a.type
            setattr(cls, a.name, strawberry.field(description=a.doc, metadata=_cost(a)))
        if a.name == "version":
            declared["versions"] = own.pop("versions")
    cls.__annotations__ = {**declared, **own}
    return cls


def _cost(a: Attribute) -> dict | None:
    return cost(items=20) if a.many else None


@strawberry.type
@_attribute_fields
class Spec(Node):
    hash: str = strawberry.field(description="The 32-character Spack hash.")
    versions: list[str] = strawberry.field(metadata=cost(items=10))
    size: float | None = strawberry.field(
        description="The size of the spec's binary tarball in bytes; null when no source says."
    )

    @classmethod
    def is_type_of(cls, obj: object, info: object) -> bool:
        return isinstance(obj, SpecRecord | cls)

    # Resolvers get the SpecRecord as ``self``.
    @strawberry.field
    def id(self: SpecRecord) -> strawberry.ID:
        return global_id("Spec", self.hash)

    @strawberry.field(description="The first 7 characters of the hash, as Spack prints it.")
    def short_hash(self: SpecRecord) -> str:
        return self.hash[:7]

    @strawberry.field
    def package(self: SpecRecord) -> PackageRef:
        return Named("package", self.package)

    @strawberry.field(
        description="Null when the record's compiler is 'none' (e.g. pure-Python packages)."
    )
    def compiler(self: SpecRecord) -> CompilerRef | None:
        # one name per compiler: Spack's current one (oneapi@... is intel-oneapi-compilers@...)
        return Named("compiler", current_compiler(self.compiler)) if self.compiler else None

    @strawberry.field
    def target(self: SpecRecord) -> TargetRef:
        return Named("target", self.target)

    @strawberry.field(
        metadata=cost(items=10), description="Stacks this spec is in, ordered by name."
    )
    def stacks(self: SpecRecord, tag: str | None = None) -> list[StackRef]:
        return names("stack", sorted(self.stacks_in(tag)))

    @strawberry.field(metadata=cost(items=20))
    def tags(self: SpecRecord) -> list[TagRef]:
        return names("tag", sorted(self.stacks))

    @strawberry.field(
        metadata=cost(items=20),
        description="Where it is cached: each tag listing it, ordered by name, with the stacks "
        "holding it there.",
    )
    def stacks_by_tag(self: SpecRecord) -> list[TagStacks]:
        return [
            TagStacks(tag=Named("tag", t), stacks=names("stack", sorted(self.stacks[t])))
            for t in sorted(self.stacks)
        ]

    @strawberry.field(
        description="Spack's classic spec string; the exact format is in ../contract/README.md."
    )
    def spec_string(self: SpecRecord) -> str:
        return spec_string(self)

    @strawberry.field(
        metadata=cost(items=10), description="The mirrors holding this spec, ordered by name."
    )
    def mirrors(self: SpecRecord, info: Info) -> list[MirrorRef]:
        return holdings.mirrors_of(graph(info), self.hash)

    @strawberry.field(
        description="Where its binary tarball is: a v3 blob or a v2 .spack file, in the first "
        "mirror (by name) holding it; null when no mirror does."
    )
    def tarball(self: SpecRecord) -> str | None:
        return self.tarball or None

    @strawberry.field(
        metadata=cost(items=100, walks=WHEN_TRANSITIVE),
        description="What it depends on: direct dependencies, or with transitive every node of "
        "its DAG but itself; in spec order.",
    )
    def dependencies(
        self: SpecRecord,
        info: Info,
        deptype: Annotated[str | None, strawberry.argument(DEPTYPE)] = None,
        transitive: Annotated[bool | None, strawberry.argument(TRANSITIVE)] = False,
    ) -> list[Spec]:
        return counted(info, deps.dependencies(graph(info), self.hash, deptype, bool(transitive)))

    @strawberry.field(
        metadata=cost(items=20),
        description="Its direct dependencies with how each is needed, in spec order: the edges "
        "of its DAG, for drawing it.",
    )
    def dependency_edges(self: SpecRecord, info: Info) -> list[DependencyEdge]:
        return [
            DependencyEdge(spec=s, deptypes=sorted(types), virtuals=sorted(virtuals))
            for s, types, virtuals in deps.dependency_edges(graph(info), self.hash)
        ]

    @strawberry.field(
        metadata=cost(items=100, walks=WHEN_TRANSITIVE),
        description="What depends on it: directly, or with transitive through any chain; "
        "in spec order.",
    )
    def dependents(
        self: SpecRecord,
        info: Info,
        deptype: Annotated[str | None, strawberry.argument(DEPTYPE)] = None,
        transitive: Annotated[bool | None, strawberry.argument(TRANSITIVE)] = False,
    ) -> list[Spec]:
        return counted(info, deps.dependents(graph(info), self.hash, deptype, bool(transitive)))

    @strawberry.field(
        description="The earliest tag holding this spec (dated develop tags by date, releases "
        "by version, 'develop' newest)."
    )
    def first_seen(self: SpecRecord) -> TagRef | None:
        first, _ = seen(self)
        return None if first is None else Named("tag", first)

    @strawberry.field(description="The latest tag holding it.")
    def last_seen(self: SpecRecord) -> TagRef | None:
        _, last = seen(self)
        return None if last is None else Named("tag", last)

    @strawberry.field(
        description="When a refresh, reload or start first found it in a mirror's index, "
        "within the history the change log keeps (changes); null when it came before."
    )
    def first_seen_at(self: SpecRecord, info: Info) -> datetime | None:
        return spec_moments(info, self.hash)[0]

    @strawberry.field(
        description="When a change last took it out of a mirror's index, within the history "
        "kept; null when none did."
    )
    def last_seen_at(self: SpecRecord, info: Info) -> datetime | None:
        return spec_moments(info, self.hash)[1]

    @strawberry.field(
        metadata=cost(walks=WHEN_TRANSITIVE),
        description="How many specs dependencies(deptype, transitive) gives.",
    )
    def dependency_count(
        self: SpecRecord,
        info: Info,
        deptype: Annotated[str | None, strawberry.argument(DEPTYPE)] = None,
        transitive: Annotated[bool | None, strawberry.argument(TRANSITIVE)] = False,
    ) -> int:
        return deps.dependency_count(graph(info), self.hash, deptype, bool(transitive))

    @strawberry.field(
        metadata=cost(walks=WHEN_TRANSITIVE),
        description="How many specs dependents(deptype, transitive) gives.",
    )
    def dependent_count(
        self: SpecRecord,
        info: Info,
        deptype: Annotated[str | None, strawberry.argument(DEPTYPE)] = None,
        transitive: Annotated[bool | None, strawberry.argument(TRANSITIVE)] = False,
    ) -> int:
        return deps.dependent_count(graph(info), self.hash, deptype, bool(transitive))


def _attribute_filters(cls: type) -> type:
    """Give a filter a field per spec attribute (graph.attributes), before its own fields."""
    for a in ATTRIBUTES:
        setattr(cls, a.name, strawberry.field(default=None, description=a.description))
    declared = {a.name: list[str] | None if a.many else str | None for a in ATTRIBUTES}
    cls.__annotations__ = {**declared, **cls.__annotations__}
    return cls


@strawberry.type(description="The stacks holding a spec in one tag.")
class TagStacks:
    tag: TagRef
    stacks: list[StackRef] = strawberry.field(metadata=cost(items=10))


@strawberry.type(description="A dependency edge: the spec depended on, and how.")
class DependencyEdge:
    spec: Spec
    deptypes: list[str] = strawberry.field(
        metadata=cost(items=4), description="Of build, link, run, test; sorted."
    )
    virtuals: list[str] = strawberry.field(
        metadata=cost(items=4),
        description="The virtual packages it provides to the dependent (c, cxx, mpi...); sorted.",
    )


@strawberry.input
@_attribute_filters
class SpecFilter:
    stacks: list[str] | None = strawberry.field(
        default=None, description="The spec is in every one of these stacks."
    )
    exclude_stacks: list[str] | None = strawberry.field(
        default=None, description="The spec is in none of these stacks."
    )
    tag: str | None = None
    mirror: str | None = strawberry.field(default=None, description="A mirror holds the spec.")
    satisfies: str | None = strawberry.field(
        default=None,
        description="A Spack constraint the spec must satisfy, e.g. "
        "'hdf5@1.14: +mpi %gcc@11: target=x86_64_v3: ^openmpi@4:'.",
    )
    runs_on: HostInput | None = strawberry.field(
        default=None,
        description="Specs a machine with this target (and os and platform, when given) can run.",
    )


@strawberry.input
class HostInput:
    target: str = strawberry.field(
        description="An archspec microarchitecture name, e.g. 'zen4', 'neoverse_v1', 'x86_64_v3'."
    )
    os: str | None = None
    platform: str | None = None


#: The orderings of a spec list: the attributes ordered by (graph.attributes), size, hash
SpecOrderField = strawberry.enum(enum.Enum("SpecOrderField", {k.upper(): k for k in ORDER_KEYS}))


@strawberry.enum
class OrderDirection(enum.Enum):
    ASC = "asc"
    DESC = "desc"


@strawberry.input(
    description="One key of a spec list's order; later keys break ties, then the default order."
)
class SpecOrder:
    field: SpecOrderField
    direction: OrderDirection = OrderDirection.ASC


ORDER_BY = (
    "Order by these keys instead of the default (package, version, hash); specs of unknown "
    "size come last. Cursors are valid within one ordering."
)


def spec_query(f: SpecFilter | None, order_by: list[SpecOrder] | None = None) -> SpecQuery:
    order = tuple((o.field.value, o.direction is OrderDirection.DESC) for o in order_by or ())
    if f is None:
        return SpecQuery(order=order)
    host = f.runs_on
    return SpecQuery(
        **{kind: getattr(f, kind) for kind in SINGLE},
        stacks=tuple(f.stacks or ()),
        exclude_stacks=tuple(f.exclude_stacks or ()),
        tag=f.tag,
        variants=tuple(f.variants or ()),
        mirror=f.mirror,
        satisfies=f.satisfies,
        runs_on=host and Host(host.target, host.os, host.platform),
        order=order,
    )


SpecConnection = Connection[Spec]


def spec_connection(
    info: Info, query: SpecQuery, first: int | None, after: str | None
) -> SpecConnection:
    selection = select_specs(graph(info), query)
    for message in selection.warnings:
        warn(info, message)
    # A cursor names its ordering, so that one from another ordering is refused.
    kind = "spec" + "".join(f"/{f}{'-' if desc else '+'}" for f, desc in query.order)
    return SpecConnection(slice=spec_slice(kind, selection, first, after))


def narrowed(group: Named, query: SpecQuery) -> SpecQuery:
    """``query`` within a package, compiler, target or stack (``group``: its kind and name).

    >>> narrowed(Named("stack", "e4s"), SpecQuery()).stacks
    ('e4s',)
    """
    if group.kind == "stack":
        return query.with_stack(group.name)
    return query.narrowed(**{group.kind: group.name})


@strawberry.type
class SpecGroup:
    """The fields of a type that groups specs by one attribute (package, compiler...); its
    objects are ``Named`` of that kind."""

    name: str

    @strawberry.field
    def spec_count(self, info: Info, tag: str | None = None) -> int:
        return counts.spec_count(graph(info), self.kind, self.name, tag)

    @strawberry.field
    def specs(
        self,
        info: Info,
        filter: SpecFilter | None = None,
        first: int | None = 50,
        after: str | None = None,
        order_by: Annotated[list[SpecOrder] | None, strawberry.argument(ORDER_BY)] = None,
    ) -> SpecConnection:
        return spec_connection(info, narrowed(self, spec_query(filter, order_by)), first, after)


@strawberry.type
class SpecQueries:
    @strawberry.field(
        description="One spec by its full hash, or by a unique prefix of at least 7 characters.\n"
        "Null when nothing matches; an ambiguous prefix is an error naming the candidates."
    )
    def spec(self, info: Info, hash: str) -> Spec | None:
        record = spec_by_hash(graph(info), hash)
        return record

    @strawberry.field(description="Specs, ordered by package name, then version, then hash.")
    def specs(
        self,
        info: Info,
        filter: SpecFilter | None = None,
        first: int | None = 50,
        after: str | None = None,
        order_by: Annotated[list[SpecOrder] | None, strawberry.argument(ORDER_BY)] = None,
    ) -> SpecConnection:
        return spec_connection(info, spec_query(filter, order_by), first, after)

    @strawberry.field(
        metadata=cost(walks=True),
        description="Specs matching free text: package names, versions, variants, hash "
        "prefixes; best matches first. Every word must match; the ranking is in the README.",
    )
    def search(
        self, info: Info, text: str, first: int | None = 50, after: str | None = None
    ) -> SpecConnection:
        cg = graph(info)
        found = SpecSelection(cg, search_specs(cg, text), positional=True)
        return SpecConnection(slice=spec_slice("search", found, first, after))

    @strawberry.field(description="Specs that are in every one of the given stacks.")
    def shared_specs(
        self,
        info: Info,
        stacks: list[str],
        tag: str | None = None,
        first: int | None = 50,
        after: str | None = None,
        order_by: Annotated[list[SpecOrder] | None, strawberry.argument(ORDER_BY)] = None,
    ) -> SpecConnection:
        query = replace(spec_query(None, order_by), stacks=tuple(stacks), tag=tag)
        return spec_connection(info, query, first, after)

    @strawberry.field(
        metadata=cost(items=20, walks=True),
        description="A shortest chain of dependencies from one spec to another (hashes or "
        "unique prefixes), both ends included; null when there is none.",
    )
    def dependency_path(
        self,
        info: Info,
        from_: Annotated[str, strawberry.argument(name="from")],
        to: str,
    ) -> list[Spec] | None:
        path = deps.dependency_path(graph(info), from_, to)
        return path
