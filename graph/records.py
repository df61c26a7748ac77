"""Turn raw records -- page rows and spec-file nodes -- into SpecRecords.

Each function raises BadRecord saying what is wrong with the record.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Callable
from itertools import chain, repeat
from operator import itemgetter
from sys import intern
from typing import Any, NamedTuple

from .errors import BadRecord
from .model import EMPTY, NO_LAYOUT, SpecRecord
from .names import normalize_compiler

HASH = re.compile(r"[a-z0-9]{32}")


def _text(record: dict, key: str, *, optional: bool = False) -> str:
    value = record.get(key)
    if value is None and optional:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise BadRecord(f"'{key}' must be a non-empty string, not {_shown(value)}")
    return value.strip()


def _strings(record: dict, key: str) -> tuple[str, ...]:
    value = record.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRecord(f"'{key}' must be a list of strings, not {_shown(value)}")
    return tuple(value)


#: repr() of a record's value for a message: bounded in depth and length, whatever the input
_REPR = reprlib.Repr()  # keyword arguments only from Python 3.12
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 3, 40, 40, 6, 6


def _shown(value: Any) -> str:
    """A value as a message shows it.

    >>> _shown([[[[[[1]]]]]]), _shown(None)
    ('list [[[[...]]]]', 'missing')
    """
    if value is None:
        return "missing"
    text = _REPR.repr(value)
    return f"{type(value).__name__} {text if len(text) < 40 else text[:37] + '...'}"


def check_hash(value: Any) -> str:
    if not isinstance(value, str) or not HASH.fullmatch(value):
        raise BadRecord(f"'hash' must be a 32-character Spack hash, not {_shown(value)}")
    return value


def page_record(row: Any, package: str, source: str) -> tuple[SpecRecord, tuple[str, ...]]:
    """A spec_details row of a page, and the stacks it lists."""
    if not isinstance(row, dict):
        raise BadRecord(f"a record must be a mapping, not {_shown(row)}")
    versions = _strings(row, "versions")
    if len(versions) != 1:
        raise BadRecord(f"'versions' must hold exactly one version, not {list(versions)}")
    compiler = _text(row, "compiler")
    record = SpecRecord(
        hash=check_hash(row.get("hash")),
        package=package,
        version=versions[0],
        versions=versions,
        compiler=normalize_compiler(compiler),
        os=_text(row, "os"),
        platform=_text(row, "platform"),
        target=_text(row, "target"),
        variants=_strings(row, "variants"),
        source=source,
        size=page_size(row.get("size")),
    )
    return record, _strings(row, "stacks")


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
    raise BadRecord(f"'size' must be a number of bytes or '-', not {_shown(value)}")


_FIELDS = ("hash", "versions", "compiler", "os", "platform", "target", "variants", "stacks")
_COLUMNS = [itemgetter(name) for name in _FIELDS]
_HASHES = re.compile(r"[a-z0-9]*")


def _sized(row: Any) -> bool:
    return row.get("size", "-") not in ("-", None)


#: The one-value fields a page's ``meta`` summarizes.
SUMMARIZED = ("version", "compiler", "os", "platform", "target")


class Listed(NamedTuple):
    """A page's records, the stacks each lists, and their ``SUMMARIZED`` fields as columns."""

    records: list[SpecRecord]
    stacks: list[tuple[str, ...]]
    columns: dict[str, list]


def well_formed_rows(
    rows: list, package: str, source: str, shared: Callable[[list[tuple]], list[tuple]] = list
) -> Listed | None:
    """The records of a page's rows exactly as the public site writes them.

    None when any row is unusual: then ``page_record`` checks each row and says
    what is wrong. Nearly every row of a large load comes this way, so the
    checks run column by column in C (map, join, set) rather than row by row.
    Strings come back interned, and lists of tuples through ``shared``.
    """
    if not rows:
        return None
    try:
        if any(map(_sized, rows)):  # nearly every page says "-": a size goes row by row
            return None
        columns = [list(map(column, rows)) for column in _COLUMNS]
        hashes, versions, compilers, oss, platforms, targets, variants, stacks = columns
        # join() takes only strings: one C call checks a whole column.
        scalars = [*compilers, *oss, *platforms, *targets]
        "".join(scalars)
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
        and _HASHES.fullmatch(all_hashes)
        and all(map(itemgetter(0), versions))
        and all(v and v == v.strip() for v in set(scalars))
    ):
        return None
    compiler_of = {c: (n := normalize_compiler(c)) and intern(n) for c in set(compilers)}
    as_tuples = shared(list(map(tuple, versions)))
    summarized = (
        list(map(itemgetter(0), as_tuples)),
        list(map(compiler_of.__getitem__, compilers)),
        list(map(intern, oss)),
        list(map(intern, platforms)),
        list(map(intern, targets)),
    )
    records = list(
        map(
            SpecRecord,
            hashes,
            repeat(intern(package)),
            summarized[0],
            as_tuples,
            *summarized[1:],
            shared(list(map(tuple, variants))),
            repeat(NO_LAYOUT),
            repeat(EMPTY),
            repeat(source),
        )
    )
    return Listed(records, list(map(tuple, stacks)), dict(zip(SUMMARIZED, summarized, strict=True)))


