"""Write realistic build-cache page trees of any size, for benchmarks and scale tests.

The shapes follow the real pages: about 30 stacks, every spec in ``root`` plus
one to three others, a dozen compilers (``none`` and Spack's ``=`` forms among
them), several targets and OSes, lognormal specs per package, and variants.
With several tags, each later tag is a dated snapshot that keeps about 60% of
the previous tag's hashes and adds new ones.

The ``short`` shape is the public site's own record as it is written today: about 35
records a page, one or two variants and stacks each, and the ``tarball`` URL that makes
a record about 460 bytes -- many short records, where the default shape has fewer,
longer pages.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from cachegraph.graph.attributes import ATTRIBUTES

STACKS = [
    "aws-ahug",
    "aws-ahug-aarch64",
    "aws-isc",
    "aws-isc-aarch64",
    "build_systems",
    "data-vis-sdk",
    "developer-tools",
    "e4s",
    "e4s-cray-rhel",
    "e4s-neoverse-v2",
    "e4s-neoverse_v1",
    "e4s-oneapi",
    "e4s-power",
    "e4s-rocm-external",
    "gpu-tests",
    "hep",
    "ml-darwin-aarch64-mps",
    "ml-linux-aarch64-cpu",
    "ml-linux-aarch64-cuda",
    "ml-linux-x86_64-cpu",
    "ml-linux-x86_64-cuda",
    "ml-linux-x86_64-rocm",
    "radiuss",
    "radiuss-aws",
    "radiuss-aws-aarch64",
    "tutorial",
    "bootstrap-aarch64-darwin",
    "bootstrap-x86_64-linux-gnu",
    "windows-vis",
    "deprecated",
]
COMPILERS = [
    "none",
    "none",
    "gcc@=11.4.0",
    "gcc@=11.4.0",
    "gcc@13.2.0",
    "gcc@12.4.0",
    "gcc@=7.3.1",
    "apple-clang@=16.0.0",
    "apple-clang@15.0.0",
    "oneapi@=2024.2.1",
    "cce@=15.0.1",
    "clang@=7.0.0",
    "gcc@=9.4.0",
]
PLATFORMS = [  # (platform, os, targets)
    ("linux", "ubuntu22.04", ["x86_64_v3", "neoverse_v1", "neoverse_v2", "zen4"]),
    ("linux", "ubuntu24.04", ["x86_64_v3", "aarch64"]),
    ("linux", "amzn2", ["x86_64_v3", "aarch64", "neoverse_n1"]),
    ("linux", "rhel8", ["x86_64_v3", "ppc64le"]),
    ("darwin", "sequoia", ["aarch64"]),
]
VARIANTS = [
    "build_system=cmake",
    "build_system=autotools",
    "build_system=python_pip",
    "~ipo",
    "+ipo",
    "+shared",
    "~shared",
    "+mpi",
    "~mpi",
    "+cuda",
    "cuda_arch=80",
    "amdgpu_target=gfx90a",
    "libs=shared,static",
    "patches:=5c7a3c0",
    "build_type=Release",
    "generator=make",
]
_HASH_CHARS = "abcdefghijklmnopqrstuvwxyz234567"
#: the attributes (graph.attributes) whose rows say what this generator writes for them
SAMPLED = [a for a in ATTRIBUTES if a.sample is not None]


def _hash(rng: random.Random) -> str:
    return "".join(rng.choices(_HASH_CHARS, k=32))


def _record(rng: random.Random, package_variants: list[str], versions: list[str]) -> dict:
    platform, os, targets = rng.choice(PLATFORMS)
    stacks = ["root", *rng.sample(STACKS, rng.randint(1, 3))]
    row = {
        "compiler": rng.choice(COMPILERS),
        "hash": _hash(rng),
        "os": os,
        "platform": platform,
        "size": "-",
        "stacks": sorted(stacks),
        "target": rng.choice(targets),
        "variants": sorted(rng.sample(package_variants, rng.randint(1, len(package_variants)))),
        "versions": [rng.choice(versions)],
    }
    for a in SAMPLED:  # an attribute this generator does not know of: its row's own sample
        row[a.name] = a.sample(rng, row)
    return row


def _short_record(
    rng: random.Random, package: str, tag: str, package_variants: list[str], versions: list[str]
) -> dict:
    """A record as the public site writes it now: the fields in its order, with its tarball."""
    platform, os, targets = rng.choice(PLATFORMS)
    compiler, target, version, hash = (
        rng.choice(COMPILERS[2:]), rng.choice(targets), rng.choice(versions), _hash(rng)
    )  # fmt: skip
    arch = f"{platform}-{os}-{target}"
    spec = f"{package}-{version}"
    built_with = compiler.replace("@=", "-").replace("@", "-")
    row = {
        "hash": hash,
        "compiler": compiler,
        "versions": [version],
        "os": os,
        "platform": platform,
        "target": target,
        "variants": sorted(rng.sample(package_variants, rng.randint(1, 2))),
        "stacks": sorted(rng.sample(STACKS, rng.randint(1, 2))),
        "size": "-",
        "tarball": f"https://binaries.spack.io/{tag}/build_cache/{arch}/{built_with}/{spec}/"
        f"{arch}-{built_with}-{spec}-{hash}.spack",
    }
    for a in SAMPLED:
        row[a.name] = a.sample(rng, row)
    return row


def _page(package: str, tag: str, records: list[dict]) -> str:
    meta = {
        "compilers": sorted({r["compiler"] for r in records}),
        "num_specs": len(records),
        "num_specs_by_stack": dict(
            sorted(Counter(s for r in records for s in r["stacks"]).items())
        ),
        "oss": sorted({r["os"] for r in records}),
        "platforms": sorted({r["platform"] for r in records}),
        "stacks": sorted({s for r in records for s in r["stacks"]}),
        "targets": sorted({r["target"] for r in records}),
        "versions": sorted({r["versions"][0] for r in records}),
        **{a.facet_name: sorted({r[a.name] for r in records}) for a in SAMPLED if not a.many},
    }
    return (
        f'---\ntitle: "{package}"\nlayout: cache\ncategories: [package, {tag}]\n'
        f"meta: {json.dumps(meta)}\nspec_details: {json.dumps(records)}\n---\n"
    )


def synthesize(
    out: Path, specs: int, tags: int = 1, seed: int = 0, short: bool = False
) -> dict[str, int]:
    """Write ``specs`` distinct specs over ``tags`` tags under ``out``; return specs per tag.

    ``short``: pages of about 35 short records (the module's docstring), not lognormal ones.

    The first tag is ``develop``; each later one is a dated snapshot
    (``develop-2025-01-01``...) keeping about 60% of the previous tag's specs,
    with new ones making about 40% of it.
    """
    rng = random.Random(seed)
    names = ["develop"] + [
        f"develop-2025-{1 + i // 28:02d}-{1 + i % 28:02d}" for i in range(tags - 1)
    ]
    first = round(specs / (1 + 0.4 * (tags - 1)))
    rest = specs - first
    new_per_tag = [first] + [rest // (tags - 1) + (i < rest % (tags - 1)) for i in range(tags - 1)]
    packages: list[tuple[str, list[str], list[str]]] = []
    sizes: list[int] = []
    while sum(sizes) < first:
        size = rng.randint(25, 45) if short else round(rng.lognormvariate(2.5, 1.3))
        sizes.append(min(max(1, size), 5000, first - sum(sizes)))
        versions = [
            f"{rng.randint(0, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
            for _ in range(rng.randint(1, 4))
        ]
        packages.append((f"pkg-{len(packages):05d}", rng.sample(VARIANTS, 4), versions))
    counts: dict[str, int] = {}
    previous: list[list[dict]] = [[] for _ in packages]
    for t, tag in enumerate(names):
        new = sizes if t == 0 else _spread(rng, new_per_tag[t], sizes)
        current = []
        for (name, variants, versions), old, n in zip(packages, previous, new, strict=True):
            records = [r for r in old if rng.random() < 0.6]
            records += [
                _short_record(rng, name, tag, variants[:2], versions)
                if short
                else _record(rng, variants, versions)
                for _ in range(n)
            ]
            current.append(records)
            if records:
                path = out / tag / name / "specs.md"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(_page(name, tag, records))
        counts[tag] = sum(map(len, current))
        previous = current
    return counts


def _spread(rng: random.Random, total: int, weights: list[int]) -> list[int]:
    """``total`` new specs over the packages, in proportion to their sizes."""
    picked = Counter(rng.choices(range(len(weights)), weights=weights, k=total))
    return [picked[i] for i in range(len(weights))]
