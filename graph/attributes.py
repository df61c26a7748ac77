"""What a spec is apart from its hash and its dependencies, each attribute declared once.

``ATTRIBUTES`` has one row per attribute of a spec's own: how a page row and a spec node
(spec files, mirror indices, lockfiles) give it, how a spec string shows it, how far apart
two specs that differ in it are, whether its values are nodes of the graph, its place in
the lists that show attributes, its facet, whether spec lists order by it and searches look
inside it, and what the page generator writes for it. Adding an attribute is adding a row
(and its reader functions, here); everything else derives from the table:

- ``SpecRecord``'s and ``SpecQuery``'s fields (``with_attributes``), the readers (page rows,
  spec nodes, the rebuilt site's data), the store's column, table and index of each
  (graph/store), the graph's nodes and edges, the example graph's columns;
- the orderings (``ORDERED``: ``ORDER_KEYS``, GraphQL's ``SpecOrderField``), facets and
  counts (``graph.questions.facets.FACETS``, GraphQL's ``Facets``), the search's attribute
  words (``SEARCHED``), the lookalike key and likeness distances (``WEIGHTS``), the warnings
  about a hash listed twice;
- GraphQL's ``Spec`` fields of plain values and ``SpecFilter``'s fields (schema/specs.py),
  spec strings, the ``--json`` columns of ``cachegraph find`` (cachegraph/printing.py) and
  what ``cachegraph synth`` writes (cachegraph/synth.py).

tests/graph/test_new_attribute.py adds a row to a copy of the package and finds it in each.
Its order is the spec string's: ``package@version%compiler+variants
arch=platform-os-target``.
"""

from __future__ import annotations

import inspect
import math
import re
import reprlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from random import Random
from typing import Any

from .errors import BadRecord
from .spack.names import normalize_compiler

# -- reading a field, and saying what is wrong with it --------------------------------------

_REPR = reprlib.Repr()  # keyword arguments only from Python 3.12
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict = 3, 40, 40, 6, 6


_VERSION_NUMBER = re.compile(r"[0-9]{1,4}")
#: set while a mirror is read: a message names a value's type, never what it holds
_HIDDEN: ContextVar[bool] = ContextVar("values_hidden", default=False)


@contextmanager
def values_hidden() -> Iterator[None]:
    """Within it, ``described`` shows no value: a mirror's file may be a link to any file
    (links are followed, as Spack follows them), and what a file that is not a valid mirror
    file holds must never reach a message, a log or an answer; the message names the path.

    >>> with values_hidden():
    ...     described("s3cr3t"), described({"a": 1}), described(5)
    ('a str of 6 characters', 'a dict of 1 items', 'an int')
    """
    token = _HIDDEN.set(True)
    try:
        yield
    finally:
        _HIDDEN.reset(token)


def shown(value: Any) -> str:
    """A value as a message quotes it (its bounded repr); within ``values_hidden``, a version
    number still (up to four digits: too short to carry anything), else its type and size.

    >>> with values_hidden():
    ...     shown(4), shown("99"), shown("s3cr3t"), shown(None)
    ('4', "'99'", 'a str of 6 characters', 'None')
    """
    number = type(value) in (int, str) and _VERSION_NUMBER.fullmatch(str(value))
    if _HIDDEN.get() and value is not None and not number:
        return described(value)
    return _REPR.repr(value)


def described(value: Any) -> str:
    """A value as a message shows it: bounded in depth and length, whatever the input
    (within ``values_hidden``, its type and size only).

    >>> described([[[[[[1]]]]]]), described(None)
    ('list [[[[...]]]]', 'missing')
    """
    if value is None:
        return "missing"
    if _HIDDEN.get():
        kind = type(value).__name__
        article = "an" if kind[:1] in "aeiou" else "a"
        if isinstance(value, str | bytes):
            return f"{article} {kind} of {len(value)} characters"
        if isinstance(value, list | dict | tuple):
            return f"{article} {kind} of {len(value)} items"
        return f"{article} {kind}"
    text = _REPR.repr(value)
    return f"{type(value).__name__} {text if len(text) < 40 else text[:37] + '...'}"