def node_record(
    node: Any, source: str, hash: str | None = None, compiler: str | None = None
) -> SpecRecord:
    """A spec node of a spec file or index (Spack's spec format v1 to v5); ``compiler`` is
    the one to record when the node names none (format 5: its compiler dependency's)."""
    if not isinstance(node, dict):
        raise BadRecord(f"a spec node must be a mapping, not {_shown(node)}")
    arch = node.get("arch")
    if not isinstance(arch, dict):
        raise BadRecord(f"'arch' must be a mapping, not {_shown(arch)}")
    target = arch.get("target")
    if isinstance(target, dict):  # newer specs describe the microarchitecture
        target = target.get("name")
    version = node.get("version")
    if not isinstance(version, str | int | float) or isinstance(version, bool):
        raise BadRecord(f"'version' must be a string, not {_shown(version)}")
    return SpecRecord(
        hash=check_hash(hash or node.get("hash")),
        package=_text(node, "name"),
        version=str(version),
        versions=(str(version),),
        compiler=_node_compiler(node.get("compiler"), node.get("annotations")) or compiler,
        os=_text(arch, "platform_os"),
        platform=_text(arch, "platform"),
        target=_text({"target": target}, "target"),
        variants=_variants(node.get("parameters") or {}),
        source=source,
    )


def _node_compiler(compiler: Any, annotations: Any = None) -> str | None:
    """The ``compiler`` field of formats 1-4, or the one a converted record annotates.

    Spack >= 1.0 (format 5) makes compilers dependencies: such a node names none,
    and the loader takes the dependency that provides ``c``, ``cxx`` or ``fortran``.
    """
    if not isinstance(compiler, dict) or not compiler.get("name"):
        noted = annotations.get("compiler") if isinstance(annotations, dict) else None
        return normalize_compiler(noted) if isinstance(noted, str) and noted else None
    version = compiler.get("version")
    return normalize_compiler(f"{compiler['name']}@{version}" if version else compiler["name"])


_FLAGS = {"cflags", "cppflags", "cxxflags", "fflags", "ldflags", "ldlibs"}


def _variants(parameters: dict) -> tuple[str, ...]:
    """Variant strings as pages write them, sorted by name as Spack prints them."""
    variants = []
    for name in sorted(parameters):
        value = parameters[name]
        if value is True:
            variants.append(f"+{name}")
        elif value is False:
            variants.append(f"~{name}")
        elif isinstance(value, list):
            if value and name not in _FLAGS:
                variants.append(f"{name}={','.join(map(str, value))}")
            elif value:
                variants.append(f'{name}="{" ".join(map(str, value))}"')
        elif value is not None:
            variants.append(f"{name}={value}")
    return tuple(variants)


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
        raise BadRecord(f"'dependencies' must be a list, not {_shown(deps)}")
    found = []
    for dep in deps:
        if (quick := _plain_dependency(dep)) is not None:
            found.append(quick)
            continue
        if not isinstance(dep, dict):
            raise BadRecord(f"a dependency must be a mapping, not {_shown(dep)}")
        parameters = dep.get("parameters") or {}
        if not isinstance(parameters, dict):
            raise BadRecord(
                f"a dependency's 'parameters' must be a mapping, not {_shown(parameters)}"
            )
        types = dep.get("type")
        if types is None:
            types = parameters.get("deptypes", ())
        virtuals = parameters.get("virtuals") or ()
        found.append(
            Dependency(
                _text(dep, "name"),
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


def _names(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    # set(map(type, ...)) checks every item in C: a lockfile has thousands of edges
    if not isinstance(value, list | tuple) or not set(map(type, value)) <= _STR:
        raise BadRecord(f"a dependency's '{what}' must be a list of strings, not {_shown(value)}")
    return tuple(value)


_STR = {str}
