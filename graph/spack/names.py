"""Spack naming rules: compiler names and version order."""

from __future__ import annotations

import re

#: Spack's infinity versions, least to greatest; all of them sort after any number.
INFINITY_VERSIONS = ("stable", "nightly", "trunk", "head", "master", "main", "develop")
_SEGMENT = re.compile(r"([0-9]+)|([a-zA-Z]+)")
# A trailing pre-release, as Spack reads it: 1.0rc1, 2.0-beta.2, 3.1alpha
_PRERELEASE = re.compile(r"(.+?)[-._]?(alpha|beta|rc)[-._]?([0-9]*)")
_PRERELEASE_RANK = {"alpha": 0, "beta": 1, "rc": 2}
_FINAL = (3, 0)

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


#: Spack's ``LEGACY_COMPILER_TO_BUILTIN`` (``spack.aliases``, Spack 1.1): a compiler's old name
#: and the package Spack names it now
LEGACY_COMPILERS = {
    "clang": "llvm",
    "oneapi": "intel-oneapi-compilers",
    "rocmcc": "llvm-amdgpu",
    "intel": "intel-oneapi-compilers-classic",
    "arm": "acfl",
}


def current_compiler(name: str) -> str:
    """A normalized compiler name under the name Spack gives its package now: the one name
    facets and tables show for the specs recording either (``oneapi`` is
    ``intel-oneapi-compilers``, ``clang`` is ``llvm``).

    >>> current_compiler("oneapi@2024.2.1"), current_compiler("clang"), current_compiler("gcc@12")
    ('intel-oneapi-compilers@2024.2.1', 'llvm', 'gcc@12')
    """
    family, at, version = name.partition("@")
    return LEGACY_COMPILERS.get(family, family) + at + version


def compiler_parts(name: str) -> tuple[str, str]:
    """Split a normalized compiler name into (family, version).

    >>> compiler_parts("oneapi@2024.2.1")
    ('oneapi', '2024.2.1')
    """
    family, _, version = name.partition("@")
    return family, version


def version_key(version: str) -> tuple:
    """A sort key that orders versions as Spack does (oldest first).

    Not kept: it is asked once per distinct version of the data (its table is sorted
    once), and a cache would also keep the versions clients send in constraints and
    lockfiles; making a key costs about what a bounded cache's lookup does.

    Numbers compare as numbers, words sort before numbers, a pre-release
    (alpha, beta, rc) before its release, and Spack's infinity versions
    (``develop``, ``main``, ``master`` ...) after everything.

    >>> sorted(["1.10", "1.9", "master", "1.9a", "develop", "1.10rc2"], key=version_key)
    ['1.9', '1.9a', '1.10rc2', '1.10', 'master', 'develop']
    """
    release, prerelease = version, _FINAL
    match = _PRERELEASE.fullmatch(version)
    if match:
        release = match[1]
        prerelease = (_PRERELEASE_RANK[match[2]], int(match[3] or 0))
    key = []
    for number, word in _SEGMENT.findall(release):
        if number:
            key.append((2, int(number), ""))
        elif word in INFINITY_VERSIONS:
            key.append((3, INFINITY_VERSIONS.index(word), ""))
        else:
            key.append((1, 0, word))
    # The raw string breaks ties between spellings such as "1.0" and "1-0".
    return (tuple(key), prerelease, version)
