"""Spack environment lockfiles (``spack.lock``, versions 2 to 8) read into their concrete specs.

Versions 2 and 3 key their nodes by a build hash and give each node its DAG
hash in ``hash`` (version 2 refers to dependencies by DAG hash, version 3 by
``build_hash``); versions 4 and later key nodes by their DAG hash. A build
cache holds specs by DAG hash, so that is the identity used here. When a
version 2 or 3 file has several nodes with one DAG hash, the first reached
from the roots is kept, as Spack does (``../shared/reference/spack/lockfile.rst``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import accumulate, chain
from typing import Any

import orjson

from .. import deadline
from ..attributes import described
from ..errors import BadArgument, BadRecord
from ..spack.names import normalize_compiler
from ..store.records import SpecRecord
from .frontmatter import MAX_NESTING, check_nesting, surely_shallow_value
from .rows import HASH, HASHES, node_record

VERSIONS = range(2, 9)
#: the virtuals a compiler provides (Spack >= 1.0 records compilers as dependencies)
COMPILER_VIRTUALS = frozenset({"c", "cxx", "fortran"})


@dataclass(frozen=True)
class Environment:
    """An environment's concrete specs: each by DAG hash, roots first, then in file order."""

    version: int
    roots: tuple[str, ...]
    #: DAG hash -> the node's own attributes
    specs: dict[str, SpecRecord]
    #: DAG hash -> (name, DAG hash) of each direct dependency
    dependencies: dict[str, tuple[tuple[str, str], ...]]
    #: DAG hashes of the specs marked ``external`` (installed outside Spack: never from a cache)
    externals: frozenset[str] = frozenset()

    def below(self, root: str) -> dict[str, None]:
        """The root and every spec of the environment below it, depth first.

        >>> env = Environment(4, ("a",), {}, {"a": (("b", "b"),), "b": (("c", "c"),), "c": ()})
        >>> list(env.below("a"))
        ['a', 'b', 'c']
        """
        return walk([root], lambda h: [d for _, d in self.dependencies.get(h, ())])

    def dependents(self) -> dict[str, tuple[str, ...]]:
        """Each spec's direct dependents in the environment (a spec is not its own).

        >>> env = Environment(4, ("a",), {"a": None, "b": None}, {"a": (("b", "b"),), "b": ()})
        >>> env.dependents()
        {'a': (), 'b': ('a',)}
        """
        users: dict[str, list[str]] = {h: [] for h in self.specs}
        for hash, deps in self.dependencies.items():
            for _, dep in deps:
                if dep in users and dep != hash:
                    users[dep].append(hash)
        return {h: tuple(u) for h, u in users.items()}


def walk(starts: Iterable[str], following: Callable[[str], Iterable[str]]) -> dict[str, None]:
    """Every key reached from ``starts`` through ``following``, each once, depth first in
    the order given (the starts included): the one walk over a lockfile's specs.

    >>> edges = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}
    >>> list(walk(["a"], edges.__getitem__))
    ['a', 'b', 'd', 'c']
    """
    seen: dict[str, None] = {}
    stack = list(starts)[::-1]
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        deadline.check()
        seen[key] = None
        stack += list(following(key))[::-1]
    return seen


