"""What a change would reach: the cached specs whose DAG holds a node satisfying a constraint,
and what changed between two tags (with each spec's first and last tag)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from .constraints import parse
from .errors import BadArgument
from .model import CacheGraph, SpecRecord
from .names import version_key
from .satisfies import check_known, holding


@dataclass(frozen=True)
class Impact:
    #: ranks of the specs reached, sorted (spec order)
    ranks: tuple[int, ...]
    packages: list[tuple[str, int]]
    stacks: list[tuple[str, int]]
    warnings: tuple[str, ...] = ()


def impact(cg: CacheGraph, text: str, tag: str | None = None) -> Impact:
    """Every spec (in the tag) with a node satisfying ``text`` among its dependencies, direct or
    not -- Spack's ``^text``, not the node itself -- counted by package and by stack."""
    constraint = parse(text)
    if constraint.transitive:
        raise BadArgument("impact takes the constraint of one node, e.g. 'openssl@3.0:3.0.99'")
    check_known(cg, constraint.root)
    warnings = () if cg.deps else ("the loaded data has no dependency DAGs: nothing is reached",)
    holders = holding(cg, constraint.root)
    if tag is None:
        ranks = tuple(holders.ranks())
    else:
        mask = holders.mask
        ranks = tuple(r for r in cg.ranks("tag", tag) if mask[r])
    specs = [cg.ordered[r] for r in ranks]
    packages = Counter(s.package for s in specs)
    stacks = Counter(stack for s in specs for stack in s.stacks_in(tag))
    return Impact(ranks, _ranked(packages), _ranked(stacks), warnings)


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


# -- tags in time -------------------------------------------------------------------------

_DATED = re.compile(r"develop-(\d{4}-\d{2}-\d{2})")


def tag_order(tag: str) -> tuple:
    """Oldest first: releases by version, then dated ``develop-YYYY-MM-DD`` snapshots by date,
    then ``develop`` (the newest); other names after releases, by name.

    Pages carry no release dates, so a release is taken as older than every dated snapshot.

    >>> sorted(["develop", "v0.22.0", "develop-2024-03-10", "v0.21.2", "develop-2023-12-03"],
    ...        key=tag_order)
    ['v0.21.2', 'v0.22.0', 'develop-2023-12-03', 'develop-2024-03-10', 'develop']
    """
    if tag == "develop":
        return (3,)
    if match := _DATED.fullmatch(tag):
        return (2, match[1])
    if re.fullmatch(r"v?\d+(\.\d+)*", tag):
        return (0, version_key(tag.lstrip("v")))
    return (1, tag)


def seen(spec: SpecRecord) -> tuple[str | None, str | None]:
    """The earliest and latest tag holding the spec."""
    tags = sorted(spec.stacks, key=tag_order)
    return (tags[0], tags[-1]) if tags else (None, None)


@dataclass(frozen=True)
class TagDiff:
    added: tuple[int, ...]
    removed: tuple[int, ...]
    kept: tuple[int, ...]


def tag_diff(cg: CacheGraph, old: str, new: str) -> TagDiff:
    """The specs (ranks, in spec order) only in ``new``, only in ``old``, and in both."""

    def compute() -> TagDiff:
        a, b = set(cg.ranks("tag", old)), set(cg.ranks("tag", new))
        return TagDiff(tuple(sorted(b - a)), tuple(sorted(a - b)), tuple(sorted(a & b)))

    return cg.kept(("tag diff", old, new), compute)


def counts_by(cg: CacheGraph, ranks: tuple[int, ...], kind: str, tag: str | None) -> Counter:
    """How many of these specs each package (or stack, in the tag) has."""
    specs = map(cg.ordered.__getitem__, ranks)
    if kind == "package":
        return Counter(s.package for s in specs)
    return Counter(stack for s in specs for stack in s.stacks_in(tag))
