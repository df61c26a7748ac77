"""Mirrors: the build caches specs were loaded from, with their sizes."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from cachegraph.graph.questions import mirrors as holdings
from cachegraph.graph.sources.locations import is_url
from cachegraph.graph.sources.remote import MirrorWatch
from cachegraph.graph.store.records import MirrorInfo
from strawberry.types import Info

from .context import graph, shown_path, shown_text
from .cost import cost
from .named import Named
from .nodes import Node, global_id
from .specs import ORDER_BY, SpecConnection, SpecFilter, SpecOrder, spec_connection, spec_query

if TYPE_CHECKING:
    from .stacks import Stack
    from .tags import Tag

StackRef = Annotated["Stack", strawberry.lazy(".stacks")]
TagRef = Annotated["Tag", strawberry.lazy(".tags")]


def _moment(seconds: float) -> str | None:
    """A time as ISO 8601 in UTC, to the second; None for never."""
    if not seconds:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@strawberry.type(
    description="How fresh a remote mirror's data is: its index is checked every refresh "
    "period (--refresh) with Spack's cheap request, and fetched again when it changed."
)
class MirrorFreshness:
    watch: strawberry.Private[MirrorWatch]

    @strawberry.field(description="When it was last checked (ISO 8601, UTC); null: never.")
    def last_check(self) -> str | None:
        return _moment(self.watch.last_check)

    @strawberry.field(description="When its last check succeeded; null: never.")
    def last_success(self) -> str | None:
        return _moment(self.watch.last_success)

    @strawberry.field(description="When the index served was fetched: its last change seen.")
    def last_change(self) -> str | None:
        return _moment(self.watch.last_change)

    @strawberry.field(description="When it is checked next; null when refreshing is off.")
    def next_check(self) -> str | None:
        return _moment(self.watch.next_check)

    @strawberry.field(description="Seconds since the index served was fetched.")
    def age_seconds(self) -> float | None:
        return round(time.time() - self.watch.last_change, 3) if self.watch.last_change else None

    @strawberry.field(
        description="Whether its last check failed, or the load of its new index was "
        "refused: the last good data is served, and `error` says why."
    )
    def stale(self) -> bool:
        return self.watch.stale

    @strawberry.field(
        description="What failed at the last check, or why its new index is not served; "
        "null when neither."
    )
    def error(self, info: Info) -> str | None:
        return shown_text(info, self.watch.problem) if self.watch.problem else None

    @strawberry.field(description="Checks made since the server started.")
    def checks(self) -> int:
        return self.watch.checks

    @strawberry.field(description="Checks that failed since the server started.")
    def failures(self) -> int:
        return self.watch.failures


# A Mirror's objects are the graph's MirrorInfo themselves.
@strawberry.type(description="A Spack build cache (a mirror) that specs were loaded from.")
class Mirror(Node):
    name: str = strawberry.field(
        description="Unique among the loaded mirrors: given by the user, or derived from its "
        "tag and stack."
    )
    layout: str = strawberry.field(
        description="The build-cache layout: 'v2' (build_cache/index.json), 'v3' "
        "(v3/manifests and blobs) or 'oci' (an OCI registry's index.spack image)."
    )

    signed: bool = strawberry.field(
        description="Whether its spec files are signed: clearsigned spec files or published "
        "keys (`spack buildcache keys --install --trust` before installing from it); unsigned "
        "mirrors need `spack install --no-check-signature` or a mirror added with `--unsigned`."
    )
    errors: int = strawberry.field(
        description="Errors met reading it (each is in `loadStatus.problems(under: location)`); "
        "a mirror with errors may hold fewer specs than it should."
    )
    warnings: int = strawberry.field(description="Warnings met reading it.")

    @classmethod
    def is_type_of(cls, obj: object, info: object) -> bool:
        return isinstance(obj, MirrorInfo | cls)

    @strawberry.field(
        description="Where it was read from: a URL (without credentials) as given; a path of "
        "the server's disk below the mirror's name (as given only to the admin, whose token is "
        "the request's bearer)."
    )
    def location(self: MirrorInfo, info: Info) -> str:
        return shown_path(info, self.location)

    @strawberry.field(
        description="Its root as a URL, as `spack mirror add NAME URL` wants it (the folder "
        "holding build_cache/ or v3/). A mirror on the server's disk: its file:// URL to the "
        "admin, its name to others (it is not theirs to add)."
    )
    def url(self: MirrorInfo, info: Info) -> str:
        if info.context.admin or is_url(self.location):
            return holdings.mirror_url(self)
        return self.name

    # Resolvers get the MirrorInfo as ``self``.
    @strawberry.field
    def id(self: MirrorInfo) -> strawberry.ID:
        return global_id("Mirror", self.name)

    @strawberry.field(
        description="For a remote mirror (a URL): when it was checked and changed, whether "
        "what is served is stale, and why; null for a local one."
    )
    def freshness(self: MirrorInfo, info: Info) -> MirrorFreshness | None:
        watch = holdings.mirror_watch(graph(info), self.name)
        return None if watch is None else MirrorFreshness(watch=watch)

    @strawberry.field(description="The tag whose stack holds this mirror's specs.")
    def tag(self: MirrorInfo) -> TagRef | None:
        return Named("tag", self.tag)

    @strawberry.field(description="The stack that holds this mirror's specs in its tag.")
    def stack(self: MirrorInfo) -> StackRef | None:
        return Named("stack", self.stack)

    @strawberry.field(description="The specs it holds (not those it only references).")
    def spec_count(self: MirrorInfo, info: Info) -> int:
        return holdings.mirror_holding(graph(info), self.name).spec_count

    @strawberry.field(
        metadata=cost(walks=True), description="Sum of the known tarball sizes, in bytes."
    )
    def total_bytes(self: MirrorInfo, info: Info) -> float:
        return holdings.mirror_holding(graph(info), self.name).total_bytes

    @strawberry.field(description="The specs it holds, in spec order.")
    def specs(
        self: MirrorInfo,
        info: Info,
        filter: SpecFilter | None = None,
        first: int | None = 50,
        after: str | None = None,
        order_by: Annotated[list[SpecOrder] | None, strawberry.argument(ORDER_BY)] = None,
    ) -> SpecConnection:
        query = spec_query(filter, order_by).narrowed(mirror=self.name)
        return spec_connection(info, query, first, after)


def find_mirror(info: Info, name: str) -> Mirror | None:
    return graph(info).mirrors.get(name)


@strawberry.type
class MirrorQueries:
    @strawberry.field(
        metadata=cost(items=50),
        description="Every loaded mirror, ordered by name; with a tag, the mirrors of that tag.",
    )
    def mirrors(self, info: Info, tag: str | None = None) -> list[Mirror]:
        cg = graph(info)
        return [cg.mirrors[name] for name in holdings.mirror_names(cg, tag)]

    @strawberry.field(description="One mirror by name; null when none has it.")
    def mirror(self, info: Info, name: str) -> Mirror | None:
        return find_mirror(info, name)
