"""Constraints answered as Spack 1.1 answers them (issue 28, items 2-6), on the real mirrors of
../shared and on generated ones (v2 and v3 layouts; spec format 5 and, for one
architecture, format 4 in database-version-7 indices).

Every expected answer comes from ``tests/spackref.py``: an independent reading of Spack
1.1's ``Spec._satisfies`` over the raw spec nodes of the files, sharing no code with the
project. Each case below names the rule of Spack's it exercises.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cachegraph.graph import load
from cachegraph.graph.questions import specs
from cachegraph.graph.questions.impact import impact
from cachegraph.graph.sources.mirrors import mirrors_file
from cachegraph.graph.spack import virtuals
from cachegraph.graph.spack.constraints import parse

from cachegraph.synthmirror import synthesize_mirrors
from tests.conftest import execute
from tests.graph.store.test_satisfies import _raw
from tests.mirrors import load_shared
from tests.spackref import Reference, as_spack_reads, deps_of, spec_format


def _found(cg, text: str) -> set[str]:
    return {s.hash for s in specs.select_specs(cg, specs.SpecQuery(satisfies=text)).after(None)}


# -- the real mirrors -----------------------------------------------------------------------

#: (constraint, the rule of Spec._satisfies it asks)
REAL_CASES = [
    ("^openssl", "^: link/run closure + direct build edges"),
    ("^openssl@3.4", "^ with versions"),
    ("^cmake", "^: a build dependency of a dependency is not followed"),
    ("^[deptypes=build] cmake", "^[deptypes=...]: depflag is asked of direct edges only"),
    ("^gmake", "^: direct build edges of the root"),
    ("^m4", "^: build-only deep in the DAG"),
    ("^perl", "^: build and run"),
    ("^zlib", "^ name"),
    ("^zlib-ng", "^ name"),
    ("^zlib-api", "^virtual: an edge providing it"),
    ("^[virtuals=zlib-api] zlib-ng", "^[virtuals=...]: some candidate edge provides it"),
    ("^[virtuals=zlib-api] zlib", "^[virtuals=...] on old spec files: reconstructed"),
    ("^libc", "^virtual libc (glibc edges)"),
    ("^[virtuals=libc] glibc", "^[virtuals=libc]"),
    ("^mpi", "^virtual mpi"),
    ("^pkgconfig", "^virtual pkgconfig"),
    ("^pkgconf", "^ name of a provider"),
    ("^iconv", "^virtual iconv"),
    ("^gcc-runtime", "^ link edge"),
    ("^gcc", "^ of a compiler node: build edge, direct only"),
    ("^libelf", "^ on old spec files (formats 1-3)"),
    ("^libelf %gcc@10", "^ node with a direct node"),
    ("^python", "^ run edges"),
    ("^/mhpnbye", "^ hash"),
    ("%gcc", "%: compiler (format < 5) or direct dependency (format 5)"),
    ("%gcc@10", "% with versions"),
    ("%gcc@9.4.0", "% on old specs: the recorded compiler"),
    ("%cmake", "% on old specs: only the recorded compiler, never a dependency"),
    ("%c=gcc", "%c=gcc: an edge providing c, to gcc"),
    ("%c,cxx=gcc@10:", "%c,cxx=: any of the virtuals"),
    ("%[deptypes=build] gcc", "%[deptypes=build]: the edge has build"),
    ("%[deptypes=link] gcc", "%[deptypes=link]: gcc is a build edge, so none (new specs)"),
    ("%[deptypes=link] gcc-runtime", "%[deptypes=link]"),
    ("%gcc-runtime", "% a direct link dependency"),
    ("%compiler-wrapper", "% a direct build dependency"),
    ("%clang", "%clang read as llvm"),
    ("%apple-clang@15.0.0", "% apple-clang"),
    ("%c", "%virtual: an edge providing c (format 5); the compiler provides it (older)"),
    ("mpi", "a virtual as the constraint: providers"),
    ("mpi@3:", "a virtual with versions: provides(mpi@:3.1) intersects"),
    ("mpi@:1", "a virtual with versions no provider has here"),
    ("zlib-api", "zlib-api: zlib and zlib-ng"),
    ("libc", "libc: glibc"),
    ("pkgconfig", "pkgconfig: pkgconf"),
    ("zlib-api target=m1", "a virtual: nothing else of the node is asked"),
    ("^zlib-api target=m1", "^virtual and the root's target"),
    ("openmpi ^hwloc", "a name and a ^"),
    ("libelf %gcc", "old and new libelf"),
]


@pytest.fixture(scope="module")
def real(shared_mirrors):
    graph = load_shared(shared_mirrors)[0]
    return graph, Reference(_raw(shared_mirrors))


@pytest.mark.parametrize(("text", "rule"), REAL_CASES, ids=[c[0] for c in REAL_CASES])
def test_real_mirrors_answer_as_spack(real, text, rule):
    graph, reference = real
    assert _found(graph, text) == reference.satisfying(text), rule


def test_real_cases_are_not_all_empty(real):
    _, reference = real
    answered = [t for t, _ in REAL_CASES if reference.satisfying(t)]
    assert len(REAL_CASES) >= 40 and len(answered) >= 35


def test_real_mirrors_hold_old_and_new_spec_formats(real):
    _, reference = real
    formats = {spec_format(n) for n in reference.nodes.values()}
    compilers = [n for n in reference.nodes.values() if "compiler" in n]
    assert formats == {4, 5} and compilers


def test_caret_follows_link_and_run_not_what_a_dependency_was_built_with(real):
    """Spec._satisfies: ``lhs_edges`` is ``traverse_edges(deptype=("link", "run"))`` plus
    the root's own build edges. A spec whose dependency was built with cmake does not
    satisfy ``^cmake``: on these files, walking every edge would find more."""
    graph, reference = real
    every_edge = set()
    for h in reference.nodes:
        stack, seen = [h], set()
        while stack:
            for _, child, _, _ in deps_of(reference.nodes[stack.pop()]):
                if child in reference.nodes and child not in seen:
                    seen.add(child)
                    stack.append(child)
        if any(reference.nodes[c]["name"] == "cmake" for c in seen):
            every_edge.add(h)
    spack = reference.satisfying("^cmake")
    assert _found(graph, "^cmake") == spack
    assert spack < every_edge


def test_impact_is_what_caret_finds(real):
    """impact(X) is the specs satisfying ``^X`` (Spack's ``^``), not every spec above X."""
    graph, reference = real
    for text in ("cmake", "zlib-api", "openssl@3.4", "gcc"):
        found = impact(graph, text)
        assert {graph.store.hash(r) for r in found.ranks} == reference.satisfying(f"^{text}")


def _impact_rows(graph, reference, text: str) -> tuple[dict, list[dict]]:
    """impact(X)'s package rows through the schema (the standard path and the compiled one,
    whose rows are built from columns: ``execute`` compares them), and the same counted
    from the specs Spack's ``^X`` finds, largest first, then by name."""
    query = '{ impact(spec: "%s") { specCount packages { package { name } specCount } } }'
    found = execute(graph, query % text)["data"]["impact"]
    counts: dict[str, int] = {}
    for h in reference.satisfying(f"^{text}"):
        name = reference.nodes[h]["name"]
        counts[name] = counts.get(name, 0) + 1
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return found, [{"package": {"name": n}, "specCount": c} for n, c in rows]


def test_impact_s_packages_are_the_counts_of_what_caret_finds(real, synthetic):
    """The rows of an impact's packages, built from columns (issue 40 item 2), on the real
    mirrors and on generated ones with many packages."""
    graph, reference = real
    for text in ("cmake", "zlib-api", "gcc"):
        found, expected = _impact_rows(graph, reference, text)
        assert found["packages"] == expected and found["specCount"] == sum(
            r["specCount"] for r in expected
        )
    graph, reference, _ = synthetic
    for text in ("gcc", "lib-00001", "lib-00003@:1"):
        found, expected = _impact_rows(graph, reference, text)
        assert found["packages"] == expected
    assert len(expected) > 20


def test_a_virtual_finds_its_providers(real):
    """Spec._satisfies with a virtual ``other``: the spec's package provides it (pkg.provides
    with its when-conditions); here openmpi, from the providers table of spack-packages."""
    graph, _ = real
    found = specs.select_specs(graph, specs.SpecQuery(satisfies="mpi")).after(None)
    assert [s.package for s in found] == ["openmpi"]
    assert {p.package for p in virtuals.providers("mpi")} >= {"openmpi", "mpich", "mvapich2"}


def test_percent_on_old_specs_is_the_recorded_compiler_only(real):
    """Spec._satisfies, direct edge, ``original_spec_format() < 5``: the compiler node
    attribute alone; ``%cmake`` on a format-4 spec whose direct build dependency is cmake does
    not match, on a format-5 one it would."""
    graph, reference = real
    olds = {h for h, n in reference.nodes.items() if spec_format(n) < 5
            and any(reference.nodes.get(c, {}).get("name") == "cmake"
                    for _, c, _, _ in deps_of(n))}  # fmt: skip
    assert olds and not (olds & _found(graph, "%cmake"))


# -- generated mirrors: v2 and v3, formats 5 and 4 ------------------------------------------

SYNTHETIC_CASES = [
    "^lib-00003",
    "^lib-00003@:5",
    "^lib-00020 +shared",
    "^gcc",
    "^gcc@13",
    "^gcc-runtime@12",
    "^compiler-wrapper",
    "^[deptypes=build] compiler-wrapper",
    "^[virtuals=c] gcc",
    "^[virtuals=mpi] gcc",
    "^c",
    "^cxx",
    "%gcc",
    "%gcc@12",
    "%gcc@11.4.0 +shared",
    "%c=gcc",
    "%c,cxx=gcc@12:",
    "%fortran=gcc",
    "%[deptypes=build] gcc",
    "%[deptypes=link] gcc",
    "%gcc-runtime",
    "%gcc-runtime@12",
    "%compiler-wrapper",
    "%lib-00002",
    "%clang",
    "%clang@15",
    "%c=clang",
    "%c,cxx=clang@15:",
    "%llvm",
    "^llvm",
    "%oneapi",
    "%c",
    "%fortran",
    "c",
    "cxx",
    "fortran",
    "os=rhel8 %gcc@12",
    "target=zen4 ^gcc",
    "target=zen4 ^gcc-runtime",
    "+mpi ^lib-00002",
    "~shared %gcc@13 ^lib-00001",
    "lib-00010 %gcc-runtime",
    "gcc-runtime %gcc",
    "gcc-runtime ^gcc",
    "gcc languages=c,c++",
    "^lib-00003 %gcc@12",
]


def _synthetic_nodes(out: Path) -> dict[str, dict]:
    """hash -> raw node of every index the generator wrote (v2 index.json, v3 index blob)."""
    nodes: dict[str, dict] = {}
    docs = [json.loads(p.read_text()) for p in sorted(out.rglob("build_cache/index.json"))]
    for manifest in sorted(out.rglob("v3/manifests/index/index.manifest.json")):
        checksum = json.loads(manifest.read_text())["data"][0]["checksum"]
        blob = manifest.parents[3] / "blobs" / "sha256" / checksum[:2] / checksum
        docs.append(json.loads(blob.read_text()))
    for doc in docs:
        for h, entry in doc["database"]["installs"].items():
            nodes.setdefault(h, {**entry["spec"], "hash": h})
    return nodes


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    out = tmp_path_factory.mktemp("semantics")
    synthesize_mirrors(out, 1500, tags=2, seed=11, legacy=True)
    graph, report = load([], mirrors_file(out / "mirrors.yaml"))
    assert report.problems == []
    return graph, Reference(_synthetic_nodes(out)), out


def test_generated_mirrors_are_v2_and_v3_old_and_new(synthetic):
    _, reference, out = synthetic
    assert list(out.rglob("build_cache/index.json")) and list(out.rglob("v3/layout.json"))
    assert {spec_format(n) for n in reference.nodes.values()} == {4, 5}
    indices = [json.loads(p.read_text()) for p in out.rglob("build_cache/index.json")]
    assert {d["database"]["version"] for d in indices} == {"7", "8"}


@pytest.mark.parametrize("text", SYNTHETIC_CASES)
def test_generated_mirrors_answer_as_spack(synthetic, text):
    graph, reference, _ = synthetic
    assert _found(graph, text) == reference.satisfying(text)


def test_generated_cases_are_not_all_empty(synthetic):
    _, reference, _ = synthetic
    answered = [t for t in SYNTHETIC_CASES if reference.satisfying(t)]
    assert len(SYNTHETIC_CASES) >= 40 and len(answered) >= 30


# -- Spack 1.x syntax and compiler names ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name", "virtuals", "deptypes", "alias"),
    [
        ("%c=gcc", "gcc", ("c",), (), None),
        ("%c,cxx=gcc@12:", "gcc", ("c", "cxx"), (), None),
        ("%[virtuals=c deptypes=build] gcc", "gcc", ("c",), ("build",), None),
        ("%clang@15:", "llvm", (), (), "clang"),
        ("%oneapi", "intel-oneapi-compilers", (), (), "oneapi"),
        ("%intel", "intel-oneapi-compilers-classic", (), (), "intel"),
    ],
)
def test_direct_edges_as_spack_1_parses_them(text, name, virtuals, deptypes, alias):
    """spec_parser.py: VIRTUAL_ASSIGNMENT, EdgeAttributeParser, LEGACY_COMPILER_TO_BUILTIN."""
    [node] = parse(text).root.direct
    assert (node.name, node.virtuals, node.deptypes, node.alias) == (
        name, virtuals, deptypes, alias)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "name", "virtuals", "deptypes"),
    [
        ("^[virtuals=mpi] openmpi", "openmpi", ("mpi",), ()),
        ("^[deptypes=build,link] cmake", "cmake", (), ("build", "link")),
        ("^mpi=openmpi", "openmpi", ("mpi",), ()),
        ("^clang", "clang", (), ()),  # the aliases are for '%' only
    ],
)
def test_caret_edges_as_spack_1_parses_them(text, name, virtuals, deptypes):
    [node] = parse(text).transitive
    assert (node.name, node.virtuals, node.deptypes) == (name, virtuals, deptypes)


