"""The change log on the web: Atom feeds of what each refresh changed, and its metrics.

``/feeds/changes.atom`` lists the newest events of every mirror, ``/feeds/package/NAME.atom``
those naming a spec of one package, so a maintainer can watch a package in any feed reader.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict
from datetime import UTC, datetime
from xml.sax.saxutils import escape, quoteattr

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import CollectorRegistry
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from cachegraph.graph.changes import (
    Change,
    ChangedSpec,
    ChangeLog,
    FellBehind,
    Follower,
    select,
)

from .state import State

#: entries a feed shows: the newest events (a reader keeps what it saw)
FEED_ENTRIES = 100
ATOM = "application/atom+xml; charset=utf-8"
#: what a package name may be (Spack's: lower-case letters, digits, '-' and '_')
_PACKAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,199}")


def routes(state: State, per_client: int = 4) -> list[Route]:
    """The feeds' routes, reading the change log of the data being served."""

    async def all_changes(request: Request) -> Response:
        return _feed(request, state, None)

    async def package_changes(request: Request) -> Response:
        name = request.path_params["name"]
        if not _PACKAGE.fullmatch(name):
            return Response(f"not a package name: {name[:100]!r}\n", 404, media_type="text/plain")
        return _feed(request, state, name)

    streams = Streams(state, per_client)
    return [
        Route("/feeds/changes.atom", all_changes),
        Route("/feeds/package/{name}.atom", package_changes),
        Route("/changes/stream", streams.stream),
    ]


class Streams:
    """``/changes/stream``: each new event as a Server-Sent Event (``event: change``, its
    JSON as ``data``), for clients that cannot hold a WebSocket. A client address holds at
    most ``per_client`` streams and sockets (``--followers-per-client``; more: 429); a
    reader that lets more than ``graph.changes.FOLLOWER_BYTES`` of events wait is sent
    ``event: cut`` and closed."""

    def __init__(self, state: State, per_client: int) -> None:
        self.state, self.per_client = state, per_client
        self.open: Counter[str] = Counter()

    async def stream(self, request: Request) -> Response:
        changes = self.state.sources.changes
        client = request.client.host if request.client else ""
        if changes is None:
            return JSONResponse({"errors": [{"message": "no change log is kept"}]}, 404)
        if self.open[client] >= self.per_client:
            message = f"at most {self.per_client} change followers per client"
            return JSONResponse({"errors": [{"message": message}]}, 429)
        self.open[client] += 1
        follower = Follower(changes)

        async def events():
            try:
                yield b": changes of the served mirrors, one event each\n\n"
                with follower:
                    async for event in follower.events():
                        data = json.dumps(asdict(event), separators=(",", ":"))
                        yield f"id: {event.id}\nevent: change\ndata: {data}\n\n".encode()
            except FellBehind:
                yield b"event: cut\ndata: the reader fell more than its buffer behind\n\n"
            finally:
                self.open[client] -= 1
                if not self.open[client]:  # a key per address streaming now, never more
                    del self.open[client]

        return StreamingResponse(
            events(), media_type="text/event-stream", headers={"cache-control": "no-store"}
        )


def _feed(request: Request, state: State, package: str | None) -> Response:
    changes = state.sources.changes
    events = [] if changes is None else select(changes.snapshot(), package=package)
    shown = events[-FEED_ENTRIES:][::-1]  # newest first
    return Response(atom(str(request.url), package, shown), media_type=ATOM)


def _time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def title(event: Change) -> str:
    """An entry's title: the mirror and its counts."""
    return (
        f"{event.mirror}: {len(event.added)} added, {len(event.removed)} removed, "
        f"{len(event.replaced)} replaced"
    )


def _entry_id(event: Change) -> str:
    # the same event the same id in every restart, whatever its place in the log
    key = f"{event.mirror}|{event.old_index}|{event.new_index}|{event.at!r}"
    return f"urn:cachegraph:change:{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def _items(specs: Iterable[ChangedSpec]) -> str:
    return "".join(f"<li><code>{escape(s.spec_string)}</code> {escape(s.hash)}</li>" for s in specs)


def _content(event: Change) -> str:
    parts = [f"<p>index {escape(event.old_index[:16])} → {escape(event.new_index[:16])}"
             f"{' (found at start)' if event.at_start else ''}</p>"]  # fmt: skip
    for what, specs in (("Added", event.added), ("Removed", event.removed)):
        if specs:
            parts.append(f"<h3>{what}</h3><ul>{_items(specs)}</ul>")
    if event.replaced:
        rows = "".join(
            f"<li><code>{escape(r.new.spec_string)}</code> {escape(r.new.hash)} "
            f"(was <code>{escape(r.old.spec_string)}</code> {escape(r.old.hash)})</li>"
            for r in event.replaced
        )
        parts.append(f"<h3>Replaced</h3><ul>{rows}</ul>")
    return "".join(parts)


def atom(self_url: str, package: str | None, events: list[Change]) -> str:
    """An Atom 1.0 document (RFC 4287) of these events, newest first."""
    name = "changes" if package is None else f"changes of {package}"
    updated = _time(events[0].at) if events else "1970-01-01T00:00:00Z"
    feed_id = "urn:cachegraph:changes" + ("" if package is None else f":package:{package}")
    entries = "".join(
        "<entry>"
        f"<id>{_entry_id(e)}</id><title>{escape(title(e))}</title>"
        f"<updated>{_time(e.at)}</updated>"
        f"<category term={quoteattr(e.tag)} label={quoteattr('tag ' + e.tag)}/>"
        f'<content type="html">{escape(_content(e))}</content>'
        "</entry>"
        for e in events
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<feed xmlns="http://www.w3.org/2005/Atom">'
        f"<id>{escape(feed_id)}</id><title>Spack Cache Graph: {escape(name)}</title>"
        f"<updated>{updated}</updated>"
        f'<link rel="self" type="application/atom+xml" href={quoteattr(self_url)}/>'
        "<author><name>Spack Cache Graph</name></author>"
        f"{entries}</feed>\n"
    )


class ChangeLogMetrics:
    """The change log's bytes against its budget, its events and what it dropped."""

    def __init__(self, state: State) -> None:
        self.state = state

    def collect(self) -> list:
        changes: ChangeLog | None = self.state.sources.changes
        held = GaugeMetricFamily(
            "cachegraph_change_log_bytes", "bytes the change log holds (its lines)"
        )
        budget = GaugeMetricFamily(
            "cachegraph_change_log_budget_bytes",
            "bytes the change log may hold (--change-log-bytes); the oldest events go first",
        )
        events = GaugeMetricFamily("cachegraph_change_log_events", "events the change log holds")
        dropped = CounterMetricFamily(
            "cachegraph_change_log_dropped_events", "events dropped to stay within the budget"
        )
        if changes is not None:
            held.add_metric([], changes.bytes)
            budget.add_metric([], changes.budget)
            events.add_metric([], len(changes.events))
            dropped.add_metric([], changes.dropped)
        return [held, budget, events, dropped]


def install(
    routes_list: list, registry: CollectorRegistry, state: State, per_client: int = 4
) -> None:
    """Add the feeds to an app's routes and the change log's metrics to its registry."""
    routes_list.extend(routes(state, per_client))
    registry.register(ChangeLogMetrics(state))
