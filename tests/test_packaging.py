"""The project installs one top-level package, ``cachegraph``: its folders graph/, schema/
and seeds/ install inside it, never as packages named like other projects on PyPI."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile

import pytest

from cachegraph.sources import default_data
from tests.conftest import ROOT, SEEDS


def test_only_cachegraph_is_importable_from_outside_the_checkout():
    found = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print([u.find_spec(n) is not None "
         "for n in ('graph', 'schema', 'seeds', 'cachegraph.graph', 'cachegraph.schema')])"],
        cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert found.stdout.strip() == "[False, False, False, True, True]"


def test_the_bundled_seeds_are_found():
    assert sorted(p.name for p in default_data().glob("*.txt")) == sorted(
        p.name for p in SEEDS.glob("*.txt")
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[zipfile.ZipFile, str]:
    """The package built as pip builds it (its own build backend, isolated), and pip's log."""
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(out), str(ROOT)],
        capture_output=True, text=True,
    )  # fmt: skip
    if built.returncode != 0 and "setuptools" in built.stderr and "find" in built.stderr.lower():
        pytest.skip(f"the build backend could not be had: {built.stderr.strip()[-300:]}")
    assert built.returncode == 0, built.stderr
    [path] = out.glob("*.whl")
    with zipfile.ZipFile(path) as z:
        yield z, built.stdout + built.stderr


@pytest.mark.slow
def test_the_wheel_builds_without_warnings_and_states_its_license_in_spdx(wheel):
    # issue 30: 'project.license as a TOML table is deprecated' (an error from 2027-02-18)
    z, log = wheel
    assert "project.license" not in log
    metadata = z.read(next(n for n in z.namelist() if n.endswith("METADATA"))).decode()
    assert "License-Expression: Apache-2.0 OR MIT" in metadata.splitlines()


@pytest.mark.slow
def test_the_bundled_data_is_installed_whole(wheel):
    """The wheel holds every file of seeds/: the server serves the same bundle installed
    as from a checkout."""
    z, _ = wheel
    tracked = subprocess.run(
        ["git", "ls-files", "seeds"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert tracked, "seeds/ is not tracked"
    names = set(z.namelist())
    assert [p for p in tracked if "cachegraph/" + p not in names] == []