def text(record: dict, key: str) -> str:
    """The non-empty string ``record[key]``, stripped.

    >>> text({"os": " rhel8 "}, "os")
    'rhel8'
    """
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise BadRecord(f"'{key}' must be a non-empty string, not {described(value)}")
    return value.strip()


def strings(record: dict, key: str) -> tuple[str, ...]:
    value = record.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRecord(f"'{key}' must be a list of strings, not {described(value)}")
    return tuple(value)


def _page_version(row: dict) -> str:
    """A page row's one version (pages write ``versions``: a list that holds exactly one)."""
    versions = strings(row, "versions")
    if len(versions) != 1:
        raise BadRecord(f"'versions' must hold exactly one version, not {list(versions)}")
    return versions[0]


def _node_version(node: dict) -> str:
    version = node.get("version")
    if not isinstance(version, str | int | float) or isinstance(version, bool):
        raise BadRecord(f"'version' must be a string, not {described(version)}")
    return str(version)


def _node_compiler(node: dict) -> str | None:
    """The ``compiler`` field of formats 1-4, or the one a converted record annotates.

    Spack >= 1.0 (format 5) makes compilers dependencies: such a node names none,
    and its reader takes the dependency that provides ``c``, ``cxx`` or ``fortran``.
    """
    compiler = node.get("compiler")
    if not isinstance(compiler, dict) or not compiler.get("name"):
        annotations = node.get("annotations")
        noted = annotations.get("compiler") if isinstance(annotations, dict) else None
        return normalize_compiler(noted) if isinstance(noted, str) and noted else None
    version = compiler.get("version")
    return normalize_compiler(f"{compiler['name']}@{version}" if version else compiler["name"])


def _arch(node: dict, key: str) -> str:
    arch = node.get("arch")
    if not isinstance(arch, dict):
        raise BadRecord(f"'arch' must be a mapping, not {described(arch)}")
    value = arch.get(key)
    if type(value) is str and value and value == value.strip():
        return value
    if key == "target" and isinstance(value, dict):  # newer specs describe the microarchitecture
        value = value.get("name")
    return text({key: value}, key)


_FLAGS = {"cflags", "cppflags", "cxxflags", "fflags", "ldflags", "ldlibs"}


def _node_variants(node: dict) -> tuple[str, ...]:
    """Variant strings as pages write them, sorted by name as Spack prints them.

    >>> _node_variants({"parameters": {"mpi": True, "api": "v18", "cflags": ["-O2", "-g"]}})
    ('api=v18', 'cflags="-O2 -g"', '+mpi')
    """
    parameters = node.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise BadRecord(f"'parameters' must be a mapping, not {described(parameters)}")
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


def variant_text(variants: Sequence[str]) -> str:
    """Variants as a spec string writes them: booleans joined, then each other after a space.

    >>> variant_text(["build_system=cmake", "~ipo", "+tensile"])
    '~ipo+tensile build_system=cmake'
    """
    bools = "".join(v for v in variants if v.startswith(("+", "~")))
    return bools + "".join(" " + v for v in variants if not v.startswith(("+", "~")))


# -- the declaration -------------------------------------------------------------------------


