"""Free-text search over specs, as the public site's search box, but ranked and server-side.

Every word of the text must match the spec somewhere: its package name, hash
prefix, version, a variant, or an attribute searched (``graph.attributes``: compiler,
target, os), case-insensitive. Each
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

import numpy as np

from .. import deadline
from ..attributes import SEARCHED, SINGLE
from ..errors import BadArgument
from ..spack.names import current_compiler
from ..store.records import SpecRecord
from ..store.view import CacheGraph

MAX_TEXT = 200
MIN_HASH = 3
_NONE = 255


def score(word: str, spec: SpecRecord) -> int | None:
    """How well one lower-case word matches a spec (see the table above); None if not at all.

    The rule, spec by spec; ``search`` applies it to every spec at once, a table at a time.

    Parameters
    ----------
    word : str
        One lower-case word of a search.
    spec : SpecRecord
        A spec's record.

    Returns
    -------
    score : int or None
        Lower is better (0: the package name or a hash prefix); None: no match.

    Examples
    --------
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
    values = (
        *(getattr(spec, SINGLE[kind]) for kind in SEARCHED),
        current_compiler(spec.compiler_key),
    )
    if any(word in v.lower() for v in spec.variants) or any(word in v.lower() for v in values):
        return 3
    return None


def search(G: CacheGraph, text: str) -> np.ndarray:
    """The ranks of the specs matching every word of ``text``, best first.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    text : str
        Words, each of which a spec must match.

    Returns
    -------
    ranks : numpy.ndarray
        The matching specs' ranks, best first.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> [G.store.hash(r)[0] for r in search(G, "zlib 1.3")], len(search(G, "pic"))
    (['z'], 2)
    """
    words = text.lower().split()
    if not words:
        raise BadArgument("the search text is empty: give a package name, version or hash")
    if len(text) > MAX_TEXT:
        raise BadArgument(f"the search text is {len(text):,} characters long (at most {MAX_TEXT})")
    return G.kept(("search", tuple(words)), lambda: _search(G, words))


def _search(G: CacheGraph, words: list[str]) -> np.ndarray:
    total = np.zeros(G.store.n, np.int64)
    for word in words:
        deadline.check()
        scores = _scores(G, word)
        total[scores == _NONE] = -(1 << 40)
        total += scores
    found = np.flatnonzero(total >= 0)
    return found[np.argsort(total[found], kind="stable")]


def _table(values: list[str], rule) -> np.ndarray:
    return np.array([rule(v) for v in values], np.uint8) if values else np.zeros(0, np.uint8)


def _scores(G: CacheGraph, word: str) -> np.ndarray:
    """``score(word, spec)`` of every spec (255 for None), worked out per table row."""
    store = G.store

    def pick(kind: str, rule) -> np.ndarray:
        return _table(store.strings(kind).values, rule)[store.codes[kind]]

    found = pick("package", lambda p: 0 if word == p else 1 if p.startswith(word) else
                 2 if word in p else _NONE)  # fmt: skip
    found = np.minimum(found, pick("version", lambda v: 1 if v.lower() == word else
                                   2 if v.lower().startswith(word) else _NONE))  # fmt: skip
    elsewhere = np.zeros(store.n, bool)
    for kind in SEARCHED:
        elsewhere |= pick(kind, lambda v: word in v.lower()).astype(bool)
    # a compiler by its current name too: llvm finds the specs recording clang@...
    elsewhere |= pick("compiler", lambda v: word in current_compiler(v).lower()).astype(bool)
    variants = store.sets("variants")
    holds = _table(store.strings("variant").values, lambda v: word in v.lower()).astype(bool)
    if len(holds):
        elsewhere |= (variants.count(holds) > 0)[store.variants]
    found = np.where(elsewhere, np.minimum(found, 3), found)
    if len(word) >= MIN_HASH:
        start, end = store.prefixed(word)
        found[store.rank_of[start:end]] = 0
    return found
