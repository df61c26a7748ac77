"""Free-text search over specs, as the public site's search box, but ranked and server-side.

Every word of the text must match the spec somewhere: its package name, hash
prefix, version, a variant, compiler, target or os (case-insensitive). Each
word scores how well it matched (lower is better); a spec's score is the sum,
and the answer is ordered by score, then in spec order:

===== ====================================================================
score a word that is
===== ====================================================================
0     the package name, or a prefix of the hash (3 characters or more)
1     the start of the package name, or the version
2     inside the package name, or the start of the version
3     inside a variant setting, the compiler, the target or the os
===== ====================================================================
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from . import deadline
from .errors import BadArgument
from .model import CacheGraph, SpecRecord

MAX_TEXT = 200
MIN_HASH = 3
#: the index kinds a word is looked up in
_KINDS = ("package", "version", "variant", "compiler", "target", "os")


def score(word: str, spec: SpecRecord) -> int | None:
    """How well one lower-case word matches a spec (see the table above); None if not at all.

    >>> from cachegraph.graph.model import SpecRecord
    >>> s = SpecRecord(hash="abc" + "0" * 29, package="py-numpy", version="1.26.4",
    ...     versions=("1.26.4",), compiler="gcc@11.4.0", os="ubuntu22.04", platform="linux",
    ...     target="x86_64_v3", variants=("+blas",))
    >>> [score(w, s) for w in ("py-numpy", "abc0", "py-", "1.26.4", "numpy", "1.26", "blas", "zz")]
    [0, 0, 1, 1, 2, 2, 3, None]
    """
    name = spec.package
    if word == name or (len(word) >= MIN_HASH and spec.hash.startswith(word)):
        return 0
    if name.startswith(word) or spec.version.lower() == word:
        return 1
    if word in name or spec.version.lower().startswith(word):
        return 2
    if any(word in v.lower() for v in spec.variants) or any(
        word in value.lower() for value in (spec.compiler_key, spec.target, spec.os)
    ):
        return 3
    return None


def search(cg: CacheGraph, text: str) -> list[int]:
    """The ranks of the specs matching every word of ``text``, best first."""
    words = text.lower().split()
    if not words:
        raise BadArgument("the search text is empty: give a package name, version or hash")
    if len(text) > MAX_TEXT:
        raise BadArgument(f"the search text is {len(text):,} characters long (at most {MAX_TEXT})")
    return cg.kept(("search", tuple(words)), lambda: _search(cg, words))


def _search(cg: CacheGraph, words: list[str]) -> list[int]:
    found = min((_candidates(cg, w) for w in words), key=len)
    ordered = cg.ordered
    scored = []
    for rank in deadline.checked(found):
        total = 0
        for word in words:
            s = score(word, ordered[rank])
            if s is None:
                break
            total += s
        else:
            scored.append((total, rank))
    scored.sort()
    return [rank for _, rank in scored]


def _candidates(cg: CacheGraph, word: str) -> set[int]:
    """Every rank ``score(word, ...)`` can accept: a superset found from the indices."""
    found: set[int] = set()
    for kind in _KINDS:
        for value in _values(cg, kind):
            low = value.lower()
            hit = low.startswith(word) if kind == "version" else word in low
            if hit:
                found.update(cg.ranks(kind, value))
    if len(word) >= MIN_HASH:
        start = bisect_left(cg.hashes, word)
        end = bisect_left(cg.hashes, word + "\x7f", start)
        found.update(cg.rank[h] for h in cg.hashes[start:end])
    return found


def _values(cg: CacheGraph, kind: str) -> Iterable[str]:
    def compute() -> list[str]:
        return [v for k, v, tag in cg.index if k == kind and tag is None]

    return cg.memoized(("search values", kind), compute)