def read_lockfile(doc: Any) -> Environment:
    """The environment a parsed ``spack.lock`` describes; BadArgument saying what is wrong.

    >>> env = read_lockfile({"_meta": {"lockfile-version": 4}, "roots": [{"hash": "b" * 32}],
    ...     "concrete_specs": {"b" * 32: {"name": "zlib", "version": "1.3", "hash": "b" * 32,
    ...         "arch": {"platform": "linux", "platform_os": "rhel8", "target": "zen2"},
    ...         "compiler": {"name": "gcc", "version": "12.1.0"}}}})
    >>> env.roots, env.specs["b" * 32].compiler
    (('bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',), 'gcc@12.1.0')
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("concrete_specs"), dict):
        raise BadArgument("not a spack.lock: it has no 'concrete_specs' mapping")
    if not surely_shallow_value(doc) and _nests_deeper(doc, MAX_NESTING):
        raise BadArgument(
            f"not a spack.lock: it nests more than {MAX_NESTING} levels deep (real ones: 7)"
        )
    meta = doc.get("_meta")
    if not isinstance(meta, dict):
        raise BadArgument(
            f"'_meta' must be a mapping with a 'lockfile-version', not {described(meta)}"
        )
    roots = doc.get("roots", [])
    if not isinstance(roots, list) or not all(
        isinstance(r, dict) and isinstance(r.get("hash"), str) for r in roots
    ):
        shape = '{"hash": ..., "spec": ...}'
        raise BadArgument(f"'roots' must be a list of {shape} mappings, not {described(roots)}")
    version = meta.get("lockfile-version")
    if type(version) is not int or version not in VERSIONS:
        raise BadArgument(
            f"lockfile-version {version!r} is not one this reads (2 to 8: Spack 0.13 to 1.3)"
        )
    by_key: dict[str, dict] = {}
    for key, node in doc["concrete_specs"].items():
        if version == 2 and isinstance(node, dict) and len(node) == 1 and "name" not in node:
            [(name, body)] = node.items()  # spec format 1: {name: body}
            node = {"name": name, **body} if isinstance(body, dict) else node
        by_key[key] = node
    # The key a dependency names: a build hash in version 3, a DAG hash otherwise.
    dag_of = {key: _dag_hash(key, node, version) for key, node in by_key.items()}
    node_of_dag = {}
    for key in _reached_first(doc, by_key, version):
        node_of_dag.setdefault(dag_of[key], key)
    specs: dict[str, SpecRecord] = {}
    dependencies: dict[str, tuple[tuple[str, str], ...]] = {}
    keys = list(node_of_dag.values())
    quick = _usual_dependencies([by_key[key] for key in keys], version)
    for i, (dag, key) in enumerate(node_of_dag.items()):
        node = by_key[key]
        try:
            names, hashes, virtuals = _dependencies(node, version) if quick is None else quick[i]
            compiler = _compiler(hashes, virtuals, by_key)
            record = node_record(node, f"concrete_specs/{key}", dag, compiler)
        except BadRecord as exc:
            raise BadArgument(f"concrete_specs/{key}: {exc}") from None
        specs[dag] = record
        dependencies[dag] = tuple(zip(names, map(dag_of.get, hashes, hashes), strict=True))
    roots = tuple(dict.fromkeys(dag_of[r] for r in _root_keys(doc, by_key)))
    order = [*roots, *(h for h in specs if h not in roots)]
    externals = frozenset(dag for dag, key in node_of_dag.items() if by_key[key].get("external"))
    return Environment(
        version,
        roots,
        {h: specs[h] for h in order},
        {h: dependencies[h] for h in order},
        externals,
    )


def lockfile_document(data: bytes) -> Any:
    """The JSON of a ``spack.lock`` file's bytes; BadArgument when it is no JSON or nests too
    deeply for anything to read it safely.

    >>> lockfile_document(b'{"_meta": {"lockfile-version": 6}}')
    {'_meta': {'lockfile-version': 6}}
    >>> lockfile_document(b"[" * 100 + b"]" * 100)
    Traceback (most recent call last):
    ...
    cachegraph.graph.errors.BadArgument: JSON nests more deeply than any real file (over 64 ...
    """
    try:
        check_nesting(data)
        return orjson.loads(data)
    except BadRecord as exc:
        raise BadArgument(exc.message) from None
    except orjson.JSONDecodeError as exc:
        raise BadArgument(f"not JSON: {exc}") from None


def _nests_deeper(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests more than ``limit`` levels (without recursing).

    >>> _nests_deeper({"a": [[1]]}, 3), _nests_deeper({"a": [[1]]}, 2)
    (False, True)
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        inner = item.values() if isinstance(item, dict) else item
        stack += [(v, depth + 1) for v in inner if isinstance(v, dict | list)]
    return False


def _dag_hash(key: str, node: Any, version: int) -> str:
    if version <= 3 and isinstance(node, dict) and isinstance(node.get("hash"), str):
        return node["hash"]
    return key


def _root_keys(doc: dict, by_key: dict) -> list[str]:
    """The keys of the roots (``read_lockfile`` checked each is a mapping with a hash)."""
    return [r["hash"] for r in doc.get("roots", []) if r["hash"] in by_key]


#: A node's dependencies as columns: their names, the keys the lockfile names them by (a
#: build hash in version 3, a DAG hash otherwise) and the virtuals each provides to it.
Dependencies = tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[str, ...], ...]]


def _dependencies(node: dict, version: int) -> Dependencies:
    """Each dependency a node names: only what coverage needs of it, checked as it is read
    (a 500-spec lockfile has some 5,000 edges; ``records.node_dependencies`` reads more).

    >>> _dependencies({"dependencies": [{"name": "zlib", "hash": "a" * 32,
    ...     "parameters": {"virtuals": "zlib-api"}}]}, 6)
    (('zlib',), ('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',), (('zlib-api',),))
    """
    if not isinstance(node, dict):  # as rows.node_row says it
        raise BadRecord(f"a spec node must be a mapping, not {described(node)}")
    deps = node.get("dependencies") or []
    if isinstance(deps, dict):  # spec format v1: {name: {"hash": ..., "type": [...]}}
        deps = [{"name": name, **body} if isinstance(body, dict) else body
                for name, body in deps.items()]  # fmt: skip
    if not isinstance(deps, list):
        raise BadRecord(f"'dependencies' must be a list, not {type(deps).__name__}")
    key = "build_hash" if version == 3 else "hash"
    names, hashes, provided = [], [], []
    for dep in deps:
        if not isinstance(dep, dict):
            raise BadRecord(f"a dependency must be a mapping, not {type(dep).__name__}")
        name, hash = dep.get("name"), dep.get(key, dep.get("hash"))
        if not isinstance(name, str) or not isinstance(hash, str) or not HASH.fullmatch(hash):
            raise BadRecord(f"a dependency needs a 'name' and a 32-character '{key}': {dep!r:.80}")
        parameters = dep.get("parameters") or {}
        if not isinstance(parameters, dict):
            raise BadRecord(
                f"a dependency's 'parameters' must be a mapping, not {described(parameters)}"
            )
        virtuals = parameters.get("virtuals") or ()
        if isinstance(virtuals, str):
            virtuals = (virtuals,)
        if not isinstance(virtuals, list | tuple):
            raise BadRecord(
                f"a dependency's 'virtuals' must be a list of strings, not {described(virtuals)}"
            )
        names.append(name)
        hashes.append(hash)
        provided.append(tuple(v for v in virtuals if isinstance(v, str)))
    return tuple(names), tuple(hashes), tuple(provided)


_NONE: dict = {}


def _usual_dependencies(nodes: list[Any], version: int) -> list[Dependencies] | None:
    """What ``_dependencies`` reads of each node, for all of them at once when every
    dependency has the usual shape (a mapping with a string ``name``, a 32-character
    ``hash`` -- ``build_hash`` in version 3 -- and, if any, ``parameters`` whose
    ``virtuals`` are a list of strings); None otherwise, for ``_dependencies`` to read
    the nodes one by one and say what is wrong.

    Checked column by column over the whole lockfile, a few C calls each: one at a time,
    the checks of its 5,000 edges were a third of reading a 500-spec lockfile.

    >>> node = {"dependencies": [{"name": "zlib", "hash": "a" * 32,
    ...     "parameters": {"virtuals": ["zlib-api"]}}]}
    >>> _usual_dependencies([node, {}], 6) == [_dependencies(node, 6), ((), (), ())]
    True
    >>> _usual_dependencies([{"dependencies": [{"name": "zlib", "hash": "A" * 32}]}], 6)
    """
    key = "build_hash" if version == 3 else "hash"
    try:
        lists = [node.get("dependencies") or [] for node in nodes]
        if not set(map(type, lists)) <= {list}:
            return None
        deps = list(chain.from_iterable(lists))
        if not set(map(type, deps)) <= {dict}:
            return None
        names = [dep.get("name") for dep in deps]
        hashes = [dep.get(key) for dep in deps]
        parameters = [dep.get("parameters") or _NONE for dep in deps]
        if not set(map(type, parameters)) <= {dict}:
            return None
        virtuals = [p.get("virtuals") or () for p in parameters]
        if not set(map(type, virtuals)) <= {list, tuple}:
            return None
        "".join(names), "".join(chain.from_iterable(virtuals))  # TypeError: not all strings
        joined = "".join(hashes)
    except (AttributeError, TypeError):  # a node not a mapping, a value not a string
        return None
    if not (set(map(len, hashes)) <= {32} and HASHES.fullmatch(joined)):
        return None
    provided = list(map(tuple, virtuals))
    ends = list(accumulate(map(len, lists)))
    return [
        (tuple(names[start:end]), tuple(hashes[start:end]), tuple(provided[start:end]))
        for start, end in zip([0, *ends], ends, strict=False)
    ]


def _reached_first(doc: dict, by_key: dict, version: int) -> list[str]:
    """Node keys: those reached from the roots first (depth first), then the rest."""
    if version > 3:
        return list(by_key)
    dag_to_key: dict[str, str] = {}
    for key, node in by_key.items():
        dag_to_key.setdefault(_dag_hash(key, node, version), key)

    def following(key: str) -> list[str]:
        try:
            _, hashes, _ = _dependencies(by_key[key], version)
        except BadRecord:
            return []
        # version 2 names dependencies by DAG hash, version 3 by build hash (the key)
        keys = [dag_to_key.get(h, h) for h in hashes] if version == 2 else hashes
        return [k for k in keys if k in by_key]

    seen = walk(_root_keys(doc, by_key), following)
    return [*seen, *(k for k in by_key if k not in seen)]


def _compiler(hashes: tuple[str, ...], virtuals: tuple[tuple[str, ...], ...],
              by_key: dict) -> str | None:  # fmt: skip
    """Spack 1.0: the dependency providing c, cxx or fortran, as ``name@version``."""
    for hash, provided in zip(hashes, virtuals, strict=True):
        if provided and not COMPILER_VIRTUALS.isdisjoint(provided):
            provider = by_key.get(hash)
            if not isinstance(provider, dict):
                continue
            name, version = provider.get("name"), provider.get("version")
            if isinstance(name, str) and isinstance(version, str | int | float):
                return normalize_compiler(f"{name}@{version}")
    return None