@dataclass(frozen=True)
class Attribute:
    """One attribute of a spec's own: a row of ``ATTRIBUTES``."""

    #: the SpecRecord and SpecQuery field, the index kind, the filter, facet and count name
    name: str
    #: read from a page row; None: the page's own package
    page: Callable[[dict], Any] | None
    #: read from a spec node of any spec format (1 to 5)
    node: Callable[[dict], Any]
    #: its part of a spec string
    shown: Callable[[Any], str]
    #: how far apart two specs that differ in it are (per variant for variants);
    #: None: never compared (nearest specs share their package)
    weight: float | None
    #: the record attribute indexed, when not the field itself
    key: str = ""
    #: several values (variants), each indexed; a filter on it names every one it must have
    many: bool = False
    #: what a filter on it means, when more than equality needs saying
    description: str | None = None
    #: whether its values are nodes of the graph, each spec an edge to its own (a version
    #: is no node: it means nothing apart from its package)
    graph_node: bool = True
    #: a record's value may be None (a spec recorded without a compiler)
    optional: bool = False
    #: its place in the lists that show attributes by how often one looks for them (the
    #: facets, the orderings, the Spec type's fields); the same place: in this table's order
    place: float = math.inf
    #: the Spec type shows it as a plain value (False: schema/specs.py resolves it to an
    #: object of its own type: a Package, a Compiler, a Target)
    field: bool = True
    #: the Spec field's description
    doc: str | None = None
    #: the facet's description
    facet: str = ""
    #: the facet's name, when not the name and an ``s``
    plural: str = ""
    #: a spec list may be ordered by it
    ordered: bool = False
    #: a search word found inside one of its values matches the spec (graph.questions.search)
    searched: bool = False
    #: what the page generator (cachegraph/synth.py) writes for it in a row, given a random
    #: generator and the row so far; None: the generator writes it already (package, version,
    #: compiler, variants, platform, os, target), or ``page`` reads it from other keys
    sample: Callable[[Random, dict], Any] | None = None

    @property
    def indexed(self) -> str:
        return self.key or self.name

    @property
    def facet_name(self) -> str:
        """The facet's name: ``oss`` for ``os``, ``variants`` for ``variants``."""
        return self.plural or (self.name if self.many else self.name + "s")

    @property
    def kind(self) -> str:
        """What counts and facets call one value: ``variant`` for ``variants``."""
        return self.name.removesuffix("s") if self.many else self.name

    @property
    def type(self) -> Any:
        """A record's value: a string, a tuple of strings, or a string or None."""
        return tuple[str, ...] if self.many else str | None if self.optional else str


ATTRIBUTES: tuple[Attribute, ...] = (
    Attribute(
        "package",
        page=None,
        node=lambda n: text(n, "name"),
        shown=str,
        weight=None,
        place=0,
        field=False,
        facet="Package names.",
        ordered=True,
    ),
    Attribute(
        "version",
        page=_page_version,
        node=_node_version,
        shown="@{}".format,
        weight=3.0,
        graph_node=False,
        place=1,
        facet="Versions, as recorded.",
        ordered=True,
    ),
    Attribute(
        "compiler",
        page=lambda r: normalize_compiler(text(r, "compiler")),
        node=_node_compiler,
        shown=lambda c: f"%{c}" if c else "",
        weight=2.0,  # 1.0 when the other is of the same family (likeness.distance)
        key="compiler_key",
        description="Either form of the name; 'none' matches specs recorded without a compiler.",
        optional=True,
        place=2,
        field=False,
        facet="Compilers by normalized name; 'none' for specs built without one.",
        ordered=True,
        searched=True,
    ),
    Attribute(
        "variants",
        page=lambda r: strings(r, "variants"),
        node=_node_variants,
        shown=variant_text,
        weight=1.0,
        many=True,
        description="The spec has every one of these variant settings, as recorded.",
        graph_node=False,
        place=6,
        doc="Variant settings as recorded, e.g. 'backend=torch', '+tensile', '~ipo', "
        "'amdgpu_target:=gfx90a'.",
        facet="Variant settings as recorded ('+mpi', 'build_system=cmake').",
    ),
    Attribute(
        "platform",
        page=lambda r: text(r, "platform"),
        node=lambda n: _arch(n, "platform"),
        shown=" arch={}".format,
        weight=8.0,
        place=5,
        facet="Platforms.",
    ),
    Attribute(
        "os",
        page=lambda r: text(r, "os"),
        node=lambda n: _arch(n, "platform_os"),
        shown="-{}".format,
        weight=4.0,
        place=4,
        facet="Operating systems.",
        ordered=True,
        searched=True,
    ),
    Attribute(
        "target",
        page=lambda r: text(r, "target"),
        node=lambda n: _arch(n, "target"),
        shown="-{}".format,
        weight=2.0,  # 0.5 when the wanted target runs it (likeness.distance)
        place=3,
        field=False,
        facet="Targets.",
        ordered=True,
        searched=True,
    ),
)

