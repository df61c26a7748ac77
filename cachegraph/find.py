"""What ``cachegraph find`` prints: cached specs grouped as ``spack find -l`` groups them.

Spack heads each group with the architecture and the compiler, then lists
``name@version`` (with ``-l`` the hash prefix first, with ``-v`` the variants
after). ``--json`` gives the records themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby

from graph.model import SpecRecord
from graph.names import version_key

WIDTH = 64


def _arch(spec: SpecRecord) -> str:
    return f"{spec.platform}-{spec.os}-{spec.target}"


def _variants(spec: SpecRecord) -> str:
    bools = "".join(v for v in spec.variants if v.startswith(("+", "~")))
    others = "".join(" " + v for v in spec.variants if not v.startswith(("+", "~")))
    return bools + others


def listing(specs: Iterable[SpecRecord], long: bool = False, variants: bool = False) -> str:
    """The text ``spack buildcache list`` / ``spack find`` would print for these specs.

    >>> from graph.model import SpecRecord
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
            lines.append(f"{prefix}{s.package}@{s.version}{_variants(s) if variants else ''}")
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
