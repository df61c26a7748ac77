"""Read raw records -- page rows and spec-file nodes -- into their attributes.

Each function raises BadRecord saying what is wrong with the record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain, repeat
from operator import contains, itemgetter, methodcaller, sub
from typing import Any, NamedTuple

from ..attributes import (
    ATTRIBUTES,
    described,
    node_attributes,
    page_attributes,
    strings,
    text,
)
from ..errors import BadRecord
from ..spack.names import normalize_compiler
from ..store.records import SpecRecord

HASH = re.compile(r"[a-z0-9]{32}")


def check_hash(value: Any) -> str:
    if not isinstance(value, str) or not HASH.fullmatch(value):
        raise BadRecord(f"'hash' must be a 32-character Spack hash, not {described(value)}")
    return value


def page_row(row: Any, package: str) -> tuple[str, dict[str, Any], tuple[str, ...], float | None]:
    """A spec_details row of a page: its hash, attributes, the stacks it lists and its size."""
    if not isinstance(row, dict):
        raise BadRecord(f"a record must be a mapping, not {described(row)}")
    hash = check_hash(row.get("hash"))
    attributes = page_attributes(row, package)
    size = page_size(row.get("size"))
    return hash, attributes, strings(row, "stacks"), size


def page_size(value: Any) -> float | None:
    """A page's ``size``: bytes, or ``"-"`` (the public site's generator writes it for unknown).

    >>> page_size("-"), page_size(None), page_size(1234), page_size("1234")
    (None, None, 1234.0, 1234.0)
    """
    if value is None or value == "-":
        return None
    if isinstance(value, str) and value.strip().isdigit():
        return float(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    raise BadRecord(f"'size' must be a number of bytes or '-', not {described(value)}")


_FIELDS = ("hash", "versions", "compiler", "os", "platform", "target", "variants", "stacks")
_COLUMNS = [itemgetter(name) for name in _FIELDS]
#: hashes joined end to end (each checked 32 characters long apart)
HASHES = re.compile(r"[a-z0-9]*")


_SIZE = methodcaller("get", "size", "-")
_UNSIZED = {"-", None}


#: The one-value fields a page's ``meta`` summarizes.
SUMMARIZED = ("version", "compiler", "os", "platform", "target")
#: The one-value attributes read by their own readers, not column by column here
_OTHERS = [a for a in ATTRIBUTES if a.page and not a.many and a.name not in SUMMARIZED]


class Listed(NamedTuple):
    """A page's rows as columns: hashes, each attribute's values, variants, stacks, sizes."""

    hashes: list[str]
    columns: dict[str, list]
    variants: list[tuple[str, ...]]
    stacks: list[tuple[str, ...]]
    sizes: list[float] | None = None

    def part(self, start: int, end: int) -> Listed:
        """Rows ``start`` to ``end`` (of pages read together: one page's)."""
        sizes = None if self.sizes is None else self.sizes[start:end]
        columns = {name: values[start:end] for name, values in self.columns.items()}
        return Listed(self.hashes[start:end], columns, self.variants[start:end],
                      self.stacks[start:end], sizes)  # fmt: skip


def well_formed_rows(rows: list, package: str) -> Listed | None:
    """The columns of a page's rows exactly as the public site writes them.

    None when any row is unusual: then ``page_row`` checks each row and says
    what is wrong. Nearly every row of a large load comes this way, so the
    checks run column by column in C (map, join, set) rather than row by row.
    """
    if not rows:
        return None
    return _well_formed(rows, [package] * len(rows))


def well_formed_pages(pages: Sequence[tuple[list, str]]) -> Listed | None:
    """``well_formed_rows`` of several pages' (rows, package) at once: their columns end to
    end, or None when any row of any page is unusual (then each page is read alone).

    A page of the public site holds a few dozen rows: checked and coded a page at a time,
    the dozens of C calls a page costs more than the rows do, so pages are taken together.

    >>> row = {"hash": "a" * 32, "versions": ["1.0"], "compiler": "gcc@=12.3.0", "os": "x",
    ...        "platform": "linux", "target": "y", "variants": [], "stacks": ["e4s"]}
    >>> listed = well_formed_pages([([row], "zlib"), ([dict(row, hash="b" * 32)], "xz")])
    >>> listed.columns["package"], listed.columns["compiler"]
    (['zlib', 'xz'], ['gcc@12.3.0', 'gcc@12.3.0'])
    >>> well_formed_pages([([row], "zlib"), ([dict(row, hash=None)], "xz")]) is None
    True
    """
    rows = list(chain.from_iterable(rows for rows, _ in pages))
    if not rows:
        return None
    packages = list(chain.from_iterable([package] * len(rows) for rows, package in pages))
    return _well_formed(rows, packages)


def nest_shallowly(rows: list) -> bool:
    """Whether rows ``well_formed_rows`` took -- mappings whose fields it reads are strings,
    lists of strings and a ``size`` of "-" or null -- hold nothing else but a ``tarball``
    string: then their text nests three levels, and needs no check of its own.

    >>> row = {"hash": "a" * 32, "versions": ["1.0"], "compiler": "gcc@=12.3.0", "os": "x",
    ...        "platform": "linux", "target": "y", "variants": [], "stacks": ["e4s"]}
    >>> nest_shallowly([row, dict(row, size="-", tarball="t")]), nest_shallowly([dict(row, x=[])])
    (True, False)
    """
    sized = map(contains, rows, repeat("size"))
    with_tarball = map(contains, rows, repeat("tarball"))
    others = map(sub, map(sub, map(len, rows), sized), with_tarball)
    return set(others) <= _READ_FIELDS and set(map(type, map(_TARBALL, rows))) <= {str}


_READ_FIELDS = {len(_FIELDS)}
_TARBALL = methodcaller("get", "tarball", "")


def _well_formed(rows: list, packages: list[str]) -> Listed | None:
    try:
        # nearly every page says "-": a size goes row by row (one C call a row to see it)
        if not set(map(_SIZE, rows)) <= _UNSIZED:
            return None
        columns = [list(map(column, rows)) for column in _COLUMNS]
        hashes, versions, compilers, oss, platforms, targets, variants, stacks = columns
        # join() takes only strings: one C call checks a whole column. The one-string
        # columns repeat a few values: their distinct values are checked (a list or a
        # mapping among them cannot be in a set: TypeError).
        scalars = set([*compilers, *oss, *platforms, *targets])
        all_hashes = "".join(hashes)
        "".join(chain.from_iterable(versions))
        "".join(chain.from_iterable(variants))
        "".join(chain.from_iterable(stacks))
    except (AttributeError, KeyError, TypeError, ValueError):  # not mappings, a field missing...
        return None
    if not (
        {list} == set(map(type, versions)) == set(map(type, variants)) == set(map(type, stacks))
        and {1} == set(map(len, versions))
        and {32} == set(map(len, hashes))
        and HASHES.fullmatch(all_hashes)
        and all(map(itemgetter(0), versions))
        and set(map(type, scalars)) <= {str}
        and all(v and v == v.strip() for v in scalars)
    ):
        return None
    compiler_of = {c: normalize_compiler(c) for c in set(compilers)}
    summarized = (
        list(map(itemgetter(0), versions)),
        list(map(compiler_of.__getitem__, compilers)),
        oss,
        platforms,
        targets,
    )
    columns = {"package": packages, **dict(zip(SUMMARIZED, summarized, strict=True))}
    try:  # an attribute this path does not know of (graph.attributes): its reader, row by row
        columns |= {a.name: [a.page(row) for row in rows] for a in _OTHERS}
    except BadRecord:
        return None
    return Listed(hashes, columns, list(map(tuple, variants)), list(map(tuple, stacks)))


def node_row(node: Any, hash: str | None = None) -> tuple[str, dict[str, Any]]:
    """A spec node of a spec file or index (Spack's spec format v1 to v5): its hash (``hash``
    when given, as an index keys its nodes) and attributes."""
    if not isinstance(node, dict):
        raise BadRecord(f"a spec node must be a mapping, not {described(node)}")
    found = node_attributes(node)
    return check_hash(hash or node.get("hash")), found


def node_record(
    node: Any, source: str, hash: str | None = None, compiler: str | None = None
) -> SpecRecord:
    """A node as a record no store holds (a lockfile's); ``compiler`` is the one to record
    when the node names none (format 5: its compiler dependency's)."""
    hash, found = node_row(node, hash)
    found["compiler"] = found["compiler"] or compiler
    return SpecRecord(hash=hash, **found, versions=(found["version"],), source=source)


class Dependency(NamedTuple):
    name: str
    hash: str
    deptypes: tuple[str, ...]
    #: the virtual packages (``c``, ``mpi``...) it provides to the dependent (format 5)
    virtuals: tuple[str, ...] = ()


def node_dependencies(node: dict) -> list[Dependency]:
    """Each dependency a spec node names.

    >>> [dep] = node_dependencies({"dependencies": [{"name": "gcc", "hash": "a" * 32,
    ...     "parameters": {"deptypes": ["build"], "virtuals": ["c"]}}]})
    >>> dep.name, dep.deptypes, dep.virtuals
    ('gcc', ('build',), ('c',))
    """
    deps = node.get("dependencies") or []
    if isinstance(deps, dict):  # spec format v1: {name: {"hash": ..., "type": [...]}}
        deps = [{"name": name, **(body or {})} for name, body in deps.items()]
    if not isinstance(deps, list):
        raise BadRecord(f"'dependencies' must be a list, not {described(deps)}")
    found = []
    for dep in deps:
        if (quick := _plain_dependency(dep)) is not None:
            found.append(quick)
            continue
        if not isinstance(dep, dict):
            raise BadRecord(f"a dependency must be a mapping, not {described(dep)}")
        parameters = dep.get("parameters") or {}
        if not isinstance(parameters, dict):
            raise BadRecord(
                f"a dependency's 'parameters' must be a mapping, not {described(parameters)}"
            )
        types = dep.get("type")
        if types is None:
            types = parameters.get("deptypes", ())
        virtuals = parameters.get("virtuals") or ()
        found.append(
            Dependency(
                text(dep, "name"),
                check_hash(dep.get("hash")),
                _names(types, "deptypes"),
                _names(virtuals, "virtuals"),
            )
        )
    return found


def _plain_dependency(dep: Any) -> Dependency | None:
    """A well-formed dependency, read without building messages; None for any other, which
    the careful reading then reports. Lockfiles and indices hold thousands of edges."""
    if type(dep) is not dict:
        return None
    parameters = dep.get("parameters") or {}
    if type(parameters) is not dict:
        return None
    name, hash, types = dep.get("name"), dep.get("hash"), dep.get("type")
    if types is None:
        types = parameters.get("deptypes", ())
    virtuals = parameters.get("virtuals") or ()
    if (
        type(name) is str and name == name.strip() and name
        and type(hash) is str and HASH.fullmatch(hash)
        and type(types) in (list, tuple) and set(map(type, types)) <= _STR
        and type(virtuals) in (list, tuple) and set(map(type, virtuals)) <= _STR
    ):  # fmt: skip
        return Dependency(name, hash, tuple(types), tuple(virtuals))
    return None


class Edges(NamedTuple):
    """The dependencies of several nodes as columns: how many each node has, and for every
    edge in order its child's hash, deptypes and virtuals."""

    counts: list[int]
    hashes: list[str]
    deptypes: list[tuple[str, ...]]
    virtuals: list[tuple[str, ...]]


def well_formed_edges(nodes: list[dict]) -> Edges | None:
    """The dependencies of ``nodes`` as Spack >= 0.21 writes them (a list of mappings with
    ``name``, ``hash`` and ``parameters``), read column by column; None when any is unusual,
    for ``node_dependencies`` to read each node and say what is wrong.

    An index of a quarter of a million specs has millions of edges: checked a column at a
    time in C (map, join, set), they cost a fraction of reading them one by one.

    >>> well_formed_edges([{"dependencies": [{"name": "gcc", "hash": "a" * 32,
    ...     "parameters": {"deptypes": ["build"], "virtuals": ["c"]}}]}, {}])
    Edges(counts=[1, 0], hashes=['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'], deptypes=[('build',)], \
virtuals=[('c',)])
    """
    try:
        lists = [n.get("dependencies") or () for n in nodes]
        if not set(map(type, lists)) <= _SEQUENCES:
            return None
        flat = list(chain.from_iterable(lists))
        if not set(map(type, flat)) <= {dict}:
            return None
        names = [d["name"] for d in flat]
        hashes = [d["hash"] for d in flat]
        parameters = [d["parameters"] for d in flat]
        if not set(map(type, parameters)) <= {dict} or any(d.get("type") for d in flat):
            return None
        deptypes = [p["deptypes"] for p in parameters]
        virtuals = [p.get("virtuals") or () for p in parameters]
        if not set(map(type, deptypes)) | set(map(type, virtuals)) <= _SEQUENCES:
            return None
        joined = "".join(hashes)
        "".join(names), "".join(chain.from_iterable(deptypes))
        "".join(chain.from_iterable(virtuals))
    except (KeyError, TypeError, AttributeError):
        return None
    if not (
        set(map(len, hashes)) <= {32}
        and HASHES.fullmatch(joined)
        and all(n and n == n.strip() for n in set(names))
    ):
        return None
    return Edges(list(map(len, lists)), hashes, list(map(tuple, deptypes)),
                 list(map(tuple, virtuals)))  # fmt: skip


_SEQUENCES = {list, tuple}


def _names(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    # set(map(type, ...)) checks every item in C: a lockfile has thousands of edges
    if not isinstance(value, list | tuple) or not set(map(type, value)) <= _STR:
        raise BadRecord(
            f"a dependency's '{what}' must be a list of strings, not {described(value)}"
        )
    return tuple(value)


_STR = {str}
