"""What the server loaded, for an admin: the load report with its problems paged."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial

import strawberry
from cachegraph.graph.questions import status
from strawberry.types import Info

from .context import graph, shown_path, shown_text
from .cost import PAGE, cost


@strawberry.type(description="A file or record the load could not read, or read with a doubt.")
class LoadProblem:
    path: str
    message: str
    line: int | None = strawberry.field(description="The line, where the parser gives one.")
    severity: str = strawberry.field(description="'error' or 'warning'.")


@strawberry.type
class LoadProblemPage:
    total_count: int
    nodes: list[LoadProblem] = strawberry.field(metadata=cost(items=PAGE))


@strawberry.type(description="How the served data was loaded.")
class LoadStatus:
    summary: str = strawberry.field(description="The load report in one line.")
    seconds: float = strawberry.field(description="How long the load took.")
    finished: str = strawberry.field(description="When it finished (ISO 8601, UTC).")
    pages: int
    spec_files: int
    indices: int
    mirrors: int
    records: int
    specs: int
    unresolved: int = strawberry.field(description="Specs named by a page whose file is absent.")
    error_count: int
    warning_count: int
    paths: list[str] = strawberry.field(
        metadata=cost(items=10),
        description="The pages, spec files and folders read (as given to the admin, by name "
        "to others: see `Mirror.location`).",
    )
    bundled: bool = strawberry.field(
        description="Whether this is the bundled data, served because no data was given."
    )
    snapshot: str | None = strawberry.field(
        description="The snapshot file the server writes and restarts from; null when none."
    )
    from_snapshot: bool = strawberry.field(
        description="Whether the data was read from the snapshot (no data file had changed)."
    )
    report: strawberry.Private[object]
    #: a path and a message as the client may see them (``context.shown_path``)
    shown: strawberry.Private[Callable[[str], str]]
    shown_text: strawberry.Private[Callable[[str], str]]

    @strawberry.field(
        description="The load's problems in their order (paged by offset): of one severity, or "
        "under one path (a mirror's location), when given.",
    )
    def problems(
        self,
        severity: str | None = None,
        under: str | None = None,
        first: int = 50,
        offset: int = 0,
    ) -> LoadProblemPage:
        found = status.load_problems(self.report, severity, under, shown=self.shown)
        first, offset = max(0, min(first, 1000)), max(0, offset)
        page = [LoadProblem(path=self.shown(p.path), message=self.shown_text(p.message),
                            line=p.line, severity=p.severity)
                for p in found[offset : offset + first]]  # fmt: skip
        return LoadProblemPage(total_count=len(found), nodes=page)


@strawberry.type
class StatusQueries:
    @strawberry.field(
        description="How the served data was loaded: the report, its problems and the snapshot "
        "(null for a graph the server did not load itself)."
    )
    def load_status(self, info: Info) -> LoadStatus | None:
        loaded = status.load_status(graph(info))
        if loaded is None:
            return None
        r = loaded.report
        errors = len(r.errors)
        return LoadStatus(
            summary=r.summary(), seconds=r.seconds,
            finished=datetime.fromtimestamp(loaded.finished, UTC).isoformat(timespec="seconds"),
            pages=r.pages, spec_files=r.spec_files, indices=r.indices, mirrors=r.mirrors,
            records=r.records, specs=r.specs, unresolved=r.unresolved, error_count=errors,
            warning_count=len(r.problems) - errors,
            paths=[shown_path(info, p) for p in loaded.paths], bundled=loaded.bundled,
            snapshot=shown_path(info, loaded.snapshot) if loaded.snapshot else None,
            from_snapshot=loaded.from_snapshot, report=r,
            shown=partial(shown_path, info), shown_text=partial(shown_text, info),
        )  # fmt: skip
