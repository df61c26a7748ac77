"""Every setting by flag and by environment variable, and the README's table of them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource

from cachegraph.cli import parser
from cachegraph.execution import Limits
from cachegraph.settings import Settings, from_arguments, markdown_table
from tests.app.test_serve import free_port, post, wait_healthy
from tests.conftest import ROOT


def test_the_readme_table_is_the_settings():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("<!-- settings -->\n")[1].split("\n<!-- /settings -->")[0]
    assert table == markdown_table(), "run 'cachegraph settings' and paste it into the README"


def test_variables_override_defaults():
    settings = Settings.from_env(
        {
            "CACHEGRAPH_DATA": "/a:/b",
            "CACHEGRAPH_INDEX": "t:s=/x.json t:u=/y.json",
            "CACHEGRAPH_PORT": "9000",
            "CACHEGRAPH_FEDERATION": "yes",
            "CACHEGRAPH_INTROSPECTION": "off",
            "CACHEGRAPH_CORS_ORIGINS": "https://a.example, https://b.example",
            "CACHEGRAPH_TIMEOUT": "2.5",
            "UNRELATED": "1",
        }
    )
    assert settings == Settings(
        data=("/a", "/b"),
        index=("t:s=/x.json", "t:u=/y.json"),
        port=9000,
        federation=True,
        introspection=False,
        cors_origins=("https://a.example", "https://b.example"),
        timeout=2.5,
    )
    assert settings.limits() == Limits(introspection=False)
    assert Settings.from_env(settings.to_env()) == settings


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("CACHEGRAPH_PORT", "eighty", "CACHEGRAPH_PORT: 'eighty' is not a port number (1-65535)"),
        ("CACHEGRAPH_PORT", "0", "CACHEGRAPH_PORT: '0' is not a port number (1-65535)"),
        ("CACHEGRAPH_WORKERS", "2.5", "CACHEGRAPH_WORKERS: '2.5' is not a whole number"),
        ("CACHEGRAPH_TIMEOUT", "soon", "CACHEGRAPH_TIMEOUT: 'soon' is not a number"),
        ("CACHEGRAPH_GRAPHIQL", "maybe", "CACHEGRAPH_GRAPHIQL: 'maybe' is not true or false"),
    ],
)
def test_a_bad_variable_is_named(variable, value, message):
    with pytest.raises(ValueError) as raised:
        Settings.from_env({variable: value})
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("threads", "cores", "expected"), [(0, 1, 2), (0, 2, 2), (0, 3, 3), (0, 64, 4), (6, 2, 6)]
)
def test_worker_threads_are_one_a_core_from_2_to_4_unless_given(
    monkeypatch, threads, cores, expected
):
    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: set(range(cores)), raising=False)
    assert Settings(threads=threads).worker_threads() == expected


def test_flags_override_variables():
    base = Settings.from_env({"CACHEGRAPH_PORT": "9000", "CACHEGRAPH_DATA": "/env"})
    args = parser(base).parse_args(
        ["serve", "--max-depth", "7", "--no-graphiql", "--data", "/a", "--data", "/b"]
    )
    assert from_arguments(args, base) == Settings(
        port=9000, data=("/a", "/b"), max_depth=7, graphiql=False
    )
    args = parser(base).parse_args(["serve"])
    assert from_arguments(args, base) == base


@pytest.mark.slow
def test_serve_takes_its_settings_from_the_environment():
    port = free_port()
    env = {"CACHEGRAPH_PORT": str(port), "CACHEGRAPH_MAX_ALIASES": "1", "PATH": ""}
    process = subprocess.Popen(
        [sys.executable, "-m", "cachegraph.cli", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_healthy(port, process)
        answer = post(port, "{ a: stats { specCount } b: stats { specCount } }")
        assert answer["errors"][0]["extensions"]["limit"] == "max_aliases"
    finally:
        process.terminate()
        process.wait(10)


def test_a_bad_variable_stops_the_command_with_its_name():
    result = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", "settings"],
        env={"CACHEGRAPH_MAX_COST": "lots"},
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stderr) == (
        2,
        "cachegraph: error: CACHEGRAPH_MAX_COST: 'lots' is not a whole number\n",
    )


def test_mirrors_come_from_one_variable_and_a_file(tmp_path):
    listing = tmp_path / "mirrors.json"
    listing.write_text('{"develop": [{"label": "ml", "url": "ml-mirror"}]}')
    settings = Settings.from_env(
        {
            "CACHEGRAPH_MIRRORS": "site:e4s=/m/e4s  site:ml=/m/ml",
            "CACHEGRAPH_MIRRORS_FILE": str(listing),
        }
    )
    assert settings.mirror_sources() == [
        MirrorSource("site", "e4s", Path("/m/e4s")),
        MirrorSource("site", "ml", Path("/m/ml")),
        MirrorSource("develop", "ml", tmp_path / "ml-mirror"),
    ]
    assert Settings.from_env(settings.to_env()) == settings
    with pytest.raises(ValueError, match="expected TAG:STACK=PATH, got 'e4s'"):
        Settings(mirror=("e4s",)).mirror_sources()
