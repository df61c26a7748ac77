"""No path of the server's disk in an answer, unless the admin asks (issue 38 item 4): a
local mirror's location, URL and problems, the data paths and the snapshot are shown under
the names of the sources the operator configured."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, load
from cachegraph.graph.questions.status import LoadStatus, record_load

from tests.conftest import execute

QUERY = """query($under: String) {
  mirrors { name location url }
  loadStatus { paths snapshot problems(under: $under) { totalCount nodes { path message } } }
}"""
#: what Python's json says of "{broken", after the loader's own words
BROKEN = "not valid JSON: Expecting property name enclosed in double quotes"


@pytest.fixture
def loaded(shared_mirrors: Path, tmp_path: Path):
    """A copy of a real v2 mirror with one spec file broken, and a page folder, loaded and
    recorded as the server records a load (with a snapshot path)."""
    root = tmp_path / "srv" / "caches" / "e4s"
    shutil.copytree(shared_mirrors / "v2_layout/unsigned", root)
    (root / "build_cache" / "index.json").write_text("{broken")
    (root / "build_cache" / "index.json.hash").unlink()
    pages = tmp_path / "srv" / "pages"
    pages.mkdir()
    graph, report = load([pages], [MirrorSource("develop", "e4s", root)], processes=1)
    snapshot = tmp_path / "srv" / "state" / "cg.snapshot"
    record_load(graph, LoadStatus(report, (str(pages),), str(snapshot)))
    return graph, root, pages, snapshot


def test_a_client_sees_each_path_under_its_sources_name(loaded):
    graph, root, *_ = loaded
    problem = "develop/e4s/build_cache/index.json"
    for under in (None, "develop/e4s", "develop/e4s/build_cache"):
        answer = execute(graph, QUERY, {"under": under})
        assert answer == {
            "data": {
                "mirrors": [
                    {
                        "name": "develop/e4s",
                        "location": "develop/e4s/build_cache",
                        "url": "develop/e4s",
                    }
                ],
                "loadStatus": {
                    "paths": ["pages"],
                    "snapshot": "cg.snapshot",
                    "problems": {
                        "totalCount": 1,
                        "nodes": [{"path": problem, "message": BROKEN}],
                    },
                },
            }
        }
        assert str(root.parent) not in str(answer)
    assert execute(graph, QUERY, {"under": str(root)})["data"]["loadStatus"]["problems"] == {
        "totalCount": 0,
        "nodes": [],
    }


def test_the_admin_sees_the_paths_as_given(loaded):
    graph, root, pages, snapshot = loaded
    answer = execute(graph, QUERY, {"under": str(root)}, admin=True)["data"]
    assert answer["mirrors"] == [
        {"name": "develop/e4s", "location": str(root / "build_cache"), "url": root.as_uri()}
    ]
    assert (answer["loadStatus"]["paths"], answer["loadStatus"]["snapshot"]) == (
        [str(pages)],
        str(snapshot),
    )
    assert answer["loadStatus"]["problems"]["nodes"] == [
        {"path": str(root / "build_cache" / "index.json"), "message": BROKEN}
    ]
