"""What the commands print: ``find`` (specs grouped as ``spack find -l`` groups them),
``coverage`` (an environment's hits and misses) and ``diff`` (two specs side by side).

``find``: Spack heads each group with the architecture and the compiler, then lists
``name@version`` (with ``-l`` the hash prefix first, with ``-v`` the variants
after). ``--json`` of each command gives the records themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby

from cachegraph.graph.attributes import variant_text
from cachegraph.graph.questions.coverage import Coverage, Entry
from cachegraph.graph.questions.likeness import Difference, Nearness
from cachegraph.graph.sources.lockfiles import Environment
from cachegraph.graph.spack.names import version_key
from cachegraph.graph.store.records import SpecRecord

WIDTH = 64


def _arch(spec: SpecRecord) -> str:
    return f"{spec.platform}-{spec.os}-{spec.target}"


def listing(specs: Iterable[SpecRecord], long: bool = False, variants: bool = False) -> str:
    """The text ``spack buildcache list`` / ``spack find`` would print for these specs.

    >>> from cachegraph.graph.store.records import SpecRecord
    >>> def spec(h, name, compiler):
    ...     return SpecRecord(hash=h * 32, package=name, version="1.0", versions=("1.0",),
    ...         compiler=compiler, os="rhel8", platform="linux", target="zen2", variants=("+pic",))
    >>> print(listing([spec("b", "zlib", "gcc@12.1.0"), spec("a", "bzip2", "gcc@12.1.0"),
    ...     spec("c", "py-six", None)], long=True, variants=True))
    ==> 3 cached builds.
    -- linux-rhel8-zen2 / gcc@12.1.0 -------------------------------
    aaaaaaa bzip2@1.0+pic
    bbbbbbb zlib@1.0+pic
    <BLANKLINE>
    -- linux-rhel8-zen2 / no compiler ------------------------------
    ccccccc py-six@1.0+pic
    """
    ordered = sorted(
        specs,
        key=lambda s: (_arch(s), s.compiler is None, s.compiler or "", s.package,
                       version_key(s.version), s.hash),
    )  # fmt: skip
    lines = [f"==> {len(ordered)} cached build{'' if len(ordered) == 1 else 's'}."]
    groups = groupby(ordered, key=lambda s: (_arch(s), s.compiler or "no compiler"))
    for i, ((arch, compiler), group) in enumerate(groups):
        if i:
            lines.append("")
        lines.append(f"-- {arch} / {compiler} ".ljust(WIDTH, "-"))
        for s in group:
            prefix = f"{s.hash[:7]} " if long else ""
            lines.append(
                f"{prefix}{s.package}@{s.version}{variant_text(s.variants) if variants else ''}"
            )
    return "\n".join(lines)


def record(spec: SpecRecord) -> dict:
    """One spec as ``--json`` prints it."""
    return {
        "hash": spec.hash,
        "name": spec.package,
        "version": spec.version,
        "compiler": spec.compiler,
        "platform": spec.platform,
        "os": spec.os,
        "target": spec.target,
        "variants": list(spec.variants),
        "size": spec.size,
        "mirrors": sorted(spec.mirrors),
        "stacks": {tag: sorted(stacks) for tag, stacks in sorted(spec.stacks.items())},
    }


def _short(spec: SpecRecord | None) -> str:
    return "" if spec is None else f"{spec.package}@{spec.version}"


def _bytes(size: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError  # pragma: no cover


def lockfile_externals(doc: dict, env: Environment) -> set[str]:
    """The DAG hashes of the environment's externals (``external`` in their node): specs a
    site has already, never fetched from a build cache, so counted apart.

    >>> doc = {"concrete_specs": {"a" * 32: {"name": "cmake", "external": {"path": "/usr"}},
    ...                           "b" * 32: {"name": "zlib"}}}
    >>> env = Environment(4, (), {"a" * 32: None, "b" * 32: None}, {})
    >>> sorted(h[0] for h in lockfile_externals(doc, env))
    ['a']
    """
    found = set()
    for key, node in (doc.get("concrete_specs") or {}).items():
        if isinstance(node, dict) and len(node) == 1 and "name" not in node:
            [node] = node.values()  # lockfile version 2: {name: body}
        if not isinstance(node, dict) or not node.get("external"):
            continue
        hash = node.get("hash") if env.version <= 3 and isinstance(node.get("hash"), str) else key
        if hash in env.specs:
            found.add(hash)
    return found


def dependents_in(env: Environment) -> dict[str, int]:
    """How many specs of the environment depend on each, directly or not: the misses that
    hold most of it back rank first.

    >>> env = Environment(4, ("a",), {"a": None, "b": None, "c": None},
    ...                   {"a": (("b", "b"),), "b": (("c", "c"),), "c": ()})
    >>> dependents_in(env)
    {'a': 0, 'b': 1, 'c': 2}
    """
    users: dict[str, list[str]] = {h: [] for h in env.specs}
    for hash, deps in env.dependencies.items():
        for _, dep in deps:
            if dep in users and dep != hash:
                users[dep].append(hash)
    counts = {}
    for hash in env.specs:
        seen: set[str] = set()
        todo = list(users[hash])
        while todo:
            user = todo.pop()
            if user not in seen:
                seen.add(user)
                todo.extend(users[user])
        counts[hash] = len(seen)
    return counts


@dataclass(frozen=True)
class Weather:
    """An environment's coverage as ``guix weather`` reports a channel's: the share cached,
    what it downloads, externals apart, and the misses ranked by what depends on them."""

    hits: list[Entry]
    #: most depended on first
    misses: list[Entry]
    externals: list[Entry]
    dependents: dict[str, int]
    hit_bytes: float

    @property
    def counted(self) -> int:
        return len(self.hits) + len(self.misses)

    def summary(self) -> str:
        """One line: ``43.4% cached: 2,658 of 6,128 specs; 7.0 GB to download; 14 externals
        apart``."""
        share = f"{100 * len(self.hits) / self.counted:.1f}%" if self.counted else "0%"
        line = (
            f"{share} cached: {len(self.hits):,} of {self.counted:,} specs; "
            f"{_bytes(self.hit_bytes)} to download"
        )
        if self.externals:
            line += f"; {len(self.externals):,} externals apart (never fetched from a cache)"
        return line


def weather(found: Coverage, env: Environment, externals: set[str]) -> Weather:
    """The coverage of ``env`` with its externals apart and its misses ranked."""
    dependents = dependents_in(env)
    apart = [e for e in found.entries if e.hash in externals]
    kept = [e for e in found.entries if e.hash not in externals]
    hits = [e for e in kept if e.spec is not None]
    misses = [e for e in kept if e.spec is None]
    misses.sort(key=lambda e: (-dependents.get(e.hash, 0), _short(e.wanted), e.hash))
    hit_bytes = float(sum(e.spec.size or 0 for e in hits))
    return Weather(hits, misses, apart, dependents, hit_bytes)


def coverage_table(
    found: Coverage, nearest: dict[str, list[Nearness]], env: Environment, externals: set[str]
) -> str:
    """An environment's coverage as ``guix weather`` words it: the summary line, the misses
    (most depended on first: why, and the nearest), the hits (where), the externals apart.

    ``nearest``: hash -> the nearest cached specs of each miss.
    """
    report = weather(found, env, externals)
    by_hash = {e.hash: e for e in found.entries}
    lines = [
        report.summary(),
        "roots cached with their whole DAG: "
        + (", ".join(f"{_short(by_hash[r].wanted)}/{r[:7]}" for r in found.cached_roots) or "none"),
    ]
    if report.misses:
        lines += ["", f"missing ({len(report.misses):,}), the most depended on first:",
                  f"{'hash':<8} {'spec':<32} {'needed by':>9}  why"]  # fmt: skip
    for e in report.misses:
        near = nearest.get(e.hash) or []
        hint = "; nearest: " + ", ".join(
            f"{n.spec.hash[:7]} {_short(n.spec)} ({n.distance:g})" for n in near
        ) if near else ""  # fmt: skip
        needed = report.dependents.get(e.hash, 0)
        name = _short(e.wanted) or "?"
        lines.append(f"{e.hash[:7]:<8} {name:<32} {needed:>9}  {e.reason}{hint}")
    if report.hits:
        lines += ["", f"cached ({len(report.hits):,}):", f"{'hash':<8} {'spec':<32} where"]
    for e in report.hits:
        where = ", ".join(sorted(e.spec.mirrors)) or ", ".join(
            f"{tag}/{s}" for tag, stacks in sorted(e.spec.stacks.items()) for s in sorted(stacks)
        )
        size = f" ({_bytes(e.spec.size)})" if e.spec.size else ""
        lines.append(f"{e.hash[:7]:<8} {_short(e.wanted) or '?':<32} {where}{size}")
    if report.externals:
        lines += ["", f"externals ({len(report.externals):,}), never fetched from a cache:"]
        lines.append(", ".join(f"{_short(e.wanted) or '?'}/{e.hash[:7]}" for e in report.externals))
    return "\n".join(lines)


def diff_table(a: SpecRecord, b: SpecRecord, differences: Iterable[Difference]) -> str:
    """Two specs' differences, a column each, as ``spack diff`` lists them."""
    rows = [(d.field, d.wanted or "-", d.cached or "-") for d in differences]
    left = f"{_short(a)}/{a.hash[:7]}"
    right = f"{_short(b)}/{b.hash[:7]}"
    width = max([len("field"), *(len(r[0]) for r in rows)])
    middle = max([len(left), *(len(r[1]) for r in rows)])
    lines = [f"{'field':<{width}}  {left:<{middle}}  {right}"]
    lines += [f"{f:<{width}}  {x:<{middle}}  {y}" for f, x, y in rows]
    if not rows:
        lines.append("(no differences: the same spec)")
    return "\n".join(lines)
