"""Hostile data (issue "Close the seven ways..."): deep nesting, YAML alias bombs and FIFOs are
refused with their path before any parser or read takes them on, and everything else still
loads. (The refusal is the verdict, not the time it took: a FIFO read, or a bomb expanded,
would not come back at all.)"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, Problem, load
from cachegraph.graph.errors import BadRecord
from cachegraph.graph.sources.chunks import deepest
from cachegraph.graph.sources.frontmatter import MAX_NESTING, _surely_shallow, check_nesting
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import SEEDS
from tests.mirrors import migrate_to_v3


def page(body: str) -> str:
    return f'---\ntitle: "zlib"\ncategories: [package, develop]\n{body}\n---\n'


@pytest.mark.parametrize(
    ("depth", "message"),
    [
        # Within orjson's limit, but what recursed into it later (repr) raised RecursionError.
        (1_000, "front matter nests more than 64 levels deep; not read"),
        # Past it, YAML would take over: at 30,000 levels libyaml's composer crashed.
        (10_000, "front matter nests more than 64 levels deep; not read"),
        (50_000, "front matter nests more than 64 levels deep; not read"),
    ],
)
def test_deeply_nested_front_matter_is_refused_before_any_parser_recurses(tmp_path, depth, message):
    path = tmp_path / "deep.md"
    path.write_text(page("spec_details: " + "[" * depth + "]" * depth))
    graph, report = load([path, SEEDS])
    assert report.problems == [Problem(str(path), message, 4)]
    assert len(graph.all_specs()) == 454  # the seeds load all the same


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]")
    path = tmp_path / "bomb.md"
    path.write_text(page("meta:\n  " + "\n  ".join(lines) + "\nspec_details: []"))
    report = load([path])[1]
    assert report.problems == [
        Problem(str(path), "YAML aliases are not allowed (real pages have none)", 6)
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_among_the_data_is_named_and_never_read(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "seeds.txt").write_text((SEEDS / "000_32877e6a9739e9c6.txt").read_text())
    os.mkfifo(data / "fifo.md")
    graph, report = load([data])
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


# -- issue 30, item 11: JSON within orjson's 1,024 levels, then recursed into ----------------

DEEP_1000 = "[" * 1_000 + "]" * 1_000


def test_a_1000_deep_one_line_meta_is_refused_with_its_line(tmp_path):
    path = tmp_path / "meta.md"
    path.write_text(page(f'meta: {{"a": {DEEP_1000}}}\nspec_details: []'))
    graph, report = load([path, SEEDS])
    assert report.problems == [
        Problem(str(path), "front matter nests more than 64 levels deep; not read", 4)
    ]
    assert len(graph.all_specs()) == 454


def test_a_1000_deep_index_record_is_refused_and_the_spec_files_still_load(
    shared_mirrors, tmp_path
):
    cache = tmp_path / "build_cache"
    shutil.copytree(shared_mirrors / "v2_layout_db7/build_cache", cache)
    (cache / "index.json.hash").unlink()
    text = json.dumps(json.loads((cache / "index.json").read_text()))
    assert '"parameters": {' in text
    text = text.replace('"parameters": {', f'"parameters": {{"x": {DEEP_1000}, ', 1)
    (cache / "index.json").write_text(text)
    graph, report = load([], [MirrorSource("t", "s", tmp_path)], processes=1)
    assert report.problems == [
        Problem(str(cache / "index.json"),
                "JSON nests more deeply than any real file (over 64 levels); not read")
    ]  # fmt: skip
    assert len(graph.all_specs()) == 7  # every spec file of the mirror


def test_deep_json_and_a_shake_digest_in_a_v3_mirror_are_problems(shared_mirrors, tmp_path):
    v3 = migrate_to_v3(shared_mirrors / "v2_layout/unsigned/build_cache", tmp_path / "v3")
    manifests = sorted((v3 / "v3/manifests/spec").glob("*/*.json"))
    deep, shake = manifests[0], manifests[1]
    deep.write_text(deep.read_text()[:-1] + f', "x": {DEEP_1000}}}')
    doc = json.loads(shake.read_text())
    spec = next(r for r in doc["data"] if "spack.spec" in r["mediaType"])
    spec["checksumAlgorithm"] = "shake_128"
    shake.write_text(json.dumps(doc))
    graph, report = load([], [MirrorSource("t", "s", v3)], processes=1)
    assert [(Path(p.path).relative_to(v3).as_posix(), p.message) for p in report.problems] == [
        (deep.relative_to(v3).as_posix(),
         "JSON nests more deeply than any real file (over 64 levels); not read"),
        (shake.relative_to(v3).as_posix(),
         f"blob record {doc['data'].index(spec) + 1} is malformed: 'checksumAlgorithm' must "
         "name a fixed-length hashlib digest, as sha256"),
    ]  # fmt: skip
    assert len(graph.all_specs()) == 7  # the index lists every spec


def test_a_v3_blob_that_links_out_of_the_mirror_is_read_as_spack_reads_it(shared_mirrors, tmp_path):
    """Spack opens the blob's path (``URLBuildcacheEntry.fetch_blob``), links and all; what
    it reaches is checked as any blob (tests/graph/sources/test_links.py)."""
    v3 = migrate_to_v3(shared_mirrors / "v2_layout/unsigned/build_cache", tmp_path / "v3")

    def blob_of(manifest: Path, media: str) -> Path:
        data = json.loads(manifest.read_text())["data"]
        record = next(r for r in data if media in r["mediaType"])
        return v3 / "blobs" / "sha256" / record["checksum"][:2] / record["checksum"]

    index = blob_of(v3 / "v3/manifests/index/index.manifest.json", "spack.db")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.move(index, outside / "index")  # its checksum still holds: read
    index.symlink_to(outside / "index")
    spec = blob_of(sorted((v3 / "v3/manifests/spec").glob("*/*.json"))[0], "spack.spec")
    shutil.move(spec, v3 / "blobs" / "moved")
    spec.symlink_to(v3 / "blobs" / "moved")  # a link within the mirror is read
    graph, report = load([], [MirrorSource("t", "s", v3)], processes=1)
    assert report.problems == []
    assert len(graph.all_specs()) == 7


# The quick proof that a line is shallow (frontmatter._surely_shallow) never lets a deep one
# by: on texts of brackets, quotes and escapes nested near the limit, check_nesting refuses
# exactly those the exact scan (chunks.deepest) finds deeper than 64 levels.
_PIECES = st.sampled_from(["[", "]", "{", "}", '"', "\\", '\\"', "a", ",", "[]", "{}"])


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=55, max_value=75),
    st.lists(_PIECES, max_size=40),
    st.lists(_PIECES, max_size=40),
    st.sampled_from(["[]", "{}", "[{}]"]),
)
def test_a_line_is_refused_exactly_when_it_nests_too_deep(depth, before, after, pair):
    opens = "".join(pair[: len(pair) // 2] for _ in range(depth))
    closes = "".join(pair[len(pair) // 2 :] for _ in range(depth))
    text = "".join(before) + opens + "".join(after) + closes + "[]" * 40
    deep = deepest(text.encode()) > MAX_NESTING
    try:
        check_nesting(text)
        refused = False
    except BadRecord:
        refused = True
    assert refused == deep


def test_a_real_page_line_takes_the_quick_proof():
    line = json.dumps([{"hash": "a" * 32, "versions": ["1.0"], "variants": ["+mpi", "a=\"[\""],
                        "stacks": ["e4s"]}] * 50)  # fmt: skip
    assert _surely_shallow(line.encode())
