"""Spack naming rules: compiler names, version order and the classic spec string."""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Spack's infinity versions, least to greatest; all of them sort after any number.
INFINITY_VERSIONS = ("stable", "nightly", "trunk", "head", "master", "main", "develop")
_SEGMENT = re.compile(r"([0-9]+)|([a-zA-Z]+)")

NO_COMPILER = "none"


def normalize_compiler(name: str | None) -> str | None:
    """Return ``family@version`` without Spack's exact marker, or None for no compiler.

    >>> normalize_compiler("gcc@=11.4.0")
    'gcc@11.4.0'
    >>> normalize_compiler("apple-clang@16.0.0")
    'apple-clang@16.0.0'
    >>> normalize_compiler("none") is None
    True
    """
    if name is None:
        return None
    name = name.strip()
    if not name or name == NO_COMPILER:
        return None
    return name.replace("@=", "@", 1)


def compiler_parts(name: str) -> tuple[str, str]:
    """Split a normalized compiler name into (family, version).

    >>> compiler_parts("oneapi@2024.2.1")
    ('oneapi', '2024.2.1')
    """
    family, _, version = name.partition("@")
    return family, version


def version_key(version: str) -> tuple:
    """A sort key that orders versions as Spack does (oldest first).

    Numbers compare as numbers, words sort before numbers, and Spack's
    infinity versions (``develop``, ``main``, ``master`` ...) after everything.

    >>> sorted(["1.10", "1.9", "master", "1.9a", "develop", "2025.08.20"], key=version_key)
    ['1.9', '1.9a', '1.10', '2025.08.20', 'master', 'develop']
    """
    key = []
    for number, word in _SEGMENT.findall(version):
        if number:
            key.append((2, int(number), ""))
        elif word in INFINITY_VERSIONS:
            key.append((3, INFINITY_VERSIONS.index(word), ""))
        else:
            key.append((1, 0, word))
    # The raw string breaks ties between spellings such as "1.0" and "1-0".
    return (tuple(key), version)


def spec_string(
    package: str,
    version: str,
    compiler: str | None,
    variants: Sequence[str],
    platform: str,
    os: str,
    target: str,
) -> str:
    """Spack's classic spec string, as the contract defines it.

    >>> spec_string("rocblas", "6.1.2", "gcc@13.2.0",
    ...     ["amdgpu_target=gfx90a", "~asan", "build_system=cmake", "~ipo", "+tensile"],
    ...     "linux", "ubuntu24.04", "x86_64_v3")
    'rocblas@6.1.2%gcc@13.2.0~asan~ipo+tensile amdgpu_target=gfx90a build_system=cmake arch=linux-ubuntu24.04-x86_64_v3'
    """
    bools = "".join(v for v in variants if v.startswith(("+", "~")))
    others = "".join(" " + v for v in variants if not v.startswith(("+", "~")))
    compiler_part = f"%{compiler}" if compiler else ""
    return f"{package}@{version}{compiler_part}{bools}{others} arch={platform}-{os}-{target}"
