"""A server on remote mirrors keeps them fresh: a changed index is served after a refresh,
never half of it; a mirror whose server stops is served stale, and says so; a credential in
a mirror's URL appears nowhere a person or a client can read."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cachegraph.app import create_app
from cachegraph.settings import Settings
from tests.remote import static_server

pytestmark = pytest.mark.slow

SEEDS = Path(__file__).resolve().parents[2] / "seeds"
MPIGDB = SEEDS / "mirrors" / "mpigdb"
TEST = SEEDS / "mirrors" / "spack-test" / "unsigned"
QUERY = """{ stats { specCount } mirrors { name specCount
  freshness { stale error checks lastChange } } }"""
PROBLEMS = "{ loadStatus { problems { nodes { path severity message } } } }"
#: enough polls for many refresh periods on the busiest machine; each waits a period
POLLS = 200


def _installs(folder: Path) -> int:
    return len(
        json.loads((folder / "build_cache" / "index.json").read_text())["database"]["installs"]
    )


def _ask(client: TestClient, query: str = QUERY) -> dict:
    answer = client.post("/graphql", json={"query": query}).json()
    assert "errors" not in answer, answer
    return answer["data"]


def _settings(tmp_path: Path, *mirrors: str, refresh: float = 0.2) -> Settings:
    return Settings(mirror=mirrors, refresh=refresh, cache_dir=str(tmp_path / "cache"))


def test_a_changed_index_is_served_within_two_checks_never_mixed(http_server, tmp_path):
    url = http_server.publish(MPIGDB)
    name = url.rsplit("/", 1)[1]
    with TestClient(create_app(settings=_settings(tmp_path, f"develop:m={url}"))) as client:
        before = _ask(client)
        assert before["stats"]["specCount"] == _installs(MPIGDB)
        old = _installs(MPIGDB)
        new = _installs(TEST)
        # the index replaced by rename (as `spack buildcache update-index` and rsync write)
        index = (TEST / "build_cache" / "index.json").read_bytes()
        http_server.replace(f"{name}/build_cache/index.json.hash", b"")
        http_server.replace(f"{name}/build_cache/index.json", index)
        watch = client.app.state.cache.sources.watches["develop/m"]
        checks_then = watch.checks
        seen = []
        for _ in range(POLLS):
            data = _ask(client)
            count = data["stats"]["specCount"]
            seen.append(count)
            assert count in (old, new)  # the old data or the new, never a mix
            if count == new:
                break
            time.sleep(0.2)
        assert seen[-1] == new
        mirror = data["mirrors"][0]
        assert mirror["specCount"] == 6 and mirror["freshness"]["stale"] is False
        # found by the check under way when the index changed, or by the next one: within
        # two refresh periods (counted in checks, not in seconds of a busy machine)
        assert watch.changed_at - checks_then <= 2


def test_a_stopped_server_leaves_its_mirror_stale_and_said(tmp_path_factory, tmp_path, caplog):
    caplog.set_level(logging.INFO, "cachegraph")
    servers = static_server(tmp_path_factory, None)
    server = next(servers)
    url = server.publish(MPIGDB)
    with TestClient(create_app(settings=_settings(tmp_path, f"develop:m={url}"))) as client:
        assert _ask(client)["mirrors"][0]["freshness"]["stale"] is False
        servers.close()  # nginx stopped
        for _ in range(POLLS):
            mirror = _ask(client)["mirrors"][0]
            if mirror["freshness"]["stale"]:
                break
            time.sleep(0.2)
        assert mirror["specCount"] == 27  # its last good data, still served
        manifest = f"{url}/build_cache/index.json"
        assert mirror["freshness"]["error"] == f"{manifest}: cannot connect (4 tries)"
        metrics = client.get("/metrics").text
        assert 'cachegraph_mirror_stale{mirror="develop/m"} 1.0' in metrics
        assert 'cachegraph_mirror_fetch_failures_total{mirror="develop/m"} ' in metrics
        for _ in range(POLLS):  # a second failed check: said once, not at every check
            if client.app.state.cache.sources.watches["develop/m"].failures >= 2:
                break
            time.sleep(0.2)
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("mirror ")]
    assert said == [
        f"mirror develop/m: {manifest}: cannot connect (4 tries); serving its last good data "
        "(stale)"
    ]


def test_a_credential_in_a_url_appears_nowhere(http_server, tmp_path, caplog):
    secret = "PLANTED-s3cret-7c1f"
    url = http_server.publish(MPIGDB)
    host, path = url.removeprefix("http://").split("/", 1)
    with_secret = f"http://reader:{secret}@{host}/{path}"
    missing = f"http://reader:{secret}@{host}/no-such-mirror"
    settings = _settings(tmp_path, f"develop:m={with_secret}", f"develop:gone={missing}")
    caplog.set_level(logging.DEBUG)
    with TestClient(create_app(settings=settings)) as client:
        answers = [
            client.post("/graphql", json={"query": q}).text
            for q in (
                QUERY,
                "{ mirrors { location url } loadStatus { summary paths "
                "problems { nodes { path message } } } }",
                '{ spec(hash: "3uebtou") { tarball mirrors { url location } } }',
            )
        ]
        metrics = client.get("/metrics").text
        ready = client.get("/readyz").text
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert f"http://{host}/no-such-mirror" in answers[1]  # the failure is said, without it
    for text in (*answers, metrics, ready, logged):
        assert secret not in text and "reader:" not in text


SIZES = "{ specs(first: 100) { nodes { hash size tarball } } }"


def _before_and_after_sizes(settings: Settings) -> tuple[list, list]:
    """The specs' sizes and tarballs as first served, and once they changed (the sizes
    fetched by the second process and loaded)."""
    with TestClient(create_app(settings=settings)) as client:
        first = _ask(client, SIZES)["specs"]["nodes"]
        for _ in range(POLLS):
            got = _ask(client, SIZES)["specs"]["nodes"]
            if got != first:
                break
            time.sleep(0.2)
    return first, got


def test_a_v3_mirrors_sizes_come_once_it_is_served(http_server, tmp_path):
    """Its spec manifests (a request a spec) are fetched in the background after the data is
    served, then loaded: sizes and tarballs as the same mirror on disk gives them."""
    from tests.mirrors import migrate_to_v3

    folder = migrate_to_v3(TEST / "build_cache", tmp_path / "v3", lambda h: 1000 + len(h))
    spec_files = len(list((TEST / "build_cache").glob("*.spec.json")))
    url = http_server.publish(folder)
    on_disk = create_app(settings=Settings(mirror=(f"develop:m={folder}",)))
    with TestClient(on_disk) as client:
        expected = _ask(client, SIZES)["specs"]["nodes"]
    first, got = _before_and_after_sizes(_settings(tmp_path, f"develop:m={url}", refresh=0))
    held = [n for n in expected if n["size"] is not None]
    assert len(held) == spec_files and {n["size"] for n in held} == {1032}
    assert [n["size"] for n in first] == [None] * len(first)  # served before the sizes came
    assert got == [
        {**n, "tarball": f"{url}/{n['tarball']}" if n["tarball"] else None} for n in expected
    ]


def test_an_oci_mirrors_sizes_come_once_it_is_served(oci_registry, tmp_path):
    """Each spec's image manifest is fetched in the background after the data is served: its
    last layer is the spec's tarball and its size (Spack's ``_oci_get_blob_info``); the
    tarball is named by its image, ``oci+http://REGISTRY/REPOSITORY:TAG``."""
    from tests.ocipush import read_mirror, spack_tag

    content = read_mirror(TEST)
    pushed = content.specs  # hash -> the image the registry is given
    for number, image in enumerate(pushed.values(), 1):  # tarballs of sizes all different
        image.tarball = bytes(range(256)) * number
    for image in pushed.values():  # each image's layers: its held dependencies' tarballs first
        oci_registry.pusher.push_spec("sizes/test", image, pushed)
    oci_registry.pusher.push_index("sizes/test", content.index)
    url = oci_registry.url("sizes/test")
    installs = json.loads((TEST / "build_cache" / "index.json").read_text())["database"]
    expected = {}
    for hash, entry in installs["installs"].items():
        node = entry["spec"]
        held = entry.get("in_buildcache", True) and not node.get("external")
        image = pushed.get(hash)
        expected[hash] = {
            "tarball": f"{url}:{spack_tag(node['name'], node['version'], hash)}" if held else None,
            "size": float(len(image.tarball)) if held and image else None,
        }
    first, got = _before_and_after_sizes(_settings(tmp_path, f"develop:m={url}", refresh=0))
    assert [n["size"] for n in first] == [None] * len(first)  # served before the sizes came
    assert {n["hash"]: {"tarball": n["tarball"], "size": n["size"]} for n in got} == expected
    assert sum(n["size"] is not None for n in got) == len(pushed)


