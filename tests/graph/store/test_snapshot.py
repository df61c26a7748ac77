"""A snapshot gives back the graph it was written from, and only for unchanged sources."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from cachegraph.graph import CacheGraph, MirrorSource, load, snapshot

from ...conftest import SEEDS, execute


def same_arrays(a: CacheGraph, b: CacheGraph) -> bool:
    x, y = a.store.arrays, b.store.arrays
    return x.keys() == y.keys() and all(
        np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind == "f") for k in x
    )


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
    # A file changed inside a mirror folder makes the snapshot stale.
    manifest = next((v3 / "v3/manifests/spec/libelf").glob("*.json"))
    manifest.write_text(manifest.read_text() + "\n")
    assert snapshot.fingerprint([], mirrors) != key
