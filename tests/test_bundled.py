"""The bundled data (``seeds/``) shows every part of the explorer: what `cachegraph serve`
loads with no flags, worked out here from the files themselves."""

from __future__ import annotations

import json

from cachegraph.graph import MirrorSource

from cachegraph.sources import bundled, default_lockfile, default_mirrors
from cachegraph.state import DataSources, load_sources
from tests.conftest import execute

SEEDS = bundled()


def _index(name: str) -> dict:
    path = SEEDS / "mirrors" / name / "build_cache" / "index.json"
    return json.loads(path.read_text())["database"]["installs"]


def test_no_flags_serve_the_pages_and_the_three_mirrors():
    sources = DataSources()
    assert sources.resolved_paths() == [str(SEEDS / "pages")]
    assert sorted(m.label for m in sources.resolved_mirrors()) == [
        "mpigdb", "spack-test", "spack-test-signed"
    ]  # fmt: skip
    # Any data given replaces the bundle whole.
    assert DataSources(paths=["x"]).resolved_mirrors() == []
    assert DataSources(mirrors=default_mirrors()[:1]).resolved_paths() == []


def test_the_bundle_has_a_dag_a_signed_mirror_a_tag_diff_and_a_partial_environment():
    graph, report, _ = load_sources(DataSources())
    assert report.problems == []
    mpigdb = {h for h, e in _index("mpigdb").items() if e["in_buildcache"]}
    unsigned = {h for h, e in _index("spack-test/unsigned").items() if e["in_buildcache"]}
    answer = execute(
        graph,
        """{ mirrors { name specCount }
        spec(hash: "3uebtou") { package { name } dependencyCount(transitive: true) }
        tagDiff(from: "test", to: "develop") { added { totalCount } removed { totalCount } } }""",
    )
    counts = {m["name"]: m["specCount"] for m in answer["data"]["mirrors"]}
    assert counts == {"mpigdb": len(mpigdb), "spack-test": len(unsigned),
                      "spack-test-signed": len(unsigned)}  # fmt: skip
    lock = json.loads(default_lockfile().read_text())
    mpich = next(r["hash"] for r in lock["roots"] if r["spec"] == "mpi")
    below, todo = set(), [mpich]
    while todo:
        for dep in lock["concrete_specs"][todo.pop()].get("dependencies", []):
            if dep["hash"] not in below:
                below.add(dep["hash"])
                todo.append(dep["hash"])
    assert answer["data"]["spec"] == {
        "package": {"name": "mpich"}, "dependencyCount": len(below)
    }  # fmt: skip
    assert answer["data"]["tagDiff"] == {
        "added": {"totalCount": 454 + len(mpigdb)}, "removed": {"totalCount": len(unsigned)}
    }  # fmt: skip
    # The environment: partly held (the mpich DAG's pushed specs), the rest misses.
    covered = execute(
        graph, "query($l: JSON) { coverage(lockfile: $l) { total hitCount } }", {"l": lock}
    )["data"]["coverage"]
    assert covered == {"total": len(lock["concrete_specs"]), "hitCount": len(mpigdb)}
    assert 0 < len(mpigdb) < len(lock["concrete_specs"])


def test_mirrors_say_whether_signed_their_root_url_and_their_problems(tmp_path):
    broken = tmp_path / "broken" / "build_cache"
    broken.mkdir(parents=True)
    (broken / "index.json").write_text('{"database": {"version": "8", "installs": {')
    mirrors = [*default_mirrors(), MirrorSource("test", "broken", broken.parent)]
    graph, report, _ = load_sources(DataSources(paths=[], mirrors=mirrors))
    query = "{ mirrors { name signed url errors warnings specCount } }"
    answer = execute(graph, query, admin=True)  # the admin sees the server's folders
    root = bundled() / "mirrors"
    assert answer["data"]["mirrors"] == [
        {"name": "mpigdb", "signed": False, "url": (root / "mpigdb").as_uri(),
         "errors": 0, "warnings": 0, "specCount": 27},
        {"name": "spack-test", "signed": False, "url": (root / "spack-test/unsigned").as_uri(),
         "errors": 0, "warnings": 0, "specCount": 6},
        {"name": "spack-test-signed", "signed": True,
         "url": (root / "spack-test/signed").as_uri(), "errors": 0, "warnings": 0,
         "specCount": 6},
        {"name": "test/broken", "signed": False, "url": broken.parent.as_uri(),
         "errors": len(report.errors), "warnings": 0, "specCount": 0},
    ]  # fmt: skip
    assert len(report.errors) >= 1
    # anyone else, a folder of the server as the mirror's name: not a URL of theirs to add
    assert [m["url"] for m in execute(graph, query)["data"]["mirrors"]] == [
        "mpigdb", "spack-test", "spack-test-signed", "test/broken"
    ]  # fmt: skip


def test_the_load_status_has_the_report_its_problems_paged_and_the_sources(tmp_path):
    broken = tmp_path / "broken" / "build_cache"
    broken.mkdir(parents=True)
    (broken / "index.json").write_text("{")
    (tmp_path / "bad.md").write_text("---\ntitle: x\n---\n")
    mirrors = [MirrorSource("test", "broken", broken.parent)]
    graph, report, _ = load_sources(DataSources([str(tmp_path / "bad.md")], mirrors))
    query = """query($o: Int, $u: String) { loadStatus { pages mirrors errorCount warningCount
        paths bundled snapshot fromSnapshot
        all: problems(first: 1, offset: $o) { totalCount nodes { path severity } }
        mine: problems(under: $u) { totalCount } } }"""
    problems = [(p.path, p.severity) for p in report.problems]
    pages = []
    for offset in range(len(problems)):
        answer = execute(graph, query, {"o": offset, "u": str(broken.parent)}, admin=True)
        answer = answer["data"]
        pages += [(n["path"], n["severity"]) for n in answer["loadStatus"]["all"]["nodes"]]
    assert pages == problems and len(problems) >= 2
    status = answer["loadStatus"]
    assert status["all"]["totalCount"] == len(problems)
    assert status["mine"]["totalCount"] == sum(
        p.startswith(str(broken.parent)) for p, _ in problems
    )
    assert {k: v for k, v in status.items() if k not in ("all", "mine")} == {
        "pages": report.pages, "mirrors": 1, "errorCount": len(report.errors),
        "warningCount": len(report.problems) - len(report.errors),
        "paths": [str(tmp_path / "bad.md")], "bundled": False, "snapshot": None,
        "fromSnapshot": False,
    }  # fmt: skip