def _until(ask, done, what: str):
    """``ask()`` again, a refresh period apart, until ``done`` holds of its answer."""
    for _ in range(POLLS):
        got = ask()
        if done(got):
            return got
        time.sleep(0.2)
    raise AssertionError(f"never {what}: {got}")


def _without(installs: dict, name: str) -> bytes:
    """An index without the record of package ``name``, which another record depends on."""
    dropped = {h: r for h, r in installs.items() if r["spec"]["name"] != name}
    assert len(dropped) == len(installs) - 1
    return json.dumps({"database": {"version": "8", "installs": dropped}}).encode()


def test_a_refused_new_index_leaves_its_mirror_stale_saying_why(http_server, tmp_path):
    """A changed index with more errors than the data served is refused (``State.reload``):
    the mirror is stale with the reason until an index that loads is served, though its
    copy is the new index and later checks find nothing changed."""
    url = http_server.publish(MPIGDB)
    name = url.rsplit("/", 1)[1]
    index = MPIGDB / "build_cache" / "index.json"
    installs = json.loads(index.read_text())["database"]["installs"]
    mirror = lambda c: _ask(c)["mirrors"][0]  # noqa: E731
    fresh = {"name": "develop/m", "specCount": 27, "freshness": {"stale": False, "error": None}}
    with TestClient(create_app(settings=_settings(tmp_path, f"develop:m={url}"))) as client:
        shown = lambda m: {**m, "freshness": {k: m["freshness"][k] for k in ("stale", "error")}}  # noqa: E731
        assert shown(mirror(client)) == fresh
        http_server.replace(f"{name}/build_cache/index.json.hash", b"")
        http_server.replace(f"{name}/build_cache/index.json", _without(installs, "hwloc"))
        refused = _until(lambda: shown(mirror(client)), lambda m: m["freshness"]["stale"],
                         "stale")  # fmt: skip
        assert refused == {
            "name": "develop/m",
            "specCount": 27,  # the data served before
            "freshness": {
                "stale": True,
                "error": "its new index is not served: its load was refused (1 error, more "
                "than the 0 of the data served)",
            },
        }
        watch = client.app.state.cache.sources.watches["develop/m"]
        checks = watch.checks
        _until(lambda: watch.checks, lambda n: n >= checks + 2, "checked twice more")
        assert shown(mirror(client)) == refused  # nothing changed since: still said
        http_server.replace(f"{name}/build_cache/index.json", index.read_bytes())
        assert _until(lambda: shown(mirror(client)), lambda m: not m["freshness"]["stale"],
                      "fresh again") == fresh  # fmt: skip


