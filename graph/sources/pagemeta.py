"""A page's ``meta``: the summary the public site writes beside its records (how many, which
versions, compilers, stacks...), compared with the records themselves.

``disagreements`` says, key by key, where one page's summary differs from its records.
``agreeing`` checks the summaries of many pages read together with their records, one set
a key, at a fraction of the cost: a page it cannot clear (nearly none) is then asked of
``disagreements``, so what is said is the same either way.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

from ..spack.names import normalize_compiler
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


def agreeing(metas: Sequence[Any], lengths: Sequence[int], listed: Listed) -> list[bool]:
    """For each page -- its ``meta`` (None: it has none), its rows ``lengths[i]`` rows of
    ``listed`` after the previous page's -- whether its summary surely agrees with its rows:
    then ``disagreements`` has nothing to say. False where it may not (a key differs, or a
    value of an unusual type), for ``disagreements`` to decide and word.

    Each key is one C-made set (or count) compared with the stated list as it is: only a
    page that fails is read as ``disagreements`` does (its values turned to strings,
    compilers normalized, every difference worded), which costs a page several times more.

    >>> row = Listed(["a" * 32], {"version": ["1.0"], "compiler": ["gcc@12"], "os": ["x"],
    ...              "platform": ["p"], "target": ["t"]}, [()], [("e4s",)])
    >>> two = Listed(*(c * 2 if isinstance(c, list) else {k: v * 2 for k, v in c.items()}
    ...                for c in row[:4]))
    >>> good = {"num_specs": 1, "versions": ["1.0"], "num_specs_by_stack": {"e4s": 1}}
    >>> agreeing([good, {**good, "versions": ["2.0"]}], [1, 1], two)
    [True, False]
    >>> agreeing([None, {"stacks": ["e4s"], "compilers": ["gcc@=12"]}], [1, 1], two)
    [True, True]
    """
    compilers = listed.columns["compiler"]
    named = {c: c or "none" for c in set(compilers)}  # the summary calls no compiler "none"
    compilers = list(map(named.__getitem__, compilers))
    columns = {key: listed.columns[name] for key, name in _SET_COLUMNS.items()}
    columns["compilers"] = compilers
    normal = _normal_compilers(metas)
    stacks = listed.stacks
    found = []
    end = 0
    for meta, length in zip(metas, lengths, strict=True):
        start, end = end, end + length
        if meta is None:
            found.append(True)
            continue
        if type(meta) is not dict:
            found.append(False)
            continue
        same = True
        try:
            for key, stated in meta.items():
                if key in columns:
                    if type(stated) is not list:
                        same = False
                    elif key == "compilers":
                        same = set(map(normal.get, stated)) == set(compilers[start:end])
                    else:
                        same = set(stated) == set(columns[key][start:end])
                elif key == "num_specs":
                    same = type(stated) is int and stated == length
                elif key == "stacks":
                    same = type(stated) is list and set(stated) == set(
                        chain.from_iterable(stacks[start:end])
                    )
                elif key == "num_specs_by_stack":  # a Counter would take a missing key for 0
                    same = stated == dict(Counter(chain.from_iterable(stacks[start:end])))
                if not same:
                    break
        except TypeError:  # a value that cannot be in a set (a list in the list)
            same = False
        found.append(same)
    return found


def _normal_compilers(metas: Sequence[Any]) -> dict[str, str]:
    """Each compiler the summaries name, as ``disagreements`` compares it (normalized;
    "none" for none); a name that is not a string is left out (its page then disagrees)."""
    named: set[str] = set()
    for meta in metas:
        stated = meta.get("compilers") if type(meta) is dict else None
        if type(stated) is list:
            named.update(c for c in stated if type(c) is str)
    return {c: normalize_compiler(c) or "none" for c in named}


def _brief(value: Any) -> str:
    if isinstance(value, set):
        value = sorted(value)
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
