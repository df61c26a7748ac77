"""The real thing: `cachegraph serve` as a process, asked over HTTP."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cachegraph.synth import synthesize
from tests.conftest import ROOT, SEEDS

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def wait_healthy(port: int, process: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr and process.stderr.read().decode()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server did not become healthy")


@pytest.fixture
def serve():
    processes = []

    def start(*args: str) -> int:
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        processes.append(process)
        wait_healthy(port, process)
        return port

    yield start
    for process in processes:
        process.terminate()
        process.wait(10)


def test_serve_answers_on_the_bundled_data(serve):
    port = serve()
    # The four seed pages' 454 specs, then the bundled mirrors' index records (seeds/README.md):
    # mpigdb's 35 (27 held, 8 externals) and spack-test's 7 (6 held, an external gcc), which
    # the signed copy lists again; 4 packages of pages, 35 of mpigdb, 5 of spack-test.
    assert post(port, "{ stats { packageCount specCount } }") == {
        "data": {"stats": {"packageCount": 4 + 35 + 5, "specCount": 454 + 35 + 7}}
    }


def test_serve_answers_on_the_shared_data(serve, shared_data, data_graph):
    port = serve("--data", str(shared_data))
    assert post(port, "{ stats { specCount tagCount } }") == {
        "data": {"stats": {"specCount": len(data_graph.all_specs()), "tagCount": 21}}
    }


def test_the_example_client_talks_to_a_real_server(serve):
    port = serve("--data", str(SEEDS))
    client = ROOT / "examples" / "client.py"
    result = subprocess.run(
        [sys.executable, str(client), f"http://127.0.0.1:{port}/graphql", "22xqlom"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[0] == "454 specs of 4 packages in 11 stacks and 1 tag"
    assert lines[1].startswith("py-keras@")
    assert lines[2:] == ["  stacks: ml-linux-aarch64-cuda, root", "  tags:   develop"]


def test_serve_with_no_readable_data_stops_at_start_saying_why():
    process = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--data", "/nonexistent",
         "--port", str(free_port())],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (process.returncode, process.stderr.strip().splitlines()) == (
        1,
        ["cachegraph: error: no data to serve: /nonexistent: no such file or folder"],
    )


def test_serve_whose_remote_mirrors_cannot_be_had_stops_saying_why(tmp_path):
    """No traceback: the error of each mirror, in the line that says the server stops."""
    port = free_port()  # nothing listens there
    process = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(free_port()),
         "--mirror", f"develop:m=http://127.0.0.1:{port}/m", "--cache-dir", str(tmp_path),
         "--log-format", "text"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    said = [line for line in process.stderr.splitlines() if line.startswith(("WARN", "ERR"))]
    url = f"http://127.0.0.1:{port}/m"
    failed = f"{url}/v3/manifests/index/index.manifest.json: cannot connect (4 tries)"
    assert (process.returncode, said) == (
        1,
        [
            f"WARNING cachegraph: mirror develop/m: {failed}; it holds nothing yet",
            f"ERROR cachegraph: {url}: error: {failed}",
            f"ERROR cachegraph: no data loaded, stopping: {url}: error: {failed}; 0 pages, "
            "0 spec files, 0 indices, 1 mirror: 0 records, 0 specs, 0 tags; 1 error, 0 warnings",
        ],
    )
    assert "Traceback" not in process.stderr


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--max-depth", "-1", "--max-depth -1: must be at least 1"),
        ("--log-format", "xml", "--log-format 'xml': must be json or text"),
        ("--log-level", "verbose", "--log-level 'verbose': must be one of critical, error, "
         "warning, info, debug"),
        ("--port", "99999", "--port: '99999' is not a port number (1-65535)"),
        ("--port", "abc", "--port: 'abc' is not a port number (1-65535)"),
        ("--workers", "two", "--workers: 'two' is not a whole number"),
        ("--timeout", "1s", "--timeout: '1s' is not a number"),
        ("--ca-bundle", "/no/such/ca.pem", "--ca-bundle '/no/such/ca.pem': must be a readable "
         "file of PEM CA certificates"),
        ("--refresh", "-1", "--refresh -1.0: must be 0 (never) or more seconds"),
    ],
)  # fmt: skip
def test_a_bad_setting_is_refused_at_start_in_one_line(flag, value, message):
    process = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", "serve", flag, value],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (process.returncode, process.stderr.strip().splitlines()) == (
        2,
        [f"cachegraph: error: {message}"],
    )


def test_a_restart_serves_the_snapshot_until_a_source_changes(serve, tmp_path: Path):
    """The snapshot of the first start serves the second; a page changed after that, the
    third loads the pages again (the fingerprint, started as the server starts, sees it)."""
    data, snap = tmp_path / "data", tmp_path / "snapshot"
    data.mkdir()
    for page in sorted(SEEDS.iterdir()):
        (data / page.name).write_bytes(page.read_bytes())
    question = "{ stats { specCount } loadStatus { fromSnapshot } }"
    answers = []
    for restart in range(3):
        if restart == 2:
            page = min(data.iterdir())
            page.write_text(page.read_text() + "\n")
        port = serve("--data", str(data), "--snapshot", str(snap))
        answers.append(post(port, question)["data"])
        deadline = time.monotonic() + 30
        while not snap.exists() and time.monotonic() < deadline:  # written once served
            time.sleep(0.05)
    assert [a["loadStatus"]["fromSnapshot"] for a in answers] == [False, True, False]
    assert [a["stats"]["specCount"] for a in answers] == [454] * 3  # seeds/README.md


def test_a_body_that_never_arrives_is_refused_after_body_timeout(serve):
    port = serve("--body-timeout", "1", "--data", str(SEEDS))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as held:
        # Headers promising 100 bytes, then one, then nothing: a stalled client.
        held.sendall(b"POST /graphql HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                     b"content-length: 100\r\n\r\n{")  # fmt: skip
        started = time.monotonic()
        answer = held.recv(65536)
        waited = time.monotonic() - started
        head, _, body = answer.decode().partition("\r\n\r\n")
        length = int(next(line.split(":")[1] for line in head.splitlines()
                           if line.lower().startswith("content-length")))  # fmt: skip
        while len(body.encode()) < length:
            body += held.recv(65536).decode()
    assert head.startswith("HTTP/1.1 408") and 0.5 < waited < 5, (head, waited)
    assert json.loads(body)["errors"][0]["message"] == (
        "the request body did not arrive within 1 s (limit body_timeout = 1)"
    )
    assert post(port, "{ stats { specCount } }") == {"data": {"stats": {"specCount": 454}}}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_port_in_use_is_said_before_the_data_is_loaded(workers):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
             "--workers", workers],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert (done.returncode, done.stderr) == (
        1,
        f"cachegraph: error: cannot listen on 127.0.0.1:{port}: Address already in use "
        "(--port, CACHEGRAPH_PORT)\n",
    )


def at_a_terminal() -> None:
    """Ctrl-C's signal handled as at a terminal: a shell's background job (as a CI runner
    may start this suite) has it ignored, and its children inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_ends_the_server_without_a_traceback():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=at_a_terminal,
    )  # fmt: skip
    wait_healthy(port, process)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert b"Traceback" not in err