# -- unknown names: empty, and a warning naming the nearest --------------------------------


@pytest.mark.parametrize(
    ("text", "warning"),
    [
        ("zlib +shard", "no loaded spec has a variant 'shard', so nothing matches it "
         "(did you mean shared?)"),
        ("gui=tty", "no loaded spec has a variant 'gui', so nothing matches it (did you mean "),
        ("os=ubuntu2404", "no loaded spec has the os 'ubuntu2404', so nothing matches it "
         "(did you mean ubuntu24.04"),
        ("platform=linx", "no loaded spec has the platform 'linx', so nothing matches it "
         "(did you mean linux?)"),
        ("target=zen9", "neither archspec nor the loaded data knows a target 'zen9', so "
         "nothing matches it (did you mean zen"),
        ("target=m9:", "neither archspec nor the loaded data knows a target 'm9'"),
        ("opnessl", "no loaded spec has a package 'opnessl', so nothing matches it "
         "(did you mean openssl"),
        ("^opnessl", "no loaded spec has a package 'opnessl'"),
        ("%[virtuals=mpii] openmpi", "no package provides a virtual 'mpii', so nothing "
         "matches it (did you mean mpi"),
    ],
)  # fmt: skip
def test_unknown_names_answer_empty_with_a_warning(real, text, warning):
    """``spack find`` / ``buildcache list`` answer "no match" for a name nothing has."""
    graph, _ = real
    selection = specs.select_specs(graph, specs.SpecQuery(satisfies=text))
    assert list(selection.after(None)) == []
    assert any(w.startswith(warning) for w in selection.warnings), selection.warnings


