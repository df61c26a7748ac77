"""A served remote mirror's history: each refresh that changes its index is one event of
the specs added, removed and replaced, kept in the cache directory across restarts, asked
for in GraphQL and read as an Atom feed.

The index pushed holds the old one's specs but for one removed (compiler-wrapper no longer
``in_buildcache``), one added (gcc now ``in_buildcache``) and one replaced: libdwarf
20130729 rebuilt under a new hash (same package, version and variants: what
``spack buildcache push`` of a rebuild gives).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from pathlib import Path

import feedparser
import pytest
from starlette.testclient import TestClient

from cachegraph.app import create_app
from cachegraph.settings import Settings

pytestmark = pytest.mark.slow

SEEDS = Path(__file__).resolve().parents[2] / "seeds"
TEST = SEEDS / "mirrors" / "spack-test" / "unsigned"
POLLS = 200
REMOVED, ADDED = "qeehcxyvluwnihsc2qxstmpomtxo3lrc", "vd7v4ssgnoqdplgxyig3orum67n4vmhq"
OLD_LIBDWARF, NEW_LIBDWARF = "u5uz3dcch5if4eve4sef67o2rf2lbfgh", "sk2gqqz4n5njmvktycnd25wq25jxiqkr"
MOMENTS = """{ new: spec(hash: "%s") { firstSeenAt lastSeenAt }
  removed: spec(hash: "%s") { firstSeenAt lastSeenAt }
  added: spec(hash: "%s") { firstSeenAt lastSeenAt } }"""
SPEC = '{ spec(hash: "%s") { specString } }'
CHANGES = """{ changes { totalCount nodes { mirror tag stack atStart addedCount removedCount
  replacedCount added { hash specString spec { hash } } removed { hash specString spec { hash } }
  replaced { old { hash specString } new { hash specString spec { hash } } } } } }"""


def _index(drop: str, held: dict[str, bool]) -> bytes:
    data = json.loads((TEST / "build_cache" / "index.json").read_text())
    installs = data["database"]["installs"]
    del installs[drop]
    for hash, flag in held.items():
        installs[hash]["in_buildcache"] = flag
    return json.dumps(data).encode()


OLD = _index(NEW_LIBDWARF, {})
NEW = _index(OLD_LIBDWARF, {REMOVED: False, ADDED: True})


def _ask(client: TestClient, query: str) -> dict:
    answer = client.post("/graphql", json={"query": query}).json()
    assert "errors" not in answer, answer
    return answer["data"]


def _push(server, name: str, index: bytes) -> None:
    server.replace(f"{name}/build_cache/index.json.hash", b"")
    server.replace(f"{name}/build_cache/index.json", index)


def _spec_string(client: TestClient, hash: str) -> str:
    return _ask(client, SPEC % hash)["spec"]["specString"]


def _wait_for_events(client: TestClient, count: int) -> dict:
    for _ in range(POLLS):
        data = _ask(client, CHANGES)["changes"]
        if data["totalCount"] >= count:
            return data
        time.sleep(0.2)
    raise AssertionError(f"no {count} change events: {data}")


def test_a_pushed_index_is_one_event_in_the_query_and_the_feed_kept_across_restarts(
    http_server, tmp_path
):
    url = http_server.publish(TEST)
    name = url.rsplit("/", 1)[1]
    _push(http_server, name, OLD)
    settings = Settings(
        mirror=(f"develop:test={url}",), refresh=0.2, cache_dir=str(tmp_path / "cache")
    )
    with TestClient(create_app(settings=settings)) as client:
        assert _ask(client, CHANGES)["changes"] == {"totalCount": 0, "nodes": []}
        removed, old = _spec_string(client, REMOVED), _spec_string(client, OLD_LIBDWARF)
        _push(http_server, name, NEW)
        data = _wait_for_events(client, 1)
        added, new = _spec_string(client, ADDED), _spec_string(client, NEW_LIBDWARF)
        feed = feedparser.parse(client.get("/feeds/changes.atom").text)
        package_feed = feedparser.parse(client.get("/feeds/package/libdwarf.atom").text)
        other_feed = feedparser.parse(client.get("/feeds/package/zlib.atom").text)
        metrics = client.get("/metrics").text
        moments = _ask(client, MOMENTS % (NEW_LIBDWARF, REMOVED, ADDED))
        at = _ask(client, "{ changes { nodes { at } } }")["changes"]["nodes"][0]["at"]
        held = client.app.state.cache.sources.changes.bytes
    event = {
        "mirror": "develop/test",
        "tag": "develop",
        "stack": "test",
        "atStart": False,
        "addedCount": 1,
        "removedCount": 1,
        "replacedCount": 1,
        "added": [{"hash": ADDED, "specString": added, "spec": {"hash": ADDED}}],
        "removed": [{"hash": REMOVED, "specString": removed, "spec": {"hash": REMOVED}}],
        "replaced": [
            {
                "old": {"hash": OLD_LIBDWARF, "specString": old},
                "new": {"hash": NEW_LIBDWARF, "specString": new, "spec": {"hash": NEW_LIBDWARF}},
            }
        ],
    }
    assert data == {"totalCount": 1, "nodes": [event]}
    # the rebuilt libdwarf and gcc came with the event; compiler-wrapper left (still a node)
    assert moments == {
        "new": {"firstSeenAt": at, "lastSeenAt": None},
        "removed": {"firstSeenAt": None, "lastSeenAt": at},
        "added": {"firstSeenAt": at, "lastSeenAt": None},
    }
    assert f"cachegraph_change_log_bytes {float(held)}" in metrics
    assert f"cachegraph_change_log_budget_bytes {float(16 << 20):.7e}" in metrics
    assert held == (tmp_path / "cache" / "changes" / "changes.jsonl").stat().st_size
    assert "target=" not in old and old.startswith("libdwarf@20130729") and old != new
    # the feed: one entry, naming the same specs
    assert not feed.bozo, feed.bozo_exception
    assert feed.feed.title == "Spack Cache Graph: changes"
    assert len(feed.entries) == 1
    entry = feed.entries[0]
    assert entry.title == "develop/test: 1 added, 1 removed, 1 replaced"
    for text in (added, removed, old, new):
        assert text in entry.content[0].value
    assert [e.title for e in package_feed.entries] == [entry.title]
    assert not other_feed.bozo and other_feed.entries == []

    # a restart keeps the history; the index went back while the server was down: that
    # change is recorded at start, the sets the other way round
    _push(http_server, name, OLD)
    with TestClient(create_app(settings=settings)) as client:
        data = _ask(client, CHANGES)["changes"]
    assert data["totalCount"] == 2
    # the same event, but the rebuilt libdwarf is gone now: its hash and string are left
    event["replaced"][0]["new"]["spec"] = None
    assert data["nodes"][0] == event
    back = data["nodes"][1]
    assert back["atStart"] is True
    assert [s["hash"] for s in back["added"]] == [REMOVED]
    assert [s["hash"] for s in back["removed"]] == [ADDED]
    assert [(r["old"]["hash"], r["new"]["hash"]) for r in back["replaced"]] == [
        (NEW_LIBDWARF, OLD_LIBDWARF)
    ]

    # a restart with a budget the newest event fits, and not both: the oldest goes, whole
    logged = tmp_path / "cache" / "changes" / "changes.jsonl"
    newest = logged.read_text().splitlines(keepends=True)[-1]
    smaller = Settings(
        mirror=settings.mirror,
        refresh=0,
        cache_dir=settings.cache_dir,
        change_log_bytes=len(newest.encode()) + 10,
    )
    with TestClient(create_app(settings=smaller)) as client:
        data = _ask(client, CHANGES)["changes"]
    assert data["totalCount"] == 1 and data["nodes"] == [back]
    assert logged.read_text() == newest


MPIGDB = SEEDS / "mirrors" / "mpigdb"
LOCK = json.loads((SEEDS / "spack.lock").read_text())
COVERAGE = """query($lock: JSON!, $at: DateTime) { coverage(lockfile: $lock, at: $at) {
  hitCount entries { hash hit } } }"""


def _hits(client: TestClient, at: str | None) -> set[str]:
    answer = client.post(
        "/graphql", json={"query": COVERAGE, "variables": {"lock": LOCK, "at": at}}
    ).json()
    assert "errors" not in answer, answer
    return {e["hash"] for e in answer["data"]["coverage"]["entries"] if e["hit"]}


def test_workers_sharing_a_cache_directory_record_a_change_once_and_each_tells_it(
    http_server, tmp_path
):
    """As the workers of ``--workers`` do: two apps checking the same mirror, keeping one
    change log. The change is one event in the file, with one id, that each app answers."""
    url = http_server.publish(TEST)
    name = url.rsplit("/", 1)[1]
    _push(http_server, name, OLD)
    settings = Settings(
        mirror=(f"develop:test={url}",), refresh=0.2, cache_dir=str(tmp_path / "cache")
    )
    query = "{ changes { totalCount nodes { id mirror addedCount removedCount replacedCount } } }"
    with (
        TestClient(create_app(settings=settings)) as one,
        TestClient(create_app(settings=settings)) as other,
    ):
        _push(http_server, name, NEW)
        for client in (one, other):
            _wait_for_events(client, 1)
        answers = [_ask(client, query)["changes"] for client in (one, other)]
    event = {"mirror": "develop/test", "addedCount": 1, "removedCount": 1, "replacedCount": 1}
    assert (
        answers == [{"totalCount": 1, "nodes": [{"id": answers[0]["nodes"][0]["id"], **event}]}] * 2
    )
    lines = (tmp_path / "cache" / "changes" / "changes.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [1]


def test_coverage_at_a_moment_before_a_change_counts_the_spec_it_removed(http_server, tmp_path):
    url = http_server.publish(MPIGDB)
    name = url.rsplit("/", 1)[1]
    data = json.loads((MPIGDB / "build_cache" / "index.json").read_text())
    installs = data["database"]["installs"]
    settings = Settings(
        mirror=(f"develop:m={url}",), refresh=0.2, cache_dir=str(tmp_path / "cache")
    )
    with TestClient(create_app(settings=settings)) as client:
        before = _hits(client, None)
        # a hit of seeds/spack.lock that the mirror holds: the pushed index holds it no more
        gone = min(before & {h for h, r in installs.items() if r["in_buildcache"]})
        installs[gone]["in_buildcache"] = False
        _push(http_server, name, json.dumps(data).encode())
        changed = _wait_for_events(client, 1)["nodes"][0]
        assert [s["hash"] for s in changed["removed"]] == [gone]
        at = _ask(client, "{ changes { nodes { at } } }")["changes"]["nodes"][0]["at"]
        moment = datetime.fromisoformat(at)
        then = _hits(client, (moment - timedelta(milliseconds=1)).isoformat())
        after = _hits(client, (moment + timedelta(milliseconds=1)).isoformat())
        now = _hits(client, None)
    assert then == before
    assert now == after == before - {gone}


def test_a_stream_reader_gets_the_event_and_a_client_holds_few_streams(http_server, tmp_path):
    """Server-Sent Events from a real server (``cachegraph serve``), read by a real client."""
    from cachegraph.settings import Settings
    from tests.browser import serving
    from tests.remote import client as http_client

    url = http_server.publish(TEST)
    name = url.rsplit("/", 1)[1]
    _push(http_server, name, OLD)
    arguments = ("--mirror", f"develop:test={url}", "--refresh", "0.2",
                 "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    with (
        serving(*arguments) as origin,
        http_client() as http,
        http.stream("GET", f"{origin}/changes/stream") as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        others = [http.stream("GET", f"{origin}/changes/stream")
                  for _ in range(Settings().followers_per_client - 1)]  # fmt: skip
        opened = [o.__enter__() for o in others]
        assert [o.status_code for o in opened] == [200] * len(opened)
        refused = http.get(f"{origin}/changes/stream")
        assert refused.status_code == 429 and "per client" in refused.text
        for o in others:
            o.__exit__(None, None, None)
        lines = stream.iter_lines()
        assert next(lines).startswith(":")
        _push(http_server, name, NEW)
        got = {}
        for line in lines:
            if line.startswith("event: "):
                got["event"] = line.removeprefix("event: ")
            elif line.startswith("data: "):
                got["data"] = json.loads(line.removeprefix("data: "))
                break
    assert got["event"] == "change"
    event = got["data"]
    assert (event["mirror"], event["id"], event["at_start"]) == ("develop/test", 1, False)
    assert [s["hash"] for s in event["added"]] == [ADDED]
    assert [s["hash"] for s in event["removed"]] == [REMOVED]
    assert [(r["old"]["hash"], r["new"]["hash"]) for r in event["replaced"]] == [
        (OLD_LIBDWARF, NEW_LIBDWARF)
    ]


def test_a_reader_that_never_reads_is_cut_off_at_its_budget():
    """Events recorded (in another thread, as a refresh does) for a follower nobody reads
    wait within the budget, then it is cut: its reader is told so, and what was waiting is
    let go. The event stream and the subscription read through one Follower."""
    import asyncio

    from cachegraph.graph.changes import (
        FOLLOWER_BYTES,
        Change,
        ChangedSpec,
        ChangeLog,
        FellBehind,
        Follower,
    )  # fmt: skip

    specs = [ChangedSpec(f"{i:032d}", f"pkg@{i}") for i in range(2000)]
    event = Change(1.0, "develop/m", "develop", "m", "a", "b", specs)
    size = len(event.to_line())
    log = ChangeLog(None, budget=64 * FOLLOWER_BYTES)

    async def run() -> tuple[list[int], str]:
        held = []
        with Follower(log) as follower:
            for _ in range(FOLLOWER_BYTES // size + 2):
                await asyncio.to_thread(log.append, Change(**{**event.__dict__}))
                await asyncio.sleep(0)  # the loop takes the event in
                held.append(follower.bytes)
            try:
                async for _ in follower.events():
                    pass
            except FellBehind as cut:
                return held, str(cut)
        return held, "not cut"

    held, told = asyncio.run(run())
    assert max(held) <= FOLLOWER_BYTES and held[-1] == 0
    assert told == (
        f"cut off: more than {FOLLOWER_BYTES:,} bytes of changes waited for this reader "
        "(read faster, or ask `changes(since:)` for what was missed)"
    )
