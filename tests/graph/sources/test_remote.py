"""Remote mirrors on real servers (nginx over http and https, SeaweedFS's S3, the CNCF
registry over OCI) answer every question as the same mirrors loaded from disk.

The requests are Spack 1.1's (``binary_distribution.py``: ``DefaultIndexFetcher`` reads
``index.json.hash`` then ``index.json``, ``EtagIndexFetcher`` sends ``If-None-Match``,
``OCIIndexFetcher`` reads the ``index.spack`` manifest then its layer; ``url_buildcache``'s
index manifest for v3), checked here in the servers' own access logs where they keep one.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, snapshot
from cachegraph.graph.sources.fetch import Fetcher, FetchLimits
from cachegraph.graph.sources.layouts import sync
from cachegraph.graph.sources.locations import Remote
from cachegraph.graph.sources.parts import PART
from cachegraph.graph.sources.remote import UNUSED_SECONDS, USED, copy_folder

from cachegraph.state import DataSources, load_sources, save_snapshot
from tests.conftest import execute
from tests.mirrors import migrate_to_v3

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
SEEDS = ROOT / "seeds"
#: (tag, stack, folder below seeds/mirrors or ../shared/mirrors)
MIRRORS = [
    ("test", "e4s", "seeds", "spack-test/unsigned"),
    ("test", "signed", "seeds", "spack-test/signed"),
    ("develop", "mpigdb", "seeds", "mpigdb"),
    ("old", "db7", "shared", "v2_layout_db7"),
]
QUERY = """query($lock: JSON) {
  stats { packageCount specCount }
  mirrors { name specCount }
  libdwarf: specs(filter: {satisfies: "libdwarf"}, first: 100) { totalCount nodes { hash } }
  mpich: specs(filter: {satisfies: "^hwloc"}, first: 100) { totalCount nodes { hash } }
  dag: spec(hash: "u5uz3dc") { dependencies(transitive: true) { hash } dependents { hash } }
  mpi: spec(hash: "3uebtou") { dependencies { hash } dependents(transitive: true) { hash } }
  coverage(lockfile: $lock) { total hitCount missCount externalCount
    entries { hash hit reason } }
}"""


def _folders(shared_mirrors: Path, tmp: Path, v3: bool) -> list[tuple[str, str, Path]]:
    found = []
    for tag, stack, where, below in MIRRORS:
        folder = (SEEDS / "mirrors" if where == "seeds" else shared_mirrors) / below
        if v3:  # the same specs in Spack 1.0's layout (tests/mirrors.py: as `buildcache migrate`)
            folder = migrate_to_v3(folder / "build_cache", tmp / f"{stack}-v3")
        found.append((tag, stack, folder))
    return found


def _answers(sources: DataSources, remote: bool = True) -> dict:
    """The query's answer; a remote load must meet no problem (on disk, the warning that a
    spec file beside the index is not listed in it: Spack never fetches one remotely)."""
    graph, report, _ = load_sources(sources)
    assert not remote or report.problems == []
    lock = json.loads((SEEDS / "spack.lock").read_text())
    return execute(graph, QUERY, {"lock": lock})


@pytest.fixture(scope="module")
def layouts(shared_mirrors, tmp_path_factory) -> dict[str, list[tuple[str, str, Path]]]:
    tmp = tmp_path_factory.mktemp("layouts")
    return {"v2": _folders(shared_mirrors, tmp, False), "v3": _folders(shared_mirrors, tmp, True)}


@pytest.fixture(scope="module")
def from_disk(layouts) -> dict[str, dict]:
    return {
        layout: _answers(DataSources(mirrors=[MirrorSource(t, s, f) for t, s, f in folders]), False)
        for layout, folders in layouts.items()
    }


def _remote(urls, tmp_path, **limits) -> DataSources:
    mirrors = [MirrorSource.parse(f"{tag}:{stack}={url}") for tag, stack, url in urls]
    return DataSources(mirrors=mirrors, cache_dir=str(tmp_path), fetch_limits=FetchLimits(**limits))


@pytest.mark.parametrize("layout", ["v2", "v3"])
@pytest.mark.parametrize("scheme", ["http", "https", "s3"])
def test_a_remote_mirror_answers_as_on_disk(
    request, layouts, from_disk, tmp_path, monkeypatch, scheme, layout
):
    folders = layouts[layout]
    limits = {}
    if scheme == "http":
        publish = request.getfixturevalue("publish_http")
        urls = [(t, s, publish(f)) for t, s, f in folders]
    elif scheme == "https":
        publish = request.getfixturevalue("publish_https")
        limits["ca_bundle"] = str(request.getfixturevalue("test_ca").ca_file)
        urls = [(t, s, publish(f)) for t, s, f in folders]
    else:
        server = request.getfixturevalue("s3_server")
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        urls = [(t, s, server.publish(f, "caches", f"{layout}/{s}")) for t, s, f in folders]
    assert _answers(_remote(urls, tmp_path, **limits)) == from_disk[layout]


@pytest.mark.parametrize("layout", ["v2", "v3"])
def test_an_oci_mirror_answers_as_on_disk(layouts, from_disk, tmp_path, publish_oci, layout):
    urls = [(t, s, publish_oci(f, f"cache/{layout}-{s}")) for t, s, f in layouts[layout]]
    assert _answers(_remote(urls, tmp_path)) == from_disk[layout]


def test_an_oci_registry_asking_for_a_bearer_token(layouts, from_disk, tmp_path, oci_bearer,
                                                    oci_registry, test_ca):  # fmt: skip
    """A public image: the registry answers 401 with a bearer challenge; an anonymous token
    from its realm opens it (Spack's ``spack.oci.opener``)."""
    urls = []
    for tag, stack, folder in layouts["v2"]:
        oci_registry.publish(folder, f"bearer/{stack}")
        urls.append((tag, stack, oci_bearer.url(f"bearer/{stack}")))
    sources = _remote(urls, tmp_path, ca_bundle=str(test_ca.ca_file))
    assert _answers(sources) == from_disk["v2"]


TARBALLS = "{ specs(first: 1000) { nodes { hash tarball mirrors { name } } } }"


def _tarballs(sources: DataSources) -> dict[str, tuple[str | None, str]]:
    """hash -> (tarball, the first mirror by name holding it) of every spec a mirror holds."""
    graph, _, _ = load_sources(sources)
    nodes = execute(graph, TARBALLS)["data"]["specs"]["nodes"]
    return {n["hash"]: (n["tarball"], min(m["name"] for m in n["mirrors"]))
            for n in nodes if n["mirrors"]}  # fmt: skip


def test_a_remote_tarball_is_its_url(layouts, tmp_path, publish_http):
    """A remote mirror's tarball is answered by its URL: the mirror's URL (held once, not
    in each row), then where the v2 layout keeps it below the root, named from the index
    node as Spack's ``buildcache_migrate.v2_tarball_path_name`` names it -- so where the
    file lies on disk, found there from its spec file's name (the compiler of a node read
    from an older spec file is in its annotations: ``gcc-10.2.1``, not ``none-none``). A
    v3 mirror's is known once its spec manifest is: ``test_sizes``."""
    urls = [(t, s, publish_http(f)) for t, s, f in layouts["v2"]]
    disk = _tarballs(DataSources(mirrors=[MirrorSource(t, s, f) for t, s, f in layouts["v2"]]))
    remote = _tarballs(_remote(urls, tmp_path))
    url_of = {f"{t}/{s}": url for t, s, url in urls}
    assert remote == {
        hash: (f"{url_of[mirror]}/{below}", mirror) for hash, (below, mirror) in disk.items()
    }
    assert any("/gcc-10.2.1/" in tarball for tarball, _ in remote.values())


def test_an_oci_tarball_is_its_image(layouts, tmp_path, publish_oci):
    """An OCI mirror's tarball is its spec's image, ``REGISTRY/REPOSITORY:TAG`` (Spack's
    ``oci_tag``: the spec's DAG hash tagged as ``NAME-VERSION-HASH.spack``)."""
    urls = [(t, s, publish_oci(f, f"cache/tarballs-{s}")) for t, s, f in layouts["v2"]]
    remote = _tarballs(_remote(urls, tmp_path))
    url_of = {f"{t}/{s}": url for t, s, url in urls}
    assert remote
    for hash, (tarball, mirror) in remote.items():
        assert tarball.startswith(f"{url_of[mirror]}:") and tarball.endswith(f"-{hash}.spack")


def test_a_cache_directory_given_relative_is_the_same_cache(http_server, tmp_path, monkeypatch):
    """``--cache-dir cache`` run in a folder and that folder's ``cache`` given whole are one
    cache: the copies are where the other left them, and a snapshot written by one is
    used by the other (the same fingerprint)."""
    url = http_server.publish(SEEDS / "mirrors" / "mpigdb")
    monkeypatch.chdir(tmp_path)
    found = []
    for cache in ("cache", str(tmp_path / "cache")):
        sources = DataSources(mirrors=[MirrorSource.parse(f"develop:mpigdb={url}")],
                              cache_dir=cache)  # fmt: skip
        changed = sources.check_sources()
        found.append((changed, snapshot.fingerprint([], sources.resolved_mirrors())))
    assert [changed for changed, _ in found] == [True, False]
    assert found[0][1] == found[1][1]


def test_a_second_check_asks_only_the_cheap_request(http_server, tmp_path):
    """With its ETag held, a v2 mirror is asked ``If-None-Match`` (``EtagIndexFetcher``): 304,
    nothing fetched; a v3 mirror, its manifest; unchanged, the copy stays."""
    url = http_server.publish(SEEDS / "mirrors" / "mpigdb")
    remote = Remote.parse(url)
    with Fetcher() as fetcher:
        first = sync(remote, "", tmp_path, fetcher)
        again = sync(remote, "", tmp_path, fetcher)
    assert (first.changed, first.error, first.held.layout) == (True, "", "v2")
    assert (again.changed, again.error, again.requests, again.fetched_bytes) == (False, "", 1, 0)
    copy = copy_folder(tmp_path, url)
    index = SEEDS / "mirrors" / "mpigdb" / "build_cache" / "index.json"
    assert (copy / "build_cache" / "index.json").read_bytes() == index.read_bytes()


def test_with_the_network_down_the_copies_are_served_stale(http_server, tmp_path):
    """A restart whose mirror cannot be reached serves the copy held, with a warning."""
    url = http_server.publish(SEEDS / "mirrors" / "mpigdb", "going-away")
    index = SEEDS / "mirrors" / "mpigdb" / "build_cache" / "index.json"
    records = len(json.loads(index.read_text())["database"]["installs"])  # 27 held, 8 referenced
    sources = _remote([("develop", "mpigdb", url)], tmp_path)
    graph, report, _ = load_sources(sources)
    assert graph.store.n == records and report.problems == []
    shutil.rmtree(http_server.root / "going-away")
    again = _remote([("develop", "mpigdb", url)], tmp_path)
    graph, report, _ = load_sources(again)
    assert graph.store.n == records
    assert [(p.path, p.message, p.severity) for p in report.problems] == [
        (url, "no build-cache index (neither v3/manifests/index/index.manifest.json nor "
         "build_cache/index.json); reading the copy held (stale)", "warning"),
    ]  # fmt: skip
    assert again.watches["develop/mpigdb"].stale


def test_a_v2_mirror_is_read_as_spack_reads_it_hash_file_first(http_server, tmp_path):
    """``DefaultIndexFetcher``: ``index.json.hash``, then ``index.json``; a hash file that
    disagrees with its index is an error of that mirror, as the same folder on disk gives."""
    source = SEEDS / "mirrors" / "mpigdb"
    url = http_server.publish(source)
    name = url.rsplit("/", 1)[1]
    http_server.replace(f"{name}/build_cache/index.json.hash", b"0" * 64)
    log = http_server.state / "access.log"
    before = log.stat().st_size
    remote = _remote([("develop", "mpigdb", url)], tmp_path)
    _, report, _ = load_sources(remote)
    with log.open("rb") as f:
        f.seek(before)
        asked = [
            line.split(b'"')[1].split()[1].decode() for line in f if f"/{name}/".encode() in line
        ]
    assert asked == [
        f"/{name}/v3/manifests/index/index.manifest.json",
        f"/{name}/build_cache/index.json.hash",
        f"/{name}/build_cache/index.json",
        f"/{name}/build_cache/_pgp/index.json",
    ]
    on_disk = tmp_path / "disk"
    shutil.copytree(source, on_disk)
    (on_disk / "build_cache" / "index.json.hash").write_bytes(b"0" * 64)
    _, local = load_sources(DataSources(mirrors=[MirrorSource("develop", "mpigdb", on_disk)]))[:2]
    assert [p.message for p in report.problems] == [p.message for p in local.problems]
    assert [p.path for p in report.problems] == [f"{url}/build_cache/index.json"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("ftp://user:pw@host/m", "ftp://host/m: the URL scheme 'ftp' is not one a mirror is read "
         "from (http, https, s3, gs, oci, oci+http or file)"),
        ("oci+https://h/r", "oci+https://h/r: the URL scheme 'oci+https' is not one a mirror is "
         "read from (http, https, s3, gs, oci, oci+http or file)"),
        ("http://u:secret@h:99999/x", "http://h:99999/x: not a URL: Port out of range 0-65535"),
        ("https://", "https://: the URL names no host (or bucket)"),
    ],
)  # fmt: skip
def test_a_mirror_url_that_cannot_be_read_is_said(given, message):
    with pytest.raises(ValueError) as raised:
        MirrorSource.parse(f"t:s={given}")
    assert str(raised.value) == message