@pytest.mark.parametrize(
    ("field", "value", "warning"),
    [
        ("os", "ubuntu2404", "no loaded spec has the os 'ubuntu2404'"),
        ("platform", "linx", "no loaded spec has the platform 'linx'"),
        ("tag", "tset", "no loaded spec has the tag 'tset', so nothing matches it (did you "
         "mean test?)"),
        ("package", "opnessl", "no loaded spec has the package 'opnessl'"),
    ],
)  # fmt: skip
def test_unknown_filter_values_answer_empty_with_a_warning(real, field, value, warning):
    graph, _ = real
    selection = specs.select_specs(graph, specs.SpecQuery(**{field: value}))
    assert list(selection.after(None)) == []
    assert any(w.startswith(warning) for w in selection.warnings), selection.warnings


def test_unknown_stack_answers_empty_with_a_warning(real):
    graph, _ = real
    selection = specs.select_specs(graph, specs.SpecQuery(stacks=("unsignd",)))
    assert list(selection.after(None)) == []
    assert selection.warnings == (
        "no loaded spec has the stack 'unsignd', so nothing matches it "
        "(did you mean unsigned, signed?)",
    )


def test_unknown_names_reach_the_client_as_warnings_not_errors(real):
    """A dashboard asking a fixed question of many caches: data (empty) from each, and the
    reason in extensions.warnings, through the schema and its direct path alike."""
    graph, _ = real
    query = '{ specs(filter: {satisfies: "zlib +shard", os: "debain6"}) { totalCount } }'
    assert execute(graph, query) == {
        "data": {"specs": {"totalCount": 0}},
        "extensions": {
            "warnings": [
                "no loaded spec has the os 'debain6', so nothing matches it (did you mean "
                "debian6?)",
                "no loaded spec has a variant 'shard', so nothing matches it (did you mean "
                "shared?)",
            ]
        },
    }
    impacted = execute(graph, '{ impact(spec: "zlib-nh +pic") { specCount } }')
    assert impacted["data"] == {"impact": {"specCount": 0}}
    assert impacted["extensions"]["warnings"][0].startswith(
        "no loaded spec has a package 'zlib-nh', so nothing matches it (did you mean zlib-ng"
    )


