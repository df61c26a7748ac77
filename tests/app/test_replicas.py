"""The deployment topology without a container engine: nginx (Debian's), configured as the
compose file configures it, in front of two real replicas on loopback. One replica is
killed mid-run; no client request fails."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.app.test_serve import free_port, wait_healthy
from tests.conftest import ROOT, SEEDS

pytestmark = pytest.mark.slow

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
CONF = ROOT / "docker" / "nginx" / "cachegraph.conf"
STATS = {"query": "{ stats { specCount } }"}
ANSWER = {"data": {"stats": {"specCount": 454}}}


def nginx_config(prefix: Path, listen: int, replicas: list[int]) -> Path:
    """The compose file's server block, its upstream pointed at loopback replicas."""
    site = CONF.read_text()
    upstream = re.search(r"^\s*server app:8000(.*);$", site, re.M)
    assert upstream, f"{CONF} no longer has the 'server app:8000 ...;' line this test replaces"
    servers = "".join(f"    server 127.0.0.1:{p}{upstream.group(1)};\n" for p in replicas)
    site = site.replace(upstream.group(0) + "\n", servers).replace(
        "listen 8080;", f"listen {listen};"
    )
    cache = "proxy_cache_path /var/cache/nginx/cachegraph "
    assert cache in site, f"{CONF} no longer keeps its cache where this test moves it from"
    site = site.replace(cache, f"proxy_cache_path {prefix}/cache ")
    (prefix / "site.conf").write_text(site)
    main = prefix / "nginx.conf"
    user = "user root;\n" if os.geteuid() == 0 else ""
    main.write_text(
        f"{user}daemon off;\nworker_processes 1;\npid {prefix}/nginx.pid;\n"
        f"error_log {prefix}/error.log warn;\nevents {{ worker_connections 256; }}\n"
        "http {\n"
        f"  access_log {prefix}/access.log;\n"
        f"  client_body_temp_path {prefix}/body;\n  proxy_temp_path {prefix}/proxy;\n"
        f"  fastcgi_temp_path {prefix}/fastcgi;\n  uwsgi_temp_path {prefix}/uwsgi;\n"
        f"  scgi_temp_path {prefix}/scgi;\n"
        f"  include {prefix}/site.conf;\n"
        "}\n"
    )
    return main


def graphql_requests_served(port: int) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    found = re.search(r'cachegraph_requests_total\{route="/graphql",status="200"\} (\S+)', text)
    return float(found.group(1)) if found else 0.0


@pytest.fixture
def topology(tmp_path):
    with replicas_behind_nginx(tmp_path, "--data", str(SEEDS)) as found:
        yield found


@contextlib.contextmanager
def replicas_behind_nginx(
    tmp_path: Path, *serve: str
) -> Iterator[tuple[int, list[int], list[subprocess.Popen]]]:
    """Two replicas (``cachegraph serve`` with ``serve``'s arguments) behind nginx: nginx's
    port, the replicas' ports and every process (nginx last); all stopped after."""
    if not Path(NGINX).exists():
        pytest.skip("nginx is not installed (Debian's package 'nginx'; .ci/run installs it)")
    processes: list[subprocess.Popen] = []
    replicas = [free_port(), free_port()]
    try:
        for port in replicas:
            command = [sys.executable, "-m", "cachegraph.cli", "serve", "--port", str(port),
                       *serve]  # fmt: skip
            log = (tmp_path / f"replica-{port}.log").open("w")
            processes.append(subprocess.Popen(command, stderr=log))
        for port, process in zip(replicas, processes, strict=True):
            wait_healthy(port, process)
        listen = free_port()
        config = nginx_config(tmp_path, listen, replicas)
        check = subprocess.run([NGINX, "-t", "-c", str(config)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        processes.append(subprocess.Popen([NGINX, "-c", str(config)], stderr=subprocess.PIPE))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{listen}/nginx-healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        yield listen, replicas, processes
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(10)


def waited(condition: Callable[[], bool], within: float = 30.0) -> bool:
    """Whether ``condition`` holds within ``within`` seconds, looked at every 50 ms."""
    ends = time.monotonic() + within
    while not condition():
        if time.monotonic() > ends:
            return False
        time.sleep(0.05)
    return True


def test_killing_a_replica_mid_run_fails_no_request(topology):
    listen, replicas, processes = topology
    results: list[object] = []
    stop = threading.Event()

    def client() -> None:
        while not stop.is_set():
            request = urllib.request.Request(
                f"http://127.0.0.1:{listen}/graphql",
                data=json.dumps(STATS).encode(),
                headers={"content-type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    results.append((response.status, json.load(response)))
            except http.client.IncompleteRead:
                results.append("cut")  # the replica died while sending this very answer
            except (OSError, http.client.HTTPException) as exc:
                results.append(repr(exc))

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    # Both replicas serving, then one killed, then traffic after the kill: each waited for.
    assert waited(lambda: all(graphql_requests_served(p) > 0 for p in replicas))
    served_before_kill = [graphql_requests_served(p) for p in replicas]
    before = len(results)
    processes[0].send_signal(signal.SIGKILL)
    processes[0].wait(10)
    waited(lambda: len(results) - before > 20)
    stop.set()
    for t in threads:
        t.join()

    assert all(n > 0 for n in served_before_kill), served_before_kill
    assert len(results) - before > 20, "too little traffic after the kill to show anything"
    # nginx retries a request on another replica unless the answer had begun: an answer
    # cut mid-body by SIGKILL cannot be saved (at most one per client, at the kill)
    failures = [r for r in results if r != (200, ANSWER)]
    assert [r for r in failures if r != "cut"] == []
    assert failures.count("cut") <= len(threads)