def test_a_mirror_reachable_again_is_no_longer_said_stale(http_server, tmp_path):
    """A server started while a mirror's server is down serves its copy with a warning; once
    the mirror answers again (its index unchanged: nothing is loaded again) the warning is
    gone from the load's problems and ``/readyz``."""
    url = http_server.publish(MPIGDB)
    name = url.rsplit("/", 1)[1]
    settings = _settings(tmp_path, f"develop:m={url}")
    with TestClient(create_app(settings=settings)) as client:
        assert _ask(client)["mirrors"][0]["freshness"]["stale"] is False  # the copy is kept
    away = http_server.root / f"{name}.away"
    (http_server.root / name).rename(away)
    with TestClient(create_app(settings=settings)) as client:
        said = _ask(client, PROBLEMS)["loadStatus"]["problems"]["nodes"]
        assert said == [{
            "path": url,
            "severity": "warning",
            "message": "no build-cache index (neither v3/manifests/index/index.manifest.json "
            "nor build_cache/index.json); reading the copy held (stale)",
        }]  # fmt: skip
        assert client.get("/readyz").json()["last_load"]["problem_count"] == 1
        away.rename(http_server.root / name)
        _until(lambda: _ask(client)["mirrors"][0]["freshness"]["stale"], lambda s: not s,
               "reachable again")  # fmt: skip
        assert _ask(client, PROBLEMS)["loadStatus"]["problems"]["nodes"] == []
        assert client.get("/readyz").json()["last_load"]["problem_count"] == 0
        assert _ask(client)["stats"]["specCount"] == _installs(MPIGDB)


def _listing(http_server, text: str) -> str:
    """A mirrors file served beside the published mirrors; its URL."""
    name = f"listing-{next(http_server.names)}.json"
    http_server.replace(name, text.encode())
    return f"{http_server.url}/{name}"