@pytest.mark.parametrize(
    ("text", "compilers"),
    [
        # spec_parser: LEGACY_COMPILER_TO_BUILTIN renames %oneapi intel-oneapi-compilers, and
        # Spec._satisfies compares that with the recorded oneapi@... node: never the same name
        ("%oneapi", ()),
        ("%intel-oneapi-compilers", ()),
        ("%oneapi@2024.2.1:", ()),
        ("%clang", ()),
        ("%llvm", ()),
        ("%cce", ("cce@",)),
        ("%gcc@12", ("gcc@12", "gcc@=12")),
        ("%c=gcc@12", ("gcc@12", "gcc@=12")),  # the edge's virtuals are not asked of them
    ],
)
def test_old_specs_compare_the_recorded_compiler_by_its_name(data_graph, text, compilers):
    """Pages record one compiler per spec, as spec formats 1-4 do (original_spec_format < 5):
    ``Spec._satisfies`` compares that alone (``compiler_node_attribute._satisfies``), by name
    and version. A legacy name never matches: the parser has renamed ``%oneapi``."""
    from tests.conftest import SHARED_DATA
    from tests.rawpages import raw_pages

    records = [r for page in raw_pages(SHARED_DATA) for r in page.records]
    expected = {r["hash"] for r in records if compilers and r["compiler"].startswith(compilers)}
    assert _found(data_graph, text) == expected
    assert bool(expected) == bool(compilers)
    # the project's own compiler filter still finds the oneapi builds, by what they record
    oneapi = {
        r["compiler"].replace("@=", "@") for r in records if r["compiler"].startswith("oneapi@")
    }
    found = set()
    for name in oneapi:
        found |= {
            s.hash
            for s in specs.select_specs(data_graph, specs.SpecQuery(compiler=name)).after(None)
        }
    assert found == {r["hash"] for r in records if r["compiler"].startswith("oneapi@")} != set()


