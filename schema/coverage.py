"""Is my environment cached: Coverage of a spack.lock, and the nearest cached specs."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import strawberry
from cachegraph.graph.errors import BadArgument
from cachegraph.graph.questions import coverage, likeness
from cachegraph.graph.questions.specs import spec_by_hash
from cachegraph.graph.sources import lockfiles
from cachegraph.graph.spack import constraints
from cachegraph.graph.store.records import SpecRecord
from cachegraph.graph.store.view import CacheGraph
from strawberry.scalars import JSON
from strawberry.types import Info

from . import changes
from .context import graph
from .cost import cost

if TYPE_CHECKING:
    from .specs import Spec

SpecRef = Annotated["Spec", strawberry.lazy(".specs")]


@strawberry.type(
    description="One attribute that differs: field is 'version', 'compiler', 'target', 'os', "
    "'platform', 'variant:NAME' or 'dependency:NAME'."
)
class Difference:
    field: str
    wanted: str | None
    cached: str | None

    @classmethod
    def of(cls, d: likeness.Difference) -> Difference:
        return cls(field=d.field, wanted=d.wanted, cached=d.cached)


@strawberry.type
class Nearness:
    found: strawberry.Private[likeness.Nearness]

    @strawberry.field
    def spec(self) -> SpecRef:
        return self.found.spec

    @strawberry.field(
        description="0 for an exact match; larger is further. The rule is documented in the README."
    )
    def distance(self) -> float:
        return self.found.distance

    @strawberry.field(metadata=cost(items=20))
    def differences(self) -> list[Difference]:
        return [Difference.of(d) for d in self.found.differences]


def nearness(found: list[likeness.Nearness]) -> list[Nearness]:
    return [Nearness(found=n) for n in found]


@strawberry.type
class CoverageEntry:
    entry: strawberry.Private[coverage.Entry]
    environment: strawberry.Private[lockfiles.Environment | None]
    tag: strawberry.Private[str | None]

    @strawberry.field
    def hash(self) -> str:
        return self.entry.hash

    @strawberry.field
    def name(self) -> str:
        wanted = self.entry.wanted
        return wanted.package if wanted is not None else ""

    @strawberry.field
    def version(self) -> str | None:
        return None if self.entry.wanted is None else self.entry.wanted.version

    @strawberry.field
    def hit(self) -> bool:
        return self.entry.spec is not None

    @strawberry.field(
        description="Marked external in the lockfile: installed outside Spack, never from a "
        "cache; neither a hit nor a miss."
    )
    def external(self) -> bool:
        return self.entry.external

    @strawberry.field(description="The cached spec, for a hit.")
    def spec(self) -> SpecRef | None:
        return self.entry.spec

    @strawberry.field(
        description="For a miss: why, in words (e.g. 'held only in tag v0.22.0', 'not in any "
        "loaded mirror')."
    )
    def reason(self) -> str | None:
        return self.entry.reason

    @strawberry.field(description="For a miss: the nearest cached specs of the same package.")
    def nearest(self, info: Info, first: int | None = 3) -> list[Nearness]:
        wanted = self.entry.wanted
        if self.entry.spec is not None or wanted is None:
            return []
        return nearness(
            likeness.nearest_to_spec(
                graph(info), wanted, self._dependency_versions(), _first(first, 3), self.tag
            )
        )

    def _dependency_versions(self) -> dict[str, str]:
        env = self.environment
        if env is None:
            return {}
        return {
            name: env.specs[h].version
            for name, h in env.dependencies.get(self.entry.hash, ())
            if h in env.specs
        }


@strawberry.type
class Coverage:
    found: strawberry.Private[coverage.Coverage]
    environment: strawberry.Private[lockfiles.Environment | None]
    tag: strawberry.Private[str | None]

    @strawberry.field(description="Concrete specs in the environment.")
    def total(self) -> int:
        return len(self.found.entries)

    @strawberry.field
    def hit_count(self) -> int:
        return len(self.found.hits)

    @strawberry.field(description="Concrete specs neither cached nor external.")
    def miss_count(self) -> int:
        return len(self.found.misses)

    @strawberry.field(
        description="Concrete specs the lockfile marks external: Spack never downloads one, "
        "so they count neither as hits nor as misses."
    )
    def external_count(self) -> int:
        return len(self.found.externals)

    @strawberry.field(description="Sum of the known sizes of the hits, in bytes.")
    def hit_bytes(self) -> float:
        return self.found.hit_bytes

    @strawberry.field(
        metadata=cost(items=1000),
        description="One per concrete spec of the environment, roots first, then in the "
        "lockfile's order.",
    )
    def entries(self) -> list[CoverageEntry]:
        return [CoverageEntry(entry=e, environment=self.environment, tag=self.tag)
                for e in self.found.entries]  # fmt: skip

    @strawberry.field(
        metadata=cost(items=100), description="Hashes of the roots whose whole DAG is cached."
    )
    def cached_roots(self) -> list[str]:
        return list(self.found.cached_roots)


@strawberry.type
class CoverageQueries:
    @strawberry.field(
        metadata=cost(walks=True),
        description="Which specs of an environment are in the cache: give a spack.lock's parsed "
        "JSON (lockfile versions 2-6) or a list of full hashes; optionally only count the given "
        "tag or stacks; with 'at', as the cache stood then, within the history the change log "
        "keeps (changes).",
    )
    def coverage(
        self,
        info: Info,
        lockfile: JSON | None = None,
        specs: list[str] | None = None,
        tag: str | None = None,
        stacks: list[str] | None = None,
        at: datetime | None = None,
    ) -> Coverage:
        cg = graph(info)
        if (lockfile is None) == (specs is None):
            raise BadArgument("give either 'lockfile' (a spack.lock's JSON) or 'specs' (hashes)")
        if lockfile is not None:
            env = lockfiles.read_lockfile(lockfile)
            found = coverage.coverage(cg, env, tag, stacks)
        else:
            env, found = None, coverage.hashes_coverage(cg, specs, tag, stacks)
        if at is not None:
            found = changes.coverage_then(info, found, env, at, tag)
        return Coverage(found=found, environment=env, tag=tag)

    @strawberry.field(
        metadata=cost(walks=True),
        description="Cached specs closest to a constraint string or to a hash that is not "
        "cached (or a cached one); best first.",
    )
    def nearest(
        self, info: Info, spec: str | None = None, hash: str | None = None, first: int | None = 5
    ) -> list[Nearness]:
        cg = graph(info)
        if (spec is None) == (hash is None):
            raise BadArgument("give either 'spec' (a constraint) or 'hash'")
        if spec is not None:
            found = likeness.nearest_to_constraint(cg, constraints.parse(spec), _first(first, 5))
            return nearness(found)
        wanted = _known(cg, hash)
        deps = likeness.direct_versions(cg, wanted)
        return nearness(likeness.nearest_to_spec(cg, wanted, deps, _first(first, 5)))


def _first(first: int | None, default: int) -> int:
    return default if first is None else first


def _known(cg: CacheGraph, hash: str) -> SpecRecord:
    found = spec_by_hash(cg, hash)
    if found is None:
        raise BadArgument(
            f"no loaded spec has the hash {hash.strip()[:40]!r}: for a spec the cache does not "
            "know, ask nearest(spec:) with its constraint, or coverage with its lockfile"
        )
    return found
