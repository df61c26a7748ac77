"""Pages read together (issue 40 item 1): the rows of many pages are checked and coded at
once, and a page's records' line is parsed before its nesting is checked. A broken page
among them is still refused with its path, line and what is wrong, every good record still
loads, and the store and problems are those of reading the pages one at a time."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cachegraph.graph import Problem, load
from cachegraph.graph.sources import reader

from cachegraph.synth import synthesize

TOO_DEEP = "front matter nests more than 64 levels deep; not read"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """About 600 specs in two tags of short pages: a few dozen records a page."""
    root = tmp_path_factory.mktemp("short")
    synthesize(root, 600, 2, 3, short=True)
    return root


def pages_of(root: Path) -> list[Path]:
    return sorted(root.rglob("*.md"))


def records_line(path: Path) -> tuple[int, list]:
    """The line number and records of a page's spec_details."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("spec_details: "):
            return number, json.loads(line.removeprefix("spec_details: "))
    raise AssertionError(f"{path} has no spec_details")


def with_records_line(path: Path, text: str) -> None:
    lines = path.read_text().splitlines()
    number, _ = records_line(path)
    lines[number - 1] = "spec_details: " + text
    path.write_text("\n".join(lines) + "\n")


def copied(tree: Path, tmp_path: Path) -> Path:
    out = tmp_path / "tree"
    for path in pages_of(tree):
        target = out / path.relative_to(tree)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    return out


def hashes_of(paths: list[Path]) -> set[str]:
    return {row["hash"] for path in paths for row in records_line(path)[1]}


def test_a_deep_key_no_reader_reads_refuses_its_page_among_good_ones(tree, tmp_path):
    root = copied(tree, tmp_path)
    pages = pages_of(root)
    bad = pages[5]
    number, rows = records_line(bad)
    rows[3]["x"] = json.loads("[" * 70 + "]" * 70)  # well formed otherwise: every field read
    with_records_line(bad, json.dumps(rows))
    fine = pages[6]
    _, rows = records_line(fine)
    rows[0]["x"] = json.loads("[" * 10 + "]" * 10)  # shallow enough: the page loads
    with_records_line(fine, json.dumps(rows))

    graph, report = load([root], processes=1)

    assert report.problems == [Problem(str(bad), TOO_DEEP, number)]
    assert report.pages == len(pages) - 1
    loaded = {spec.hash for spec in graph.all_specs()}
    assert loaded == hashes_of([p for p in pages if p != bad]) | (hashes_of([bad]) & loaded)
    assert hashes_of([fine]) <= loaded


def test_a_1000_deep_records_line_orjson_takes_is_refused_with_its_line(tree, tmp_path):
    root = copied(tree, tmp_path)
    pages = pages_of(root)
    deep, untitled = pages[2], pages[9]
    number, _ = records_line(deep)
    with_records_line(deep, "[" * 1_000 + "]" * 1_000)
    # too deep and without a title: the line came first, so its depth is what is said
    untitled_number, _ = records_line(untitled)
    with_records_line(untitled, "[" * 100 + "]" * 100)
    untitled.write_text(untitled.read_text().replace("title:", "name:", 1))

    graph, report = load([root], processes=1)

    assert report.problems == [
        Problem(str(deep), TOO_DEEP, number),
        Problem(str(untitled), TOO_DEEP, untitled_number),
    ]
    assert {spec.hash for spec in graph.all_specs()} >= hashes_of(
        [p for p in pages if p not in (deep, untitled)]
    )


def test_a_bad_row_and_a_wrong_summary_are_said_in_their_own_page(tree, tmp_path):
    root = copied(tree, tmp_path)
    pages = pages_of(root)
    bad_row, wrong_meta = pages[4], pages[11]
    number, rows = records_line(bad_row)
    dropped = rows[2]["hash"]
    rows[2]["versions"] = "1.0"  # not a list
    with_records_line(bad_row, json.dumps(rows))
    text = wrong_meta.read_text()
    meta_line = next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith("meta: "))
    meta = json.loads(text.splitlines()[meta_line - 1].removeprefix("meta: "))
    stated = meta["num_specs"]
    meta["num_specs"] = stated + 1
    lines = text.splitlines()
    lines[meta_line - 1] = "meta: " + json.dumps(meta)
    wrong_meta.write_text("\n".join(lines) + "\n")

    graph, report = load([root], processes=1)

    assert [(p.path, p.line, p.severity) for p in report.problems] == [
        (str(bad_row), number, "error"),
        (str(wrong_meta), meta_line, "warning"),
    ]
    assert report.problems[0].message.startswith(f"record 3 ({dropped}): ")
    assert report.problems[1].message == (
        f"meta num_specs says {stated + 1} but spec_details give {stated}; using spec_details"
    )
    assert dropped not in {spec.hash for spec in graph.all_specs()} - hashes_of(
        [p for p in pages if p != bad_row]
    )


def test_pages_read_together_make_the_store_of_pages_read_one_at_a_time(
    tree, tmp_path, monkeypatch
):
    root = copied(tree, tmp_path)
    pages = pages_of(root)
    repeated, taker = pages[1], pages[7]
    number, rows = records_line(repeated)
    rows.append(rows[0])  # a hash listed twice in a page: a warning
    with_records_line(repeated, json.dumps(rows))
    taken = records_line(pages[20])[1][0]["hash"]  # another package's: its later pages' skip it
    _, rows = records_line(taker)
    rows[1]["hash"] = taken
    with_records_line(taker, json.dumps(rows))

    together = load([root], processes=1)
    monkeypatch.setattr(reader, "PAGE_BATCH_ROWS", 1)  # each page added as it is read
    alone = load([root], processes=1)

    assert together[1].problems == alone[1].problems
    arrays, others = together[0].store.arrays, alone[0].store.arrays
    assert arrays.keys() == others.keys()
    for name, array in arrays.items():
        assert np.array_equal(array, others[name], equal_nan=array.dtype.kind == "f"), name
    # and what they say, worked out from the pages
    problems = together[1].problems
    assert problems[0] == Problem(
        str(repeated),
        f"1 records repeat a hash listed earlier in this page (the first: {rows_of(repeated)[0]}"
        "); each spec counts once",
        number,
        "warning",
    )
    assert [(p.path, p.message.split(" says")[0]) for p in problems[1:3]] == [
        (str(repeated), "meta num_specs"),
        (str(repeated), "meta num_specs_by_stack"),
    ]
    skipped = [
        (str(path), f"record {rows_of(path).index(taken) + 1} ({taken}): hash {taken} is listed "
         f"under package '{path.parent.name}' but already under '{taker.parent.name}' "
         f"({taker}); record skipped")
        for path in pages
        if path != taker and taken in rows_of(path)
    ]  # fmt: skip
    assert [(p.path, p.message) for p in problems[3:]] == skipped
    assert {p.severity for p in problems[3:]} == {"error"}


def rows_of(path: Path) -> list[str]:
    return [row["hash"] for row in records_line(path)[1]]
