"""What a change would reach: the cached specs whose DAG holds a node satisfying a constraint,
and what changed between two tags (with each spec's first and last tag)."""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .constraints import parse
from .errors import BadArgument
from .model import CacheGraph, SpecRecord
from .names import version_key
from .satisfies import check_known, holding


@dataclass(frozen=True)
class Impact:
    #: ranks of the specs reached, in spec order
    ranks: Sequence[int]
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
        ranks = np.frombuffer(holders.ranks(), np.int32)
    else:
        in_tag = np.frombuffer(cg.ranks("tag", tag), np.int32)
        ranks = in_tag[np.frombuffer(holders.mask, bool)[in_tag]]
    return Impact(
        array("i", ranks.tobytes()),
        _ranked(counts_by(cg, ranks, "package", None)),
        _ranked(counts_by(cg, ranks, "stack", tag)),
        warnings,
    )


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def counts_by(cg: CacheGraph, ranks: Sequence[int], kind: str, tag: str | None) -> Counter:
    """How many of these specs each package (or stack, in the tag) has: counted in numpy, as
    the dependents of a library can be most of the cache."""
    chosen = np.asarray(ranks, np.int64)
    if kind == "package":
        names, codes = _package_codes(cg)
        counts = np.bincount(codes[chosen], minlength=len(names))
        return Counter({names[i]: int(counts[i]) for i in np.flatnonzero(counts)})
    mask = np.zeros(len(cg.ordered), bool)
    mask[chosen] = True
    stacks = [(value, held) for (k, value, scope), held in cg.index.items()
              if k == "stack" and scope == tag]  # fmt: skip
    counts = {value: int(np.count_nonzero(mask[np.frombuffer(held, np.int32)]))
              for value, held in stacks}  # fmt: skip
    return Counter({value: n for value, n in counts.items() if n})


def _package_codes(cg: CacheGraph) -> tuple[list[str], np.ndarray]:
    """The package names, and for each rank the position of its package among them."""

    def compute() -> tuple[list[str], np.ndarray]:
        names = cg.names("package")
        position = {name: i for i, name in enumerate(names)}
        packages = (position[s.package] for s in cg.ordered)
        return names, np.fromiter(packages, np.int32, len(cg.ordered))

    return cg.memoized("package codes", compute)


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


def tags_newest_first(cg: CacheGraph) -> list[str]:
    """Every tag, newest first (``tag_order`` reversed).

    >>> from cachegraph.graph.model import CacheGraph
    >>> tags_newest_first(CacheGraph.of([], {}))
    []
    """
    return cg.memoized("tags newest first", lambda: sorted(cg.names("tag"), key=tag_order)[::-1])


def seen(spec: SpecRecord) -> tuple[str | None, str | None]:
    """The earliest and latest tag holding the spec."""
    tags = sorted(spec.stacks, key=tag_order)
    return (tags[0], tags[-1]) if tags else (None, None)


@dataclass(frozen=True)
class TagDiff:
    #: ranks, in spec order
    added: Sequence[int]
    removed: Sequence[int]
    kept: Sequence[int]


#: (name, added, removed, kept)
Change = tuple[str, int, int, int]


def changes(
    cg: CacheGraph,
    diff: TagDiff,
    kind: str,
    tags: tuple[str | None, str | None] = (None, None),
    most_changed: bool = False,
) -> list[Change]:
    """(name, added, removed, kept) of each package (or stack) with any of the diff's specs:
    by name, or the most added and removed first. ``tags`` are (old, new): a stack's removed
    specs are counted in the old tag, its added and kept ones in the new.

    >>> from cachegraph.graph.model import CacheGraph
    >>> changes(CacheGraph.of([], {}), TagDiff([], [], []), "package")
    []
    """
    old, new = tags
    added, removed, kept = (
        counts_by(cg, ranks, kind, tag)
        for ranks, tag in ((diff.added, new), (diff.removed, old), (diff.kept, new))
    )
    found = [(n, added[n], removed[n], kept[n]) for n in sorted(added | removed | kept)]
    if most_changed:
        found.sort(key=lambda c: -(c[1] + c[2]))  # stable: then by name
    return found


def tag_diff(cg: CacheGraph, old: str, new: str) -> TagDiff:
    """The specs only in ``new``, only in ``old``, and in both: set operations in numpy over
    the tags' rank lists (a few milliseconds at 250,000 specs: not kept)."""
    a = np.frombuffer(cg.ranks("tag", old), np.int32)
    b = np.frombuffer(cg.ranks("tag", new), np.int32)

    def ranks(found: np.ndarray) -> array:
        return array("i", found.astype(np.int32).tobytes())

    return TagDiff(
        ranks(np.setdiff1d(b, a, assume_unique=True)),
        ranks(np.setdiff1d(a, b, assume_unique=True)),
        ranks(np.intersect1d(a, b, assume_unique=True)),
    )
