"""Each question of graph/questions/ is documented in the NetworkX manner (issue 39): its
parameters, what it returns, and a running example, which the suite runs as a doctest."""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil

import cachegraph.graph.questions as questions
import pytest

QUESTIONS = [
    (module.name, name, function)
    for module in pkgutil.iter_modules(questions.__path__, questions.__name__ + ".")
    for name, function in inspect.getmembers(importlib.import_module(module.name))
    if inspect.isfunction(function)
    and not name.startswith("_")
    and function.__module__ == module.name
]


def _sections(doc: str) -> list[str]:
    """The headers of a docstring's numpydoc sections (a line underlined with dashes)."""
    lines = [line.strip() for line in doc.splitlines()]
    return [a for a, b in itertools.pairwise(lines) if a and b == "-" * len(a)]


def test_every_module_is_seen():
    assert {m.rpartition(".")[2] for m, _, _ in QUESTIONS} >= {"counts", "coverage", "specs"}


@pytest.mark.parametrize(
    "module, name, function", QUESTIONS, ids=[f"{m}.{n}" for m, n, _ in QUESTIONS]
)
def test_networkx_manner(module, name, function):
    doc = inspect.getdoc(function) or ""
    wanted = ["Returns", "Examples"]
    if inspect.signature(function).parameters:
        wanted.insert(0, "Parameters")
    assert _sections(doc) == wanted
    examples = doc.partition("Examples\n--------")[2]
    assert ">>> " in examples
    documented = [line.split(" : ")[0] for line in doc.splitlines() if " : " in line]
    assert documented[: len(inspect.signature(function).parameters)] == list(
        inspect.signature(function).parameters
    )
