"""What the commands print: ``find`` (specs grouped as ``spack find -l`` groups them),
``coverage`` (an environment's hits and misses) and ``diff`` (two specs side by side).

``find``: as Spack 1.1's ``spack buildcache list``, each group headed with the
architecture and the compilers (``%c,cxx=gcc@13.2.0``; ``no compilers`` before Spack
1.0), then ``name@version`` (with ``-l`` the hash prefix first, with ``-v`` the
variants after). ``--json`` of each command gives the records themselves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import groupby

from cachegraph.graph.attributes import ATTRIBUTES
from cachegraph.graph.questions.coverage import Coverage, Entry, dependents_in
from cachegraph.graph.questions.dependencies import dependency_edges
from cachegraph.graph.questions.likeness import Difference, Nearness
from cachegraph.graph.sources.lockfiles import Environment
from cachegraph.graph.spack.names import LEGACY_COMPILERS, version_key
from cachegraph.graph.store.records import SpecRecord
from cachegraph.graph.store.view import CacheGraph
from cachegraph.graph.words import counted

WIDTH = 64


def _arch(spec: SpecRecord) -> str:
    return f"{spec.platform}-{spec.os}-{spec.target}"


#: Spack's ``BUILTIN_TO_LEGACY_COMPILER``: how its output names these compiler packages
LEGACY_NAMES = {package: old for old, package in LEGACY_COMPILERS.items()}
LANGUAGES = frozenset({"c", "cxx", "fortran"})
#: compiler flags: Spack keeps them apart from variants (``--show-flags`` prints them)
FLAGS = frozenset({"cflags", "cppflags", "cxxflags", "fflags", "ldflags", "ldlibs"})
_NO_QUOTES_NEEDED = re.compile(r"^[a-zA-Z0-9,/_.\-\[\]]+$")


def compilers(G: CacheGraph, spec: SpecRecord) -> str:
    """What Spack 1.1 heads a spec's group with (``Spec.compilers``): each direct dependency
    providing c, cxx or fortran as ``%c,cxx=gcc@13.2.0``, by name; ``no compilers`` for a
    spec with none (every spec older than Spack 1.0). A spec known only from a cache page,
    which lists no dependencies, shows the compiler the page names.

    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> [compilers(G, s) for s in G.all_specs()]
    ['no compilers', 'gcc@12.3.0', '%c,cxx=gcc@12.3.0', 'gcc@12.3.0', '%c,cxx=gcc@12.3.0']
    """
    parts = sorted(
        (child.package, f"%{','.join(sorted(virtuals))}="
         f"{LEGACY_NAMES.get(child.package, child.package)}@{child.version}")
        for child, _, virtuals in dependency_edges(G, spec.hash) if virtuals & LANGUAGES
    )  # fmt: skip
    if parts:
        return " ".join(text for _, text in parts)
    if spec.from_page and spec.compiler and not spec.mirrors:
        return spec.compiler
    return "no compilers"


def spack_variants(variants: Iterable[str]) -> str:
    """Variants as Spack 1.1 prints a concrete spec's (``VariantMap.__str__``): booleans by name,
    then each other by name after a space; a value list ``name:=a,b``, quoted when it needs
    it (``spec_parser.quote_if_needed``); compiler flags left out.

    >>> spack_variants(["languages=c,c++,fortran", "build_system=generic", "~nvptx", "+bootstrap",
    ...                 'cflags="-O3"'])
    "+bootstrap~nvptx build_system=generic languages:='c,c++,fortran'"
    """
    bools, others = [], []
    for variant in variants:
        if variant[:1] in ("+", "~"):
            bools.append((variant[1:], variant))
            continue
        name, _, value = variant.partition("=")
        name = name.rstrip(":")
        if name in FLAGS:
            continue
        multi = ":" if "," in value or variant.partition("=")[0].endswith(":") else ""
        if not _NO_QUOTES_NEEDED.match(value):
            value = json.dumps(value) if "'" in value else f"'{value}'"
        others.append((name, f"{name}{multi}={value}"))
    return "".join(v for _, v in sorted(bools)) + "".join(f" {v}" for _, v in sorted(others))


def listing(
    specs: Iterable[SpecRecord],
    long: bool = False,
    variants: bool = False,
    heading: Callable[[SpecRecord], str] | None = None,
    tty: bool = True,
) -> str:
    """The text Spack 1.1's ``spack buildcache list`` (``display_specs``) prints for these
    specs: groups by architecture and ``heading`` (the compilers), each under a 64-column
    ``tty.hline``; ``name@version``, with ``-l`` the hash prefix first, with ``-v`` the
    variants after. The count comes first only on a terminal, as Spack's ``tty.msg``.

    >>> from cachegraph.graph.store.records import SpecRecord
    >>> def spec(h, name, compiler):
    ...     return SpecRecord(hash=h * 32, package=name, version="1.0", versions=("1.0",),
    ...         compiler=compiler, os="rhel8", platform="linux", target="zen2", variants=("+pic",))
    >>> print(listing([spec("b", "zlib", "%c=gcc@12.1.0"), spec("a", "bzip2", "%c=gcc@12.1.0"),
    ...     spec("c", "py-six", None)], long=True, variants=True,
    ...     heading=lambda s: s.compiler or "no compilers"))
    ==> 3 cached builds.
    -- linux-rhel8-zen2 / no compilers ------------------------------
    ccccccc py-six@1.0+pic
    <BLANKLINE>
    -- linux-rhel8-zen2 / %c=gcc@12.1.0 -----------------------------
    aaaaaaa bzip2@1.0+pic
    bbbbbbb zlib@1.0+pic
    """
    heading = heading or (lambda s: s.compiler or "no compilers")
    keyed = [(s, heading(s)) for s in specs]
    # iter_groups sorts by str((architecture, " " + compilers)): "no compilers" (a blank) first
    keyed.sort(key=lambda sh: (sh[0].platform, sh[0].os, sh[0].target,
                               "" if sh[1] == "no compilers" else sh[1], sh[0].package,
                               version_key(sh[0].version), sh[0].hash))  # fmt: skip
    lines = [f"==> {counted(len(keyed), 'cached build')}."] if tty else []
    groups = groupby(keyed, key=lambda sh: (_arch(sh[0]), sh[1]))
    for i, ((arch, compiler), group) in enumerate(groups):
        if i:
            lines.append("")
        lines.append(f"-- {arch} / {compiler} ".ljust(WIDTH + 1, "-"))
        for s, _ in group:
            prefix = f"{s.hash[:7]} " if long else ""
            lines.append(
                f"{prefix}{s.package}@{s.version}{spack_variants(s.variants) if variants else ''}"
            )
    return "\n".join(lines)


#: the JSON keys that are not the attribute's name
_JSON_NAMES = {"package": "name"}


def record(spec: SpecRecord) -> dict:
    """One spec as ``--json`` prints it: its hash, its attributes (graph.attributes), the
    one-valued ones first, then where it is."""
    return {
        "hash": spec.hash,
        **{
            _JSON_NAMES.get(a.name, a.name): getattr(spec, a.name) for a in ATTRIBUTES if not a.many
        },
        **{a.name: list(getattr(spec, a.name)) for a in ATTRIBUTES if a.many},
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


def _download(found: Coverage) -> str:
    """What the hits weigh: a size unknown is said, never counted as 0 bytes."""
    unknown = found.unknown_sizes
    if not found.hits:
        return "nothing to download"
    if unknown == len(found.hits):
        return "download size unknown (no source gives the sizes of these specs)"
    known = f"{_bytes(found.hit_bytes)} to download"
    return known + (f", and {unknown:,} of unknown size" if unknown else "")


def terminal_text(text: str) -> str:
    r"""``text`` with control characters other than newlines and tabs shown as escapes, so
    that data read from files (a package name, a lockfile's strings) cannot drive the
    terminal it is printed on.

    >>> print(terminal_text("zlib\x1b[2J ok\u009b"))
    zlib\x1b[2J ok\x9b
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Weather:
    """An environment's coverage as ``guix weather`` reports a channel's: the share cached,
    what it downloads, externals apart, and the misses ranked by what depends on them."""

    hits: list[Entry]
    #: most depended on first
    misses: list[Entry]
    externals: list[Entry]
    dependents: dict[str, int]
    #: what the hits weigh, or that it is unknown (never 0 bytes for a size unknown)
    download: str

    @property
    def counted(self) -> int:
        return len(self.hits) + len(self.misses)

    def summary(self) -> str:
        """One line: ``43.4% cached: 2,658 of 6,128 specs; 7.0 GB to download; 14 externals
        apart``."""
        share = f"{100 * len(self.hits) / self.counted:.1f}%" if self.counted else "0%"
        of = counted(self.counted, "spec")
        line = f"{share} cached: {len(self.hits):,} of {of}; {self.download}"
        if self.externals:
            line += (
                f"; {counted(len(self.externals), 'external')} apart (never fetched from a cache)"
            )
        return line


def weather(found: Coverage, env: Environment) -> Weather:
    """The coverage of ``env`` with its externals apart and its misses ranked."""
    dependents = dependents_in(env)
    misses = sorted(
        found.misses, key=lambda e: (-dependents.get(e.hash, 0), _short(e.wanted), e.hash)
    )
    return Weather(found.hits, misses, found.externals, dependents, _download(found))


def coverage_table(found: Coverage, nearest: dict[str, list[Nearness]], env: Environment) -> str:
    """An environment's coverage as ``guix weather`` words it: the summary line, the misses
    (most depended on first: why, and the nearest), the hits (where), the externals apart.

    ``nearest``: hash -> the nearest cached specs of each miss.
    """
    report = weather(found, env)
    by_hash = {e.hash: e for e in found.entries}
    lines = [
        report.summary(),
        "roots cached with their whole DAG: "
        + (", ".join(f"{_short(by_hash[r].wanted)}/{r[:7]}" for r in found.cached_roots) or "none"),
    ]
    # The spec column as wide as its longest name (32 at least): a long one shifts the
    # columns after it for every row, never out of line for its own.
    name = {e.hash: _short(e.wanted) or "?" for e in (*report.misses, *report.hits)}
    width = max([32, *map(len, name.values())])
    if report.misses:
        lines += ["", f"missing ({len(report.misses):,}), the most depended on first:",
                  f"{'hash':<8} {'spec':<{width}} {'needed by':>9}  why"]  # fmt: skip
    for e in report.misses:
        near = nearest.get(e.hash) or []
        hint = "; nearest: " + ", ".join(
            f"{n.spec.hash[:7]} {_short(n.spec)} ({n.distance:g})" for n in near
        ) if near else ""  # fmt: skip
        needed = report.dependents.get(e.hash, 0)
        lines.append(f"{e.hash[:7]:<8} {name[e.hash]:<{width}} {needed:>9}  {e.reason}{hint}")
    if report.hits:
        lines += ["", f"cached ({len(report.hits):,}):", f"{'hash':<8} {'spec':<{width}} where"]
    for e in report.hits:
        where = ", ".join(sorted(e.spec.mirrors)) or ", ".join(
            f"{tag}/{s}" for tag, stacks in sorted(e.spec.stacks.items()) for s in sorted(stacks)
        )
        size = f" ({_bytes(e.spec.size)})" if e.spec.size is not None else " (size unknown)"
        lines.append(f"{e.hash[:7]:<8} {name[e.hash]:<{width}} {where}{size}")
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
