"""A tiny graph for the examples in docstrings: five specs, two tags, a mirror, a DAG.

========  =========  =============  ===========  ==================  ==================
hash      package    version        target       where               depends on
========  =========  =============  ===========  ==================  ==================
``g``...  gcc        12.3.0         x86_64       no stack            --
``b``...  hdf5       1.12.2         x86_64_v3    v1: e4s             zlib ``y``
``a``...  hdf5       1.14.3         x86_64_v3    develop: e4s, ml    zlib ``z``, gcc
``y``...  zlib       1.2.13         x86_64_v3    v1: e4s             --
``z``...  zlib       1.3.1          zen2         v1: e4s; develop    gcc (build, c)
========  =========  =============  ===========  ==================  ==================

The develop specs come from the mirror ``develop/e4s``, which holds ``a`` and
``z`` (and references gcc); the v1 specs from a cache page. Ranks follow the
rows of the table.

>>> G = example_graph()
>>> G.spec_count, G.spec("a" * 32).package, sorted(G.spec("z" * 32).stacks)
(5, 'hdf5', ['develop', 'v1'])
"""

from __future__ import annotations

from ..attributes import ATTRIBUTES
from .build import StoreBuilder
from .records import MirrorInfo
from .view import CacheGraph

_ARCH = {"platform": "linux", "os": "ubuntu22.04"}
_OTHERS = [
    a for a in ATTRIBUTES
    if not a.many and a.name not in ("package", "version", "compiler", *_ARCH, "target")
]  # fmt: skip


def _page_row(spec: tuple) -> dict:
    """The row a page would give for one of the table's specs."""
    hash, _, version, compiler, target, variants = spec
    return {"hash": hash * 32, "versions": [version], "compiler": compiler or "none",
            **_ARCH, "target": target, "variants": list(variants)}  # fmt: skip


def example_graph() -> CacheGraph:
    """The graph of this module's table, made anew each time."""
    b = StoreBuilder()

    def rows(specs: list[tuple], page: bool, tag: str | None = None, stacks=None) -> None:
        columns = {
            "package": [s[1] for s in specs],
            "version": [s[2] for s in specs],
            "compiler": [s[3] for s in specs],
            "platform": [_ARCH["platform"]] * len(specs),
            "os": [_ARCH["os"]] * len(specs),
            "target": [s[4] for s in specs],
        }
        # an attribute of the table this example does not know of: as its page reader gives it
        columns |= {a.name: [a.page(_page_row(s)) for s in specs] for a in _OTHERS}
        b.add_records(
            [s[0] * 32 for s in specs],
            columns,
            b.variant_codes([s[5] for s in specs]),
            b.file_code("example/v1/specs.md" if page else "example/mirror/index.json"),
            range(1, len(specs) + 1),
            page=page,
            tag=tag,
            stacks=b.stack_codes(stacks) if stacks else None,
        )

    rows(
        [
            ("b", "hdf5", "1.12.2", "gcc@12.3.0", "x86_64_v3", ("+mpi", "build_system=cmake")),
            ("y", "zlib", "1.2.13", "gcc@12.3.0", "x86_64_v3", ("+pic", "build_system=makefile")),
            ("z", "zlib", "1.3.1", "gcc@12.3.0", "zen2", ("~pic", "build_system=makefile")),
        ],
        page=True,
        tag="v1",
        stacks=[("e4s",)] * 3,
    )
    b.position = 1
    rows(
        [
            ("a", "hdf5", "1.14.3", None, "x86_64_v3", ("+mpi", "build_system=cmake")),
            ("z", "zlib", "1.3.1", "gcc@12.3.0", "zen2", ("~pic", "build_system=makefile")),
            ("g", "gcc", "12.3.0", None, "x86_64", ()),
        ],
        page=False,
    )
    link, build = b.deptype_mask(("build", "link")), b.deptype_mask(("build",))
    none, c = b.virtual_code(()), b.virtual_code(("c", "cxx"))
    # From rows 3 (a), 4 (z, read again) and 0 (b, whose page row stands for it).
    b.add_edges([3, 3, 4, 0], ["z" * 32, "g" * 32, "g" * 32, "y" * 32],
                [link, build, build, link], [none, c, c, none])  # fmt: skip
    mirror = b.add_mirror(MirrorInfo("develop/e4s", "example/mirror", "v2", "develop", "e4s"))
    b.add_held(["a" * 32, "z" * 32], mirror, [1000.0, 250.0], ["a.spack", "z.spack"])
    ml = b.add_mirror(MirrorInfo("develop/ml", "example/ml", "v3", "develop", "ml"))
    b.add_held(["a" * 32], ml, [float("nan")], [""])
    store, _, _ = b.finish()
    return CacheGraph(store)
