"""Real Spack mirrors (../shared/mirrors): every file loads, each spec matches its raw file
field by field, a v3 copy loads to the same graph, and broken mirrors are reported exactly."""

from __future__ import annotations

import gc
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, Problem, load
from cachegraph.graph.memory import collector_paused
from cachegraph.graph.sources.mirrors import mirrors_file

from tests.conftest import SEEDS, execute
from tests.mirrors import LONE, MIRRORS, load_shared, migrate_to_v3, raw_document, raw_index
from tests.mirrors import raw_nodes as nodes_of
from tests.rawpages import raw_pages

FUTURE = (
    "future_layout/build_cache/test-debian6-core2-gcc-4.5.0-archive-files-2.0-"
    "l3vdiqvbobmspwyb4q2b62fz6nitd4hk.spec.json"
)
LIBDWARF = "u5uz3dcch5if4eve4sef67o2rf2lbfgh"  # format 5: compiler gcc as a dependency


@pytest.fixture(scope="module")
def loaded(shared_mirrors):
    return load_shared(shared_mirrors)


def test_every_file_loads_and_the_one_of_an_unknown_layout_is_named(loaded, shared_mirrors):
    graph, report = loaded
    db7 = shared_mirrors / "v2_layout_db7/build_cache"
    assert report.problems == [
        Problem(
            str(db7 / "index.json"),
            "4 spec files beside the index are not listed in it (the first: "
            "test-debian6-m1-gcc-10.2.1-libdwarf-20130729-u5uz3dcch5if4eve4sef67o2rf2lbfgh"
            ".spec.json): not in this mirror, as Spack lists what the index holds; not read",
            severity="warning",
        ),
        Problem(
            str(shared_mirrors / FUTURE),
            "unknown buildcache_layout_version 10; this reads 1, 2, as Spack does; spec not loaded",
        ),
    ]
    assert (report.pages, report.spec_files, report.indices, report.mirrors) == (0, 5, 4, 7)
    assert sorted(graph.mirrors) == sorted(f"test/{stack}" for stack in MIRRORS)


def raw_records(shared: Path) -> list[tuple[str, dict, str | None]]:
    """(hash, node, the mirror holding it or None) of every node in ../shared/mirrors."""
    found = []
    for stack, folder in MIRRORS.items():
        cache = shared / folder / "build_cache"
        installs = raw_index(cache)
        for hash, entry in installs.items():
            holder = f"test/{stack}" if entry.get("in_buildcache", True) else None
            found.append((hash, entry["spec"], holder))
        for path in sorted(cache.glob("*.spec.*")):
            doc = raw_document(path)
            if str(doc.get("buildcache_layout_version")) == "10":
                continue
            nodes = nodes_of(doc)
            if installs:  # Spack lists what the index holds: a spec file beside it is not read
                continue
            found += [
                (n["hash"], n, f"test/{stack}" if i == 0 else None) for i, n in enumerate(nodes)
            ]
    for folder in LONE:
        for path in sorted((shared / folder).iterdir()):
            found += [(n["hash"], n, None) for n in nodes_of(raw_document(path))]
    return found


def expected_compiler(node: dict, by_hash: dict[str, dict]) -> str | None:
    if isinstance(node.get("compiler"), dict):
        return f"{node['compiler']['name']}@{node['compiler']['version']}"
    if "compiler" in node.get("annotations", {}):
        return node["annotations"]["compiler"].replace("@=", "@")
    for virtual in ("c", "cxx", "fortran"):
        for dep in node.get("dependencies", []):
            if virtual in dep.get("parameters", {}).get("virtuals", []):
                return f"{by_hash[dep['hash']]['name']}@{by_hash[dep['hash']]['version']}"
    return None


def expected_dependencies(node: dict) -> set[tuple]:
    deps = node.get("dependencies", [])
    if isinstance(deps, dict):  # format 1
        deps = [{"name": k, **v} for k, v in deps.items()]
    return {
        (
            d["hash"],
            frozenset(d.get("type") or d["parameters"]["deptypes"]),
            frozenset(d.get("parameters", {}).get("virtuals", [])),
        )
        for d in deps
    }


