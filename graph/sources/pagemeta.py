"""A page's ``meta``: the summary the public site writes beside its records (how many, which
versions, compilers, stacks...), compared with the records themselves.

``disagreements`` says, key by key, where one page's summary differs from its records.
``agreeing`` compares the summaries of many pages read together with their records at
once, column by column in numpy: a page it cannot clear (nearly none) is then asked of
``disagreements``, so what is said is the same either way.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

import numpy as np

from ..spack.names import normalize_compiler
from ..store.tables import distinct
from .rows import Listed

#: What each key of a page's ``meta`` summarizes, worked out from its records.
DERIVED: dict[str, Callable[[Listed], Any]] = {
    "num_specs": lambda listed: len(listed.hashes),
    "num_specs_by_stack": lambda listed: dict(Counter(chain.from_iterable(listed.stacks))),
    "versions": lambda listed: set(listed.columns["version"]),
    "compilers": lambda listed: {c or "none" for c in set(listed.columns["compiler"])},
    "oss": lambda listed: set(listed.columns["os"]),
    "platforms": lambda listed: set(listed.columns["platform"]),
    "targets": lambda listed: set(listed.columns["target"]),
    "stacks": lambda listed: set(chain.from_iterable(listed.stacks)),
}
#: The keys summarizing a set of one column's values, and that column
_SET_COLUMNS = {"versions": "version", "compilers": "compiler", "oss": "os",
                "platforms": "platform", "targets": "target"}  # fmt: skip


def disagreements(meta: Any, listed: Listed) -> list[str]:
    """What a page's ``meta`` says that its records (``listed``) do not, one message a key.

    >>> listed = Listed(["a" * 32], {"version": ["1.0"], "compiler": [None]}, [()], [("e4s",)])
    >>> disagreements({"num_specs": 1, "versions": ["1.0"], "compilers": ["none"]}, listed)
    []
    >>> disagreements({"num_specs": 2, "stacks": []}, listed)  # doctest: +NORMALIZE_WHITESPACE
    ['meta num_specs says 2 but spec_details give 1; using spec_details',
     'meta stacks says [] but spec_details give ["e4s"]; using spec_details']
    """
    if not isinstance(meta, dict):
        return ["'meta' is not a mapping; ignored"]
    found = []
    for key, derive in DERIVED.items():
        if key not in meta:
            continue
        stated, actual = meta[key], derive(listed)
        if isinstance(actual, set) and isinstance(stated, list):
            stated = set(map(str, stated))
            if key == "compilers":
                stated = {normalize_compiler(c) or "none" for c in stated}
        if stated != actual:
            found.append(
                f"meta {key} says {_brief(stated)} but spec_details give {_brief(actual)}; "
                "using spec_details"
            )
    return found


def agreeing(metas: Sequence[Any], lengths: np.ndarray, listed: Listed) -> np.ndarray:
    """For each page -- its ``meta`` (None: it has none), its rows ``lengths[i]`` rows of
    ``listed`` after the previous page's -- whether its summary surely agrees with its rows:
    then ``disagreements`` has nothing to say. False where it may not (a key differs, or a
    value of an unusual type), for ``disagreements`` to decide.

    Each key is compared for every page at once: the values of a column and those the
    summaries state are numbered alike, and the (page, value) pairs of both compared.

    >>> row = Listed(["a" * 32], {"version": ["1.0"], "compiler": ["gcc@12"], "os": ["x"],
    ...              "platform": ["p"], "target": ["t"]}, [()], [("e4s",)])
    >>> two = Listed(*(c * 2 if isinstance(c, list) else {k: v * 2 for k, v in c.items()}
    ...                for c in row[:4]))
    >>> good = {"num_specs": 1, "versions": ["1.0"], "num_specs_by_stack": {"e4s": 1}}
    >>> agreeing([good, {**good, "versions": ["2.0"]}], np.array([1, 1]), two).tolist()
    [True, False]
    >>> agreeing([None, {"stacks": ["e4s"], "num_specs_by_stack": {"e4s": 2}}],
    ...          np.array([1, 1]), two).tolist()
    [True, False]
    """
    count = len(metas)
    ok = np.array([meta is None or type(meta) is dict for meta in metas], bool)
    dicts = [i for i, meta in enumerate(metas) if type(meta) is dict]
    if not dicts:
        return ok
    page_of_row = np.repeat(np.arange(count), lengths)
    stack_lengths = np.fromiter(map(len, listed.stacks), np.int64, len(listed.stacks))
    page_of_stack = np.repeat(page_of_row, stack_lengths)
    stacks = list(chain.from_iterable(listed.stacks))
    for key in DERIVED:
        pages = [i for i in dicts if key in metas[i]]
        if not pages:
            continue
        stated = [metas[i][key] for i in pages]
        at = np.array(pages, np.int64)
        if key == "num_specs":
            same = [
                type(v) is int and v == n for v, n in zip(stated, lengths[at].tolist(), strict=True)
            ]
            ok[at[~np.array(same, bool)]] = False
        elif key == "num_specs_by_stack":
            ok &= ~_counts_differ(at, stated, page_of_stack, stacks, count)
        elif key == "stacks":
            ok &= ~_sets_differ(at, stated, page_of_stack, stacks, count)
        else:
            column = listed.columns[_SET_COLUMNS[key]]
            if key == "compilers":
                named = {c: c or "none" for c in set(column)}
                column = list(map(named.__getitem__, column))
            ok &= ~_sets_differ(at, stated, page_of_row, column, count, key == "compilers")
    return ok


def _sets_differ(
    at: np.ndarray, stated: list, page_of: np.ndarray, values: list, count: int,
    compilers: bool = False,
) -> np.ndarray:  # fmt: skip
    """Of ``count`` pages, those of ``at`` whose stated list may not name the same set as
    their ``values`` (each of the page ``page_of`` says) do."""
    differ = np.zeros(count, bool)
    lists = np.array([type(v) is list for v in stated], bool)
    differ[at[~lists]] = True
    at = at[lists]
    named = list(map(str, chain.from_iterable(v for v in stated if type(v) is list)))
    if compilers:
        normal = {c: normalize_compiler(c) or "none" for c in set(named)}
        named = list(map(normal.__getitem__, named))
    owners = np.repeat(at, [len(v) for v in stated if type(v) is list])
    asked = np.zeros(count, bool)
    asked[at] = True
    mine = asked[page_of]
    (actual, said), width = _numbered(values, named)
    have = distinct(page_of[mine] * width + actual[mine])
    says = distinct(owners * width + said)
    differ[np.setxor1d(have, says, assume_unique=True) // width] = True
    return differ


def _counts_differ(
    at: np.ndarray, stated: list, page_of: np.ndarray, values: list, count: int
) -> np.ndarray:
    """Of ``count`` pages, those of ``at`` whose stated mapping (value -> how many) may not
    be the count of their ``values`` (each of the page ``page_of`` says)."""
    differ = np.zeros(count, bool)
    plain = np.array(
        [type(v) is dict and set(map(type, v.values())) <= {int} for v in stated], bool
    )
    differ[at[~plain]] = True
    at = at[plain]
    kept = [v for v in stated if type(v) is dict and set(map(type, v.values())) <= {int}]
    try:
        numbers = np.array(list(chain.from_iterable(v.values() for v in kept)), np.int64)
    except OverflowError:  # a count no page has: each page is asked
        differ[at] = True
        return differ
    owners = np.repeat(at, [len(v) for v in kept])
    asked = np.zeros(count, bool)
    asked[at] = True
    mine = asked[page_of]
    (actual, said), width = _numbered(values, list(chain.from_iterable(kept)))
    have, counted = np.unique(page_of[mine] * width + actual[mine], return_counts=True)
    says = owners * width + said  # a mapping names each of its keys once
    order = np.argsort(says)
    says, numbers = says[order], numbers[order]
    differ[np.setxor1d(have, says, assume_unique=True) // width] = True
    both = np.isin(have, says)
    where = np.searchsorted(says, have[both])
    differ[have[both][counted[both] != numbers[where]] // width] = True
    return differ


def _numbered(*columns: list) -> tuple[tuple[np.ndarray, ...], int]:
    """Each value of the columns as an integer (equal values, equal integers), and how
    many integers there are plus one: a width to pair them with a page by."""
    index = dict.fromkeys(chain.from_iterable(columns))
    index = dict(zip(index, range(len(index)), strict=True))
    found = tuple(np.fromiter(map(index.__getitem__, c), np.int64, len(c)) for c in columns)
    return found, len(index) + 1


def _brief(value: Any) -> str:
    if isinstance(value, set):
        value = sorted(value)
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
