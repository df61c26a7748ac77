"""Hostile data (issue "Close the seven ways..."): deep nesting, YAML alias bombs and FIFOs are
refused with their path in well under a second, and everything else still loads."""

from __future__ import annotations

import os
import time

import pytest
from cachegraph.graph import MirrorSource, Problem, load

from tests.conftest import SEEDS


def page(body: str) -> str:
    return f'---\ntitle: "zlib"\ncategories: [package, develop]\n{body}\n---\n'


@pytest.mark.parametrize(
    ("depth", "message"),
    [
        # Within orjson's limit: the page parses, and the record's message shows it briefly
        # (repr() of it used to raise RecursionError).
        (1_000, "record 1: a record must be a mapping, not list [[[[...]]]]"),
        # Past it, YAML would take over: at 30,000 levels libyaml's composer crashed.
        (10_000, "front matter nests more than 64 levels deep; not read"),
        (50_000, "front matter nests more than 64 levels deep; not read"),
    ],
)
def test_deeply_nested_front_matter_is_refused_before_any_parser_recurses(tmp_path, depth, message):
    path = tmp_path / "deep.md"
    path.write_text(page("spec_details: " + "[" * depth + "]" * depth))
    started = time.perf_counter()
    graph, report = load([path, SEEDS])
    assert time.perf_counter() - started < 5
    assert report.problems == [Problem(str(path), message, 4)]
    assert len(graph.all_specs()) == 454  # the seeds load all the same


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    path = tmp_path / "bomb.md"
    path.write_text(page("meta:\n  " + "\n  ".join(lines) + "\nspec_details: []"))
    started = time.perf_counter()
    report = load([path])[1]
    assert time.perf_counter() - started < 1
    assert report.problems == [
        Problem(str(path), "YAML aliases are not allowed (real pages have none)", 6)
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_among_the_data_is_named_and_never_read(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "seeds.txt").write_text((SEEDS / "000_32877e6a9739e9c6.txt").read_text())
    os.mkfifo(data / "fifo.md")
    started = time.perf_counter()
    graph, report = load([data])
    assert time.perf_counter() - started < 5
    assert report.problems == [
        Problem(str(data / "fifo.md"), "not a regular file (a FIFO, socket or device); not read")
    ]
    assert graph.all_specs()


def test_deep_json_in_a_spec_file_and_an_index_is_an_error_not_a_crash(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    (tmp_path / "spec-0.json").write_text('{"spec": ' + deep + "}")
    cache = tmp_path / "mirror" / "build_cache"
    cache.mkdir(parents=True)
    (cache / "index.json").write_text('{"database": ' + deep + "}")
    report = load([tmp_path / "spec-0.json"], [MirrorSource("t", "s", tmp_path / "mirror")])[1]
    message = "JSON nests more deeply than any real file (over 64 levels); not read"
    assert [(p.path, p.message) for p in report.problems[:2]] == [
        (str(tmp_path / "spec-0.json"), message),
        (str(cache / "index.json"), message),
    ]
