"""Every public function of graph/questions/ shows an example that runs (as a doctest)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import cachegraph.graph.questions as questions
import pytest

MODULES = [importlib.import_module(f"{questions.__name__}.{m.name}")
           for m in pkgutil.iter_modules(questions.__path__)]  # fmt: skip


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_each_public_function_has_an_example(module):
    public = [
        name
        for name, obj in vars(module).items()
        if inspect.isfunction(obj) and obj.__module__ == module.__name__ and name[0] != "_"
    ]
    assert public, module.__name__
    assert [n for n in public if ">>>" not in (getattr(module, n).__doc__ or "")] == []
