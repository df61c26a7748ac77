"""Doctests run on the installed modules, under the one name each module has.

``graph/``, ``schema/`` and ``seeds/`` are folders of the repository installed as
``cachegraph.graph``, ``cachegraph.schema`` and ``cachegraph.seeds`` (pyproject's
package-dir). pytest's ``--doctest-modules`` imports a file by its path, which would
name ``graph/deadline.py`` ``graph.deadline``: a second copy of the module, with classes
of its own (an exception of ``graph.errors`` is not one of ``cachegraph.graph.errors``).
So each doctest module pytest collects from those folders imports its module by the
installed name instead; nothing else changes.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
from _pytest.doctest import DoctestModule

ROOT = Path(__file__).resolve().parent

# The folders pyproject.toml's [tool.setuptools.package-dir] installs, by installed name.
INSTALLED = {
    "graph": "cachegraph.graph",
    "schema": "cachegraph.schema",
    "seeds": "cachegraph.seeds",
}


def installed_name(path: Path) -> str | None:
    """The import name of a file of one of the installed folders (None for others).

    >>> installed_name(ROOT / "graph" / "store" / "walks.py")
    'cachegraph.graph.store.walks'
    >>> installed_name(ROOT / "schema" / "__init__.py")
    'cachegraph.schema'
    >>> installed_name(ROOT / "cachegraph" / "app.py") is None
    True
    """
    parts = path.resolve().relative_to(ROOT).with_suffix("").parts
    if len(parts) < 2 or parts[0] not in INSTALLED:
        return None
    rest = parts[1:-1] if parts[-1] == "__init__" else parts[1:]
    return ".".join((INSTALLED[parts[0]], *rest))


class InstalledDoctestModule(DoctestModule):
    """pytest's doctest module, its module imported by the installed name."""

    def _getobj(self) -> ModuleType:  # pytest: "may be overwritten by subclasses"
        name = installed_name(self.path)
        assert name is not None
        return importlib.import_module(name)


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    """The doctest plugin's collector of a file under an installed folder, replaced."""
    collected = yield
    if file_path.is_relative_to(ROOT) and installed_name(file_path) is not None:
        collected = [
            InstalledDoctestModule.from_parent(parent, path=file_path)
            if type(node) is DoctestModule
            else node
            for node in collected
        ]
    return collected
