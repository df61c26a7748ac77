"""Remote mirrors served by a deliberately bad server: each is a clear error on that mirror,
the others still load, nothing hangs, nothing is held whole in memory.

The bad server is a real HTTP server on loopback (a socket server of this test's own, since
no real server misbehaves on purpose); nginx serves the good mirror beside it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import socket
import socketserver
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource
from cachegraph.graph.sources.fetch import Fetcher, FetchLimits
from cachegraph.graph.sources.layouts import sync
from cachegraph.graph.sources.locations import Remote
from cachegraph.graph.sources.remote import CHECKS_AT_ONCE, GIVE_UP_AFTER, copy_folder
from cachegraph.graph.sources.v3 import fetch_spec_manifests

from cachegraph.state import DataSources, load_sources
from cachegraph.synthmirror import synthesize_mirrors

pytestmark = pytest.mark.slow

SEEDS = Path(__file__).resolve().parents[3] / "seeds"
INDEX = SEEDS / "mirrors" / "mpigdb" / "build_cache" / "index.json"
LIMITS = FetchLimits(read_timeout=2.0, total_timeout=3.0, max_bytes=1 << 20, backoff=0.05)
#: the requests the bad server was asked, by how it misbehaves
ASKED: Counter[str] = Counter()


def _answer(status: str, body: bytes = b"", headers: tuple[str, ...] = ()) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", "Connection: close", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class _Bad(socketserver.BaseRequestHandler):
    """Each mirror path misbehaves in its own way (its first path part names how)."""

    def handle(self) -> None:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = self.request.recv(4096)
            if not chunk:
                return
            request += chunk
        path = request.split(b" ", 2)[1].decode()
        how = path.strip("/").split("/")[0]
        send = self.request.sendall
        ASKED[how] += 1
        if path.startswith("/v2/basic/"):  # a registry wanting a password, none given
            send(_answer("401 Unauthorized", headers=('WWW-Authenticate: Basic realm="r"',)))
        elif how == "down":  # every file, for ever
            send(_answer("503 Service Unavailable", headers=("Retry-After: 0",)))
        elif not path.endswith("build_cache/index.json"):
            send(_answer("404 Not Found"))
        elif how == "slow":  # a byte a second, for ever: the total time ends it
            send(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
            for _ in range(30):
                time.sleep(1)
                send(b"{")
        elif how == "huge":  # past the size limit, as stated and as sent
            send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n")
            with _suppress():
                for _ in range(2000):
                    send(b" " * 65536)
        elif how == "bomb":  # 100 MB of zeros in 100 kB of gzip, as Content-Encoding
            send(_answer("200 OK", self.server.bomb, ("Content-Encoding: gzip",)))
        elif how == "loop":
            send(_answer("302 Found", headers=(f"Location: {path}",)))
        elif how == "file":
            send(_answer("302 Found", headers=("Location: file:///etc/passwd",)))
        elif how == "storm":
            send(_answer("503 Service Unavailable", headers=("Retry-After: 0",)))
        elif how == "reset":  # half the body, then the connection reset
            data = INDEX.read_bytes()
            send(f"HTTP/1.1 200 OK\r\nContent-Length: {len(data)}\r\n\r\n".encode())
            send(data[: len(data) // 2])
            self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            self.request.close()


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, OSError)


@pytest.fixture(scope="module")
def bad_server():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Bad)
    server.daemon_threads = True
    # made once, here: its 100 MB of zeros are not the client's memory the tests measure
    server.bomb = gzip.compress(b"\0" * (100 << 20), 9)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("how", "error"),
    [
        ("slow", "took longer than 3 s in all; not read"),
        ("huge", "larger than 1,048,576 bytes; not read"),
        ("bomb", "larger than 1,048,576 bytes; not read"),
        ("loop", "more than 5 redirects"),
        ("file", "redirected to a file: URL; only http and https redirects are followed"),
        ("storm", "HTTP 503 (4 tries)"),
        ("reset", "the connection broke (4 tries)"),
    ],
)
def test_a_bad_server_is_a_clear_error_on_that_mirror(bad_server, tmp_path, how, error):
    remote = Remote.parse(f"{bad_server}/{how}")
    with Fetcher(LIMITS) as fetcher:
        synced = sync(remote, "", tmp_path, fetcher)
    assert synced.copy is None and not synced.changed
    assert synced.error == f"{bad_server}/{how}/build_cache/index.json: {error}"
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []  # no part left


def test_the_other_mirrors_still_load(bad_server, http_server, tmp_path):
    good = http_server.publish(SEEDS / "mirrors" / "mpigdb")
    mirrors = [MirrorSource.parse(f"develop:{how}={bad_server}/{how}") for how in ("bomb", "loop")]
    mirrors.append(MirrorSource.parse(f"develop:mpigdb={good}"))
    sources = DataSources(mirrors=mirrors, cache_dir=str(tmp_path), fetch_limits=LIMITS)
    graph, report, _ = load_sources(sources)
    installs = json.loads(INDEX.read_text())["database"]["installs"]
    assert graph.store.n == len(installs)
    assert [(p.path, p.severity) for p in report.problems] == [
        (f"{bad_server}/bomb", "error"),
        (f"{bad_server}/loop", "error"),
    ]


def test_a_checksum_that_does_not_hold_fails_the_fetch(http_server, tmp_path):
    """``url_buildcache``: a blob must hash to its manifest's checksum, else Spack refuses it."""
    from tests.mirrors import migrate_to_v3

    folder = migrate_to_v3(SEEDS / "mirrors" / "mpigdb" / "build_cache", tmp_path / "v3")
    manifest = json.loads((folder / "v3/manifests/index/index.manifest.json").read_text())
    record = manifest["data"][0]
    blob = folder / "blobs" / "sha256" / record["checksum"][:2] / record["checksum"]
    blob.write_bytes(blob.read_bytes().replace(b"mpich", b"mpicH", 1))
    url = http_server.publish(folder)
    with Fetcher(LIMITS) as fetcher:
        synced = sync(Remote.parse(url), "", tmp_path / "cache", fetcher)
    actual = hashlib.sha256(blob.read_bytes()).hexdigest()
    assert synced.error == (
        f"{url}/blobs/sha256/{record['checksum'][:2]}/{record['checksum']}: checksum mismatch: "
        f"the blob's sha256 is {actual}, its manifest says {record['checksum']}; not used (as "
        "Spack refuses it)"
    )
    shutil.rmtree(folder)