def test_https_to_a_plain_http_server_says_tls_failed(http_server, tmp_path):
    url = http_server.publish(SEEDS / "mirrors" / "mpigdb").replace("http://", "https://")
    with Fetcher(FetchLimits(retries=0)) as fetcher:
        synced = sync(Remote.parse(url), "", tmp_path, fetcher)
    assert synced.error == (
        f"{url}/v3/manifests/index/index.manifest.json: the TLS handshake failed: does it speak "
        "https? (a registry without TLS is oci+http://, a plain server http://)"
    )


def test_a_cache_directory_that_cannot_be_written_is_named(http_server, tmp_path):
    url = http_server.publish(SEEDS / "mirrors" / "mpigdb")
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with Fetcher() as fetcher:
        synced = sync(Remote.parse(url), "", blocked, fetcher)
    assert synced.error == (
        f"{url}: cannot write its copy in the cache directory (--cache-dir, "
        "CACHEGRAPH_CACHE_DIR): Not a directory"
    )


def test_validate_takes_a_site_ca(https_server, test_ca, tmp_path):
    """Every command that reads mirrors takes the fetch settings as flags, as serve does."""
    url = https_server.publish(SEEDS / "mirrors" / "mpigdb")
    command = [sys.executable, "-m", "cachegraph.cli", "validate", "--mirror", f"develop:m={url}",
               "--cache-dir", str(tmp_path)]  # fmt: skip
    without = subprocess.run(command, capture_output=True, text=True, timeout=120)
    given = subprocess.run([*command, "--ca-bundle", str(test_ca.ca_file)],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    manifest = f"{url}/v3/manifests/index/index.manifest.json"
    assert without.returncode == 1
    assert f"{url}: error: {manifest}: TLS certificate not trusted" in without.stdout
    assert (given.returncode, given.stdout.splitlines()[0]) == (
        0, "0 pages, 0 spec files, 1 index, 1 mirror: 35 records, 35 specs, 1 tag; 0 errors, "
        "0 warnings",
    )  # fmt: skip
    # The copy is held now: without the CA, it is what is validated, which is no validation
    # of the mirror
    held = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert (held.returncode, held.stdout.splitlines()) == (1, [
        f"{url}: warning: {url}/build_cache/index.json: TLS certificate not trusted "
        "(--ca-bundle names a site's CA); reading the copy held (stale)",
        "0 pages, 0 spec files, 1 index, 1 mirror: 35 records, 35 specs, 1 tag; 0 errors, "
        "1 warning",
        "tags: develop",
        "not validated against their servers: develop/m (its copy held was)",
    ])  # fmt: skip


@pytest.mark.parametrize("layout", ["v2", "v3"])
def test_an_unchanged_mirror_leaves_its_copy_untouched(layouts, s3_server, monkeypatch, tmp_path,
                                                       layout):  # fmt: skip
    """Over S3 (no ETags: the hash file, the manifest's checksum) a check that finds nothing
    changed writes nothing: the copy's files are the snapshot's fingerprint of the mirror."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    _, stack, folder = layouts[layout][2]
    url = s3_server.publish(folder, "untouched", f"{layout}/{stack}")
    with Fetcher() as fetcher:
        first = sync(Remote.parse(url), "", tmp_path, fetcher)
        copy = first.copy
        before = {p: p.stat().st_mtime_ns for p in copy.rglob("*")}
        again = sync(Remote.parse(url), "", tmp_path, fetcher)
    assert (first.changed, again.changed, again.error) == (True, False, "")
    assert {p: p.stat().st_mtime_ns for p in copy.rglob("*")} == before


def test_copies_no_check_used_for_30_days_are_removed(http_server, tmp_path):
    """A mirror dropped from every configuration leaves its copy; a check removes the copies
    (and kept readings) no check used for ``UNUSED_SECONDS``. The copies of the mirrors
    configured are used by every check, however old; another server's recent copy stays."""
    url = http_server.publish(SEEDS / "mirrors" / "mpigdb")
    sources = _remote([("develop", "mpigdb", url)], tmp_path)
    load_sources(sources)  # the copy fetched, its reading kept beside it
    folder = tmp_path / "mirrors"
    mine = copy_folder(tmp_path, url)
    month = time.time() - UNUSED_SECONDS - 60
    for name, age in [("gone", month), ("elsewhere", time.time() - 86400)]:
        (folder / name / "build_cache").mkdir(parents=True)
        (folder / name / "state.json").write_text("{}")
        (folder / f"{name}{PART}").write_text("kept")
        os.utime(folder / name / "state.json", (age, age))
    (folder / f"orphan{PART}").write_text("its copy is gone")
    used = mine.with_name(mine.name + USED)
    os.utime(used, (month, month))  # the last check long ago: this one uses it
    assert not sources.check_sources()
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [mine.name, mine.name + PART, mine.name + USED, "elsewhere", "elsewhere" + PART]
    )
    assert used.stat().st_mtime > month + 60