#: The attributes a spec has one value of: index kind -> the SpecRecord attribute indexed
SINGLE: dict[str, str] = {a.name: a.indexed for a in ATTRIBUTES if not a.many}
#: The attributes whose values are nodes of the graph (package, compiler, os...)
NODE_KINDS: tuple[str, ...] = tuple(a.name for a in ATTRIBUTES if a.graph_node)
#: The attributes two specs can differ in (every one but the package), and their weights
WEIGHTS: dict[str, float] = {a.name: a.weight for a in ATTRIBUTES if a.weight is not None}
COMPARED: tuple[str, ...] = tuple(WEIGHTS)
#: The attributes by their place: how the facets, the orderings and the Spec type list them
PLACED: tuple[Attribute, ...] = tuple(sorted(ATTRIBUTES, key=lambda a: a.place))
#: The attributes a spec list may be ordered by, in their place
ORDERED: tuple[str, ...] = tuple(a.name for a in PLACED if a.ordered)
#: The attributes a search word may be inside of
SEARCHED: tuple[str, ...] = tuple(a.name for a in ATTRIBUTES if a.searched)


def with_attributes(*, query: bool = False) -> Callable[[type], type]:
    """A class decorator, before ``@dataclass``: a field per attribute after the class's first
    field (``SpecRecord``: after the hash), or before its own fields (``query``: ``SpecQuery``,
    each an optional constraint, a list of values for ``many``).

    >>> from dataclasses import dataclass, fields
    >>> @dataclass
    ... @with_attributes(query=True)
    ... class Query:
    ...     tag: str | None = None
    >>> [f.name for f in fields(Query)]
    ['package', 'version', 'compiler', 'variants', 'platform', 'os', 'target', 'tag']
    """

    def add(cls: type) -> type:
        own = dict(inspect.get_annotations(cls))
        first = {} if query else dict([next(iter(own.items()))])
        declared = {}
        for a in ATTRIBUTES:
            if query:
                declared[a.name] = tuple[str, ...] if a.many else str | None
                setattr(cls, a.name, () if a.many else None)
            else:
                declared[a.name] = a.type
        cls.__annotations__ = {**first, **declared, **own}
        return cls

    return add


def spec_string(spec: Any) -> str:
    """Spack's classic spec string, as the contract defines it.

    >>> from types import SimpleNamespace
    >>> spec_string(SimpleNamespace(package="hipblas", version="6.2.0", compiler="gcc@11.4.0",
    ...     variants=("amdgpu_target=auto", "~asan"), platform="linux", os="ubuntu22.04",
    ...     target="x86_64_v3"))
    'hipblas@6.2.0%gcc@11.4.0~asan amdgpu_target=auto arch=linux-ubuntu22.04-x86_64_v3'
    """
    return "".join([a.shown(getattr(spec, a.name)) for a in ATTRIBUTES])


_PAGE_READERS = [(a.name, a.page) for a in ATTRIBUTES]
_NODE_READERS = [(a.name, a.node) for a in ATTRIBUTES]


def page_attributes(row: dict, package: str) -> dict[str, Any]:
    """The attributes a page row of ``package`` gives, checked."""
    return {name: package if read is None else read(row) for name, read in _PAGE_READERS}


def node_attributes(node: dict) -> dict[str, Any]:
    """The attributes a spec node gives, checked."""
    return {name: read(node) for name, read in _NODE_READERS}


_OWN = [(a.name, a.many) for a in ATTRIBUTES if a.weight is not None]


def own_key(spec: Any) -> tuple:
    """What a spec is apart from its dependencies: two specs with one key are lookalikes."""
    return tuple(
        tuple(sorted(getattr(spec, name))) if many else getattr(spec, name) for name, many in _OWN
    )
