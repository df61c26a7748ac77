"""A spec as a row: ``SpecRecord``, the light object made when something asks for a row.

The store holds specs as columns; a record is made from them for the rows a
question reads (a page of an answer, the specs a resolver walks), and nothing
keeps it. Records made for a lockfile's specs, which no store holds, are the
same objects with ``rank`` -1. ``MirrorInfo`` is a mirror as loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..attributes import with_attributes
from ..spack.names import NO_COMPILER

EMPTY: frozenset[str] = frozenset()
NO_LAYOUT: Mapping[str, frozenset[str]] = MappingProxyType({})


@dataclass(slots=True, eq=False)
@with_attributes()
class SpecRecord:
    """One spec, however many pages, mirrors and tags list it: its hash, then a field per
    attribute (``graph.attributes``), then these."""

    hash: str
    versions: tuple[str, ...]
    #: tag -> the stacks that hold this spec in that tag; a key for every tag listing it
    stacks: Mapping[str, frozenset[str]] = field(default_factory=lambda: NO_LAYOUT)
    #: the stacks that hold it in any tag
    all_stacks: frozenset[str] = EMPTY
    #: where the record came from, for reports ("path" or "path#node")
    source: str = ""
    #: False for a spec known only from a spec file or index node
    from_page: bool = True
    #: the binary tarball's size in bytes, when a source says
    size: float | None = None
    #: where the tarball is, in the first mirror (by name) holding it
    tarball: str = ""
    #: names of the mirrors holding it
    mirrors: frozenset[str] = EMPTY
    #: its row in the store (its position in contract order); -1 when no store holds it
    rank: int = -1

    @property
    def compiler_key(self) -> str:
        return self.compiler or NO_COMPILER

    def stacks_in(self, tag: str | None) -> frozenset[str]:
        return self.all_stacks if tag is None else self.stacks.get(tag, EMPTY)


@dataclass(frozen=True, slots=True)
class MirrorInfo:
    """A build-cache mirror as loaded: the attributes of its graph node."""

    name: str
    location: str
    layout: str  # "v2" or "v3"
    tag: str
    stack: str
    #: its spec files are clearsigned (v2: ``*.spec.json.sig`` or ``_pgp/`` keys; v3: key manifests)
    signed: bool = False
    #: the errors and warnings met reading it (the load report has each, by path)
    errors: int = 0
    warnings: int = 0
