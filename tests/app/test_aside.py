"""A reload built by a second process answers exactly as a load in this one; when that
process cannot do it, the caller is told so and loads itself."""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from cachegraph.graph import load
from cachegraph.graph.sources.fetch import FetchLimits

from cachegraph.aside import load_aside
from cachegraph.sources import default_data, default_mirrors
from tests.conftest import execute

QUERY = """{ stats { packageCount specCount stackCount }
  mirrors { name location layout specCount totalBytes signed errors warnings }
  specs(first: 1000) { totalCount nodes { hash specString size tarball
    stacksByTag { tag { name } stacks { name } } mirrors { name }
    dependencies { hash } dependents(transitive: true) { hash } } } }"""


def test_a_load_aside_is_the_load_here():
    paths, mirrors = [str(default_data())], default_mirrors()
    here, report_here = load(paths, mirrors)
    built = load_aside(paths, mirrors)
    assert built is not None
    aside, report_aside = built
    assert execute(aside, QUERY) == execute(here, QUERY)
    assert report_aside.summary() == report_here.summary()
    assert report_aside.problems == report_here.problems


def test_what_a_killed_servers_reload_left_is_removed_by_the_next(monkeypatch, tmp_path):
    """A server killed during a reload leaves the store its second process was writing (600
    MB at a million specs); the next reload of any server on the machine removes it, leaves
    what a running one is writing, and leaves nothing of its own."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone, running = 2**22 + 7, os.getppid()  # no process has the first (above pid_max)
    left = [
        f"cachegraph-reload.{gone}.snapshot",
        f"cachegraph-reload.{gone}.snapshot.{gone}.partial",
    ]
    kept = [
        f"cachegraph-reload.{running}.snapshot",
        f"cachegraph-reload.{running}.snapshot.{running}.partial",
    ]
    for name in left + kept:
        (tmp_path / name).write_bytes(b"\0" * 4096)
    assert load_aside([str(default_data())], default_mirrors()) is not None
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


def test_a_second_process_that_fails_is_said_and_gives_none(monkeypatch, caplog):
    monkeypatch.setattr(sys, "executable", str(Path("/bin/false")))
    caplog.set_level(logging.WARNING, "cachegraph")
    assert load_aside([str(default_data())], default_mirrors()) is None
    assert [r.getMessage() for r in caplog.records] == [
        "the reload's second process failed (exit 1): loading here"
    ]


@pytest.mark.parametrize(("server", "said"), [("this one", b"0\n"), ("gone", b"")])
def test_a_second_process_whose_server_is_gone_ends_at_once(tmp_path, server, said):
    """A second process started while its server stopped (it was sent a server that is not
    its parent: init took it) ends before any work; with its server, it works and answers."""
    pid = os.getpid() if server == "this one" else 1
    done = subprocess.run(
        [sys.executable, "-c", "from cachegraph.aside import sizes_main; sizes_main()"],
        input=pickle.dumps((pid, [], str(tmp_path), FetchLimits())),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, said, b"")