def test_each_spec_matches_its_raw_file_field_by_field(loaded, shared_mirrors):
    graph, _ = loaded
    records = raw_records(shared_mirrors)
    by_hash = {hash: node for hash, node, _ in records}
    holders: dict[str, set[str]] = {}
    for hash, _, holder in records:
        holders.setdefault(hash, set()).update([holder] if holder else [])
    assert {s.hash for s in graph.all_specs()} == set(by_hash)
    for hash, node, _ in records:
        spec = graph.spec(hash)
        target = node["arch"]["target"]
        assert (spec.package, spec.version, spec.os, spec.platform, spec.target) == (
            node["name"],
            str(node["version"]),
            node["arch"]["platform_os"],
            node["arch"]["platform"],
            target["name"] if isinstance(target, dict) else target,
        ), hash
        assert spec.compiler == expected_compiler(node, by_hash), hash
        for name, value in node.get("parameters", {}).items():
            if isinstance(value, bool):
                assert ("+" if value else "~") + name in spec.variants, (hash, name)
            elif isinstance(value, str):
                assert f"{name}={value}" in spec.variants, (hash, name)
        edges = {
            (child[1], data["deptypes"], data["virtuals"])
            for child, data in graph.succ["spec", hash].items()
            if data["kind"] == "depends_on"
        }
        assert edges == expected_dependencies(node), hash
        assert spec.mirrors == holders[hash], hash


def test_the_graph_holds_every_relation_of_a_real_spec_as_an_edge(loaded):
    graph, _ = loaded
    g = graph
    spec = ("spec", LIBDWARF)
    stacks = {"tags": frozenset({"test"}), "kind": "stack"}
    assert dict(g.succ[spec]) == {
        ("package", "libdwarf"): {"kind": "package"},
        ("compiler", "gcc@10.2.1"): {"kind": "compiler"},
        ("target", "m1"): {"kind": "target"},
        ("os", "debian6"): {"kind": "os"},
        ("platform", "test"): {"kind": "platform"},
        ("stack", "unsigned"): stacks,
        ("stack", "signed"): stacks,
        ("tag", "test"): {"kind": "tag"},
        ("mirror", "test/unsigned"): {"kind": "mirror"},
        ("mirror", "test/signed"): {"kind": "mirror"},
        ("spec", "qeehcxyvluwnihsc2qxstmpomtxo3lrc"): {
            "kind": "depends_on", "deptypes": {"build"}, "virtuals": frozenset()},
        ("spec", "vd7v4ssgnoqdplgxyig3orum67n4vmhq"): {
            "kind": "depends_on", "deptypes": {"build"}, "virtuals": {"c", "cxx"}},
        ("spec", "izgzpzeljwairalfjm3k6fntbb64nt6n"): {
            "kind": "depends_on", "deptypes": {"link"}, "virtuals": frozenset()},
        ("spec", "jr3yipyxyjulcdvckwwwjrrumis7glpa"): {
            "kind": "depends_on", "deptypes": {"build", "link"}, "virtuals": frozenset()},
    }  # fmt: skip
    assert g.nodes["mirror", "test/db7"]["mirror"].layout == "v2"
    assert set(g.succ["mirror", "test/db7"]) == {("tag", "test"), ("stack", "db7")}
    # The compiler gcc is referenced, not held: a spec of the graph in no mirror.
    assert [k for k, d in g.succ["spec", "vd7v4ssgnoqdplgxyig3orum67n4vmhq"].items()
            if d["kind"] in ("mirror", "stack")] == []  # fmt: skip


def graph_facts(graph) -> dict:
    """Everything a v2 and a v3 copy of one mirror must agree on."""
    return {
        s.hash: (s.package, s.version, s.compiler, s.os, s.platform, s.target, s.variants,
                 dict(s.stacks), s.mirrors)
        for s in graph.all_specs()
    } | {"deps": sorted(
        (p, c, sorted(d["deptypes"]), sorted(d["virtuals"]))
        for p, c, d in graph.edges(data=True) if d["kind"] == "depends_on"
    )}  # fmt: skip


def test_a_v3_copy_loads_to_the_same_graph_plus_sizes(shared_mirrors, tmp_path):
    v2 = shared_mirrors / "v2_layout" / "unsigned"
    sizes = {}

    def size(hash: str) -> int:
        sizes[hash] = 1000 + len(sizes)
        return sizes[hash]

    v3 = migrate_to_v3(v2 / "build_cache", tmp_path / "v3", size)
    from_v2, report2 = load([], [MirrorSource("test", "e4s", v2, "m")])
    from_v3, report3 = load([], [MirrorSource("test", "e4s", v3, "m")])
    assert report2.problems == report3.problems == []
    assert graph_facts(from_v3) == graph_facts(from_v2)
    assert {s.hash: s.size for s in from_v3.all_specs() if s.size is not None} == sizes
    assert {s.hash: s.size for s in from_v2.all_specs() if s.size is not None} == {}
    assert (from_v2.mirrors["m"].layout, from_v3.mirrors["m"].layout) == ("v2", "v3")
    for spec in from_v3.all_specs():
        if spec.mirrors:  # where the manifest's tarball record says
            stand_in = hashlib.sha256(f"tarball of {spec.hash}".encode()).hexdigest()
            assert spec.tarball == f"blobs/sha256/{stand_in[:2]}/{stand_in}"  # below the root


