"""The cachegraph command: query, find, export-schema, validate."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from cachegraph.schema import schema

from cachegraph.cli import main
from tests.conftest import SEEDS
from tests.mirrors import MIRRORS


def test_query_prints_the_json_result(capsys):
    assert main(["query", "{ stats { packageCount specCount } }", "--data", str(SEEDS)]) == 0
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
        "4 pages, 0 spec files, 0 indices: 454 records, 454 specs, 1 tag; 0 errors, "
        "0 warnings\ntags: develop\n"
    )


def test_validate_the_shared_data_exits_0_with_its_totals(capsys, shared_data, data_graph):
    assert main(["validate", str(shared_data)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == (
        f"45 pages, 3 spec files, 0 indices: 326 records, {len(data_graph.all_specs())} specs, "
        "21 tags; 0 errors, 42 warnings; 42 specs unresolved"
    )


def test_validate_and_query_mirrors_from_flags_and_a_mirrors_file(capsys, shared_mirrors, tmp_path):
    unsigned, signed = shared_mirrors / "v2_layout/unsigned", shared_mirrors / "v2_layout/signed"
    assert (
        main(["validate", "--mirror", f"site:e4s={unsigned}", "--index", f"site:ml={signed}"]) == 0
    )
    assert capsys.readouterr().out.splitlines() == [
        "0 pages, 0 spec files, 2 indices, 2 mirrors: 14 records, 7 specs, 1 tag; 0 errors, "
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
    assert main(["query", f"@{document}", "--data", str(SEEDS)]) == 0
    from_file = json.loads(capsys.readouterr().out)
    monkeypatch.setattr("sys.stdin", io.StringIO("{ stats { packageCount } }"))
    assert main(["query", "-", "--data", str(SEEDS)]) == 0
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


def _mirror_flags(shared_mirrors) -> list[str]:
    return [
        f"--mirror=test:{stack}={shared_mirrors / folder}"
        for stack, folder in MIRRORS.items()
        if stack != "future"  # a layout Spack does not know: reported, and the exit is 1
    ]


# Worked out from the raw files, as Spack 1.1's ``spack buildcache list -l -v`` prints them
# (cmd/__init__.py ``display_specs``/``iter_groups``, ``Spec.compilers``, ``tty.hline``, and
# ``VariantMap.__str__``; the count line only on a terminal): libdwarf sk2gqqz is an index
# record annotated original_specfile_version 4, so it has no compiler edges ("no
# compilers"); u5uz3dc (format 5) has gcc 10.2.1 providing c and cxx; on m1, libelf jr3yipy
# has gcc providing c, and gcc-runtime izgzpze a build edge to gcc providing nothing.
FIND_GOLDEN = [
    (
        ["^libelf", "-l"],
        """\
-- test-debian6-core2 / no compilers ----------------------------
sk2gqqz libdwarf@20130729

-- test-debian6-m1 / %c,cxx=gcc@10.2.1 --------------------------
u5uz3dc libdwarf@20130729
""",
    ),
    (
        ["target=m1 %gcc", "-l", "-v"],
        """\
-- test-debian6-m1 / no compilers -------------------------------
izgzpze gcc-runtime@10.2.1 build_system=generic

-- test-debian6-m1 / %c,cxx=gcc@10.2.1 --------------------------
u5uz3dc libdwarf@20130729 build_system=generic

-- test-debian6-m1 / %c=gcc@10.2.1 ------------------------------
jr3yipy libelf@0.8.13 build_system=generic
""",
    ),
    (
        ["libelf@0.8:"],
        """\
-- test-debian6-core2 / no compilers ----------------------------
libelf@0.8.13
libelf@0.8.13

