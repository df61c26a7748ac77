"""Environment coverage on the real lockfiles of ../shared/lockfiles, against mirrors made from
them: a chosen part of each lockfile's specs held, some absent, some changed, some in another
tag. Every hit, miss and reason is worked out here from that choice, not by the code."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, load
from cachegraph.graph.errors import BadArgument
from cachegraph.graph.questions.coverage import EXTERNAL, coverage
from cachegraph.graph.sources import lockfiles as lockfiles_module
from cachegraph.graph.sources.lockfiles import read_lockfile
from cachegraph.graph.store.records import SpecRecord
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SEEDS, SHARED

LOCKFILES = SHARED / "lockfiles"
#: file -> lockfile version, from the README of ../shared/lockfiles
VERSIONS = {
    "spack+all-pythons.spack.lock": 6,
    "viperML+spack-stack.spack.lock": 6,
    "acts-trk+ci-dependencies.spack.lock": 5,
    "robertu94+mpigdb.spack.lock": 4,
    "FTHPC+Correlation_Compressibility.spack.lock": 3,
    "jacobmerson+spack-develop-env.spack.lock": 2,
}
CHANGED = "z" * 32
SEEDS_LOCK = SEEDS.parent / "spack.lock"


@pytest.fixture(scope="module")
def lockfiles():
    if not LOCKFILES.is_dir():
        pytest.skip(f"{LOCKFILES} is absent: the shared lockfiles are not on this machine")
    return LOCKFILES


def _raw(path: Path) -> dict:
    return json.loads(path.read_text())


def _raw_dag_hashes(doc: dict) -> tuple[list[str], set[str]]:
    """(root DAG hashes, every DAG hash) read plainly: the node's 'hash' in versions 2-3
    (version 2 nodes are {name: body}), the key from version 4 on."""
    version = doc["_meta"]["lockfile-version"]

    def dag(key: str) -> str:
        node = doc["concrete_specs"][key]
        if version == 2:
            node = next(iter(node.values()))
        return node["hash"] if version <= 3 else key

    roots = [dag(r["hash"]) for r in doc["roots"]]
    return list(dict.fromkeys(roots)), {dag(k) for k in doc["concrete_specs"]}


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_every_lockfile_version_reads_to_its_dag_hashes(lockfiles, name):
    doc = _raw(lockfiles / name)
    env = read_lockfile(doc)
    roots, hashes = _raw_dag_hashes(doc)
    assert env.version == VERSIONS[name]
    assert env.roots == tuple(roots)
    assert set(env.specs) == hashes
    assert list(env.specs)[: len(roots)] == roots  # roots first
    # every dependency names a spec of the environment
    assert {h for deps in env.dependencies.values() for _, h in deps} <= hashes
    # compilers: the field (versions 2-5), or the c/cxx/fortran provider (version 6)
    assert {h: s.compiler for h, s in env.specs.items()} == _raw_compilers(doc)


def _raw_compilers(doc: dict) -> dict[str, str | None]:
    """DAG hash -> 'name@version' of its compiler, read plainly from the JSON."""
    version = doc["_meta"]["lockfile-version"]
    nodes = {}
    for key, node in doc["concrete_specs"].items():
        if version == 2:
            [(name, body)] = node.items()
            node = {"name": name, **body}
        nodes[node["hash"] if version <= 3 else key] = node
    found = {}
    for dag, node in nodes.items():
        if isinstance(node.get("compiler"), dict):
            found[dag] = f"{node['compiler']['name']}@{node['compiler']['version']}"
            continue
        providers = [
            nodes[d["hash"]] for d in node.get("dependencies", [])
            if {"c", "cxx", "fortran"} & set(d.get("parameters", {}).get("virtuals", []))
        ]  # fmt: skip
        found[dag] = f"{providers[0]['name']}@{providers[0]['version']}" if providers else None
    return found


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ([], "not a spack.lock: it has no 'concrete_specs' mapping"),
        (
            {"_meta": {"lockfile-version": 1}, "concrete_specs": {}},
            "lockfile-version 1 is not one this reads (2 to 8: Spack 0.13 to 1.3)",
        ),
        (
            {
                "_meta": {"lockfile-version": 4},
                "roots": [],
                "concrete_specs": {"a" * 32: {"name": "x", "version": "1", "arch": 5}},
            },
            f"concrete_specs/{'a' * 32}: 'arch' must be a mapping, not int 5",
        ),
    ],
)
def test_a_bad_lockfile_is_an_error_saying_what_is_wrong(doc, message):
    with pytest.raises(BadArgument) as raised:
        read_lockfile(doc)
    assert str(raised.value) == message


def _write_index(folder: Path, installs: dict) -> Path:
    cache = folder / "build_cache"
    cache.mkdir(parents=True)
    text = json.dumps({"database": {"version": "8", "installs": installs}})
    (cache / "index.json").write_text(text)
    (cache / "index.json.hash").write_text(hashlib.sha256(text.encode()).hexdigest())
    return folder


@pytest.mark.parametrize("name", [n for n, v in VERSIONS.items() if v >= 4])
def test_coverage_of_a_lockfile_against_a_mirror_made_from_it(lockfiles, tmp_path, name):
    doc = _raw(lockfiles / name)
    nodes = doc["concrete_specs"]
    roots = list(dict.fromkeys(r["hash"] for r in doc["roots"]))
    others = [h for h in nodes if h not in roots]
    depended = {d["hash"] for n in nodes.values() for d in n.get("dependencies", [])}
    # three roots nothing depends on: one absent, one changed, one only in another tag
    absent, changed, elsewhere = [r for r in roots if r not in depended][:3]
    held_roots = [r for r in roots if r not in (absent, changed, elsewhere)]
    # develop/e4s: every non-root in the index, the even ones held; the held roots; the
    # changed root's copy under another hash. old/e4s: the root that is elsewhere.
    installs = {h: {"spec": nodes[h], "in_buildcache": i % 2 == 0} for i, h in enumerate(others)}
    installs |= {h: {"spec": nodes[h], "in_buildcache": True} for h in held_roots}
    installs[CHANGED] = {"spec": {**nodes[changed], "hash": CHANGED}, "in_buildcache": True}
    develop = _write_index(tmp_path / "develop", installs)
    old = _write_index(tmp_path / "old", {elsewhere: {"spec": nodes[elsewhere]}} | {
        h: {"spec": nodes[h], "in_buildcache": False} for h in nodes
        if h not in (absent, changed, elsewhere)})  # fmt: skip
    graph, report = load(
        [], [MirrorSource("develop", "e4s", develop), MirrorSource("old", "e4s", old)]
    )
    assert report.errors == []

    found = coverage(graph, read_lockfile(doc), tag="develop")
    expected: dict[str, str | None] = {h: None for h in held_roots} | {
        absent: "not in any loaded mirror",
        changed: f"the same spec is cached as {CHANGED[:7]} (its dependencies differ)",
        elsewhere: "held only in tag old",
    }
    for i, h in enumerate(others):
        expected[h] = None if i % 2 == 0 else (
            "known only as a dependency of cached specs, held by no mirror")  # fmt: skip
    # Externals are never installed from a cache: neither hits nor misses.
    externals = {h for h, n in nodes.items() if n.get("external")}
    expected |= {h: EXTERNAL for h in externals}
    assert [(e.hash, e.reason) for e in found.entries] == [
        (h, expected[h]) for h in [*roots, *others]
    ]
    assert [e.hash for e in found.entries if e.spec is not None] == [
        h for h in [*roots, *others] if expected[h] is None
    ]
    # the hits' records, made at once, are those the store gives one by one
    fields = SpecRecord.__slots__
    assert [[getattr(e.spec, f) for f in fields] for e in found.entries if e.spec] == [
        [getattr(graph.spec(e.hash), f) for f in fields] for e in found.entries if e.spec
    ]
    assert found.cached_roots == tuple(r for r in roots if r not in externals
        and _closure(nodes, r) - externals <= {
        h for h, reason in expected.items() if reason is None})  # fmt: skip

    # Without a tag, the root held in tag old is a hit.
    anywhere = coverage(graph, read_lockfile(doc))
    assert [e.hash for e in anywhere.entries if e.spec is not None] == [
        h for h in [*roots, *others] if expected[h] is None or h == elsewhere
    ]


def _closure(nodes: dict, root: str) -> set[str]:
    seen, stack = set(), [root]
    while stack:
        h = stack.pop()
        if h not in seen:
            seen.add(h)
            stack += [d["hash"] for d in nodes[h].get("dependencies", [])]
    return seen


# -- issue 30, items 11 and 12: malformed lockfiles are the client's errors --------------------

H = "a" * 32
NODE = {
    "name": "zlib", "version": "1.3", "hash": H,
    "arch": {"platform": "linux", "platform_os": "rhel8", "target": "zen2"},
    "compiler": {"name": "gcc", "version": "12.1.0"},
}  # fmt: skip


def _with_dependency(**dep) -> dict:
    node = {**NODE, "dependencies": [{"name": "b", "hash": "b" * 32, **dep}]}
    return {"_meta": {"lockfile-version": 4}, "roots": [{"hash": H}], "concrete_specs": {H: node}}


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


MALFORMED = [
    (
        {"_meta": "x", "roots": [], "concrete_specs": {}},
        "'_meta' must be a mapping with a 'lockfile-version', not str 'x'",
    ),
    (
        {"_meta": {"lockfile-version": 4}, "roots": 5, "concrete_specs": {H: NODE}},
        """'roots' must be a list of {"hash": ..., "spec": ...} mappings, not int 5""",
    ),
    (
        {"_meta": {"lockfile-version": 2}, "roots": [{"hash": [H]}], "concrete_specs": {H: NODE}},
        """'roots' must be a list of {"hash": ..., "spec": ...} mappings, not """
        """list [{'hash': ['aaaaaaaaaaaaaaaaaaaaaaaaa...""",
    ),
    (
        _with_dependency(parameters=["build"]),
        f"concrete_specs/{H}: a dependency's 'parameters' must be a mapping, not list ['build']",
    ),
    (
        _with_dependency(parameters={"virtuals": 5}),
        f"concrete_specs/{H}: a dependency's 'virtuals' must be a list of strings, not int 5",
    ),
    (
        {"_meta": {"lockfile-version": 4}, "roots": [], "concrete_specs": {H: NODE},
         "x": _nested(1_000)},
        "not a spack.lock: it nests more than 64 levels deep (real ones: 7)",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("doc", "message"), MALFORMED)
def test_a_malformed_lockfile_is_an_error_saying_what_is_wrong(doc, message):
    with pytest.raises(BadArgument) as raised:
        read_lockfile(doc)
    assert str(raised.value) == message


def test_malformed_lockfiles_are_client_errors_over_http(seeds_graph):
    from starlette.testclient import TestClient

    from cachegraph import create_app

    query = "query($l: JSON) { coverage(lockfile: $l) { total } }"
    with TestClient(create_app(seeds_graph)) as client:
        for doc, message in MALFORMED:
            deep = "x" in doc  # json.dumps cannot write it: its text is made here
            body = json.dumps(
                {"query": query, "variables": {"l": {**doc, "x": "X"} if deep else doc}}
            )
            body = body.replace('"X"', "[" * 1_000 + "]" * 1_000)
            response = client.post(
                "/graphql", content=body, headers={"content-type": "application/json"}
            )
            assert response.json() == {
                "data": None,
                "errors": [{"message": message, "locations": [{"line": 1, "column": 19}],
                            "path": ["coverage"]}],
            }  # fmt: skip
        metrics = client.get("/metrics").text
    errors = [
        line for line in metrics.splitlines() if line.startswith("cachegraph_graphql_errors_total")
    ]
    assert errors == [f'cachegraph_graphql_errors_total{{kind="client"}} {len(MALFORMED)}.0']


# -- issue 40 item 2: a lockfile read column by column, its depth proved on its text ----------


def _plain_dependencies(node: dict, version: int) -> tuple:
    """A node's dependencies read plainly from the JSON: (names, hashes, virtuals)."""
    deps = node.get("dependencies") or []
    if isinstance(deps, dict):
        deps = [{"name": n, **b} for n, b in deps.items()]
    key = "build_hash" if version == 3 else "hash"
    return (
        tuple(d["name"] for d in deps),
        tuple(d.get(key, d.get("hash")) for d in deps),
        tuple(tuple(d.get("parameters", {}).get("virtuals", ())) for d in deps),
    )


@pytest.mark.parametrize("name", [*sorted(VERSIONS), "seeds"])
def test_every_node_s_dependencies_read_at_once_are_those_of_the_json(lockfiles, name):
    doc = _raw(SEEDS_LOCK if name == "seeds" else lockfiles / name)
    version = doc["_meta"]["lockfile-version"]
    nodes = list(doc["concrete_specs"].values())
    if version == 2:
        nodes = [{"name": n, **b} for node in nodes for n, b in node.items()]
    expected = [_plain_dependencies(node, version) for node in nodes]
    assert [lockfiles_module._dependencies(node, version) for node in nodes] == expected
    quick = lockfiles_module._usual_dependencies(nodes, version)
    if any(isinstance(n.get("dependencies"), dict) for n in nodes):
        assert quick is None  # spec format v1: read node by node
    else:
        assert quick == expected
    if version >= 4:
        env = read_lockfile(doc)
        assert env.dependencies == {
            key: tuple(zip(*_plain_dependencies(node, version)[:2], strict=True))
            for key, node in doc["concrete_specs"].items()
        }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": 5}, "a dependency needs a 'name' and a 32-character 'hash'"),
        ({"hash": "B" * 32}, "a dependency needs a 'name' and a 32-character 'hash'"),
        ({"hash": "b" * 31}, "a dependency needs a 'name' and a 32-character 'hash'"),
        ({"parameters": ["build"]}, "a dependency's 'parameters' must be a mapping, not list"),
        ({"parameters": {"virtuals": 5}}, "a dependency's 'virtuals' must be a list of strings"),
    ],
)
def test_a_bad_dependency_among_usual_ones_is_named_as_one_by_one(change, message):
    """The columns' checks let no bad dependency by: the node read alone says what is wrong."""
    good = {"name": "b", "hash": "b" * 32, "parameters": {"virtuals": ["c"]}}
    nodes = {h * 32: {**NODE, "hash": h * 32, "dependencies": [good] * 3} for h in "cdef"}
    nodes["d" * 32]["dependencies"] = [good, {**good, **change}]
    doc = {"_meta": {"lockfile-version": 5}, "roots": [], "concrete_specs": nodes}
    with pytest.raises(BadArgument) as raised:
        read_lockfile(doc)
    assert str(raised.value).startswith(f"concrete_specs/{'d' * 32}: {message}")