def test_a_v2_tarball_is_where_spack_puts_it(loaded, shared_mirrors):
    graph, _ = loaded
    # named below the mirror's root (build_cache/...), never by the server's own folders
    assert graph.spec("sk2gqqz4n5njmvktycnd25wq25jxiqkr").tarball == (
        "build_cache/test-debian6-core2/gcc-10.2.1/libdwarf-20130729/"
        "test-debian6-core2-gcc-10.2.1-libdwarf-20130729-sk2gqqz4n5njmvktycnd25wq25jxiqkr.spack"
    )


@pytest.mark.parametrize("layout", ["v2", "v3"])
def test_reading_a_mirror_leaves_nothing_for_the_collector(shared_mirrors, tmp_path, layout):
    """A load pauses the cyclic garbage collector (it makes millions of objects, and no
    cycles): a cycle made while reading a mirror would keep the whole read (its spec files'
    names, its manifests' tarballs) to the end of the load. Reading leaves none."""
    v2 = shared_mirrors / "v2_layout/unsigned/build_cache"
    root = v2 if layout == "v2" else migrate_to_v3(v2, tmp_path / "v3")
    source = MirrorSource("test", "e4s", root)
    load([], [source], processes=1)  # what a first load makes once (imports, their caches)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        with collector_paused():
            graph, report = load([], [source], processes=1)
        gc.collect()
        left = [type(o).__qualname__ for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert (report.mirrors, len(graph.all_specs()) > 0, left) == (1, True, [])


# -- broken mirrors ---------------------------------------------------------------------


@pytest.fixture
def v3(shared_mirrors, tmp_path) -> Path:
    return migrate_to_v3(shared_mirrors / "v2_layout/unsigned/build_cache", tmp_path / "v3")


def manifest_blob(manifest: Path, root: Path, media: str) -> Path:
    record = next(r for r in json.loads(manifest.read_text())["data"] if media in r["mediaType"])
    return root / "blobs" / "sha256" / record["checksum"][:2] / record["checksum"]


def problems_of(root: Path) -> tuple[list[str], int]:
    graph, report = load([], [MirrorSource("test", "e4s", root, "m")])
    return [f"{p.severity}: {Path(p.path).relative_to(root)}: {p.message}"
            for p in report.problems], len(graph.all_specs())  # fmt: skip


def test_a_blob_whose_checksum_does_not_hold_is_an_error(v3):
    index = v3 / "v3/manifests/index/index.manifest.json"
    blob = manifest_blob(index, v3, "spack.db")
    blob.write_bytes(blob.read_bytes().replace(b'"libelf"', b'"libelX"'))
    record = json.loads(index.read_text())["data"][0]
    problems, specs = problems_of(v3)
    actual = hashlib.sha256(blob.read_bytes()).hexdigest()
    assert problems[0] == (
        f"error: {blob.relative_to(v3)}: checksum mismatch: the blob's sha256 is {actual}, "
        f"its manifest index.manifest.json says {record['checksum']}"
    )
    # Without the index, the spec blobs still give every held spec and its DAG.
    assert specs == 7


def test_a_manifest_naming_a_missing_blob_is_an_error(v3):
    manifest = next((v3 / "v3/manifests/spec/libelf").glob("*.json"))
    blob = manifest_blob(manifest, v3, "spack.spec")
    blob.unlink()
    problems, specs = problems_of(v3)
    assert problems == [
        f"error: {manifest.relative_to(v3)}: names blob {blob.relative_to(v3)}, which is missing"
    ]
    assert specs == 7


def test_an_unknown_manifest_or_database_version_is_an_error(v3):
    index = v3 / "v3/manifests/index/index.manifest.json"
    doc = json.loads(index.read_text())
    doc["data"][0]["mediaType"] = "application/vnd.spack.db.v99+json"
    index.write_text(json.dumps(doc))
    manifest = next((v3 / "v3/manifests/spec/libdwarf").glob("*.json"))
    manifest.write_text(manifest.read_text().replace('"version":3', '"version":4'))
    problems, _ = problems_of(v3)
    assert problems == [
        "error: v3/manifests/index/index.manifest.json: no index blob of a database version "
        "this reads (5, 6, 7, 8); the manifest has 99",
        f"error: {manifest.relative_to(v3)}: unknown manifest version 4; this reads 3",
    ]


def test_a_v2_index_whose_hash_differs_and_a_dependency_no_source_knows(shared_mirrors, tmp_path):
    cache = tmp_path / "build_cache"
    shutil.copytree(shared_mirrors / "v2_layout_db7/build_cache", cache)
    index = json.loads((cache / "index.json").read_text())
    del index["database"]["installs"]["rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"]  # libelf, a dependency
    (cache / "index.json").write_text(json.dumps(index))
    for spec_file in cache.glob("*libelf*"):
        spec_file.unlink()
    problems, specs = problems_of(tmp_path)
    actual = hashlib.sha256((cache / "index.json").read_bytes()).hexdigest()
    stated = (cache / "index.json.hash").read_text().strip()
    assert problems == [
        f"error: build_cache/index.json: sha256 is {actual} but index.json.hash says "
        f"{stated!r}: the index changed after its hash was written (records loaded anyway)",
        "warning: build_cache/index.json: 3 spec files beside the index are not listed in it "
        "(the first: test-debian6-m1-gcc-10.2.1-libdwarf-20130729-"
        "u5uz3dcch5if4eve4sef67o2rf2lbfgh.spec.json): not in this mirror, as Spack lists what "
        "the index holds; not read",
        "error: build_cache/index.json: sk2gqqz4n5njmvktycnd25wq25jxiqkr depends on "
        "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez, which no loaded node describes; dependency dropped",
    ]
    # libdwarf sk2gqqz from the index, alone: the spec files beside it are not in the mirror
    assert specs == 1


@pytest.mark.parametrize("after", [False, True])
def test_hashes_sharing_their_first_eight_bytes_each_find_their_own_node(
    shared_mirrors, tmp_path, after
):
    """A dependency is found by its hash's first eight bytes, then checked whole
    (``spec_of`` in graph/store/build.py): libelf renamed to share libdwarf's first eight,
    sorting before it or after it (found by the second search)."""
    libdwarf, libelf = "sk2gqqz4n5njmvktycnd25wq25jxiqkr", "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez"
    twin = libdwarf[:8] + ("z" if after else "a") + libelf[9:]
    cache = tmp_path / "build_cache"
    cache.mkdir()
    text = (shared_mirrors / "v2_layout_db7/build_cache/index.json").read_text()
    (cache / "index.json").write_text(text.replace(libelf, twin))
    graph, report = load([], [MirrorSource("test", "twins", tmp_path)])
    assert report.problems == []
    assert sorted(s.hash for s in graph.all_specs()) == sorted([libdwarf, twin])
    assert [(p, c) for p, c, d in graph.edges(data=True) if d["kind"] == "depends_on"] == [
        (("spec", libdwarf), ("spec", twin))
    ]


def test_a_path_that_is_no_build_cache_is_an_error(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    problems, specs = problems_of(tmp_path)
    assert (problems, specs) == (
        ["error: .: not a build cache: no index.json and no spec files"],
        0,
    )


def test_a_mirror_that_failed_to_load_keeps_its_tag_listed_with_no_specs(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    graph = load([SEEDS], [MirrorSource("nightly", "e4s", tmp_path)])[0]
    pages = raw_pages(SEEDS)
    assert {p.tag for p in pages} == {"develop"}
    develop = sum(p.meta["num_specs"] for p in pages)
    query = "{ tags { name specCount } stats { tagCount } }"
    assert execute(graph, query) == {
        "data": {
            "tags": [
                {"name": "develop", "specCount": develop},
                {"name": "nightly", "specCount": 0},
            ],
            "stats": {"tagCount": 2},
        }
    }


def test_two_mirrors_of_one_name_are_an_error(shared_mirrors):
    path = shared_mirrors / "v2_layout/unsigned"
    report = load([], [MirrorSource("a", "b", path), MirrorSource("a", "b", path)])[1]
    assert report.problems == [
        Problem(str(path), "a second mirror named 'a/b'; give each its own name in a mirrors file")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "mirrors:\n  - {name: mine, tag: develop, stack: e4s, path: m}\n",
        '{"develop": [{"label": "e4s", "url": "file://m", "name": "mine"}]}',
    ],
    ids=["yaml", "indexer"],
)
def test_a_mirrors_file_in_either_shape(tmp_path, text):
    listing = tmp_path / ("mirrors.yaml" if text.startswith("mirrors") else "mirrors.json")
    listing.write_text(text)
    assert mirrors_file(listing) == [MirrorSource("develop", "e4s", tmp_path / "m", "mine")]


def test_a_mirrors_file_may_name_remote_mirrors(tmp_path):
    listing = tmp_path / "mirrors.json"
    listing.write_text(
        '{"develop": [{"label": "e4s", "url": "s3://AKIA:secret@bucket/x"},'
        ' {"label": "ml", "url": "oci://ghcr.io/spack/ml^nightly"}]}'
    )
    assert [(m.label, m.shown, m.view) for m in mirrors_file(listing)] == [
        ("develop/e4s", "s3://bucket/x", ""),
        ("develop/ml", "oci://ghcr.io/spack/ml", "nightly"),
    ]


def test_a_bad_mirrors_file_says_what_is_wrong(tmp_path):
    listing = tmp_path / "mirrors.json"
    listing.write_text('{"develop": [{"label": "e4s", "url": "ftp://user:pw@host/x"}]}')
    with pytest.raises(ValueError, match="'ftp://host/x': a scheme this does not read"):
        mirrors_file(listing)
