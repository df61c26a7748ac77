"""A snapshot is served mapped, read-only, and held by a read lease (``graph.mapped``): a
process truncating or rewriting the file waits (or, not waiting, is refused once) until the
mapping's bytes are copied into this process's memory, and the answers never change; real
files, real processes (coreutils' ``truncate``, a shell)."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from cachegraph.graph import load, snapshot

from ..conftest import SEEDS, execute

QUESTION = """{ stats { specCount packageCount tagCount stackCount }
  specs(first: 300) { edges { node { hash package { name } version compiler { name version }
    os platform target { name } variants stacksByTag { tag { name } stacks { name } } } } } }"""

pytestmark = pytest.mark.skipif(
    not Path("/proc/sys/fs/leases-enable").is_file(), reason="Linux leases"
)


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, str, dict]:
    """A snapshot of the seeds: its path, its key, and the answer of a full load."""
    seeds = Path(shutil.copytree(SEEDS, tmp_path / "seeds"))
    graph, report = load([seeds])
    key = snapshot.fingerprint([seeds])
    snapshot.save(tmp_path / "snap", graph, report, key)
    return tmp_path / "snap", key, execute(graph, QUESTION)


def mapped_here(path: Path) -> bool:
    """Whether this process maps ``path`` (``/proc/self/maps`` names the file)."""
    return str(path) in Path("/proc/self/maps").read_text()


def changed_by_another_process(command: list[str]) -> subprocess.CompletedProcess:
    """Run ``command`` until it goes through: an opener that will not wait (O_NONBLOCK) is
    refused with EAGAIN while the lease is held."""
    deadline = time.monotonic() + 60
    while (done := subprocess.run(command, capture_output=True, text=True)).returncode:
        assert "Resource temporarily unavailable" in done.stderr, done.stderr
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return done


def test_a_snapshot_is_served_mapped_and_read_only(saved):
    path, key, answer = saved
    graph, _ = snapshot.load(path, key)
    assert mapped_here(path)
    assert execute(graph, QUESTION) == answer
    arrays = graph.store.arrays
    assert not any(a.flags.writeable for a in arrays.values())
    with pytest.raises(ValueError, match="read-only"):
        arrays["code.package"][0] = 1
    del graph, arrays
    gc.collect()  # the graph's views hold cycles
    assert not mapped_here(path)  # freed with the graph, the lease let go of with it
    with open(path, "r+b", os.O_NONBLOCK):  # a writer not kept waiting: no lease left
        pass


@pytest.mark.parametrize(
    ("change", "size"),
    [(["truncate", "-s", "0"], 0), (["truncate", "-s", "4096"], 4096),
     (["sh", "-c", ': > "$0"'], 0), (["sh", "-c", 'head -c 100000 /dev/urandom > "$0"'], 100000)],
    ids=["truncate to nothing", "truncate to a page", "emptied by a shell", "rewritten"],
)  # fmt: skip
def test_a_mapped_snapshot_changed_by_another_process_keeps_its_answers(
    saved, change, size, caplog
):
    path, key, answer = saved
    graph, _ = snapshot.load(path, key)
    before = {name: a.copy() for name, a in graph.store.arrays.items()}
    assert mapped_here(path)
    changed_by_another_process([*change, str(path)])
    assert path.stat().st_size == size
    assert not mapped_here(path)  # its bytes are this process's own now, at the same place
    assert execute(graph, QUESTION) == answer
    for name, array in graph.store.arrays.items():
        assert (
            np.array_equal(array, before[name], equal_nan=array.dtype.kind == "f")
            and not array.flags.writeable
        ), name
    said = [r.getMessage() for r in caplog.records if "opened to be written" in r.getMessage()]
    assert len(said) == 1 and said[0].endswith("copied into memory first")


def test_a_snapshot_open_for_writing_elsewhere_is_read_in(saved):
    path, key, answer = saved
    with open(path, "ab") as writer:  # a lease cannot be had: another writer holds it open
        graph, _ = snapshot.load(path, key)
        assert not mapped_here(path)
        writer.write(b"more")  # the copy read in is this process's
        writer.flush()
    assert execute(graph, QUESTION) == answer
    assert snapshot.read(path, key) == snapshot.Refused(
        f"truncated or grown: {path.stat().st_size:,} bytes where the header says "
        f"{path.stat().st_size - 4:,}"
    )


def test_a_snapshot_written_over_a_mapped_one_leaves_it_served(saved, tmp_path):
    """The server writes a new snapshot beside the old and renames it over: the mapped one
    is another file from then on, unchanged, and never waited for."""
    path, key, answer = saved
    graph, report = snapshot.load(path, key)
    snapshot.save(path, graph, report, "another key")  # over the file it maps
    assert execute(graph, QUESTION) == answer
    assert snapshot.read(path, key) == snapshot.Refused(
        "written from other sources (a data file changed since)", damaged=False
    )
    assert snapshot.load(path, "another key") is not None


def test_only_the_snapshot_changed_is_copied_out(saved, tmp_path):
    path, key, answer = saved
    other = tmp_path / "other"
    other.write_bytes(path.read_bytes())
    first, _ = snapshot.load(path, key)
    second, _ = snapshot.load(other, key)
    assert mapped_here(path) and mapped_here(other)
    changed_by_another_process(["truncate", "-s", "0", str(other)])
    assert mapped_here(path) and not mapped_here(other)
    assert execute(first, QUESTION) == execute(second, QUESTION) == answer