def test_a_remote_mirrors_file_is_read_again_at_each_check_and_kept(http_server, tmp_path):
    """The public indexer's shape at a URL, with relative URLs: a mirror added to it is served
    after a refresh; a restart that cannot fetch it reads the copy kept in the cache
    directory, and serves the mirrors' copies, stale."""
    first = http_server.publish(MPIGDB).rsplit("/", 1)[1]
    second = http_server.publish(TEST).rsplit("/", 1)[1]
    one = json.dumps({"develop": [{"label": "a", "url": first}]})
    url = _listing(http_server, one)
    settings = Settings(mirrors_file=url, refresh=0.2, cache_dir=str(tmp_path / "cache"))
    names = "{ mirrors { name specCount freshness { stale } } }"
    with TestClient(create_app(settings=settings)) as client:
        assert _ask(client, names)["mirrors"] == [
            {"name": "develop/a", "specCount": 27, "freshness": {"stale": False}}
        ]
        both = {"develop": [{"label": "a", "url": first}, {"label": "b", "url": second}]}
        http_server.replace(url.rsplit("/", 1)[1], json.dumps(both).encode())
        served = _until(lambda: _ask(client, names)["mirrors"], lambda m: len(m) == 2,
                        "the second mirror served")  # fmt: skip
        assert served == [
            {"name": "develop/a", "specCount": 27, "freshness": {"stale": False}},
            {"name": "develop/b", "specCount": 6, "freshness": {"stale": False}},
        ]
        only_b = {"develop": [{"label": "b", "url": second}]}
        http_server.replace(url.rsplit("/", 1)[1], json.dumps(only_b).encode())
        assert _until(lambda: _ask(client, names)["mirrors"], lambda m: len(m) == 1,
                      "the first mirror dropped") == [served[1]]  # fmt: skip
        stale = [line for line in client.get("/metrics").text.splitlines()
                 if line.startswith("cachegraph_mirror_stale{")]  # fmt: skip
        assert stale == ['cachegraph_mirror_stale{mirror="develop/b"} 0.0']
        # a broken file: the mirrors it listed are kept, and so is the copy of it held; the
        # load's problems say so until it reads again
        http_server.replace(url.rsplit("/", 1)[1], b'{"develop": [')
        watch = client.app.state.cache.sources.watches["develop/b"]
        checks = watch.checks
        _until(lambda: watch.checks, lambda n: n >= checks + 2, "checked twice more")
        assert _ask(client, names)["mirrors"] == [served[1]]
        assert _ask(client, PROBLEMS)["loadStatus"]["problems"]["nodes"] == [{
            "path": url,
            "severity": "warning",
            "message": "not valid JSON: Expecting value; keeping the 1 mirror it listed",
        }]  # fmt: skip
        assert client.get("/readyz").json()["last_load"]["problem_count"] == 1
        http_server.replace(url.rsplit("/", 1)[1], json.dumps(only_b).encode())
        checks = watch.checks
        _until(lambda: watch.checks, lambda n: n >= checks + 2, "checked twice more")
        assert _ask(client, PROBLEMS)["loadStatus"]["problems"]["nodes"] == []
        assert client.get("/readyz").json()["last_load"]["problem_count"] == 0
    served = [{**m, "freshness": {"stale": True}} for m in served]
    for gone in (url.rsplit("/", 1)[1], first, second):  # the network down, as nginx sees it
        (http_server.root / gone).rename(http_server.root / f"{gone}.away")
    with TestClient(create_app(settings=settings)) as client:  # the listing held lists b
        assert _ask(client, names)["mirrors"] == served[1:]


def test_a_mirrors_file_at_a_url_without_an_ending_may_be_yaml(http_server, tmp_path):
    first = http_server.publish(MPIGDB).rsplit("/", 1)[1]
    name = f"listing-{next(http_server.names)}"
    http_server.replace(name, f"mirrors:\n  - {{tag: develop, stack: a, path: {first}}}\n".encode())
    settings = Settings(mirrors_file=f"{http_server.url}/{name}", refresh=0,
                        cache_dir=str(tmp_path / "cache"))  # fmt: skip
    with TestClient(create_app(settings=settings)) as client:
        assert _ask(client, "{ mirrors { name specCount } }")["mirrors"] == [
            {"name": "develop/a", "specCount": 27}
        ]
