"""Bad input gets a clear error and loses nothing: every broken file of tests/corpus/broken,
alone among the real seed pages and all together, gives exactly its report, and every good
record still loads."""

from __future__ import annotations

import json

import pytest
from cachegraph.graph import Problem, load

from tests.conftest import ROOT, SEEDS
from tests.pages import page_text, record

BROKEN = ROOT / "tests" / "corpus" / "broken"
SEED_HASHES = {s.hash for s in load([SEEDS])[0].all_specs()}


def h(c: str) -> str:
    return c * 32


# file -> (its problems as (line, message), the hashes of its good records)
EXPECTED = {
    "empty.md": ([(None, "empty file")], set()),
    "index.json": (
        [(None, "unknown index database version '99'; this loader reads versions 5, 6, 7, 8")],
        set(),
    ),
    "junk.bin": ([(None, "binary file (NUL bytes), not a text page")], set()),
    "latin1.md": ([(2, "not UTF-8 text: byte 0xe9 at offset 15")], set()),
    "no-hash.md": (
        [(6, "record 1: 'hash' must be a 32-character Spack hash, not missing")],
        {h("j")},
    ),
    "no-tag.md": ([(4, "'categories' must be [package, TAG], not ['package']")], set()),
    "no-title.md": ([(None, "'title' (the package name) is missing")], set()),
    "notes.json": ([(None, "JSON that is neither a spec file nor a build-cache index")], set()),
    "spec-3.json": (
        [
            (
                None,
                f"{h('n')} depends on {h('z')}, which no loaded node describes; dependency dropped",
            )
        ],
        {h("n")},
    ),
    "spec-7.json": ([(None, "not a spec file: no 'spec' mapping at the top level")], set()),
    "spec-9.json": (
        [(3, "not valid JSON: Expecting property name enclosed in double quotes")],
        set(),
    ),
    "truncated-yaml.md": (
        [(7, "front matter is not valid YAML: did not find expected ',' or ']'")],
        set(),
    ),
    "truncated.md": ([(6, "front matter is not closed by a '---' line")], set()),
    "wrong-types.md": (
        [
            (6, f"record 1 ({h('d')}): 'versions' must be a list of strings, not str '3.1'"),
            (6, f"record 2 ({h('e')}): 'stacks' must be a list of strings, not str 'root'"),
            (6, f"record 3 ({h('f')}): 'variants' must be a list of strings, not list [1, 2]"),
            (6, f"record 4 ({h('g')}): 'compiler' must be a non-empty string, not int 5"),
            (6, "record 5: a record must be a mapping, not str 'not a record'"),
        ],
        {h("h")},
    ),
}


def problems_of(name: str) -> list[Problem]:
    return [Problem(str(BROKEN / name), message, line) for line, message in EXPECTED[name][0]]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_broken_file_is_reported_and_the_rest_loads(name):
    graph, report = load([SEEDS, BROKEN / name])
    assert report.problems == problems_of(name)
    assert {s.hash for s in graph.all_specs()} == SEED_HASHES | EXPECTED[name][1]


def test_one_hash_under_two_packages_keeps_the_first():
    a, b = BROKEN / "two-packages-a.md", BROKEN / "two-packages-b.md"
    graph, report = load([SEEDS, a, b])
    assert report.problems == [
        Problem(
            str(b),
            f"record 1 ({h('k')}): hash {h('k')} is listed under package 'flex' but "
            f"already under 'bison' ({a}); record skipped",
            6,
        )
    ]
    assert graph.spec(h("k")).package == "bison"
    assert {s.hash for s in graph.all_specs()} == SEED_HASHES | {h("k"), h("l")}


def test_the_whole_corpus_among_real_pages():
    graph, report = load([BROKEN, SEEDS])
    every = [p for name in sorted(EXPECTED) for p in problems_of(name)]
    assert sorted(report.problems, key=str) == sorted(
        [
            *every,
            *load([SEEDS, BROKEN / "two-packages-a.md", BROKEN / "two-packages-b.md"])[1].problems,
        ],
        key=str,
    )
    good = set().union(*(hashes for _, hashes in EXPECTED.values()))
    assert {s.hash for s in graph.all_specs()} == SEED_HASHES | good | {h("k"), h("l")}
    assert not report.ok


def test_a_very_large_page_loads_whole(tmp_path):
    records = [record(f"{i:032d}", ("root", f"stack-{i % 30}")) for i in range(25_000)]
    big = tmp_path / "big.md"
    big.write_text(page_text("big", "develop", records))
    assert big.stat().st_size > 5_000_000
    graph, report = load([big, BROKEN / "empty.md"])
    assert report.problems == [Problem(str(BROKEN / "empty.md"), "empty file")]
    assert len(graph.all_specs()) == 25_000


def test_a_missing_path_is_reported(tmp_path):
    graph, report = load([SEEDS, tmp_path / "nope"])
    assert report.problems == [Problem(str(tmp_path / "nope"), "no such file or folder")]
    assert len(graph.all_specs()) == 454


def test_validate_names_every_broken_file_and_exits_1(capsys):
    from cachegraph.cli import main

    assert main(["validate", str(BROKEN), str(SEEDS)]) == 1
    out = capsys.readouterr().out.splitlines()
    named = {line.split(":")[0] for line in out[:-2]}
    assert named == {str(BROKEN / n) for n in [*EXPECTED, "two-packages-b.md"]}
    assert out[-2:] == [
        "8 pages, 1 spec file, 0 indices: 459 records, 459 specs, 1 tag; 19 errors, 0 warnings",
        "tags: develop",
    ]


def test_validate_json(capsys):
    from cachegraph.cli import main

    assert main(["validate", "--json", str(BROKEN / "no-hash.md")]) == 1
    report = json.loads(capsys.readouterr().out)
    assert (report["ok"], report["specs"], report["problems"]) == (
        False,
        1,
        [
            {
                "path": str(BROKEN / "no-hash.md"),
                "line": 6,
                "severity": "error",
                "message": "record 1: 'hash' must be a 32-character Spack hash, not missing",
            }
        ],
    )
