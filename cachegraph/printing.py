"""What the commands print: ``find`` (specs grouped as ``spack find -l`` groups them),
``coverage`` (an environment's hits and misses) and ``diff`` (two specs side by side).

``find``: Spack heads each group with the architecture and the compiler, then lists
``name@version`` (with ``-l`` the hash prefix first, with ``-v`` the variants
after). ``--json`` of each command gives the records themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import groupby

from cachegraph.graph.attributes import variant_text
from cachegraph.graph.questions.coverage import Coverage
from cachegraph.graph.questions.likeness import Difference, Nearness
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


def _download(found: Coverage) -> str:
    """What the hits weigh: a size unknown is said, never counted as 0 bytes."""
    unknown = found.unknown_sizes
    if not found.hits:
        return "nothing to download"
    if unknown == len(found.hits):
        return "download size unknown (no source gives the sizes of these specs)"
    known = f"{_bytes(found.hit_bytes)} to download"
    return known + (f", and {unknown} of unknown size" if unknown else "")


def terminal_text(text: str) -> str:
    r"""``text`` with control characters other than newlines and tabs shown as escapes, so
    that data read from files (a package name, a lockfile's strings) cannot drive the
    terminal it is printed on.

    >>> print(terminal_text("zlib\x1b[2J ok\u009b"))
    zlib\x1b[2J ok\x9b
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def coverage_table(found: Coverage, nearest: dict[str, list[Nearness]]) -> str:
    """An environment's specs, one line each: hit (where) or miss (why, and the nearest).

    ``nearest``: hash -> the nearest cached specs of each miss.
    """
    hits = len(found.hits)
    total = len(found.entries)
    by_hash = {e.hash: e for e in found.entries}
    share = f" ({hits / total:.0%})" if total else ""
    lines = [
        f"{total} concrete specs: {hits} cached{share}, {total - hits} missing; {_download(found)}",
        "roots cached with their whole DAG: "
        + (", ".join(f"{_short(by_hash[r].wanted)}/{r[:7]}" for r in found.cached_roots) or "none"),
        "",
        f"{'hash':<8} {'spec':<32} {'':<4} where / why",
    ]
    for e in found.entries:
        name = _short(e.wanted) or "?"
        if e.spec is not None:
            where = ", ".join(sorted(e.spec.mirrors)) or ", ".join(
                f"{tag}/{s}"
                for tag, stacks in sorted(e.spec.stacks.items())
                for s in sorted(stacks)
            )
            size = f" ({_bytes(e.spec.size)})" if e.spec.size is not None else " (size unknown)"
            lines.append(f"{e.hash[:7]:<8} {name:<32} {'hit':<4} {where}{size}")
            continue
        near = nearest.get(e.hash) or []
        hint = "; nearest: " + ", ".join(
            f"{n.spec.hash[:7]} {_short(n.spec)} ({n.distance:g})" for n in near
        ) if near else ""  # fmt: skip
        lines.append(f"{e.hash[:7]:<8} {name:<32} {'miss':<4} {e.reason}{hint}")
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
