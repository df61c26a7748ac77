"""What each refresh or reload changed in each mirror: ``changes``, from ``graph.changes``."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from cachegraph.graph import changes as log
from cachegraph.graph.errors import BadArgument
from strawberry.types import Info

from .context import follow_served, graph, warn
from .cost import cost
from .pagination import Connection, Slice

if TYPE_CHECKING:
    from .specs import Spec

SpecRef = Annotated["Spec", strawberry.lazy(".specs")]


def moment(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def seconds(when: datetime | None, name: str) -> float | None:
    """A DateTime argument as seconds since the epoch (one without a zone is UTC)."""
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    try:
        return when.timestamp()
    except (OverflowError, ValueError, OSError):
        raise BadArgument(
            f"'{name}': {when.isoformat()} is not a time this server can read"
        ) from None


@strawberry.type(
    description="A spec a change names: its hash and spec string, which stay once it is gone."
)
class ChangedSpec:
    hash: str
    spec_string: str

    @strawberry.field(description="The spec while it is loaded; null once it is gone.")
    def spec(self, info: Info) -> SpecRef | None:
        return graph(info).spec(self.hash)


@strawberry.type(description="A spec rebuilt: the same package, version and variants, new hash.")
class SpecReplacement:
    old: ChangedSpec
    new: ChangedSpec


def _spec(s: log.ChangedSpec) -> ChangedSpec:
    return ChangedSpec(hash=s.hash, spec_string=s.spec_string)


@strawberry.type(
    description="One mirror's index changed: the specs it added, removed and replaced, found "
    "by a refresh, a reload or a start (atStart: while the server was down)."
)
class ChangeEvent:
    event: strawberry.Private[log.Change]

    @strawberry.field(description="Its place in the change log: later events, higher ids.")
    def id(self) -> strawberry.ID:
        return strawberry.ID(str(self.event.id))

    @strawberry.field(description="When the change was found.")
    def at(self) -> datetime:
        return moment(self.event.at)

    @strawberry.field
    def mirror(self) -> str:
        return self.event.mirror

    @strawberry.field
    def tag(self) -> str:
        return self.event.tag

    @strawberry.field
    def stack(self) -> str:
        return self.event.stack

    @strawberry.field(description="The index's hash before (as Spack compares it).")
    def old_index(self) -> str:
        return self.event.old_index

    @strawberry.field(description="The index's hash after.")
    def new_index(self) -> str:
        return self.event.new_index

    @strawberry.field(description="Found by a start: the index changed while it was down.")
    def at_start(self) -> bool:
        return self.event.at_start

    @strawberry.field
    def added_count(self) -> int:
        return len(self.event.added)

    @strawberry.field
    def removed_count(self) -> int:
        return len(self.event.removed)

    @strawberry.field
    def replaced_count(self) -> int:
        return len(self.event.replaced)

    @strawberry.field(metadata=cost(items=100), description="The specs added, by hash.")
    def added(self) -> list[ChangedSpec]:
        return [_spec(s) for s in self.event.added]

    @strawberry.field(metadata=cost(items=100), description="The specs removed, by hash.")
    def removed(self) -> list[ChangedSpec]:
        return [_spec(s) for s in self.event.removed]

    @strawberry.field(metadata=cost(items=100), description="The specs rebuilt, by new hash.")
    def replaced(self) -> list[SpecReplacement]:
        return [SpecReplacement(old=_spec(r.old), new=_spec(r.new)) for r in self.event.replaced]


ChangeConnection = Connection[ChangeEvent]


def events(info: Info) -> list[log.Change]:
    found = log.change_log(graph(info))
    return [] if found is None else found.snapshot()


def change_connection(chosen: list[log.Change], first: int | None, after: str | None):
    def walk(key: str | None):
        start = 0 if key is None else int(key)
        return (e for e in chosen if e.id > start)

    sliced = Slice("change", walk, lambda e: str(e.id), lambda: len(chosen), first, after)
    if sliced.after is not None and not sliced.after.isdigit():
        raise BadArgument("'after' is not a cursor of a change list this server issued")
    return ChangeConnection(slice=sliced, wrap=lambda e: ChangeEvent(event=e))


@strawberry.type
class ChangeQueries:
    @strawberry.field(
        metadata=cost(items=50),
        description="What each refresh, reload or start changed in each mirror's index, oldest "
        "first, within the history kept (--change-log-bytes): from 'since' (included) to "
        "'until' (excluded), of one mirror, tag or stack, naming a spec of 'package'.",
    )
    def changes(
        self,
        info: Info,
        since: datetime | None = None,
        until: datetime | None = None,
        mirror: str | None = None,
        stack: str | None = None,
        tag: str | None = None,
        package: str | None = None,
        first: int | None = None,
        after: str | None = None,
    ) -> ChangeConnection:
        chosen = log.select(events(info), seconds(since, "since"), seconds(until, "until"),
                            mirror, tag, stack, package)  # fmt: skip
        return change_connection(chosen, first, after)


@strawberry.type
class ChangeSubscriptions:
    @strawberry.subscription(
        description="Each new change as it is found, of one mirror, tag or stack, naming a spec "
        "of 'package' (over WebSocket, graphql-transport-ws, at /graphql). A subscriber that "
        "lets more than a megabyte of changes wait is cut off with an error; what it missed "
        "is in `changes(since:)`."
    )
    async def changes(
        self,
        info: Info,
        mirror: str | None = None,
        stack: str | None = None,
        tag: str | None = None,
        package: str | None = None,
    ) -> AsyncGenerator[ChangeEvent, None]:
        kept = log.change_log(graph(info))
        if kept is None:
            raise BadArgument("this server keeps no change log: there is nothing to follow")
        with log.Follower(kept) as follower:
            async for event in follower.events():
                if log.select([event], None, None, mirror, tag, stack, package):
                    follow_served(info)  # its new specs are in the graph that changed
                    yield ChangeEvent(event=event)


def coverage_then(info: Info, found, env, at: datetime, tag: str | None):
    """A coverage of now as it stood at ``at``; a warning when ``at`` is before the history
    kept (the events dropped by the log's budget are not undone)."""
    kept = log.change_log(graph(info))
    when = seconds(at, "at")
    chosen = [] if kept is None else kept.snapshot()
    if kept is None or (kept.dropped and (not chosen or when < chosen[0].at)):
        warn(info, "'at' is before the history of changes kept (--change-log-bytes): answered "
                   "as of the oldest change kept")  # fmt: skip
    return log.coverage_at(graph(info), found, env, chosen, when, tag)


def spec_moments(info: Info, hash: str) -> tuple[datetime | None, datetime | None]:
    """When the change log saw a spec come first and go last."""
    came, went = log.moments(events(info), hash)
    return moment(came), moment(went)
