"""Why graph/constraints.py parses by hand: the same constraints through it, lark (LALR) and
pyparsing, timed. The grammar libraries are not dependencies of the project:

    pip install lark pyparsing && python -m bench.parsers
"""

import timeit

from cachegraph.graph.spack.constraints import parse

TEXTS = [
    "hdf5",
    "hdf5@1.14:",
    "hdf5@1.14: +mpi ~shared %gcc@11: target=x86_64_v3 ^openmpi@4:",
    "py-numpy@=1.26.4 cuda_arch=70,80 build_type='dm+sm' arch=linux-ubuntu22.04-x86_64_v3",
    "zlib /abcdefg",
    "+mpi %gcc@11.4.0",
    "target=x86_64_v3: os=ubuntu22.04",
    "libdwarf %gcc@10: ^libelf %gcc",
    "cmake@3.29,3.31.2 build_system=generic",
    "openmpi fabrics=ofi,verbs ~cuda ^hwloc@2:",
    "rocblas@6.1.2%gcc@13.2.0~asan~ipo+tensile amdgpu_target=gfx90a build_system=cmake arch=linux-ubuntu24.04-x86_64_v3",
    "py-keras@3.9: backend=jax",
    "^mpi",
    "hdf5 -shared ++fortran",
    "curl libs:=shared tls=openssl",
]

GRAMMAR = r"""
start: item+
?item: DEP NAME -> dep
     | DIRECT NAME VERSION? -> direct
     | NAME -> name
     | VERSION -> version
     | BOOL -> bool
     | KEYVALUE -> keyvalue
     | HASH -> hash
DEP: "^"
DIRECT: /%%?/
VERSION.3: /@\s*(=\s*)?[A-Za-z0-9_.:,=\-]*/
BOOL.2: /(\+\+|\+|~~|~|--|-)\s*[A-Za-z0-9_][A-Za-z0-9_.\-]*/
KEYVALUE.4: /[A-Za-z0-9_][A-Za-z0-9_.\-]*\s*(==|:=|=)\s*("[^"]*"|'[^']*'|[A-Za-z0-9_\-+*.,:=~\/\\]+)/
HASH: /\/\s*[A-Za-z0-9]*/
NAME: /[A-Za-z0-9_][A-Za-z0-9_.\-]*/
%ignore /\s+/
"""


def ours():
    for t in TEXTS:
        parse(t)


results = {"graph.constraints (hand-written)": ours}
try:
    import lark

    lalr = lark.Lark(GRAMMAR, parser="lalr")

    def with_lark():
        for t in TEXTS:
            lalr.parse(t)

    results[f"lark {lark.__version__} LALR (tree only, no Constraint built)"] = with_lark
except ImportError as e:
    print("lark:", e)
try:
    import pyparsing as pp

    name = pp.Regex(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
    version = pp.Regex(r"@\s*(=\s*)?[A-Za-z0-9_.:,=\-]*")
    boolean = pp.Regex(r"(\+\+|\+|~~|~|--|-)\s*[A-Za-z0-9_][A-Za-z0-9_.\-]*")
    keyvalue = pp.Regex(
        r"""[A-Za-z0-9_][A-Za-z0-9_.\-]*\s*(==|:=|=)\s*("[^"]*"|'[^']*'|[A-Za-z0-9_\-+*.,:=~/\\]+)"""
    )
    hash_ = pp.Regex(r"/\s*[A-Za-z0-9]*")
    dep = pp.Literal("^") + name
    direct = pp.Regex("%%?") + name + pp.Optional(version)
    item = dep | direct | version | boolean | keyvalue | hash_ | name
    grammar = pp.OneOrMore(item) + pp.StringEnd()

    def with_pyparsing():
        for t in TEXTS:
            grammar.parse_string(t)

    results[f"pyparsing {pp.__version__} (tokens only, no Constraint built)"] = with_pyparsing
except ImportError as e:
    print("pyparsing:", e)

for label, fn in results.items():
    n = 200
    best = min(timeit.repeat(fn, number=n, repeat=5)) / n / len(TEXTS)
    print(f"{label}: {best * 1e6:.1f} µs per constraint")