def test_a_legacy_compiler_name_says_why_it_matches_nothing(data_graph):
    """``%oneapi`` on specs older than Spack 1.0 that record ``oneapi``: empty, as Spack 1.1
    answers (``Spec._satisfies``), and the warning says so and where to look instead."""
    from tests.conftest import SHARED_DATA
    from tests.rawpages import raw_pages

    recorded = {r["compiler"].replace("@=", "@") for page in raw_pages(SHARED_DATA)
                for r in page.records if r["compiler"].startswith("oneapi@")}  # fmt: skip
    known = ", ".join(sorted(recorded))
    selection = specs.select_specs(data_graph, specs.SpecQuery(satisfies="%oneapi"))
    assert list(selection.after(None)) == []
    assert selection.warnings == (
        "Spack 1.x reads %oneapi as intel-oneapi-compilers, which no loaded spec is or "
        "records; as in Spack 1.1, specs older than Spack 1.0, which record 'oneapi', do "
        f"not satisfy it (the compiler filter finds them by the compiler they record: {known})",
    )


# -- spec files written before Spack 0.21: virtuals reconstructed on their edges ---------------

OLD_FILE_CASES = [
    "^mpi",
    "^mpich",
    "^mvapich2",
    "^[virtuals=mpi] mpich",
    "^[virtuals=mpi] zlib",
    "adiak ^mpi@3:",
    "^mpi@:1",
    "^zlib-api",
    "^[virtuals=zlib-api] zlib",
    "^iconv",
    "^libiconv",
    "mpi",
    "zlib-api",
    "%gcc",
    "%c",
    "adiak %gcc@11:",
]


