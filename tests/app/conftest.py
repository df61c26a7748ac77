"""Fixtures of the app tests: a data folder the tests may change, and a browser."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.browser import chromium
from tests.conftest import SEEDS

#: a seed page of one package (keras, 130 specs)
KERAS = "000_32877e6a9739e9c6.txt"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A folder holding one seed page."""
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(SEEDS / KERAS, folder)
    return folder


@pytest.fixture(scope="module")
def browser():
    """Chromium, one per module of browser tests (skips, saying why, where there is none)."""
    with chromium() as browser:
        yield browser
