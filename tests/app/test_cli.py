"""The cachegraph command: query, export-schema, validate."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from cachegraph.cli import main
from schema import schema
from tests.conftest import SEEDS


def test_query_prints_the_json_result(capsys):
    assert main(["query", "{ stats { packageCount specCount } }"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "data": {"stats": {"packageCount": 4, "specCount": 454}}
    }


def test_query_with_variables_and_data(capsys, shared_data):
    # adiak: 84 specs on its develop page, and the root node of each of 3 spec files
    code = main(
        [
            "query",
            "query($n: String!) { package(name: $n) { specCount } }",
            "--variables",
            '{"n": "adiak"}',
            "--data",
            str(shared_data),
        ]
    )
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {"data": {"package": {"specCount": 84 + 3}}}


def test_query_errors_exit_1(capsys):
    assert main(["query", '{ spec(hash: "abc") { hash } }']) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["errors"][0]["message"] == "hash prefix 'abc' is 3 characters; give at least 7"


def test_query_rejects_bad_variables(capsys):
    assert main(["query", "{ tags { name } }", "--variables", "{nope"]) == 2
    assert "--variables is not JSON" in capsys.readouterr().err


def test_export_schema_prints_the_sdl(capsys):
    assert main(["export-schema"]) == 0
    assert capsys.readouterr().out == schema.as_str() + "\n"


def test_validate_reports_and_exits_0_on_good_data(capsys):
    assert main(["validate", str(SEEDS)]) == 0
    assert capsys.readouterr().out == (
        "4 pages, 0 spec files, 0 indices: 454 records, 454 specs, 1 tags; 0 errors, "
        "0 warnings\ntags: develop\n"
    )


def test_validate_the_shared_data_exits_0_with_its_totals(capsys, shared_data, data_graph):
    assert main(["validate", str(shared_data)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == (
        f"45 pages, 3 spec files, 0 indices: 326 records, {len(data_graph.ordered)} specs, "
        "21 tags; 0 errors, 42 warnings; 42 specs unresolved"
    )


def test_validate_and_query_mirrors_from_flags_and_a_mirrors_file(capsys, shared_mirrors, tmp_path):
    unsigned, signed = shared_mirrors / "v2_layout/unsigned", shared_mirrors / "v2_layout/signed"
    assert (
        main(["validate", "--mirror", f"site:e4s={unsigned}", "--index", f"site:ml={signed}"]) == 0
    )
    assert capsys.readouterr().out.splitlines() == [
        "0 pages, 0 spec files, 2 indices, 2 mirrors: 14 records, 7 specs, 1 tags; 0 errors, "
        "0 warnings",
        "tags: site",
    ]
    listing = tmp_path / "mirrors.yaml"
    listing.write_text(f"mirrors:\n  - {{name: signed, tag: site, stack: e4s, path: {signed}}}\n")
    query = "{ mirrors { name layout specCount stack { name } } }"
    assert main(["query", query, "--mirrors-file", str(listing)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "data": {
            "mirrors": [
                {"name": "signed", "layout": "v2", "specCount": 6, "stack": {"name": "e4s"}}
            ]
        }
    }


def test_a_bad_mirrors_file_is_one_line_and_exit_2(capsys, tmp_path):
    listing = tmp_path / "mirrors.json"
    listing.write_text("[1, 2]")
    try:
        main(["validate", "--mirrors-file", str(listing)])
    except SystemExit as exc:
        assert str(exc) == (
            f"cachegraph: error: --mirrors-file: {listing}: expected {{mirrors: [{{tag, stack, "
            "path}]} or {TAG: [{label, url}]}"
        )
    else:
        raise AssertionError("a bad mirrors file was accepted")


def test_query_with_data_that_cannot_be_read_reports_it_and_exits_1(capsys):
    assert main(["query", "{ stats { specCount } }", "--data", "/nonexistent"]) == 1
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "cachegraph query: /nonexistent: error: no such file or folder"
    ]
    assert json.loads(captured.out) == {"data": {"stats": {"specCount": 0}}}


def test_query_reads_the_document_from_a_file_or_standard_input(capsys, tmp_path, monkeypatch):
    document = tmp_path / "stats.graphql"
    document.write_text("{ stats { packageCount } }")
    assert main(["query", f"@{document}"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    monkeypatch.setattr("sys.stdin", io.StringIO("{ stats { packageCount } }"))
    assert main(["query", "-"]) == 0
    assert (
        json.loads(capsys.readouterr().out) == from_file == {"data": {"stats": {"packageCount": 4}}}
    )
    assert main(["query", f"@{tmp_path / 'missing.graphql'}"]) == 2
    missing = f"@{tmp_path / 'missing.graphql'}"
    assert capsys.readouterr().err == (
        f"cachegraph query: {missing}: cannot be read: No such file or directory\n"
    )


@pytest.mark.parametrize("command", [["settings"], ["validate", "--json", str(SEEDS)]])
def test_a_reader_that_goes_away_ends_the_command_quietly(command):
    # As `cachegraph settings | head -0`: the pipe is closed before the command writes.
    process = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    process.stdout.close()
    assert (process.wait(60), process.stderr.read()) == (0, b"")


def test_version(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == "cachegraph 0.1.0\n"


def test_a_bad_variable_on_the_command_line_is_the_clients_error(capsys):
    query = "query($h: String!) { spec(hash: $h) { hash } }"
    assert main(["query", query, "--variables", '{"h": 5}']) == 1
    assert json.loads(capsys.readouterr().out)["errors"] == [
        {
            "message": "Variable '$h' has invalid value: "
            "String cannot represent a non string value: 5",
            "locations": [{"line": 1, "column": 7}],
            "extensions": {"code": "BAD_USER_INPUT"},
        }
    ]
