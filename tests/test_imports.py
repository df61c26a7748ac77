"""No module of graph/ or schema/ imports, at any depth, one that imports it back: each can be
read, imported and tested on its own; graph/'s folders import in one direction only; and each
module has one import name, no file of the project editing ``sys.path`` or ``sys.modules``.
(Imports only for type checkers do not count.)"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess

import networkx as nx
import pytest

from tests.conftest import ROOT

PACKAGES = ("cachegraph.graph", "cachegraph.schema")


def _modules(package: str) -> dict[str, ast.Module]:
    root = importlib.import_module(package)
    found = {package: root.__file__}
    found |= {m.name: importlib.import_module(m.name).__file__
              for m in pkgutil.walk_packages(root.__path__, package + ".")}  # fmt: skip
    return {name: ast.parse(open(path).read()) for name, path in found.items()}


def _imports(name: str, tree: ast.Module, is_package: bool) -> set[str]:
    """Every module this one imports (outside ``if TYPE_CHECKING:``), by full name."""
    found: set[str] = set()
    base = name if is_package else name.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = base.split(".")
            origin = node.module or ""
            if node.level:
                origin = ".".join(
                    parts[: len(parts) - node.level + 1] + ([origin] if origin else [])
                )
            found.add(origin)
            found.update(f"{origin}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package):
    trees = _modules(package)
    g = nx.DiGraph()
    for name, tree in trees.items():
        is_package = importlib.import_module(name).__file__.endswith("__init__.py")
        for target in _imports(name, tree, is_package):
            if target in trees and target != name and not name.startswith(target + "."):
                g.add_edge(name, target)
    # A package's __init__ importing its own modules is how a package exposes them.
    cycles = [c for c in nx.simple_cycles(g) if not any(n == package for n in c)]
    assert cycles == []


#: graph/'s modules and folders, lowest first: each imports from its own group and the
#: groups below it only. Spack's rules know nothing of the store; the store is read by the
#: sources; the snapshot saves both; the questions ask the store (and read lockfiles), the
#: change log what it held before. The package's ``__init__``, exposing them, stands above
#: them all.
LAYERS = (
    {"errors", "words", "bounded", "deadline", "memory", "mapped"},
    {"spack"},
    {"attributes"},
    {"store"},
    {"sources"},
    {"snapshot"},
    {"questions", "changes"},
)
GRAPH = "cachegraph.graph"
#: ``sys.path.insert(...)``, ``sys.modules[name] = ...`` and the like
EDITS = re.compile(r"sys\.(path|modules)\s*(\.\s*(insert|append|extend|remove|pop|update)|\[|=)")


def _group(name: str) -> str:
    """``cachegraph.graph.store.view`` → ``store``; ``cachegraph.graph.errors`` → ``errors``."""
    return name.split(".")[2]


def test_graph_folders_import_in_one_direction():
    trees = _modules(GRAPH)
    rank = {group: i for i, layer in enumerate(LAYERS) for group in layer}
    groups = {_group(name) for name in trees if name != GRAPH}
    assert groups - set(rank) == set(), "a new module or folder of graph/: place it in LAYERS"
    against = []
    for name, tree in trees.items():
        if name == GRAPH:
            continue
        is_package = importlib.import_module(name).__file__.endswith("__init__.py")
        for target in _imports(name, tree, is_package):
            if target.startswith("cachegraph.") and not target.startswith(GRAPH):
                against.append(f"{name} imports {target}: graph/ knows nothing of the rest")
            elif target in trees and target != GRAPH and rank[_group(target)] > rank[_group(name)]:
                against.append(f"{name} imports {target}, a layer above it")
    assert against == []


def test_no_file_edits_the_import_path_or_the_modules():
    """Each module is imported under one name: the installed one (graph/ is
    ``cachegraph.graph``). The root conftest.py collects doctests by that name; the
    benchmarks run as modules (``python -m bench.x``)."""
    listed = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    tracked = listed.stdout.split()
    if listed.returncode != 0 or not tracked:
        pytest.skip("not a git checkout: its files are those git lists")
    found = [
        f"{path}:{n}: {line.strip()}"
        for path in tracked
        if not path.startswith("tests/")
        for n, line in enumerate((ROOT / path).read_text().splitlines(), 1)
        if EDITS.search(line)
    ]
    assert found == []