def test_a_self_signed_certificate_is_refused(self_signed_server, tmp_path):
    url = self_signed_server.publish(SEEDS / "mirrors" / "mpigdb")
    with Fetcher(LIMITS) as fetcher:
        synced = sync(Remote.parse(url), "", tmp_path, fetcher)
    manifest = f"{url}/v3/manifests/index/index.manifest.json"
    assert (
        synced.error == f"{manifest}: TLS certificate not trusted (--ca-bundle names a site's CA)"
    )


def test_a_body_is_streamed_to_disk_never_held_whole(bad_server, tmp_path):
    """100 MB of gzip-encoded zeros within the size limit: written as it is decoded, with
    this process's Python allocations staying a small fraction of it."""
    import tracemalloc

    tracemalloc.start()
    try:
        with Fetcher(FetchLimits(max_bytes=512 << 20)) as fetcher:
            got = fetcher.http(f"{bad_server}/bomb/build_cache/index.json", dest=tmp_path / "i")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (got.status, got.size, (tmp_path / "i").stat().st_size) == (200, 100 << 20, 100 << 20)
    assert peak < 16 << 20


def test_a_mirror_gone_down_while_its_sizes_are_fetched_is_left_for_its_next_check(
    bad_server, http_server, tmp_path, caplog
):
    """Its copy held, its server answers 503 to everything: once ``GIVE_UP_AFTER`` fetches in
    a row fail, the rest are not asked (each would be, with its retries: hours at a quarter of
    a million specs); nothing is fetched, and the log says so once."""
    tree = tmp_path / "tree"
    held = synthesize_mirrors(tree, 3000, 2, 0)
    root = next(p.parent.parent for p in tree.rglob("v3/layout.json"))
    specs = held[f"{root.parent.name}/{root.name}"]
    assert specs > 4 * (GIVE_UP_AFTER + CHECKS_AT_ONCE)
    remote = Remote.parse(http_server.publish(root))
    asked = ASKED["down"]
    with Fetcher(replace(LIMITS, max_bytes=64 << 20)) as fetcher:
        synced = sync(remote, "", tmp_path / "cache", fetcher)
        assert (synced.held.layout, synced.error) == ("v3", "")
        copy = copy_folder(tmp_path / "cache", remote.identity)
        down = Remote.parse(f"{bad_server}/down")
        assert fetch_spec_manifests(down, "", copy, fetcher) == 0
    asked = ASKED["down"] - asked
    assert GIVE_UP_AFTER <= asked <= (GIVE_UP_AFTER + CHECKS_AT_ONCE) * (LIMITS.retries + 1)
    assert [r.getMessage() for r in caplog.records if "in a row" in r.getMessage()] == [
        f"mirror {bad_server}/down: {GIVE_UP_AFTER} fetches of its sizes in a row failed; the "
        f"rest (of {specs}) are asked at its next check"
    ]


def test_a_registry_asking_for_a_password_says_how_to_give_one(bad_server, tmp_path):
    host = bad_server.removeprefix("http://")
    with Fetcher(LIMITS) as fetcher:
        synced = sync(Remote.parse(f"oci+http://{host}/basic/cache"), "", tmp_path, fetcher)
    assert synced.error == (
        f"oci+http://{host}/basic/cache: the registry asks for authentication (give "
        "credentials: CACHEGRAPH_OCI_USERNAME and CACHEGRAPH_OCI_PASSWORD)"
    )