@pytest.fixture(scope="module")
def old_files(data_graph):
    from tests.conftest import SHARED_DATA
    from tests.mirrors import raw_document

    nodes = {}
    for path in sorted(SHARED_DATA.rglob("spec-*.json")):
        for node in as_spack_reads(raw_document(path)):
            nodes.setdefault(node["hash"], node)
    return data_graph, Reference(nodes)


@pytest.mark.parametrize("text", OLD_FILE_CASES)
def test_old_spec_files_answer_as_spack(old_files, text):
    """Spec files of format 2 (Spack 0.17-0.20): their edges name no virtuals, and Spack's
    ``SpecfileV2`` reader labels them with ``reconstruct_virtuals_on_edges`` (the parent's
    package depends on the virtual, the child's provides it), so ``^mpi`` finds the adiak
    builds that link mpich or mvapich2."""
    graph, reference = old_files
    found = _found(graph, text) & reference.nodes.keys()
    assert found == reference.satisfying(text)


def test_old_spec_files_have_no_virtuals_and_mpi_is_found(old_files):
    from tests.conftest import SHARED_DATA
    from tests.mirrors import raw_document, raw_nodes

    graph, reference = old_files
    files = sorted(SHARED_DATA.rglob("spec-*.json"))
    assert not any(vs for p in files for n in raw_nodes(raw_document(p)) for *_, vs in deps_of(n))
    adiaks = {h for h, n in reference.nodes.items() if n["name"] == "adiak"}
    assert len(adiaks) == 3 and _found(graph, "^mpi") >= adiaks
