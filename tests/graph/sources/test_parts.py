"""A reload reads again only the remote mirrors that changed (``graph.sources.parts``), and
answers as a load that reads every mirror.

The reference is the same mirrors, as changed, loaded from disk: a load that keeps nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import xxhash
from cachegraph.graph import MirrorSource
from cachegraph.graph.sources.parts import part_path

from cachegraph.state import DataSources, load_sources
from tests.conftest import execute

pytestmark = pytest.mark.slow

SEEDS = Path(__file__).resolve().parents[3] / "seeds"
#: (tag, stack, folder below seeds/mirrors)
MIRRORS = [
    ("test", "e4s", "spack-test/unsigned"),
    ("test", "signed", "spack-test/signed"),
    ("develop", "mpigdb", "mpigdb"),
]
QUERY = """query($lock: JSON) {
  stats { packageCount specCount }
  mirrors { name specCount }
  all: specs(first: 500) { totalCount nodes { hash stacks { name } } }
  mpich: specs(filter: {satisfies: "^hwloc"}, first: 100) { totalCount nodes { hash } }
  mpi: spec(hash: "3uebtou") { dependencies { hash } dependents(transitive: true) { hash } }
  coverage(lockfile: $lock) { total hitCount missCount entries { hash hit reason } }
}"""
LOCK = json.loads((SEEDS / "spack.lock").read_text())


def _answers(sources: DataSources, checked: bool = False) -> dict:
    graph, report, _ = load_sources(sources, checked)
    assert report.problems == []
    return execute(graph, QUERY, {"lock": LOCK})


def _without_a_root(index: bytes) -> bytes:
    """The index with one spec that no other depends on left out (a rebuild that dropped it)."""
    doc = json.loads(index)
    installs = doc["database"]["installs"]
    named = {d["hash"] for r in installs.values() for d in r["spec"].get("dependencies", [])}
    named |= {
        d["hash"] for r in installs.values() for n in r["spec"].get("nodes", [])
        for d in n.get("dependencies", [])
    }  # fmt: skip
    del installs[min(h for h in installs if h not in named)]
    return json.dumps(doc).encode()


@pytest.fixture
def published(http_server, tmp_path) -> tuple[list[tuple[str, str, Path]], DataSources]:
    """The mirrors copied to ``tmp_path/disk`` and published from there; the remote sources."""
    folders, mirrors = [], []
    for tag, stack, below in MIRRORS:
        disk = tmp_path / "disk" / stack
        shutil.copytree(SEEDS / "mirrors" / below, disk)
        folders.append((tag, stack, disk))
        mirrors.append(MirrorSource.parse(f"{tag}:{stack}={http_server.publish(disk)}"))
    return folders, DataSources(mirrors=mirrors, cache_dir=str(tmp_path / "cache"))


def _parts(sources: DataSources) -> dict[str, tuple[int, int]]:
    """Each mirror's kept reading: (inode, modification time), by stack."""
    return {
        m.stack: (st.st_ino, st.st_mtime_ns)
        for m in sources.local_mirrors()
        if (st := part_path(m).stat())
    }


def test_a_reload_reads_again_only_the_changed_mirror(http_server, published):
    folders, sources = published
    first = _answers(sources)
    kept = _parts(sources)
    assert sorted(kept) == ["e4s", "mpigdb", "signed"]
    # mpigdb rebuilt without one of its specs: its index and hash file replaced on the server
    disk = folders[2][2] / "build_cache"
    changed = _without_a_root((disk / "index.json").read_bytes())
    (disk / "index.json").write_bytes(changed)
    (disk / "index.json.hash").write_text(hashlib.sha256(changed).hexdigest())
    name = sources.mirrors[2].url.rsplit("/", 1)[1]
    http_server.replace(f"{name}/build_cache/index.json", changed)
    http_server.replace(f"{name}/build_cache/index.json.hash",
                        hashlib.sha256(changed).hexdigest().encode())  # fmt: skip
    assert sources.check_sources()
    again = _answers(sources, checked=True)
    on_disk = _answers(DataSources(mirrors=[MirrorSource(t, s, f) for t, s, f in folders]))
    assert again == on_disk != first
    now = _parts(sources)
    assert (now["e4s"], now["signed"]) == (kept["e4s"], kept["signed"])  # merged as kept
    assert now["mpigdb"] != kept["mpigdb"]  # read again, and kept anew


@pytest.mark.parametrize("damage", ["truncated", "flipped", "other key", "not a pickle"])
def test_a_kept_reading_that_cannot_be_used_is_read_again(published, damage):
    folders, sources = published
    expected = _answers(DataSources(mirrors=[MirrorSource(t, s, f) for t, s, f in folders]))
    assert _answers(sources) == expected
    part = part_path(sources.local_mirrors()[0])
    data = part.read_bytes()
    head, _, body = data.partition(b"\n")
    key, checksum = head.split()
    part.write_bytes({
        "truncated": data[: len(data) // 2],
        "flipped": head + b"\n" + body[:-1] + bytes([body[-1] ^ 1]),
        "other key": b"0" * len(key) + b" " + checksum + b"\n" + body,
        "not a pickle": key + b" " + xxhash.xxh3_128_hexdigest(b"x").encode() + b"\nx",
    }[damage])  # fmt: skip
    assert _answers(sources) == expected
    assert part.read_bytes() == data  # read again and kept as before


def test_mirrors_given_in_another_order_are_read_again(published):
    """A kept reading is of a mirror at its position in the load (which decides which
    mirror's record of a spec is kept): another order is read again, as from disk."""
    folders, sources = published
    _answers(sources)
    folders.reverse()
    sources.mirrors.reverse()
    sources._local = None
    expected = _answers(DataSources(mirrors=[MirrorSource(t, s, f) for t, s, f in folders]))
    assert _answers(sources) == expected