-- test-debian6-m1 / %c=gcc@10.2.1 ------------------------------
libelf@0.8.13
""",
    ),
    # gcc's one record is in_buildcache: false (a compiler the specs reference): Spack's
    # buildcache list does not list it (BinaryCacheIndex reads what the index holds).
    (["gcc", "-l", "-v"], ""),
    (["hdf5@1.14:"], ""),
]


@pytest.mark.parametrize(("args", "expected"), FIND_GOLDEN, ids=[a[0] for a, _ in FIND_GOLDEN])
def test_find_prints_what_spack_find_would(capsys, shared_mirrors, args, expected):
    assert main(["find", *args, *_mirror_flags(shared_mirrors)]) == 0
    assert capsys.readouterr().out == expected


def test_find_json_gives_the_records(capsys, shared_mirrors):
    assert main(["find", "archive-files", "--json", *_mirror_flags(shared_mirrors)]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {
            "hash": "l3vdiqvbobmspwyb4q2b62fz6nitd4hk",
            "name": "archive-files",
            "version": "2.0",
            "compiler": "gcc@4.5.0",
            "platform": "test",
            "os": "debian6",
            "target": "core2",
            "variants": [],
            "size": None,
            "mirrors": ["test/legacy"],
            "stacks": {"test": ["legacy"]},
        }
    ]


def test_find_with_a_bad_constraint_exits_1_with_the_parsers_message(capsys):
    assert main(["find", "py-keras@3: +"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.endswith(
        "cachegraph find: bad constraint at column 13: a variant name must follow '+'\n"
        "  py-keras@3: +\n"
        "              ^\n"
    )


def test_find_on_pages_warns_that_dependencies_are_unknown(capsys):
    assert main(["find", "py-keras ^python", "--data", str(SEEDS)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""  # Spack prints the count only on a terminal
    assert "cachegraph find: warning: '^' asks about dependencies" in captured.err


def test_diff_prints_two_specs_side_by_side(capsys, shared_mirrors):
    # Checked by hand against the raw JSON: see tests/graph/test_likeness.py.
    assert main(["diff", "sk2gqqz", "u5uz3dc", *_mirror_flags(shared_mirrors)]) == 0
    assert capsys.readouterr().out == (
        "field                        libdwarf@20130729/sk2gqqz  libdwarf@20130729/u5uz3dc\n"
        "target                       core2                      m1\n"
        "dependency:compiler-wrapper  -                          compiler-wrapper@1.0/qeehcxy\n"
        "dependency:gcc               -                          gcc@10.2.1/vd7v4ss\n"
        "dependency:gcc-runtime       -                          gcc-runtime@10.2.1/izgzpze\n"
        "dependency:libelf            libelf@0.8.13/rqh2vuf      libelf@0.8.13/jr3yipy\n"
    )
    assert main(["diff", "sk2gqqz", "sk2gqqz", "--json", *_mirror_flags(shared_mirrors)]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "a": "sk2gqqz4n5njmvktycnd25wq25jxiqkr",
        "b": "sk2gqqz4n5njmvktycnd25wq25jxiqkr",
        "differences": [],
    }
    assert main(["diff", "sk2gqqz", "zzzzzzz", *_mirror_flags(shared_mirrors)]) == 1
    assert capsys.readouterr().err.endswith(
        "cachegraph diff: no loaded spec has the hash 'zzzzzzz'\n"
    )


def test_coverage_of_a_lockfile_from_the_command_line(capsys, tmp_path, shared_mirrors):
    from tests.graph.questions.test_coverage import _write_index

    lockfile = shared_mirrors.parent / "lockfiles" / "robertu94+mpigdb.spack.lock"
    doc = json.loads(lockfile.read_text())
    root = doc["roots"][0]["hash"]
    nodes = doc["concrete_specs"]
    # a mirror holding every node but the first root, which it knows as a dependency only;
    # the 14 nodes the lockfile marks external count apart (never installed from a cache)
    mirror = _write_index(tmp_path / "m", {
        h: {"spec": n, "in_buildcache": h != root} for h, n in nodes.items()})  # fmt: skip
    assert main(["coverage", str(lockfile), f"--mirror=develop:e4s={mirror}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    externals = [h for h, n in nodes.items() if n.get("external")]
    roots = [r["hash"] for r in doc["roots"]]
    in_order = [h for h in [*roots, *(h for h in nodes if h not in roots)] if h in externals]
    counted = len(nodes) - len(externals)
    # the spec column as wide as the longest name@version of the hits and misses, 32 at least
    width = max(32, *(len(f"{n['name']}@{n['version']}") for h, n in nodes.items()
                      if h not in externals))  # fmt: skip
    assert width > 32  # a name longer than the least width: the columns stay in line
    assert (
        lines[:7]
        == [
            # an index gives no sizes: unknown, not 0 B (issue 30)
            f"{100 * (counted - 1) / counted:.1f}% cached: {counted - 1} of {counted} specs; "
            "download size unknown (no source gives the sizes of these specs); "
            f"{len(externals)} externals apart (never fetched from a cache)",
            "roots cached with their whole DAG: "
            + ", ".join(
                f"{nodes[r['hash']]['name']}@{nodes[r['hash']]['version']}/{r['hash'][:7]}"
                for r in doc["roots"][1:]
                if not nodes[r["hash"]].get("external")  # cmake: an external root needs no cache
            ),
            "",
            "missing (1), the most depended on first:",
            f"hash     {'spec':<{width}} needed by  why",
            f"{root[:7]}  {'mpigdb@git.main':<{width}} {0:>9}  known only as a dependency of "
            "cached specs, held by no mirror",
            "",
        ]
    )
    assert lines[7:9] == [
        f"cached ({counted - 1}):",
        f"hash     {'spec':<{width}} where",
    ]
    assert all(line.endswith(" develop/e4s (size unknown)") for line in lines[9 : 9 + counted - 1])
    assert {line.index(" develop/e4s") for line in lines[9 : 9 + counted - 1]} == {9 + width}
    assert lines[9 + counted - 1 :] == [
        "",
        f"externals ({len(externals)}), never fetched from a cache:",
        ", ".join(f"{nodes[h]['name']}@{nodes[h]['version']}/{h[:7]}" for h in in_order),
    ]

    assert main(["coverage", str(lockfile), f"--mirror=develop:e4s={mirror}", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["total"], found["hits"], found["misses"], found["externals"]) == (58, 43, 1, 14)
    assert (found["hitBytes"], found["hitsOfUnknownSize"]) == (0, 43)
    assert found["missesByDependents"] == [{"hash": root, "dependents": 0}]
    assert found["entries"][0]["reason"].startswith("known only as a dependency")


def test_coverage_of_a_file_that_is_not_a_lockfile_exits_1(capsys, tmp_path):
    path = tmp_path / "spack.lock"
    path.write_text('{"roots": []}')
    assert main(["coverage", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"cachegraph coverage: {path}: not a spack.lock: it has no 'concrete_specs' mapping\n"
    )
