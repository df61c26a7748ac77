"""The cachegraph command as an operator meets it (issue 30): the environment's data, exit
codes when some data could not be read, quiet output, clean errors, file inputs that are
FIFOs or devices, lockfiles that are hostile, and the server's time limit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cachegraph.cli import main
from tests.conftest import SEEDS

#: a seed page of one package: py-keras, 130 specs
KERAS = SEEDS / "000_32877e6a9739e9c6.txt"
HASH = "a" * 32


@pytest.fixture
def keras(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(KERAS, folder)
    return folder


def _lockfile(path: Path, name: str = "zlib") -> Path:
    node = {
        "name": name, "version": "1.3", "hash": HASH,
        "arch": {"platform": "linux", "platform_os": "rhel8", "target": "zen2"},
        "compiler": {"name": "gcc", "version": "12.1.0"},
    }  # fmt: skip
    doc = {
        "_meta": {"lockfile-version": 4},
        "roots": [{"hash": HASH}],
        "concrete_specs": {HASH: node},
    }
    path.write_text(json.dumps(doc))
    return path


def _builds(listing: str) -> int:
    """The specs ``find`` listed (not on a terminal: no '==> N cached builds.' line)."""
    return sum(1 for line in listing.splitlines() if line and not line.startswith("-- "))


def test_find_query_and_coverage_read_the_data_the_environment_names(
    capsys, monkeypatch, keras, tmp_path
):
    monkeypatch.setenv("CACHEGRAPH_DATA", str(keras))
    assert main(["query", "{ stats { specCount } }"]) == 0
    assert json.loads(capsys.readouterr().out) == {"data": {"stats": {"specCount": 130}}}
    assert main(["find", "py-keras"]) == 0
    assert _builds(capsys.readouterr().out) == 130
    assert main(["coverage", str(_lockfile(tmp_path / "spack.lock"))]) == 0
    assert capsys.readouterr().out.startswith("0.0% cached: 0 of 1 spec; nothing to download\n")
    # the flags win over the environment
    assert main(["query", "{ stats { specCount } }", "--data", str(SEEDS)]) == 0
    assert json.loads(capsys.readouterr().out) == {"data": {"stats": {"specCount": 454}}}


def test_the_mirrors_file_the_environment_names_is_read(
    capsys, monkeypatch, shared_mirrors, tmp_path
):
    listing = tmp_path / "mirrors.yaml"
    listing.write_text(
        f"mirrors:\n- {{tag: t, stack: s, path: {shared_mirrors / 'v2_layout_db7'}}}\n"
    )
    monkeypatch.setenv("CACHEGRAPH_MIRRORS_FILE", str(listing))
    assert main(["query", "{ stats { specCount } }"]) == 0
    # the index lists two specs; the spec files beside it that it does not list are not in
    # the mirror (Spack's buildcache list reads the index alone)
    assert json.loads(capsys.readouterr().out) == {"data": {"stats": {"specCount": 2}}}


def test_find_and_coverage_that_answered_exit_0_and_say_what_was_not_read(capsys, keras, tmp_path):
    missing = str(tmp_path / "nonexistent")
    assert main(["find", "py-keras", "--data", str(keras), "--data", missing]) == 0
    captured = capsys.readouterr()
    assert _builds(captured.out) == 130
    assert captured.err.splitlines() == [
        f"cachegraph find: {missing}: error: no such file or folder",
        "cachegraph find: answered from the data that loaded; 1 error in the sources (above)",
    ]
    lockfile = _lockfile(tmp_path / "spack.lock")
    assert main(["coverage", str(lockfile), "--data", str(keras), "--data", missing]) == 0
    assert capsys.readouterr().err.splitlines()[-1] == (
        "cachegraph coverage: answered from the data that loaded; 1 error in the sources (above)"
    )


def test_quiet_and_an_error_log_level_silence_the_warnings_about_the_data(
    capsys, monkeypatch, keras
):
    page = keras / KERAS.name
    page.write_text(page.read_text().replace('"num_specs": 130', '"num_specs": 131', 1))
    assert main(["find", "py-keras", "--data", str(keras)]) == 0
    warned = capsys.readouterr().err.splitlines()
    assert warned == [
        f"cachegraph find: {page}:5: warning: meta num_specs says 131 but spec_details give "
        "130; using spec_details"
    ]
    assert main(["find", "py-keras", "--data", str(keras), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("CACHEGRAPH_LOG_LEVEL", "error")
    assert main(["find", "py-keras", "--data", str(keras)]) == 0
    assert capsys.readouterr().err == ""


def test_diff_of_a_prefix_too_short_or_ambiguous_is_one_line(capsys):
    assert main(["diff", "22xq", "26kr"]) == 1
    assert capsys.readouterr().err == (
        "cachegraph diff: hash prefix '22xq' is 4 characters; give at least 7\n"
    )


def test_validate_takes_data_as_the_other_commands_do(capsys):
    assert main(["validate", "--data", str(SEEDS)]) == 0
    by_flag = capsys.readouterr().out
    assert main(["validate", str(SEEDS)]) == 0
    assert by_flag == capsys.readouterr().out
    assert "454 specs" in by_flag


def test_find_help_shows_the_constraint_as_it_is_typed(capsys):
    with pytest.raises(SystemExit):
        main(["find", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "+mpi %gcc@11: target=x86_64_v3:" in out
    assert "%%" not in out


def test_a_lockfile_drawing_on_the_terminal_is_printed_escaped(capsys, tmp_path):
    lockfile = _lockfile(tmp_path / "spack.lock", name="zlib\x1b]0;owned\x07\x1b[2J")
    assert main(["coverage", str(lockfile)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "zlib\\x1b]0;owned\\x07\\x1b[2J" in out


def test_a_deep_lockfile_is_refused_by_coverage(capsys, tmp_path):
    path = tmp_path / "spack.lock"
    path.write_text('{"concrete_specs": {}, "x": ' + "[" * 1_000 + "]" * 1_000 + "}")
    assert main(["coverage", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"cachegraph coverage: {path}: JSON nests more deeply than any real file (over 64 "
        "levels); not read\n"
    )


def test_coverage_stops_at_the_servers_time_limit(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CACHEGRAPH_TIMEOUT", "1e-9")
    assert main(["coverage", str(_lockfile(tmp_path / "spack.lock"))]) == 1
    assert capsys.readouterr().err == (
        "cachegraph coverage: stopped: the answer took longer than 1e-09 s, the server's limit "
        "for one operation (CACHEGRAPH_TIMEOUT)\n"
    )


def _run(*args: str) -> tuple[int, str]:
    """The command in a process of its own: a hang is a failed test, not a stuck suite."""
    done = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return done.returncode, done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifos_and_devices_as_lockfiles_or_mirrors_files_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _run("coverage", str(fifo)) == (
        1, f"cachegraph coverage: {fifo}: cannot be read: not a regular file\n"
    )  # fmt: skip
    for listing in (str(fifo), "/dev/zero"):
        assert _run("find", "zlib", "--mirrors-file", listing) == (
            1, f"cachegraph: error: --mirrors-file: {listing}: cannot be read: not a regular file\n"
        )  # fmt: skip
        assert _run("validate", "--mirrors-file", listing)[1] == (
            f"cachegraph: error: --mirrors-file: {listing}: cannot be read: not a regular file\n"
        )


def test_malformed_lockfiles_are_one_line_each(capsys, tmp_path):
    from tests.graph.questions.test_coverage import MALFORMED

    path = tmp_path / "spack.lock"
    for doc, message in MALFORMED:
        if "x" in doc:  # nests too deeply for json.dumps: see test_a_deep_lockfile_...
            continue
        path.write_text(json.dumps(doc))
        assert main(["coverage", str(path)]) == 1
        assert capsys.readouterr().err == f"cachegraph coverage: {path}: {message}\n"


def test_a_flood_of_problems_is_cut_short_before_the_answer(capsys, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for n in range(25):
        (data / f"broken{n:02}.md").write_text("---\ntitle: [unclosed\n---\n")
    shutil.copy(KERAS, data)
    assert main(["find", "py-keras", "--data", str(data)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 22
    assert err[0].startswith(f"cachegraph find: {data / 'broken00.md'}:3: error: ")
    assert err[20:] == [
        "cachegraph find: ... and 5 more problems with the data ('cachegraph validate' lists "
        "them all)",
        "cachegraph find: answered from the data that loaded; 25 errors in the sources (above)",
    ]
