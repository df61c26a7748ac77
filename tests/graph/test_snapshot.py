"""A snapshot gives back the graph it was written from, and only for unchanged sources."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cachegraph.graph import CacheGraph, MirrorSource, load, snapshot

from ..conftest import SEEDS, execute


def same_arrays(a: CacheGraph, b: CacheGraph) -> bool:
    x, y = a.store.arrays, b.store.arrays
    return x.keys() == y.keys() and all(
        np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind == "f") for k in x
    )


#: a pid no process has: above any Linux allows (``pid_max`` is at most 2**22)
NO_PROCESS = 2**22 + 7


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SEEDS, tmp_path / "seeds"))


def test_a_snapshot_gives_back_the_same_graph(seeds: Path, tmp_path: Path):
    graph, report = load([seeds])
    key = snapshot.fingerprint([seeds])
    snapshot.save(tmp_path / "snap", graph, report, key)
    restored, restored_report = snapshot.load(tmp_path / "snap", key)
    fields = ("hash", "package", "version", "compiler", "os", "target", "variants", "stacks")
    assert [[getattr(s, f) for f in fields] for s in restored.all_specs()] == [
        [getattr(s, f) for f in fields] for s in graph.all_specs()
    ]
    assert same_arrays(restored, graph)
    assert restored_report.summary() == report.summary()
    query = "{ stackOverlaps { stacks { name } sharedSpecCount } stats { specCount } }"
    assert execute(restored, query) == execute(graph, query)


def test_a_write_abandoned_by_a_killed_server_is_removed_by_the_next(seeds, tmp_path):
    """A server killed while writing its snapshot leaves ``NAME.<pid>.partial``; the next
    write of that snapshot removes it, and leaves one whose writer still runs."""
    child = subprocess.Popen(["sleep", "60"])
    try:
        abandoned = tmp_path / f"snap.{NO_PROCESS}.partial"
        writing = tmp_path / f"snap.{child.pid}.partial"
        for path in (abandoned, writing):
            path.write_bytes(b"\0" * 4096)
        graph, report = load([seeds])
        snapshot.save(tmp_path / "snap", graph, report, snapshot.fingerprint([seeds]))
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["seeds", "snap", writing.name])
    finally:
        child.kill()
        child.wait()


def test_the_fingerprint_of_a_second_process_is_this_ones(seeds: Path, tmp_path: Path):
    pending = snapshot.fingerprinting([seeds])
    assert pending.process is not None
    assert pending.result() == snapshot.fingerprint([seeds]) == pending.result()
    graph, report = load([seeds])
    snapshot.save(tmp_path / "snap", graph, report, snapshot.fingerprint([seeds]))
    restored, _ = snapshot.load(tmp_path / "snap", snapshot.fingerprinting([seeds]))
    assert same_arrays(restored, graph)


@pytest.mark.parametrize("elsewhere", [False, True], ids=["here", "in a second process"])
@pytest.mark.parametrize("change", ["touch a page", "add a page", "remove a page"])
def test_a_snapshot_of_other_sources_is_not_used(
    seeds: Path, tmp_path: Path, change: str, elsewhere: bool
):
    graph, report = load([seeds])
    snapshot.save(tmp_path / "snap", graph, report, snapshot.fingerprint([seeds]))
    page = sorted(seeds.glob("*"))[0]
    if change == "touch a page":
        page.write_text(page.read_text() + "\n")
    elif change == "add a page":
        shutil.copy(page, seeds / "copy.md")
    else:
        page.unlink()
    key = (snapshot.fingerprinting if elsewhere else snapshot.fingerprint)([seeds])
    assert snapshot.load(tmp_path / "snap", key) is None


@pytest.mark.parametrize("content", [b"", b"cachegraph-snapshot 0 3.0\n", b"not a snapshot"])
def test_an_unreadable_snapshot_is_not_used(tmp_path: Path, content: bytes):
    (tmp_path / "snap").write_bytes(content)
    assert snapshot.load(tmp_path / "snap", "key") is None
    assert snapshot.load(tmp_path / "absent", "key") is None


def test_a_snapshot_of_mirrors_keeps_their_graph_sizes_and_staleness(shared_mirrors, tmp_path):
    from tests.mirrors import migrate_to_v3

    v3 = migrate_to_v3(
        shared_mirrors / "v2_layout/unsigned/build_cache", tmp_path / "v3", lambda h: 4096
    )
    mirrors = [
        MirrorSource("site", "e4s", v3),
        MirrorSource("site", "ml", shared_mirrors / "v2_layout_db7"),
    ]
    graph, report = load([], mirrors)
    key = snapshot.fingerprint([], mirrors)
    snapshot.save(tmp_path / "snap", graph, report, key)
    restored, _ = snapshot.load(tmp_path / "snap", key)
    fields = ("hash", "compiler", "size", "tarball", "mirrors", "stacks")
    assert [[getattr(s, f) for f in fields] for s in restored.all_specs()] == [
        [getattr(s, f) for f in fields] for s in graph.all_specs()
    ]
    assert restored.mirrors == graph.mirrors
    assert sorted(restored.edges(data=True)) == sorted(graph.edges(data=True))
    query = "{ mirrors { name layout specCount totalBytes } }"
    assert execute(restored, query) == execute(graph, query)
    # A spec manifest replaced (written aside and renamed, as Spack writes) makes it stale.
    manifest = next((v3 / "v3/manifests/spec/libelf").glob("*.json"))
    (v3 / "aside").write_text(manifest.read_text() + "\n")
    (v3 / "aside").rename(manifest)
    assert snapshot.fingerprint([], mirrors) != key


def replaced(path: Path, text: str) -> None:
    """``path`` rewritten as Spack, rsync and ``aws s3 sync`` write: aside, then renamed."""
    aside = path.with_name(path.name + ".tmp")
    aside.write_text(text)
    aside.rename(path)


SPEC = "test-debian6-core2-gcc-10.2.1-libelf-0.8.13-rqh2vuf6fqwkmipzgi2wjx352mq7y7ez.spec.json"


@pytest.fixture(params=["v2", "v3", "v2 without an index"])
def mirror(request, shared_mirrors: Path, tmp_path: Path) -> tuple[str, Path]:
    from tests.mirrors import migrate_to_v3

    v2 = shared_mirrors / "v2_layout/unsigned/build_cache"
    if request.param == "v3":
        return "v3", migrate_to_v3(v2, tmp_path / "v3")
    root = Path(shutil.copytree(v2.parent, tmp_path / "v2"))
    if request.param != "v2":
        (root / "build_cache/index.json").unlink()
        (root / "build_cache/index.json.hash").unlink()
    return request.param, root


def spec_file(kind: str, root: Path) -> Path:
    if kind == "v3":
        return next((root / "v3/manifests/spec/libelf").glob("*.json"))
    return root / "build_cache" / SPEC


@pytest.mark.parametrize("change", ["add a spec file", "remove a spec file", "replace a spec file"])
def test_a_mirror_changed_as_spack_changes_one_changes_the_fingerprint(mirror, change: str):
    kind, root = mirror
    sources = [MirrorSource("site", "e4s", root)]
    before = snapshot.fingerprint([], sources)
    spec = spec_file(kind, root)
    if change == "add a spec file":
        shutil.copy(spec, spec.with_name(spec.name.replace("-", "_", 1)))
    elif change == "remove a spec file":
        spec.unlink()
    else:
        replaced(spec, spec.read_text() + "\n")
    assert snapshot.fingerprint([], sources) != before
    assert snapshot.fingerprinting([], sources).result() == snapshot.fingerprint([], sources)


@pytest.mark.parametrize("mirror", ["v2", "v3"], indirect=True)
def test_a_rewritten_index_changes_the_fingerprint(mirror):
    kind, root = mirror
    sources = [MirrorSource("site", "e4s", root)]
    before = snapshot.fingerprint([], sources)
    index = (
        next((root / "v3/manifests/index").glob("*.json"))
        if kind == "v3"
        else root / "build_cache/index.json"
    )
    replaced(index, index.read_text())
    assert snapshot.fingerprint([], sources) != before


def test_an_indexed_mirrors_fingerprint_reads_its_index_and_folders_not_every_file(mirror):
    """An indexed mirror is what its index lists (Spack's ``BinaryCacheIndex``), so a file
    edited in place without a rename is not seen until the index or a folder changes; a
    mirror without an index is its files, each seen. A new v3 blob is content-addressed:
    what it holds is named by a manifest, which changes with it."""
    kind, root = mirror
    sources = [MirrorSource("site", "e4s", root)]
    before = snapshot.fingerprint([], sources)
    spec = spec_file(kind, root)
    with spec.open("a") as f:
        f.write("\n")
    assert (snapshot.fingerprint([], sources) == before) == (kind != "v2 without an index")
    if kind == "v3":
        blob = next(p for p in (root / "blobs").rglob("*") if p.is_file())
        shutil.copy(blob, blob.with_name("0" * 64))
        assert snapshot.fingerprint([], sources) == before
