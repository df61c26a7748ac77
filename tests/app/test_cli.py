"""The cachegraph command: query, export-schema, validate."""

from __future__ import annotations

import json

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
