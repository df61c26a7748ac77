"""GraphiQL works offline: the page names only this server's assets, each is served, and
real headless Chromium runs a query in it without touching the network."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from tests.browser import ARTIFACTS, chromium, serving
from tests.conftest import SEEDS


class Assets(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if tag == "script" and found.get("src"):
            self.urls.append(found["src"])
        if tag == "link" and found.get("rel") == "stylesheet":
            self.urls.append(found["href"])


@pytest.fixture(scope="module")
def client(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings())) as client:
        yield client


def test_the_ide_names_only_this_servers_assets_and_each_is_served(client):
    page = client.get("/graphql", headers={"accept": "text/html"})
    assert page.status_code == 200
    parser = Assets()
    parser.feed(page.text)
    assert parser.urls == [
        "/static/graphiql/graphiql.min.css",
        "/static/graphiql/react.production.min.js",
        "/static/graphiql/react-dom.production.min.js",
        "/static/graphiql/graphiql.min.js",
    ]
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text)
    for url in parser.urls:
        asset = client.get(url)
        assert (url, asset.status_code) == (url, 200)
        assert len(asset.content) > 1000


def test_the_ide_can_be_turned_off(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings(graphiql=False))) as client:
        response = client.get("/graphql", headers={"accept": "text/html"})
    assert response.status_code == 400


@pytest.mark.slow
def test_chromium_runs_a_query_in_the_ide():
    with serving("--data", str(SEEDS)) as origin, chromium() as browser:
        page = browser.new_page()
        requested: list[str] = []
        page.on("request", lambda r: requested.append(r.url))
        page.goto(f"{origin}/graphql")
        page.click(".graphiql-execute-button", timeout=30_000)
        result = page.locator(".result-window")
        result.get_by_text('"specCount": 454').wait_for(timeout=30_000)
        text = result.inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "graphiql.png"))
    assert '"packageCount": 4' in text and '"tagCount": 1' in text
    outside = [url for url in requested if not url.startswith((origin, "data:"))]
    assert outside == []


def test_behind_a_path_prefix_the_ide_names_its_assets_under_it(seeds_graph):
    # As Uvicorn's --root-path sets it for a proxy serving the app under /cache.
    app = create_app(seeds_graph, settings=Settings())
    with TestClient(app, root_path="/cache") as client:
        page = client.get("/graphql", headers={"accept": "text/html"})
        parser = Assets()
        parser.feed(page.text)
        assert parser.urls == [
            "/cache/static/graphiql/graphiql.min.css",
            "/cache/static/graphiql/react.production.min.js",
            "/cache/static/graphiql/react-dom.production.min.js",
            "/cache/static/graphiql/graphiql.min.js",
        ]
        home = client.get("/", follow_redirects=False)
        assert home.headers["location"] == "/cache/graphql"
