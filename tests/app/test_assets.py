"""The package's static files: served from memory with ETags, nothing outside the folder."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.graphiql import STATIC


@pytest.fixture(scope="module")
def client(seeds_graph):
    with TestClient(create_app(seeds_graph, settings=Settings())) as client:
        yield client


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("ui/app.js", "text/javascript"),
        ("ui/vendor/preact.mjs", "text/javascript"),
        ("ui/style.css", "text/css"),
        ("ui/queries/Home.graphql", "application/octet-stream"),
        ("graphiql/graphiql.min.css", "text/css"),
    ],
)
def test_a_file_is_its_bytes_with_its_type_and_a_304_when_the_browser_has_it(client, path, kind):
    response = client.get(f"/static/{path}")
    assert (response.status_code, response.content) == (200, (STATIC / path).read_bytes())
    assert response.headers["content-type"].split(";")[0] == kind
    again = client.get(f"/static/{path}", headers={"if-none-match": response.headers["etag"]})
    assert (again.status_code, again.content) == (304, b"")


@pytest.mark.parametrize(
    "path",
    [
        "ui/missing.js", "ui/../../app.py", "ui/%2e%2e/%2e%2e/app.py", "ui/.hidden", "ui",
        # names the file system refuses (issue 30: a 256-byte name answered 500)
        "ui/" + "a" * 256, "ui/" + "b" * 5000 + "/app.js", "ui/%00.js",
    ],
)  # fmt: skip
def test_nothing_else_is_served(client, path):
    assert client.get(f"/static/{path}").status_code == 404


def test_only_get_and_head(client):
    assert client.post("/static/ui/app.js").status_code == 405
