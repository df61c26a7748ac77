"""The project installs one top-level package, ``cachegraph``: its folders graph/, schema/
and seeds/ install inside it, never as packages named like other projects on PyPI."""

from __future__ import annotations

import subprocess
import sys
import tempfile

from cachegraph.sources import default_data
from tests.conftest import SEEDS


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