@pytest.fixture(scope="module")
def slow_to_load(tmp_path_factory) -> Path:
    """Pages that take seconds to load (200,000 records), so that a signal finds a load under
    way in each worker."""
    out = tmp_path_factory.mktemp("slow")
    synthesize(out, 200_000, 2, 5)
    return out


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="Ctrl-C at a terminal: a process group")
@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_during_a_load_stops_it_in_every_worker(slow_to_load, workers):
    """Ctrl-C at a terminal (SIGINT to the whole group: the server and its workers; their
    second loading processes have sessions of their own) stops each load where it is,
    without a traceback; each worker says so. Before, a worker's load ran to its end
    before the server could stop."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(free_port()),
         "--workers", str(workers), "--data", str(slow_to_load), "--log-format", "text"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=at_a_terminal,
    )  # fmt: skip
    seen: list[bytes] = []
    # Said once the load can be stopped: a signal before it reached Uvicorn's handler alone.
    while sum(b"loading the data (Ctrl-C" in line for line in seen) < workers:
        line = process.stderr.readline()
        assert line, b"".join(seen).decode()
        seen.append(line)
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    err = b"".join(seen) + err
    assert b"Traceback" not in err, err.decode()
    assert err.count(b"stopped while loading the data: the server is ending") == workers
    assert b"cachegraph: loaded " not in err  # no load ran to its end


def test_an_answer_of_known_length_goes_out_in_one_write():
    """``server.OneWriteCycle`` writes an answer's head with its body, where Uvicorn's own cycle
    writes twice (it overrides Uvicorn internals: pinned, and checked here on the real server).
    Counted by the kernel: the process's write system calls (``/proc/PID/io``), at a log level
    that writes no line a request."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
         "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_healthy(port, process)
        io = Path(f"/proc/{process.pid}/io")
        if not io.exists():
            pytest.skip("no /proc/PID/io on this system to count writes by")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            if 'parser="httptools"' not in r.read().decode():
                pytest.skip("the pure-Python fallback (h11) serves here: it writes as Uvicorn does")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        body = json.dumps({"query": "{ stats { specCount } }"})

        def ask() -> list[int]:
            connection.request("GET", "/healthz")
            health = connection.getresponse()
            health.read()
            connection.request("POST", "/graphql", body, {"content-type": "application/json"})
            answer = connection.getresponse()
            assert json.loads(answer.read()) == {"data": {"stats": {"specCount": 496}}}
            return [health.status, answer.status]

        def writes() -> int:
            return int(re.search(r"^syscw: (\d+)$", io.read_text(), re.M)[1])

        ask()  # the connection and the query's plan made
        before = writes()
        assert [ask() for _ in range(30)] == [[200, 200]] * 30
        assert writes() - before == 60
        connection.close()
    finally:
        process.terminate()
        process.wait(10)
