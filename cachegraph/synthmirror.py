"""Write realistic Spack mirrors of any size, in both layouts, for scale tests and the benchmark.

The shapes follow real Spack 1.0 build caches (``../shared/mirrors``, the DAGs of
``../shared/lockfiles``): packages in layers, each spec depending directly on 5
to 15 specs of lower layers of its own architecture, plus ``compiler-wrapper``
(build), ``gcc-runtime`` (link) and the compiler (build, providing ``c`` and
``cxx``; in the index with ``in_buildcache: false``, as Spack records an
external compiler). About a quarter of the specs are *lookalikes*: a copy of
another spec that differs only in the hash of one dependency. Tarball sizes
are lognormal, a few MB on average.

Mirrors are tags x stacks; a stack holds the whole DAG of each root it picks.
The first tag's mirrors are written in the v2 layout (``build_cache/index.json``
with its ``.hash``, and one ``*.spec.json`` of the root node per held spec);
later tags' in the v3 layout (``cachegraph.v3mirror``). ``mirrors.yaml`` lists
them for ``--mirrors-file``.

With ``legacy``, the specs of one architecture (``linux-rhel8-zen4``) are written as
Spack 0.22 wrote them: spec format 4 (a ``compiler`` field, no compiler or
``compiler-wrapper`` node, virtuals on edges) in indices of database version 7, and
the darwin specs are built with ``llvm`` (Spack 1.x's name for ``%clang``).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from .synth import VARIANTS
from .v3mirror import V3Writer

#: (platform, os, target, compiler version) of each stack's architecture
ARCHES = [
    ("linux", "ubuntu22.04", "x86_64_v3", "11.4.0"),
    ("linux", "ubuntu24.04", "neoverse_v2", "13.2.0"),
    ("linux", "rhel8", "zen4", "12.4.0"),
    ("darwin", "sequoia", "m1", "15.0.0"),
]
STACKS = ["e4s", "hep", "ml-cpu", "radiuss", "data-vis-sdk", "tutorial"]
_HASH_CHARS = "abcdefghijklmnopqrstuvwxyz234567"
LAYERS = 6


def _hash(rng: random.Random) -> str:
    return "".join(rng.choices(_HASH_CHARS, k=32))


def _node(name: str, version: str, hash: str, arch: tuple, parameters: dict, deps: list) -> dict:
    platform, os, target, _ = arch
    return {
        "name": name,
        "version": version,
        "arch": {"platform": platform, "platform_os": os, "target": {"name": target}},
        "namespace": "builtin",
        "parameters": parameters,
        "dependencies": deps,
        "annotations": {"original_specfile_version": 5},
        "hash": hash,
    }


def _dep(node: dict, deptypes: list[str], virtuals: list[str] = ()) -> dict:
    return {
        "name": node["name"],
        "hash": node["hash"],
        "parameters": {"deptypes": deptypes, "virtuals": list(virtuals)},
    }


def _parameters(rng: random.Random, variants: list[str]) -> dict:
    """A spec's own settings of its package's variants: booleans drawn, values as listed."""
    found: dict = {"build_system": "cmake"}
    for v in variants:
        if v[0] in "+~":
            found[v[1:]] = rng.random() < 0.5
        elif "=" in v:
            key, _, value = v.partition("=")
            found[key.rstrip(":")] = value.split(",") if "," in value else value
    return found


LEGACY_ARCH = ARCHES[2]


def _legacy(node: dict, arch: tuple) -> dict:
    """The node as spec format 4 writes it: its compiler a field, not a dependency."""
    node = {k: v for k, v in node.items() if k != "annotations"}
    node["compiler"] = {"name": "gcc", "version": arch[3]}
    node["dependencies"] = [d for d in node["dependencies"]
                            if d["name"] not in ("gcc", "llvm", "compiler-wrapper")]  # fmt: skip
    return node


def synthesize_mirrors(
    out: Path, specs: int, tags: int = 2, seed: int = 0, legacy: bool = False
) -> dict[str, int]:
    """Write about ``specs`` distinct specs into tags x stacks mirrors under ``out``.

    Returns specs held per mirror name (``TAG/STACK``).
    """
    rng = random.Random(seed)
    packages = max(20, specs // 20)
    booleans = [v for v in VARIANTS if v[0] == "+"] + ["+openmp", "+debug", "+static", "+fortran"]
    catalogue = [
        (f"lib-{i:05d}", i * LAYERS // packages,
         rng.sample(booleans, 4) + rng.sample([v for v in VARIANTS if "=" in v], 1),
         [f"{rng.randint(0, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}" for _ in range(6)])
        for i in range(packages)
    ]  # fmt: skip
    nodes: dict[str, dict] = {}
    per_arch: dict[tuple, list[list[dict]]] = {a: [[] for _ in range(LAYERS)] for a in ARCHES}
    base: dict[tuple, tuple[dict, dict, dict]] = {}
    for arch in ARCHES:
        name = "llvm" if legacy and arch[0] == "darwin" else "gcc"
        compiler = _node(name, arch[3], _hash(rng), arch, {"languages": ["c", "c++"]}, [])
        runtime = _node("gcc-runtime", arch[3], _hash(rng), arch, {}, [_dep(compiler, ["build"])])
        wrapper = _node("compiler-wrapper", "1.0", _hash(rng), arch, {}, [])
        base[arch] = (compiler, runtime, wrapper)
        nodes.update((n["hash"], n) for n in base[arch])
    while len(nodes) < specs:
        arch = rng.choice(ARCHES)
        layers = per_arch[arch]
        name, layer, variants, versions = rng.choice(catalogue)
        lower = [n for lay in layers[:layer] for n in lay[-50:]]
        compiler, runtime, wrapper = base[arch]
        deps = [_dep(wrapper, ["build"]), _dep(compiler, ["build"], ["c", "cxx"]),
                _dep(runtime, ["link"])]  # fmt: skip
        picked = {n["name"]: n for n in rng.sample(lower, min(len(lower), rng.randint(5, 15)))}
        deps += [_dep(n, ["build", "link"]) for n in picked.values()]
        node = _node(name, rng.choice(versions), _hash(rng), arch, _parameters(rng, variants), deps)
        nodes[node["hash"]] = node
        layers[layer].append(node)
        if picked and rng.random() < 0.33:  # a lookalike: one dependency swapped
            twin = json.loads(json.dumps(node))
            twin["hash"] = _hash(rng)
            swap = rng.randrange(3, len(twin["dependencies"]))
            other = json.loads(json.dumps(nodes[twin["dependencies"][swap]["hash"]]))
            other["hash"] = _hash(rng)  # the dependency rebuilt at another version
            other["version"] += ".1"
            twin["dependencies"][swap] = _dep(other, ["build", "link"])
            nodes[other["hash"]] = other
            nodes[twin["hash"]] = twin
            layers[0].append(other)
            layers[layer].append(twin)
    sizes = {h: round(rng.lognormvariate(14.5, 1.5)) for h in nodes}
    tag_names = ["develop"] + [f"develop-2025-{1 + i:02d}-01" for i in range(tags - 1)]
    planned = []  # (tag number, tag, stack, arch, closure)
    for t, tag in enumerate(tag_names):
        for s, stack in enumerate(STACKS):
            arch = ARCHES[s % len(ARCHES)]
            roots = [n for lay in per_arch[arch] for n in lay if rng.random() < 0.6]
            planned.append((t, tag, stack, arch, _closure(roots, nodes)))
    # Every spec is in some mirror: what no stack picked joins a first-tag stack of its arch.
    covered = {h for *_, closure in planned for h in closure}
    for t, _, _, arch, closure in planned:
        if t == 0:
            missed = [n for lay in per_arch[arch] for n in lay if n["hash"] not in covered]
            closure.update(_closure(missed, nodes))
            covered.update(closure)
    held: dict[str, int] = {}
    listing = []
    for t, tag, stack, arch, closure in planned:
        name = f"{tag}/{stack}"
        compilers = {base[arch][0]["hash"]}
        if legacy and arch == LEGACY_ARCH:  # written once, as Spack 0.x wrote it
            closure = {h: _legacy(n, arch) for h, n in closure.items()
                       if n["name"] not in ("gcc", "compiler-wrapper")}  # fmt: skip
            _write(out / tag / stack, t == 0, closure, set(), sizes, version=4)
            held[name] = len(closure)
            listing.append({"name": name, "tag": tag, "stack": stack, "path": f"{tag}/{stack}"})
            continue
        _write(out / tag / stack, t == 0, closure, compilers, sizes)
        held[name] = len(closure) - len(compilers & closure.keys())
        listing.append({"name": name, "tag": tag, "stack": stack, "path": f"{tag}/{stack}"})
    (out / "mirrors.yaml").write_text(json.dumps({"mirrors": listing}, indent=1))
    return held


def _closure(roots: list[dict], nodes: dict[str, dict]) -> dict[str, dict]:
    found: dict[str, dict] = {}
    pending = list(roots)
    while pending:
        node = pending.pop()
        if node["hash"] not in found:
            found[node["hash"]] = node
            pending += [nodes[d["hash"]] for d in node["dependencies"]]
    return found


def _write(
    path: Path, v2: bool, closure: dict, compilers: set[str], sizes: dict, version: int = 5
) -> None:
    installs = {
        h: {
            "spec": {k: v for k, v in n.items() if k != "hash"},
            "ref_count": 0,
            "in_buildcache": h not in compilers,
        }
        for h, n in sorted(closure.items())
    }
    index = {"database": {"version": "8" if version == 5 else "7", "installs": installs}}
    if v2:
        cache = path / "build_cache"
        cache.mkdir(parents=True, exist_ok=True)
        data = json.dumps(index, separators=(",", ":")).encode()
        (cache / "index.json").write_bytes(data)
        (cache / "index.json.hash").write_text(hashlib.sha256(data).hexdigest())
        for h, n in closure.items():
            if h not in compilers:
                arch = n["arch"]
                platform = f"{arch['platform']}-{arch['platform_os']}-{arch['target']['name']}"
                compiler = f"gcc-{_compiler_version(n, closure)}"
                stem = f"{platform}-{compiler}-{n['name']}-{n['version']}-{h}"
                doc = {"spec": {"_meta": {"version": version}, "nodes": [n]},
                       "buildcache_layout_version": 2}  # fmt: skip
                (cache / f"{stem}.spec.json").write_text(json.dumps(doc, separators=(",", ":")))
        return
    writer = V3Writer(path)
    for h, n in closure.items():
        if h not in compilers:
            doc = {"spec": {"_meta": {"version": version}, "nodes": [n]},
                   "buildcache_layout_version": 2}  # fmt: skip
            writer.add_spec(doc, sizes[h])
    writer.add_index(index)


def _compiler_version(node: dict, closure: dict) -> str:
    if "compiler" in node:
        return node["compiler"]["version"]
    for dep in node["dependencies"]:
        if "c" in dep["parameters"]["virtuals"]:
            return closure[dep["hash"]]["version"]
    return "none"
