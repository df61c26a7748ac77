"""Spack version constraints: ``1.2``, ``1.2:1.4``, ``1.2:``, ``:1.4``, ``=1.2`` and lists.

Versions are ordered by ``names.version_key`` (Spack's order). A bound
``1.2`` covers every version that starts with its components: ``@1.2`` is the
range ``1.2:1.2``, satisfied by 1.2 and 1.2.3 but not 1.20; ``@:1.4`` by 1.4.2.
``=1.2`` is that version only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import BadArgument
from .names import version_key

_COMPONENT = re.compile(r"[0-9]+|[a-zA-Z]+")


def _components(version: str) -> tuple[str, ...]:
    return tuple(_COMPONENT.findall(version))


def _extends(version: str, prefix: str) -> bool:
    """Whether ``version`` is ``prefix`` or starts with all of its components.

    >>> _extends("1.2.3", "1.2"), _extends("1.20", "1.2"), _extends("1.2", "1.2")
    (True, False, True)
    """
    mine, theirs = _components(version), _components(prefix)
    return mine[: len(theirs)] == theirs


@dataclass(frozen=True, slots=True)
class VersionRange:
    """``low:high`` (either end open when None); ``exact`` for ``=version``."""

    low: str | None
    high: str | None
    exact: bool = False
    #: the ends' version keys, made once (version_key keeps none)
    _low_key: tuple | None = field(default=None, init=False, repr=False, compare=False)
    _high_key: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for end, name in ((self.low, "_low_key"), (self.high, "_high_key")):
            object.__setattr__(self, name, None if end is None else version_key(end))

    def contains(self, version: str) -> bool:
        if self.exact:
            return version == self.low or version_key(version)[:2] == self._low_key[:2]
        key = version_key(version)
        if self.low is not None and key < self._low_key and not _extends(version, self.low):
            return False
        return self.high is None or key <= self._high_key or _extends(version, self.high)

    def __str__(self) -> str:
        if self.exact:
            return f"={self.low}"
        if self.low == self.high:
            return self.low or ":"
        return f"{self.low or ''}:{self.high or ''}"


@dataclass(frozen=True, slots=True)
class VersionList:
    """Versions satisfying any of its ranges.

    >>> v = parse_versions("1.2,1.4:1.6")
    >>> [x for x in ["1.1", "1.2.9", "1.3", "1.6.1", "1.7", "develop"] if v.contains(x)]
    ['1.2.9', '1.6.1']
    >>> parse_versions("2:").contains("develop"), parse_versions("=1.2").contains("1.2.1")
    (True, False)
    """

    ranges: tuple[VersionRange, ...]

    def contains(self, version: str) -> bool:
        return any(r.contains(version) for r in self.ranges)

    def intersects(self, other: VersionList) -> bool:
        """Whether some version is in both lists (as Spack's ``VersionList.intersects``).

        >>> a = parse_versions(":3.1")
        >>> [a.intersects(parse_versions(t)) for t in ("3:", "3.1.2", "4:", "=3.1", "2:3")]
        [True, True, False, True, True]
        """
        return any(_overlap(a, b) for a in self.ranges for b in other.ranges)

    def __str__(self) -> str:
        return ",".join(map(str, self.ranges))


def _at_most(low: str | None, high: str | None) -> bool:
    """Whether a range starting at ``low`` may meet one ending at ``high`` (``high`` with all
    its ``.x``)."""
    if low is None or high is None:
        return True
    return version_key(low) <= version_key(high) or _extends(low, high)


def _overlap(a: VersionRange, b: VersionRange) -> bool:
    if a.exact:
        return b.contains(a.low)
    if b.exact:
        return a.contains(b.low)
    return _at_most(a.low, b.high) and _at_most(b.low, a.high)


_VERSION = re.compile(r"[A-Za-z0-9_.\-+]+")


def parse_versions(text: str) -> VersionList:
    """A version list as written after ``@``; BadArgument naming the bad part."""
    ranges = []
    for part in text.split(","):
        part = part.strip()
        if part.startswith("="):
            version = part[1:].strip()
            if not _VERSION.fullmatch(version):
                raise BadArgument(f"{part!r} is not a version")
            ranges.append(VersionRange(version, version, exact=True))
            continue
        low, colon, high = part.partition(":")
        low, high = low.strip() or None, high.strip() or None
        if not colon:
            high = low
        for end in (low, high):
            if end is not None and not _VERSION.fullmatch(end):
                raise BadArgument(f"{end!r} is not a version")
        if low is None and high is None and not colon:
            raise BadArgument("an empty version: write one after '@' or leave '@' out")
        ranges.append(VersionRange(low, high))
    return VersionList(tuple(ranges))
