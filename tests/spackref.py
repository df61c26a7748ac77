"""A small reading of Spack 1.1's rules for "does this spec satisfy that constraint", over the
raw spec nodes of mirror files: the reference the project's answers are compared with.

Written from Spack 1.1's ``lib/spack/spack/spec.py`` (``Spec._satisfies``,
``reconstruct_virtuals_on_edges``, ``DeprecatedCompilerSpec``), ``spec_parser.py`` and
``aliases.py``; it shares no code with ``cachegraph.graph`` (its own constraint reader,
version order, variant reading and DAG walk), only the providers table, which is data taken
from spack-packages. Constraints must separate their parts with spaces (``hdf5 +mpi
%c=gcc@12: ^[virtuals=mpi] openmpi``).

The rules, each as Spack 1.1 has it:

- ``^dep``: ``_satisfies`` builds ``lhs_edges`` from ``traverse_edges(root=False,
  cover="edges", deptype=("link", "run"))`` plus ``edges_to_dependencies(depflag=BUILD)`` of
  the root, keyed by child name and by every virtual on the edge; a virtual ``^mpi`` needs
  an edge providing mpi; ``^[virtuals=v]`` needs some candidate edge providing each ``v``;
  ``^[deptypes=...]`` is not asked (only the direct branch compares depflags); the child
  must satisfy the node (``deps=False``).
- ``%dep`` (direct): on a spec whose ``original_spec_format() < 5`` the recorded compiler
  (``compiler_node_attribute``, a name@version node) must satisfy the node; otherwise some
  edge of ``edges_to_dependencies(name, virtuals=...)`` (any of the virtuals) whose depflag
  holds every asked deptype leads to a child satisfying it. ``%clang`` is read as ``llvm``
  (``LEGACY_COMPILER_TO_BUILTIN``), so it never meets an old spec's recorded ``clang``, and
  ``%c`` never meets a recorded legacy name (``oneapi`` is no package to ask ``provides``).
- a virtual name (no package of that name): the spec's package ``provides`` it with a
  ``when`` the spec meets and versions intersecting the asked ones; nothing else of the node
  is asked. The project's extension, followed here: an edge naming the virtual makes its
  child a provider when the table lists no provision of it by the child's package.
- edges carry the virtuals Spack holds after reading: an index's as recorded
  (``Database._read_from_file``, ``_assign_dependencies``), a spec file's of formats 1-3
  as ``reconstruct_virtuals_on_edges`` gives them (``SpecfileV1.load``, ``SpecfileV2.load``):
  the parent's package depends on the virtual, the child's provides it (``as_spack_reads``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import archspec.cpu

TABLE = json.loads((Path(__file__).parents[1] / "graph" / "spack" / "virtuals.json").read_text())
ALIASES = {"clang": "llvm", "oneapi": "intel-oneapi-compilers", "rocmcc": "llvm-amdgpu",
           "intel": "intel-oneapi-compilers-classic", "arm": "acfl"}  # fmt: skip
INFINITE = ["stable", "nightly", "trunk", "head", "master", "main", "develop"]


# -- versions, as Spack orders them ---------------------------------------------------------


def _parts(version: str) -> list:
    out = []
    for number, word in re.findall(r"(\d+)|([A-Za-z]+)", version):
        if number:
            out.append((1, int(number)))
        elif word in INFINITE:
            out.append((2, INFINITE.index(word)))
        else:
            out.append((0, word))
    return out


def _le(a: str, b: str) -> bool:
    """a <= b, where b stands for itself and every b.x."""
    pa, pb = _parts(a), _parts(b)
    return pa[: len(pb)] == pb or pa <= pb


def version_in(version: str, wanted: str) -> bool:
    """Whether ``version`` is in the list written after ``@``."""
    for part in wanted.split(","):
        if part.startswith("="):
            if version == part[1:]:
                return True
            continue
        low, colon, high = part.partition(":")
        if not colon:
            high = low
        if (not low or _le(low, version) or _parts(version)[: len(_parts(low))] == _parts(low)) \
                and (not high or _le(version, high)):  # fmt: skip
            return True
    return False


def versions_meet(a: str, b: str) -> bool:
    """Whether two version lists share a version (ranges only)."""
    for x in a.split(","):
        for y in b.split(","):
            xl, _, xh = x.partition(":") if ":" in x else (x, "", x)
            yl, _, yh = y.partition(":") if ":" in y else (y, "", y)
            if (not xl or not yh or _le(xl, yh)) and (not yl or not xh or _le(yl, xh)):
                return True
    return False


# -- constraints --------------------------------------------------------------------------


@dataclass
class Want:
    name: str | None = None
    versions: str | None = None
    bools: dict = field(default_factory=dict)
    values: list = field(default_factory=list)  # (name, values or None, exact)
    target: str | None = None
    os: str | None = None
    platform: str | None = None
    hash: str | None = None
    direct: list = field(default_factory=list)
    virtuals: tuple = ()
    deptypes: tuple = ()
    alias: str | None = None


def read(text: str) -> tuple[Want, list[Want]]:
    """(root, ^nodes) of a space-separated constraint."""
    root = Want()
    deps: list[Want] = []
    current = root
    words = text.split()
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word[0] in "^%":
            sigil, rest = word[0], word[1:]
            virtuals: tuple = ()
            deptypes: tuple = ()
            if rest.startswith("["):
                inner = rest[1:-1]
                for pair in inner.split():
                    k, _, v = pair.partition("=")
                    if k == "virtuals":
                        virtuals = tuple(v.split(","))
                    else:
                        deptypes = tuple(v.split(","))
                rest = words[i]
                i += 1
            if re.match(r"^[\w,-]+=", rest):
                names, _, rest = rest.partition("=")
                virtuals = tuple(names.split(","))
            node = Want(virtuals=virtuals, deptypes=deptypes)
            _word(node, rest)
            if sigil == "%":
                if node.name in ALIASES:
                    node.alias, node.name = node.name, ALIASES[node.name]
                current.direct.append(node)
            else:
                deps.append(node)
                current = node
            continue
        _word(current, word)
    return root, deps


def _word(node: Want, word: str) -> None:
    if word.startswith("/"):
        node.hash = word[1:]
    elif word[0] in "+~":
        node.bools[word[1:]] = word[0] == "+"
    elif "=" in word:
        key, op, value = re.match(r"([\w-]+)(:?=)(.*)", word).groups()
        if key in ("target", "os", "platform"):
            setattr(node, key, value)
        else:
            node.values.append((key, None if value == "*" else value.split(","), op == ":="))
    else:
        name, at, versions = word.partition("@")
        if name:
            node.name = name
        if at:
            node.versions = versions


# -- the raw nodes ------------------------------------------------------------------------


def deps_of(node: dict) -> list[tuple[str, str, set, tuple]]:
    """(name, hash, deptypes, recorded virtuals) of each dependency, in any spec format."""
    deps = node.get("dependencies") or []
    if isinstance(deps, dict):
        deps = [{"name": n, **b} for n, b in deps.items()]
    found = []
    for d in deps:
        params = d.get("parameters") or {}
        types = d.get("type") if d.get("type") is not None else params.get("deptypes", ())
        found.append((d["name"], d["hash"], set(types), tuple(params.get("virtuals") or ())))
    return found


def spec_format(node: dict) -> int:
    annotations = node.get("annotations")
    if annotations:
        return int(annotations["original_specfile_version"])
    return 4 if "compiler" in node else 5


def old_compiler(node: dict) -> tuple[str, str] | None:
    if isinstance(node.get("compiler"), dict):
        c = node["compiler"]
        return c["name"], str(c["version"]).lstrip("=")
    noted = (node.get("annotations") or {}).get("compiler")
    if noted:
        name, _, version = noted.partition("@")
        return name, version.lstrip("=")
    return None


def as_spack_reads(doc: dict) -> list[dict]:
    """A spec file's nodes as ``Spec.from_dict`` leaves them: formats 1-3 with each unlabelled
    edge given ``needs(parent) & provides(child)`` (``reconstruct_virtuals_on_edges``)."""
    spec = doc["spec"]
    if isinstance(spec, list):
        nodes = [{"name": name, **body} for entry in spec for name, body in entry.items()]
        version = 1
    else:
        nodes, version = spec["nodes"], int(spec["_meta"]["version"])
    if version > 3:
        return nodes
    read = []
    for node in nodes:
        needs = set(TABLE["needs"].get(node["name"], ()))
        deps = []
        for name, hash, types, virtuals in deps_of(node):
            labels = virtuals or sorted(needs & {v for v, _, _ in _provides_table(name)})
            deps.append({"name": name, "hash": hash, "parameters": {
                "deptypes": sorted(types), "virtuals": list(labels)}})  # fmt: skip
        read.append({**node, "dependencies": deps})
    return read


def _params(node: dict) -> dict:
    return node.get("parameters") or {}


def _provides_table(package: str) -> list:
    return [(v, ver, when) for v, rows in TABLE["providers"].items() for p, ver, when in rows
            if p == package]  # fmt: skip


class Reference:
    """Spack's answers over ``nodes`` (hash -> raw node)."""

    def __init__(self, nodes: dict[str, dict]) -> None:
        self.nodes = nodes
        self.packages = {n["name"] for n in nodes.values()}
        self.recorded = {v for n in nodes.values() for *_, vs in deps_of(n) for v in vs}
        self.children_providing: dict[str, set[str]] = {}
        for n in nodes.values():
            for _, h, _, vs in deps_of(n):
                for v in vs:
                    self.children_providing.setdefault(v, set()).add(h)

    def virtual(self, name: str) -> bool:
        return name not in self.packages and (name in TABLE["providers"] or name in self.recorded)

    def edges(self, hash: str) -> list[tuple[str, str, set, set]]:
        """(parent hash, child hash, deptypes, virtuals) of a node's edges to loaded nodes."""
        node = self.nodes[hash]
        found = []
        for _, child, types, virtuals in deps_of(node):
            if child not in self.nodes:
                continue
            found.append((hash, child, types, set(virtuals)))
        return found

    def lhs_edges(self, hash: str) -> list:
        found, seen, stack = [], set(), [hash]
        while stack:
            h = stack.pop()
            if h in seen:
                continue
            seen.add(h)
            for edge in self.edges(h):
                if edge[2] & {"link", "run"}:
                    found.append(edge)
                    stack.append(edge[1])
        found += [e for e in self.edges(hash) if "build" in e[2]]
        return found

    def provides(self, hash: str, virtual: str, versions: str | None) -> bool:
        node = self.nodes[hash]
        for v, ver, when in _provides_table(node["name"]):
            if v != virtual:
                continue
            if versions and ver and not versions_meet(versions, ver[1:]):
                continue
            if when and not self._when(node, when):
                continue
            return True
        listed = any(v == virtual for v, _, _ in _provides_table(node["name"]))
        return versions is None and not listed and hash in self.children_providing.get(virtual, ())

    def _when(self, node: dict, when: str) -> bool:
        want = Want()
        for word in when.split():
            if word[0] in "%^":
                continue
            if word.startswith("@"):
                want.versions = word[1:]
            else:
                _word(want, word)
        return self.node_ok(node, want)

    def node_ok(self, node: dict, want: Want, hash: str | None = None) -> bool:
        hash = hash or node.get("hash", "")
        if want.hash and not hash.startswith(want.hash):
            return False
        if want.name and self.virtual(want.name):
            return self.provides(hash, want.name, want.versions)
        if want.name and node["name"] != want.name:
            return False
        if want.versions and not version_in(str(node["version"]), want.versions):
            return False
        params = _params(node)
        for name, on in want.bools.items():
            if params.get(name) is not on:
                return False
        for name, values, exact in want.values:
            have = params.get(name)
            if have is None:
                return False
            if isinstance(have, bool):
                if values is not None and values != [str(have).lower()]:
                    return False
                continue
            have = {str(x) for x in have} if isinstance(have, list) else {str(have)}
            if values is not None and not (set(values) == have if exact else set(values) <= have):
                return False
        arch = node["arch"]
        target = arch["target"]["name"] if isinstance(arch["target"], dict) else arch["target"]
        if want.target and not self._target(target, want.target):
            return False
        if want.os and arch["platform_os"] != want.os:
            return False
        if want.platform and arch["platform"] != want.platform:
            return False
        return all(self.direct_ok(node, hash, d) for d in want.direct)

    @staticmethod
    def _target(target: str, wanted: str) -> bool:
        for part in wanted.split(","):
            low, colon, high = part.partition(":")
            if not colon:
                if target == part:
                    return True
                continue
            t = archspec.cpu.TARGETS.get(target)
            if t is None:
                continue
            if (not low or t >= archspec.cpu.TARGETS[low]) and (
                not high or t <= archspec.cpu.TARGETS[high]
            ):
                return True
        return False

    def direct_ok(self, node: dict, hash: str, want: Want) -> bool:
        if spec_format(node) < 5 or (
            "compiler" in node and not deps_of(node)
        ):  # the recorded compiler, a bare name@version node
            compiler = old_compiler(node)
            if compiler is None:
                return False
            name, version = compiler
            if want.name and self.virtual(want.name):  # pkg.provided, asked of a bare node
                return any(
                    v == want.name
                    and all(w[0] in "%^" or (w[0] == "@" and version_in(version, w[1:]))
                            for w in when.split())
                    for v, _, when in _provides_table(name)
                )  # fmt: skip
            plain = not (want.bools or want.values or want.target or want.os or want.platform
                         or want.hash or want.direct)  # fmt: skip
            return (
                plain
                and name == want.name
                and (not want.versions or version_in(version, want.versions))
            )
        for _, child, types, _ in self.edges(hash):
            recorded = set(next(vs for n, h, _, vs in deps_of(node) if h == child))
            cnode = self.nodes[child]
            if want.name and self.virtual(want.name):
                if want.name not in recorded:
                    continue
            elif want.name != cnode["name"] and want.name is not None:
                continue
            if want.virtuals and not recorded & set(want.virtuals):
                continue
            if not set(want.deptypes) <= types:
                continue
            if self.node_ok(cnode, want, child):
                return True
        return False

    def dep_ok(self, hash: str, want: Want) -> bool:
        edges = self.lhs_edges(hash)
        if want.name and self.virtual(want.name):
            candidates = [e for e in edges if want.name in e[3]]
        elif want.name:
            candidates = [e for e in edges if self.nodes[e[1]]["name"] == want.name]
        else:
            candidates = edges
        if not candidates:
            return False
        for v in want.virtuals:
            if not any(v in e[3] for e in candidates):
                return False
        return any(self.node_ok(self.nodes[e[1]], want, e[1]) for e in candidates)

    def satisfying(self, text: str, among=None) -> set[str]:
        root, deps = read(text)
        return {
            h for h in (among if among is not None else self.nodes)
            if self.node_ok(self.nodes[h], root, h) and all(self.dep_ok(h, d) for d in deps)
        }  # fmt: skip
