"""Loads in two processes and Ctrl-C (issue 30): the second process says nothing on stderr,
leaves Ctrl-C to the first, and a load stops between files once the process is ending."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SEEDS


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_the_second_process_leaves_ctrl_c_to_the_first_and_ends_quietly():
    # Ctrl-C at a terminal reaches both processes; the first ends the second (Helper.stop):
    # a traceback from the second was one more for the operator to read (issue 30).
    code = "from cachegraph.graph.sources.parallel import main; main()"
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    status = Path(f"/proc/{process.pid}/status")
    for _ in range(600):  # until it ignores SIGINT (bit 2 of SigIgn), or a minute
        ignored = next(
            line for line in status.read_text().splitlines() if line.startswith("SigIgn")
        )
        if int(ignored.split()[1], 16) & (1 << (signal.SIGINT - 1)):
            break
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(b"", timeout=60)  # the first process went away
    assert (process.returncode, out, err) == (0, b"", b"")


def test_a_load_ends_where_it_is_once_the_process_is_stopping():
    from cachegraph.graph import deadline

    code = (
        "import sys\n"
        "from cachegraph.graph import deadline, load\n"
        "deadline.stop_all()\n"
        "try:\n"
        f"    load([{str(SEEDS)!r}], processes=1)\n"
        "except deadline.Stopped as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "stopped: the process is ending\n", ""
    )  # fmt: skip
    assert deadline.Stopped  # this process goes on loading


def test_a_load_in_two_processes_writes_nothing_on_stderr(shared_data):
    # issue 30: large loads warned "'cachegraph.graph.parallel' found in sys.modules ..."
    code = (
        "from cachegraph.graph import load\n"
        f"graph, report = load([{str(SEEDS)!r}, {str(shared_data)!r}], processes=2)\n"
        "print(len(graph.all_specs()) > 454)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")
