"""The log never blocks a request: lines wait in a queue bounded by bytes for a writer
thread; when nobody reads the log (a full pipe), lines are dropped and counted."""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request

import pytest

from cachegraph.observe import QueuedHandler
from tests.app.test_serve import free_port, wait_healthy


def test_a_log_nobody_reads_drops_lines_instead_of_blocking_and_counts_them():
    read, write = os.pipe()  # a pipe holds 64 KiB; nobody reads this one
    handler = QueuedHandler(fd=write, capacity=16_384)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger("test.log_queue")
    logger.propagate, logger.handlers[:] = False, [handler]
    line = "x" * 99
    try:
        # 2,000 lines of 100 bytes: 200 kB, over the pipe and the queue together.
        done = threading.Thread(target=lambda: [logger.warning(line) for _ in range(2000)])
        done.start()
        done.join(60)  # a logger that blocks never returns (before: the thread hung here)
        assert not done.is_alive()
        assert 0 < handler.dropped < 2000
        # What was not dropped is written, whole lines, once the reader catches up.
        os.set_blocking(read, False)
        got = b""
        while not handler.flush(0.05) or len(got) < (2000 - handler.dropped) * 100:
            try:
                got += os.read(read, 1 << 16)
            except BlockingIOError:
                continue
        assert got == (line + "\n").encode() * (2000 - handler.dropped)
    finally:
        logger.handlers[:] = []
        handler.close()
        os.close(read)
        os.close(write)


def test_long_lines_are_cut_and_lines_of_a_closed_handler_are_dropped():
    read, write = os.pipe()
    handler = QueuedHandler(fd=write)
    handler.setFormatter(logging.Formatter("%(message)s"))
    record = logging.LogRecord("t", logging.ERROR, __file__, 1, "y" * 200_000, None, None)
    handler.handle(record)
    assert handler.flush(30)
    written = os.read(read, 1 << 20)
    assert written.endswith(b" ... (line cut)\n") and len(written) == 65_536 - 20 + 16
    handler.close()
    handler.handle(record)
    assert handler.dropped == 1
    os.close(read)
    os.close(write)


@pytest.mark.slow
def test_a_server_whose_log_nobody_reads_answers_every_request_and_stops_on_sigterm():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,  # never read
    )  # fmt: skip
    try:
        wait_healthy(port, process)
        # 1,500 access-log lines of ~150 bytes: three times the 64 KiB a pipe holds. Before,
        # the server blocked writing its log after ~430 requests and every request waited.
        for _ in range(1500):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as r:
                assert r.read() == b'{"status":"alive"}'
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as r:
            metrics = r.read().decode()
        assert re.search(r"^cachegraph_log_lines_dropped_total \d+\.0$", metrics, re.M)
        process.terminate()
        # Uvicorn stops gracefully, then raises the signal again: -15. Before, it waited on the log.
        assert process.wait(30) in (0, -signal.SIGTERM)
    finally:
        process.kill()
        process.wait()
