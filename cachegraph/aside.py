"""Work done in a process of its own, so that the server answers at its idle speed meanwhile:
a reload, handed over as a snapshot file, and the fetching of remote mirrors' sizes.

A load is Python work that holds the interpreter's lock: built in the server's own process
(a thread), a reload at 250,000 specs took the event loop's turns for seconds, and every
answer meanwhile waited behind it. Built aside, the server answers at its idle speed while
the new data is made, then reads the finished store (``graph.snapshot``: its arrays
mapped and checked, a tenth of a second at a million page records) and swaps it
in. The second process is a plain ``python -c`` (as ``graph.sources.parallel``'s helper),
in a session of its own, and ends with the server.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import pickle
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from cachegraph.graph import CacheGraph, LoadReport, MirrorSource, load, snapshot
from cachegraph.graph.memory import released
from cachegraph.graph.sources.fetch import FetchLimits
from cachegraph.graph.sources.layouts import fetch_sizes

log = logging.getLogger("cachegraph")
#: what the two processes agree the snapshot was built from (it never outlives the reload)
_KEY = "built aside"
_PR_SET_PDEATHSIG = 1
_OUT = "cachegraph-reload."


def load_aside(
    paths: list[str], mirrors: list[MirrorSource]
) -> tuple[CacheGraph, LoadReport] | None:
    """The sources loaded by a second process; None when that could not be done (it said
    why in the log), and the caller loads them itself."""
    import cachegraph  # where the package is: the second process imports the same one

    root = str(Path(cachegraph.__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    # named by this server: what a reload of a server killed meanwhile left (the store
    # being written, 600 MB at a million specs) is removed by the next reload of any
    temporary = Path(tempfile.gettempdir())
    for after in (".snapshot", ".partial"):
        snapshot.remove_abandoned(temporary, _OUT, after)
    out = str(temporary / f"{_OUT}{os.getpid()}.snapshot")
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from cachegraph.aside import main; main()"],
            input=pickle.dumps((os.getpid(), paths, mirrors, out)),
            env={**os.environ, "PYTHONPATH": path},
            start_new_session=True,  # a terminal's Ctrl-C reaches the server, which ends it
            check=False,
        )
        if done.returncode != 0:
            log.warning("the reload's second process failed (exit %s): loading here",
                        done.returncode)  # fmt: skip
            return None
        # what answers freed meanwhile given back first: a reload holds the old data and
        # the new store, no more (a few MB at a million specs put it past that)
        released()
        found = snapshot.read(out, _KEY)
        if isinstance(found, snapshot.Refused):
            log.warning("the reload's second process wrote no usable store (%s): loading here",
                        found.reason)  # fmt: skip
            return None
        return found
    except OSError as exc:
        log.warning("cannot start the reload's second process (%s): loading here", exc)
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(out)


def _ends_with(server: int) -> None:
    """End this process when the server does (Linux): at once if it already has. The signal
    is asked for only once Python runs here, and a server stopped while this one started
    (a Ctrl-C during a reload) would leave it running on, fetching, for hours."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server:
        os._exit(0)


def main() -> None:
    """The second process: load what was sent, write the store to the path sent."""
    server, paths, mirrors, out = pickle.loads(sys.stdin.buffer.read())
    _ends_with(server)
    # One process: the server keeps a core to answer on (two load processes beside it on a
    # two-core machine made the point query's p99 six times its idle one; two at Linux's
    # idle priority, SCHED_IDLE, three times, for a reload a tenth quicker)
    graph, report = load(paths, mirrors, processes=1)
    snapshot.save(out, graph, report, _KEY)


def fetch_sizes_aside(mirrors: list[MirrorSource], cache_dir: str, limits: FetchLimits) -> int:
    """The spec manifests remote v3 mirrors' copies lack, fetched by a second process
    (``graph.sources.layouts.fetch_sizes``: a request a spec, a quarter of a million at the
    workload's size, Python work the server's answers would wait behind); how many were."""
    import cachegraph

    root = str(Path(cachegraph.__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    try:
        done = subprocess.run(
            [sys.executable, "-c", "from cachegraph.aside import sizes_main; sizes_main()"],
            input=pickle.dumps((os.getpid(), mirrors, cache_dir, limits)),
            env={**os.environ, "PYTHONPATH": path},
            start_new_session=True,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        log.warning("cannot start the process fetching remote mirrors' sizes (%s)", exc)
        return 0
    if done.returncode != 0:
        log.warning("fetching remote mirrors' sizes failed (exit %s)", done.returncode)
        return 0
    return int(done.stdout.strip() or 0)


def sizes_main() -> None:
    """The second process: fetch the spec manifests, print how many were fetched."""
    server, mirrors, cache_dir, limits = pickle.loads(sys.stdin.buffer.read())
    _ends_with(server)
    print(fetch_sizes(mirrors, cache_dir, limits))
