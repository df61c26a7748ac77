"""HTTP validators: every answer to a query carries an ETag of the data version and the
operation; If-None-Match answers 304 without executing; GET answers may be kept by any
cache (Cache-Control, Vary); a reload of changed data changes every ETag."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from tests.app.test_reload import DTYPES, ONE_PAGE, STATS, TOKEN, TWO_PAGES
from tests.conftest import SEEDS

AUTH = {"authorization": f"Bearer {TOKEN}"}
SPEC = "query($h: String!) { spec(hash: $h) { package { name } } }"
ETAG = re.compile(r'"[0-9a-f]{16}-[0-9a-f]{24}"')


def app_on(data: Path, **settings):
    return create_app(settings=Settings(data=(str(data),), **settings))


def executed(client: TestClient) -> float:
    """Operations executed or answered from the server's own cache: all the work done."""
    text = client.get("/metrics").text
    done = re.findall(r"cachegraph_(?:executions|response_cache)_total\{\w+=\"\w+\"\} (\S+)", text)
    return sum(map(float, done))


def get(client: TestClient, operation: dict, **headers: str):
    params = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in operation.items()}
    return client.get("/graphql", params=params, headers=headers)


def test_a_get_answer_carries_validators_and_a_repeat_with_its_etag_is_304(data: Path):
    with TestClient(app_on(data)) as client:
        first = get(client, STATS)
        assert first.status_code == 200 and first.json() == ONE_PAGE
        tag = first.headers["etag"]
        assert ETAG.fullmatch(tag), tag
        assert first.headers["cache-control"] == "public, max-age=300"
        # The media type follows Accept (GraphQL over HTTP): each its own representation.
        assert first.headers["vary"] == "Accept, Authorization, Origin"
        other = get(client, STATS, accept="application/graphql-response+json")
        assert other.headers["content-type"] == "application/graphql-response+json; charset=utf-8"
        assert other.json() == ONE_PAGE and other.headers["etag"] == tag[:-1] + '-g"'
        work = executed(client)

        again = get(client, STATS, **{"if-none-match": tag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == tag
        assert again.headers["cache-control"] == "public, max-age=300"
        assert re.fullmatch(r"answer;dur=\d+\.\d{3}", again.headers["server-timing"])
        # A list of validators, weak or strong, as proxies send them.
        listed = get(client, STATS, **{"if-none-match": f'"other", W/{tag}'})
        assert listed.status_code == 304
        assert executed(client) == work  # nothing executed, nothing even looked up

        stale = get(client, STATS, **{"if-none-match": '"0000000000000000-0"'})
        assert stale.status_code == 200 and stale.json() == ONE_PAGE
        assert stale.headers["etag"] == tag


def test_a_post_answer_carries_an_etag_and_a_repeat_with_it_is_304(data: Path):
    with TestClient(app_on(data)) as client:
        first = client.post("/graphql", json=STATS)
        tag = first.headers["etag"]
        assert ETAG.fullmatch(tag) and "cache-control" not in first.headers
        # The same operation by GET and by POST: the same answer, the same validator.
        assert get(client, STATS).headers["etag"] == tag
        work = executed(client)
        again = client.post("/graphql", json=STATS, headers={"if-none-match": tag})
        assert again.status_code == 304 and again.content == b""
        assert executed(client) == work


def test_the_etag_is_of_the_document_the_operation_name_and_the_variables(data: Path):
    hashes = ["fc4ffi7wbpqvsjxhczlsvg5uweb7uyka", "ckx2bj6aww6aeqbzyxfsrfyrtlo7acbv"]
    two = "query A { stats { specCount } } query B { stats { packageCount } }"
    with TestClient(app_on(data)) as client:
        tags = [
            client.post("/graphql", json={"query": SPEC, "variables": {"h": h}}).headers["etag"]
            for h in hashes
        ]
        named = [
            client.post("/graphql", json={"query": two, "operationName": n}).headers["etag"]
            for n in ("A", "B")
        ]
        spaced = client.post("/graphql", json={"query": STATS["query"] + " "})
        plain = client.post("/graphql", json=STATS)
        ordered = [
            client.post("/graphql", json={"query": SPEC, "variables": v}).headers["etag"]
            for v in ({"h": hashes[0], "x": 1}, {"x": 1, "h": hashes[0]})
        ]
    assert len(set(tags)) == 2 and len(set(named)) == 2
    assert spaced.headers["etag"] != plain.headers["etag"]
    assert ordered[0] == ordered[1]  # variables are compared as JSON objects


def test_an_answer_with_errors_carries_no_validator_and_is_not_kept(data: Path):
    with TestClient(app_on(data)) as client:
        failed = get(client, {"query": SPEC, "variables": {"h": "abc"}})
        assert failed.status_code == 200 and failed.json()["errors"]
        assert "etag" not in failed.headers
        assert failed.headers["cache-control"] == "no-store"
        posted = client.post("/graphql", json={"query": "{ nope }"})
        assert posted.json()["errors"] and "etag" not in posted.headers


def test_a_reload_of_changed_data_changes_the_etag_of_every_answer(data: Path):
    with TestClient(app_on(data, admin_token=TOKEN)) as client:
        before = get(client, STATS).headers["etag"]
        # Reloading the same files: the same data version, caches keep their copies.
        assert client.post("/admin/reload", headers=AUTH).status_code == 200
        assert get(client, STATS, **{"if-none-match": before}).status_code == 304
        shutil.copy(SEEDS / DTYPES, data)
        assert client.post("/admin/reload", headers=AUTH).status_code == 200
        revalidated = get(client, STATS, **{"if-none-match": before})
        assert revalidated.status_code == 200 and revalidated.json() == TWO_PAGES
        after = revalidated.headers["etag"]
        assert ETAG.fullmatch(after) and after.split("-")[0] != before.split("-")[0]


def test_two_servers_of_the_same_data_give_the_same_etag(data: Path):
    """Replicas behind one proxy: a validator from one is good at the other."""
    tags = []
    for _ in range(2):
        with TestClient(app_on(data)) as client:
            tags.append(get(client, STATS).headers["etag"])
    assert tags[0] == tags[1]


def test_the_max_age_is_a_setting(data: Path):
    with TestClient(app_on(data, cache_max_age=0)) as client:
        assert get(client, STATS).headers["cache-control"] == "public, max-age=0"