def test_a_restart_checks_the_mirrors_while_it_reads_the_snapshot(http_server, tmp_path):
    """With a snapshot, the remote mirrors are checked while it is mapped and verified
    (``cachegraph.state.CheckedFingerprint``): unchanged, the snapshot is served; an index
    changed since, fetched by that check, makes it refused and the new copy is loaded."""
    url = http_server.publish(SEEDS / "mirrors" / "mpigdb")
    name = url.rsplit("/", 1)[1]

    def restarted() -> tuple:
        sources = _remote([("develop", "mpigdb", url)], tmp_path / "cache")
        sources.snapshot = str(tmp_path / "snap")
        return sources, *load_sources(sources)

    sources, graph, report, key = restarted()
    assert key  # a full load: a snapshot to write
    save_snapshot(sources, graph, report, key)
    _, again, _, nothing = restarted()
    assert nothing == ""  # read from the snapshot
    assert again.store.arrays.keys() == graph.store.arrays.keys()
    assert all(
        snapshot.checksum(again.store.arrays[k]) == snapshot.checksum(graph.store.arrays[k])
        for k in graph.store.arrays
    )
    index = (SEEDS / "mirrors" / "mpigdb" / "build_cache" / "index.json").read_bytes() + b"\n"
    http_server.replace(f"{name}/build_cache/index.json", index)
    http_server.replace(f"{name}/build_cache/index.json.hash",
                        hashlib.sha256(index).hexdigest().encode())  # fmt: skip
    _, changed, _, other = restarted()
    assert other not in ("", key)  # the copy fetched anew: loaded in full
    assert changed.store.n == graph.store.n


def test_an_s3_store_that_cannot_be_reached_is_named(monkeypatch, tmp_path):
    """The endpoint tried is said, and where it comes from: a missing or mistyped
    ``AWS_ENDPOINT_URL`` is the usual cause."""
    from tests.remote import free_port

    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with Fetcher(FetchLimits(retries=0)) as fetcher:
        synced = sync(Remote.parse("s3://bucket/m"), "", tmp_path, fetcher)
    assert synced.error == (
        f"s3://bucket/m/v3/manifests/index/index.manifest.json: cannot connect to {endpoint} "
        "(from AWS_ENDPOINT_URL)"
    )
