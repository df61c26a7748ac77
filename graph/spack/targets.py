"""Microarchitecture compatibility, from archspec.

archspec is the library Spack itself uses to name and order targets: it knows
every microarchitecture Spack builds for and which ones each descends from
(zen3 from zen2, zen, x86_64_v3, x86_64_v2, x86_64). Keeping a copy of that
table here would go stale with every new CPU; archspec's is kept up to date by
Spack's maintainers.
"""

from __future__ import annotations

import functools

import archspec.cpu

from ..errors import BadArgument


def known(name: str) -> bool:
    return name in archspec.cpu.TARGETS


def names(also: list[str]) -> list[str]:
    """Every target archspec knows, and ``also``."""
    return [*archspec.cpu.TARGETS, *also]


def _target(name: str) -> archspec.cpu.Microarchitecture:
    try:
        return archspec.cpu.TARGETS[name]
    except KeyError:
        raise BadArgument(
            f"unknown target {name!r}: not a microarchitecture archspec knows "
            "(e.g. x86_64_v3, zen4, icelake, neoverse_v1, aarch64, ppc64le)"
        ) from None


@functools.cache
def ancestors(name: str) -> frozenset[str]:
    """``name`` and every target it descends from: what a binary for it may be built for.

    >>> sorted(ancestors("zen2"))
    ['x86_64', 'x86_64_v2', 'x86_64_v3', 'zen', 'zen2']
    """
    return frozenset({name, *(t.name for t in _target(name).ancestors)})


@functools.cache
def descendants(name: str) -> frozenset[str]:
    """``name`` and every target that descends from it.

    >>> {"zen4", "icelake", "x86_64_v3"} <= descendants("x86_64_v3"), "x86_64" in descendants("zen")
    (True, False)
    """
    _target(name)
    return frozenset(
        t for t, arch in archspec.cpu.TARGETS.items() if t == name or name in ancestors(t)
    )


def in_range(low: str | None, high: str | None) -> frozenset[str]:
    """The targets of ``low:high``: descendants of ``low`` that are ancestors of ``high``.

    >>> sorted(in_range("x86_64_v3", "zen2"))
    ['x86_64_v3', 'zen', 'zen2']
    """
    if low is None and high is None:
        return frozenset(archspec.cpu.TARGETS)
    if low is None:
        return ancestors(high)
    if high is None:
        return descendants(low)
    return descendants(low) & ancestors(high)