def test_a_node_that_is_no_mapping_is_named_in_a_client_error():
    """It was an AttributeError (a server error) before any check named it."""
    doc = {
        "_meta": {"lockfile-version": 4},
        "roots": [],
        "concrete_specs": {H: NODE, "b" * 32: "x"},
    }
    with pytest.raises(BadArgument) as raised:
        read_lockfile(doc)
    assert (
        str(raised.value)
        == f"concrete_specs/{'b' * 32}: a spec node must be a mapping, not str 'x'"
    )


def _depth(value) -> int:
    """How many levels a JSON value nests (itself the first), counted plainly."""
    inner = value.values() if isinstance(value, dict) else value
    if not isinstance(value, dict | list):
        return 0
    return 1 + max((_depth(v) for v in inner), default=0)


_LEAVES = st.sampled_from(["x", '"', "\\", '\\"]', "[{", "}]", 1, None, [], {}])


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=55, max_value=70), st.lists(_LEAVES, max_size=6), st.booleans())
def test_a_lockfile_is_refused_exactly_when_it_nests_too_deep(depth, leaves, mapping):
    """The proof on the text (frontmatter.surely_shallow_value) never lets a deep lockfile
    by: near the limit, with strings of brackets, quotes and escapes, read_lockfile refuses
    exactly those nesting deeper than 64 levels, counted plainly here."""
    value: object = leaves
    for i in range(depth - 3):
        value = {f"k{i}": value, "s": '["\\'} if mapping and i % 2 else [value, "]"]
    doc = {"_meta": {"lockfile-version": 4}, "roots": [], "concrete_specs": {H: NODE},
           "x": value}  # fmt: skip
    try:
        read_lockfile(doc)
        refused = False
    except BadArgument as exc:
        assert str(exc) == "not a spack.lock: it nests more than 64 levels deep (real ones: 7)"
        refused = True
    assert refused == (_depth(doc) > 64)
