"""Which packages provide which virtual (``mpi``, ``blas``, ``zlib-api``...), as Spack's
package repository says.

A cache's Spack >= 0.21 specs name what each dependency edge provides, but an older spec
names none, and a provider nobody depends on appears on no edge. Spack answers from its
package repository: ``Spec._satisfies`` asks ``pkg.provides``, and
``reconstruct_virtuals_on_edges`` labels the edges of spec files of formats 1-3 as it reads
them (never those of a build-cache index). Without the repository here, ``virtuals.json``
holds its ``provides(...)`` directives, read from ``spack/spack-packages`` by
``bench/virtuals_table.py``: its ``commit`` and ``commit_date`` say which.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadArgument
from .versions import VersionList, parse_versions

TABLE = Path(__file__).with_name("virtuals.json")


@dataclass(frozen=True, slots=True)
class Provision:
    """``provides("mpi@:3.1", when="@2:")`` of a package: the virtual's versions (None for
    any) and the condition on the provider (``""`` for always)."""

    package: str
    versions: VersionList | None
    when: str


@functools.cache  # one fixed file, read once
def _table() -> dict:
    return json.loads(TABLE.read_text())


def origin() -> str:
    """Where the table comes from.

    >>> origin().startswith("spack/spack-packages@")
    True
    """
    table = _table()
    return f"spack/spack-packages@{table['commit'][:12]} ({table['commit_date'][:10]})"


def names() -> frozenset[str]:
    """Every virtual the table knows.

    >>> {"mpi", "blas", "zlib-api", "c"} <= names(), "openmpi" in names()
    (True, False)
    """
    return frozenset(_table()["providers"])


@functools.cache  # one entry per virtual of a fixed table
def _provisions(virtual: str) -> tuple[Provision, ...]:
    found = []
    for package, versions, when in _table()["providers"].get(virtual, ()):
        try:
            parsed = parse_versions(versions[1:]) if versions else None
        except BadArgument:
            parsed = None
        found.append(Provision(package, parsed, when))
    return tuple(found)


def providers(virtual: str) -> tuple[Provision, ...]:
    """The packages providing ``virtual``, each with its versions and condition.

    >>> [p.package for p in providers("zlib-api")]
    ['zlib', 'zlib-ng']
    >>> [(str(p.versions), p.when) for p in providers("mpi") if p.package == "openmpi"][-1]
    (':3.1', '@2.0.0:')
    """
    return _provisions(virtual) if virtual in names() else ()


@functools.cache  # one entry per package name of a fixed table
def _provided_by() -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for virtual, rows in _table()["providers"].items():
        for package, _, _ in rows:
            found.setdefault(package, set()).add(virtual)
    return {p: frozenset(v) for p, v in found.items()}


def provided_by(package: str) -> frozenset[str]:
    """The virtuals ``package`` may provide (under any condition).

    >>> sorted(provided_by("openmpi")), sorted(provided_by("zlib"))
    (['mpi'], ['zlib-api'])
    """
    return _provided_by().get(package, frozenset())


def needed_by(package: str) -> frozenset[str]:
    """The virtuals ``package`` may depend on, languages (``c``, ``cxx``, ``fortran``) aside.

    >>> sorted(needed_by("hdf5"))
    ['java', 'mpi', 'pkgconfig', 'szip', 'zlib-api']
    """
    return frozenset(_table()["needs"].get(package, ()))


def reconstructed(nodes: list[dict]) -> list[dict]:
    """The nodes of one old spec file, each edge that names no virtual labelled as Spack's
    ``reconstruct_virtuals_on_edges`` labels it: with the virtuals the parent's package
    depends on that the child's package provides. Nodes are copied, never changed.

    >>> [node] = reconstructed([{"name": "hdf5", "dependencies": [
    ...     {"name": "zlib", "hash": "h", "type": ["link"]}]}])
    >>> node["dependencies"][0]["parameters"]
    {'virtuals': ['zlib-api']}
    """
    return [_labelled(node) for node in nodes]


def _labelled(node: dict) -> dict:
    deps, parent = node.get("dependencies"), node.get("name")
    needs = needed_by(parent) if isinstance(parent, str) else frozenset()
    if not needs or not isinstance(deps, list | dict):
        return node
    if isinstance(deps, dict):  # format 1: {name: {"hash": ..., "type": [...]}}
        labelled = {name: _edge(needs, name, body) for name, body in deps.items()}
    else:
        labelled = [_edge(needs, dep.get("name"), dep) if isinstance(dep, dict) else dep
                    for dep in deps]  # fmt: skip
    return {**node, "dependencies": labelled}


def _edge(needs: frozenset[str], child: object, dep: object) -> object:
    """One dependency, labelled when it names no virtual (malformed ones are left as they
    are, for the reader to report)."""
    if not isinstance(dep, dict) or not isinstance(child, str):
        return dep
    parameters = dep.get("parameters") or {}
    if not isinstance(parameters, dict) or parameters.get("virtuals"):
        return dep
    labels = sorted(needs & provided_by(child))
    return {**dep, "parameters": {**parameters, "virtuals": labels}} if labels else dep
