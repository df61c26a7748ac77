"""A server restarted from its snapshot serves it mapped, and the file truncated, emptied or
rewritten in place under it by another process changes nothing (a mapping without the
lease it is held by now died with SIGBUS at the next query: ``graph.mapped``); and a damaged
snapshot at start is said, and the data loaded in full."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cachegraph.graph import load

from tests.app.test_serve import free_port, post, wait_healthy
from tests.conftest import SEEDS, execute

pytestmark = pytest.mark.slow

#: reads every column and string table of a spec; each change asks a page of another
#: length, so
#: no answer is one a cache kept from before the change
QUESTION = """{ stats { specCount packageCount tagCount stackCount }
  specs(first: %d) { edges { node { hash package { name } version
    compiler { name version } os platform target { name } variants size
    stacksByTag { tag { name } stacks { name } } } } } }"""


class Server:
    def __init__(self, *args: str) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(self.port),
             "--response-cache", "0", *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        wait_healthy(self.port, self.process)

    def stop(self) -> str:
        """Its log, once stopped."""
        self.process.terminate()
        _, log = self.process.communicate(timeout=30)
        return log.decode()


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SEEDS, tmp_path / "data"))


def written(snap: Path, server: Server) -> None:
    """Wait until ``server`` has written its snapshot (renamed into place once whole)."""
    deadline = time.monotonic() + 60
    while not snap.exists():
        assert time.monotonic() < deadline and server.process.poll() is None
        time.sleep(0.05)


def fresh(data: Path, first: int) -> dict:
    """The answer of a fresh load, as JSON carries it."""
    return json.loads(json.dumps(execute(load([data])[0], QUESTION % first)))


def test_a_snapshot_changed_under_the_server_changes_nothing(data: Path, tmp_path: Path):
    snap = tmp_path / "snapshot"
    before = Server("--data", str(data), "--snapshot", str(snap))
    written(snap, before)
    before.stop()
    server = Server("--data", str(data), "--snapshot", str(snap))
    try:
        status = post(server.port, "{ loadStatus { fromSnapshot } }")
        assert status == {"data": {"loadStatus": {"fromSnapshot": True}}}
        # another snapshot (of one page) to write over it in place
        other = tmp_path / "other"
        other.mkdir()
        shutil.copy(min(data.iterdir()), other)
        second = Server("--data", str(other), "--snapshot", str(tmp_path / "other.snap"))
        written(tmp_path / "other.snap", second)
        second.stop()
        changes = [
            ["truncate", "-s", "4096", str(snap)],
            ["sh", "-c", ': > "$0"', str(snap)],
            ["sh", "-c", 'cat "$1" > "$0"', str(snap), str(tmp_path / "other.snap")],
        ]
        for first, change in zip([60, 61, 62], changes, strict=True):
            changed_by_another_process(change)
            assert post(server.port, QUESTION % first) == fresh(data, first), change
        assert snap.read_bytes() == (tmp_path / "other.snap").read_bytes()  # rewritten
        assert server.process.poll() is None
    finally:
        log = server.stop()
    assert "restarting from snapshot" in log
    # the first change found the file mapped and leased: copied out once, then let go of
    assert log.count("opened to be written or truncated by another process") == 1, log


def changed_by_another_process(command: list[str]) -> None:
    """Run ``command``; while the server holds the file, an opener that will not wait
    (``truncate``: O_NONBLOCK) is refused with EAGAIN, and goes through once it let go."""
    deadline = time.monotonic() + 60
    while (done := subprocess.run(command, capture_output=True, text=True)).returncode:
        assert "Resource temporarily unavailable" in done.stderr, done.stderr
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_damaged_snapshot_at_start_is_said_and_the_data_loaded_in_full(data, tmp_path):
    snap = tmp_path / "snapshot"
    before = Server("--data", str(data), "--snapshot", str(snap))
    written(snap, before)
    before.stop()
    whole = snap.read_bytes()
    snap.write_bytes(whole[:4096])  # as `truncate -s 4096` leaves it
    server = Server("--data", str(data), "--snapshot", str(snap))
    written(snap, server)
    try:
        status = post(server.port, "{ loadStatus { fromSnapshot } }")
        assert status == {"data": {"loadStatus": {"fromSnapshot": False}}}
        assert post(server.port, QUESTION % 60) == fresh(data, 60)
        deadline = time.monotonic() + 60
        while snap.stat().st_size == 4096:  # the new snapshot, renamed over the cut one
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        log = server.stop()
    said = [line for line in log.splitlines() if f"snapshot {snap} not used" in line]
    assert len(said) == 1 and "WARNING" in said[0].upper(), log
    assert "truncated or damaged: its header says its description is" in said[0]
    assert "loading the data in full instead" in said[0]
    assert "wrote snapshot" in log
