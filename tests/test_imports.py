"""No module of graph/ or schema/ imports, at any depth, one that imports it back: each can be
read, imported and tested on its own. (Imports only for type checkers do not count.)"""

from __future__ import annotations

import ast
import importlib
import pkgutil

import networkx as nx
import pytest

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
