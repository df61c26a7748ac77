"""A large local v3 mirror is served from its index first, as Spack lists a mirror
(``binary_distribution.BinaryCacheIndex`` reads a mirror's index, never its spec manifests,
to list what it holds); its spec manifests -- sizes, tarballs, the checks of their blobs --
come with a second, whole load once served.

The references: the same mirror loaded whole, and the index's own records (every spec it
holds, no size: a v3 index says none).
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from cachegraph.graph import MirrorSource, load

from cachegraph.state import DataSources, State
from tests.conftest import execute
from tests.mirrors import migrate_to_v3

SEEDS = Path(__file__).resolve().parents[2] / "seeds"
QUERY = """{ stats { specCount }
  mirrors { name specCount errors warnings }
  specs(first: 1000) { totalCount nodes { hash size tarball mirrors { name } } } }"""


def _blob(root: Path, record: dict) -> Path:
    """Where a v3 mirror keeps a blob (``blobs/sha256/AB/ABCD...``: Spack's layout)."""
    digest = record["checksum"]
    return root / "blobs" / record["checksumAlgorithm"] / digest[:2] / digest


def _v3(tmp_path: Path) -> tuple[Path, Path]:
    """The seeds' spack-test mirror migrated to v3 (each tarball said to be 1,000 bytes),
    and one of its spec manifests' spec blob."""
    v2 = SEEDS / "mirrors" / "spack-test" / "unsigned" / "build_cache"
    root = migrate_to_v3(v2, tmp_path / "e4s")
    manifest = min((root / "v3" / "manifests" / "spec").rglob("*.spec.manifest.json"))
    spec = next(
        b for b in json.loads(manifest.read_text())["data"]
        if b["mediaType"].startswith("application/vnd.spack.spec.")
    )  # fmt: skip
    return root, _blob(root, spec)


def _indexed(root: Path) -> list[str]:
    """The hashes the index holds, from the index blob itself: those whose record is not
    ``in_buildcache: false`` (a spec referenced only, as Spack's ``BinaryCacheIndex`` skips)."""
    manifest = json.loads((root / "v3/manifests/index/index.manifest.json").read_text())
    installs = json.loads(_blob(root, manifest["data"][0]).read_bytes())["database"]["installs"]
    return sorted(h for h, record in installs.items() if record.get("in_buildcache", True))


def test_an_index_first_load_lists_the_index_and_leaves_the_manifests(tmp_path):
    root, blob = _v3(tmp_path)
    blob.unlink()  # a spec manifest naming a missing blob: found by a whole load only
    mirror = MirrorSource("test", "e4s", root)
    first, report = load([], [mirror], index_first_bytes=0)
    whole, whole_report = load([], [mirror])
    assert report.index_first == ["test/e4s"] and whole_report.index_first == []
    assert report.problems == []
    assert [p.message.split(", which")[1] for p in whole_report.problems] == [" is missing"]
    answer = execute(first, QUERY)["data"]
    nodes = answer["specs"]["nodes"]
    held = [n["hash"] for n in nodes if n["mirrors"]]
    assert sorted(held) == _indexed(root)
    assert {(n["size"], n["tarball"]) for n in nodes} == {(None, None)}
    expected = execute(whole, QUERY)["data"]
    assert {n["size"] for n in expected["specs"]["nodes"] if n["mirrors"]} == {1000.0}
    without = [{**n, "size": None, "tarball": None} for n in expected["specs"]["nodes"]]
    assert nodes == without
    assert answer["mirrors"] == [{**expected["mirrors"][0], "errors": 0}]


def test_a_small_index_is_read_whole(tmp_path):
    root, _ = _v3(tmp_path)
    _, report = load([], [MirrorSource("test", "e4s", root)], index_first_bytes=1 << 30)
    assert report.index_first == []


def test_the_server_serves_the_index_then_the_whole_mirror(tmp_path):
    """The first load serves the index (and writes no snapshot: it is of the whole data);
    ``State.sized`` loads the whole mirror by a second process and serves it, though it
    finds a missing blob the first load could not see."""
    root, blob = _v3(tmp_path)
    blob.unlink()
    snapshot = tmp_path / "data.snapshot"
    mirror = MirrorSource("test", "e4s", root)
    sources = DataSources(mirrors=[mirror], snapshot=str(snapshot), index_first_bytes=0)
    state = State(sources)

    async def served() -> tuple[dict, dict, bool]:
        await state.load()
        first = execute(state.graph, QUERY)
        written = snapshot.exists()
        outcome = await state.sized(remote=False)
        assert outcome is not None and outcome.ok
        return first, execute(state.graph, QUERY), written

    first, then, written = anyio.run(served)
    whole, _ = load([], [mirror])
    assert not written
    assert then == execute(whole, QUERY)
    assert first != then
    assert sources.index_first == []
    assert anyio.run(state.sized, False) is None  # nothing left for later
