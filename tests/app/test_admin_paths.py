"""Over HTTP, only the admin's requests (the admin token as the bearer) see the server's
paths; everyone else's answers name the configured sources only, and the two are never
served for each other, by the response cache or an HTTP cache (issue 38 item 4)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from tests.app.test_reload import DTYPES, TOKEN
from tests.conftest import SEEDS

STATUS = "{ mirrors { location url } loadStatus { paths snapshot } }"


@pytest.fixture
def served(shared_mirrors: Path, tmp_path: Path):
    pages = tmp_path / "srv" / "pages"
    pages.mkdir(parents=True)
    shutil.copy(SEEDS / DTYPES, pages)
    mirror = tmp_path / "srv" / "caches" / "e4s"
    shutil.copytree(shared_mirrors / "v2_layout/unsigned", mirror)
    settings = Settings(
        data=(str(pages),),
        mirror=(f"develop:e4s={mirror}",),
        snapshot=str(tmp_path / "srv" / "cg.snapshot"),
        admin_token=TOKEN,
    )
    with TestClient(create_app(settings=settings)) as client:
        yield client, pages, mirror, tmp_path / "srv" / "cg.snapshot"


PUBLIC = {
    "data": {
        "mirrors": [{"location": "develop/e4s/build_cache", "url": "develop/e4s"}],
        "loadStatus": {"paths": ["pages"], "snapshot": "cg.snapshot"},
    }
}


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_only_the_admins_answer_shows_paths_and_neither_is_kept_for_the_other(served, method):
    client, pages, mirror, snapshot = served
    admin = {
        "data": {
            "mirrors": [{"location": str(mirror / "build_cache"), "url": mirror.as_uri()}],
            "loadStatus": {"paths": [str(pages)], "snapshot": str(snapshot)},
        }
    }

    def ask(authorization: str | None):
        headers = {"authorization": authorization} if authorization else {}
        if method == "GET":
            return client.get("/graphql", params={"query": STATUS}, headers=headers)
        return client.post("/graphql", json={"query": STATUS}, headers=headers)

    # each answer asked twice, in turn: a kept answer is never the other's
    for authorization, expected in [
        (None, PUBLIC), (f"Bearer {TOKEN}", admin), ("Bearer wrong", PUBLIC),
        (f"Bearer {TOKEN}", admin), (None, PUBLIC),
    ]:  # fmt: skip
        response = ask(authorization)
        assert response.json() == expected
        if expected is admin:
            assert "etag" not in response.headers
            assert response.headers["cache-control"] == "private, no-store"
        elif method == "GET":
            assert response.headers["vary"].startswith("Accept, Authorization")


def test_without_a_token_no_one_sees_paths(shared_mirrors: Path, tmp_path: Path):
    pages = tmp_path / "pages"
    pages.mkdir()
    shutil.copy(SEEDS / DTYPES, pages)
    app = create_app(settings=Settings(data=(str(pages),)))
    with TestClient(app) as client:
        for headers in ({}, {"authorization": "Bearer "}, {"authorization": "Bearer None"}):
            answer = client.post("/graphql", json={"query": "{ loadStatus { paths } }"},
                                 headers=headers)  # fmt: skip
            assert answer.json() == {"data": {"loadStatus": {"paths": ["pages"]}}}
