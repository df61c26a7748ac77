"""Each module of the package under one name only, for pytest's doctests too.

``graph/`` and ``schema/`` are folders of the repository installed as
``cachegraph.graph`` and ``cachegraph.schema`` (pyproject's package-dir), and
pytest imports a module it collects doctests from by its path: ``graph.deadline``.
That would be a second copy of the module, with classes of its own (an exception
of ``graph.errors`` is not one of ``cachegraph.graph.errors``). Here every module
of the two packages is imported once under its installed name, and its path name
made another key of the same module object.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

for folder in ("graph", "schema"):
    package = importlib.import_module(f"cachegraph.{folder}")
    sys.modules[folder] = package
    for found in pkgutil.walk_packages(package.__path__, f"cachegraph.{folder}."):
        module = importlib.import_module(found.name)
        sys.modules[found.name.removeprefix("cachegraph.")] = module
