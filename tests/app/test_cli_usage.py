"""The cachegraph command's usage errors (issue 41, item 6): each names its culprit in one
line, a command's unknown option is said with that command's usage, every usage error exits
2; validate with nothing given validates the bundled data; synth refuses a folder holding
files; coverage keeps its columns in line with long names; counts agree with their nouns."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cachegraph.cli import main, parser
from tests.app.test_serve import free_port
from tests.conftest import ROOT, SEEDS

COMMANDS = (
    "serve, settings, query, find, coverage, diff, export-schema, trusted-documents, "
    "validate, synth"
)


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The real command in a process of its own, without any CACHEGRAPH_* of this one."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CACHEGRAPH_")}
    done = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", *args],
        capture_output=True, text=True, timeout=60, env=clean | (env or {}),
    )  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def _resolving(host: str) -> str:
    """What the resolver says of ``host``: the reason a bind to it fails."""
    with pytest.raises(socket.gaierror) as failed:
        socket.getaddrinfo(host, 8000, socket.AF_INET, socket.SOCK_STREAM)
    return failed.value.strerror


def test_a_host_that_is_no_address_is_blamed_on_the_host():
    port = free_port()
    assert _run("serve", "--host", "999.1.1.1", "--port", str(port)) == (
        1, "", f"cachegraph: error: cannot listen on 999.1.1.1:{port}: "
        f"{_resolving('999.1.1.1')} (--host, CACHEGRAPH_HOST)\n",
    )  # fmt: skip
    # an address of no interface of this machine (TEST-NET-1, RFC 5737), from the variable
    assert _run("serve", env={"CACHEGRAPH_HOST": "192.0.2.1", "CACHEGRAPH_PORT": str(port)}) == (
        1, "", f"cachegraph: error: cannot listen on 192.0.2.1:{port}: Cannot assign requested "
        "address (--host, CACHEGRAPH_HOST)\n",
    )  # fmt: skip


@pytest.mark.parametrize("value", ["abc", "0", "65536", "80.5"])
def test_a_port_that_is_no_port_number_is_one_line_from_the_flag_or_the_variable(value):
    assert _run("serve", "--port", value) == (
        2, "", f"cachegraph: error: --port: '{value}' is not a port number (1-65535)\n"
    )  # fmt: skip
    assert _run("serve", env={"CACHEGRAPH_PORT": value}) == (
        2, "", f"cachegraph: error: CACHEGRAPH_PORT: '{value}' is not a port number (1-65535)\n"
    )  # fmt: skip


def test_an_unknown_option_before_any_command_is_said_with_the_commands():
    listed = f"the commands: {COMMANDS} ('cachegraph COMMAND -h' for one's help)"
    assert _run("--bogus") == (
        2, "", "usage: cachegraph [-h] [--version] COMMAND ...\n"
        f"cachegraph: error: unknown option --bogus; {listed}\n",
    )  # fmt: skip
    assert _run() == (
        2, "", f"usage: cachegraph [-h] [--version] COMMAND ...\ncachegraph: error: no command "
        f"given; {listed}\n",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["serve", "--bogus"], "cachegraph serve: error: unknown option --bogus"),
        (["validate", "--bogus", "x"], "cachegraph validate: error: unknown option --bogus"),
        (["find", "zlib", "extra"], "cachegraph find: error: unexpected argument 'extra'"),
    ],
)
def test_a_commands_unknown_option_is_said_with_that_commands_usage(args, error, capsys):
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    usage = parser()._subparsers._group_actions[0].choices[args[0]].format_usage()
    assert capsys.readouterr().err == f"{usage}{error}\n"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["synth", "out", "--specs", "0"], "cachegraph synth: error: --specs and --tags must be "
         "at least 1"),
        (["serve", "--workers", "two"], "cachegraph: error: --workers: 'two' is not a whole "
         "number"),
        (["serve", "--timeout", "1s"], "cachegraph: error: --timeout: '1s' is not a number"),
        (["serve", "--max-depth", "0"], "cachegraph: error: --max-depth 0: must be at least 1"),
        (["serve", "--mirror", "http://host/m"], "cachegraph: error: --mirror: expected "
         "TAG:STACK=PATH, got 'http://host/m'"),
        (["serve", "--mirror", "a:b=ftp://u:pw@host/m"], "cachegraph: error: --mirror: "
         "ftp://host/m: the URL scheme 'ftp' is not one a mirror is read from (http, https, s3, "
         "gs, oci, oci+http or file)"),
    ],
)  # fmt: skip
def test_usage_errors_exit_2_in_one_line(args, error, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert capsys.readouterr() == ("", f"{error}\n")


def test_validate_with_nothing_given_validates_the_bundled_data_as_serve_loads_it(capsys):
    # the bundled data spelled out: the seed pages and seeds/mirrors.yaml
    given = ["validate", str(SEEDS), "--mirrors-file", str(ROOT / "seeds" / "mirrors.yaml")]
    assert main(given) == 0
    spelled = capsys.readouterr()
    assert spelled.out.splitlines()[0] == (
        "4 pages, 0 spec files, 3 indices, 3 mirrors: 503 records, 496 specs, 2 tags; 0 errors, "
        "0 warnings"
    )  # seeds/README.md: 454 specs of pages, 35 + 7 of mirrors (7 listed twice)
    assert main(["validate"]) == 0
    assert capsys.readouterr() == (
        spelled.out,
        "cachegraph validate: no PATH, --data or mirror given: the bundled data, as serve "
        "loads it\n",
    )
    assert main(["validate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["specs"] == 496
    assert (
        "With no PATH, --data or mirror"
        in parser()._subparsers._group_actions[0].choices["validate"].format_help()
    )


def test_validate_with_nothing_given_reads_the_data_the_environment_names(capsys, monkeypatch):
    monkeypatch.setenv("CACHEGRAPH_DATA", str(SEEDS / "000_32877e6a9739e9c6.txt"))
    assert main(["validate"]) == 0
    assert capsys.readouterr() == (  # py-keras: 130 specs of one tag, no mirror
        "1 page, 0 spec files, 0 indices: 130 records, 130 specs, 1 tag; 0 errors, 0 warnings\n"
        "tags: develop\n",
        "",
    )


def test_synth_refuses_a_folder_holding_files_unless_forced(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    assert main(["synth", str(out), "--specs", "10"]) == 2
    assert capsys.readouterr() == (
        "",
        f"cachegraph synth: error: {out}: is not empty: give an empty or new folder, or --force "
        "to write into it\n",
    )
    assert main(["synth", str(out / "notes.txt"), "--specs", "10", "--force"]) == 2
    assert capsys.readouterr().err == (
        f"cachegraph synth: error: {out / 'notes.txt'}: is not a folder\n"
    )
    assert main(["synth", str(out), "--specs", "10", "--force"]) == 0
    assert capsys.readouterr().out == "develop: 10 specs; 10 distinct\n"
    assert (out / "notes.txt").read_text() == "mine\n"
    # an empty folder, or a new one, needs no --force
    (tmp_path / "empty").mkdir()
    assert main(["synth", str(tmp_path / "empty"), "--specs", "1"]) == 0
    assert capsys.readouterr().out == "develop: 1 spec; 1 distinct\n"


LONG = "py-a-package-whose-name-is-longer-than-any-column"


def _one_spec_lockfile(path: Path, name: str) -> Path:
    node = {
        "name": name, "version": "1.0", "hash": "a" * 32,
        "arch": {"platform": "linux", "platform_os": "rhel8", "target": "zen2"},
        "compiler": {"name": "gcc", "version": "12.1.0"},
    }  # fmt: skip
    doc = {"_meta": {"lockfile-version": 4}, "roots": [{"hash": "a" * 32}],
           "concrete_specs": {"a" * 32: node}}  # fmt: skip
    path.write_text(json.dumps(doc))
    return path


def test_coverage_widens_the_spec_column_for_a_long_name(tmp_path, capsys):
    lockfile = _one_spec_lockfile(tmp_path / "spack.lock", LONG)
    assert main(["coverage", str(lockfile), "--data", str(SEEDS)]) == 0
    width = len(f"{LONG}@1.0")
    assert capsys.readouterr().out.splitlines() == [
        "0.0% cached: 0 of 1 spec; nothing to download",
        "roots cached with their whole DAG: none",
        "",
        "missing (1), the most depended on first:",
        f"hash     {'spec':<{width}} needed by  why",
        f"aaaaaaa  {LONG}@1.0         0  not in any loaded mirror",
    ]


def test_counts_agree_with_their_nouns(capsys):
    # the bundled spack.lock: 27 hits of 44, 14 externals; one page of one tag
    lock = ROOT / "seeds" / "spack.lock"
    assert main(["coverage", str(lock)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "61.4% cached: 27 of 44 specs; download size unknown (no source gives the sizes of "
        "these specs); 14 externals apart (never fetched from a cache)"
    )
    one = SEEDS / "000_32877e6a9739e9c6.txt"
    assert main(["validate", str(one)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == (
        "1 page, 0 spec files, 0 indices: 130 records, 130 specs, 1 tag; 0 errors, 0 warnings"
    )
