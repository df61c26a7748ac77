"""No cache keyed by what a client (or the data) sends is bounded by entries or not at all:
every ``functools.cache``/``lru_cache`` in the code is listed here with why its keys are
few; any other fails. Caches of client input are ``graph.bounded.BoundedCache``s, whose
bytes ``/metrics`` shows. (``satisfies.settings`` kept 65,536 lockfile variant lists, about
15 GB at its cap; ``names.version_key`` kept every constraint's version, without end.)"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

#: (module path, function): why its keys cannot grow with what clients send
ALLOWED = {
    ("graph/spack/targets.py", "ancestors"): "archspec's targets only: others raise, not kept",
    ("graph/spack/targets.py", "descendants"): "archspec's targets only: others raise, not kept",
    ("cachegraph/ui.py", "ui_operations"): "no arguments: one entry",
    ("cachegraph/ui.py", "ui_page"): "the server's root path (not a client's), 8 entries",
    ("cachegraph/graphiql.py", "graphiql_page"): "the server's root path, 8 entries",
    ("graph/spack/virtuals.py", "_table"): "no arguments: the bundled table, read once",
    ("graph/spack/virtuals.py", "_provisions"): "only the table's virtuals (callers check)",
    ("graph/spack/virtuals.py", "_provided_by"): "no arguments: one entry",
}
CACHES = {"cache", "lru_cache"}


def _cache_name(node: ast.expr) -> str | None:
    """``cache`` for ``@functools.cache``, ``@cache``, ``@lru_cache(8)``...; else None."""
    if isinstance(node, ast.Call):
        node = node.func
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return name if name in CACHES else None


def cached_functions(path: Path) -> set[str]:
    """The functions of a module kept by a functools cache: decorated, or wrapped by a call."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(_cache_name(d) for d in node.decorator_list):
                found.add(node.name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
            if _cache_name(node.func):  # lru_cache(maxsize=n)(function)
                found.add(ast.unparse(node.args[0]) if node.args else "?")
        elif isinstance(node, ast.Call) and _cache_name(node.func) and node.args:
            found.add(ast.unparse(node.args[0]))  # functools.cache(function)
    return found


def test_the_walk_finds_every_spelling_of_a_cache(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "import functools\nfrom functools import cache, lru_cache\n"
        "@functools.cache\ndef a(x): ...\n@cache\ndef b(x): ...\n"
        "@functools.lru_cache(maxsize=None)\ndef c(x): ...\n@lru_cache\ndef d(x): ...\n"
        "e = functools.lru_cache(maxsize=5)(len)\nf = cache(len)\n"
        "@functools.wraps(len)\ndef g(x): ...\n"
    )
    assert cached_functions(module) == {"a", "b", "c", "d", "len"}


def test_no_cache_bounded_by_entries_or_unbounded_outside_the_list():
    found = {
        (str(path.relative_to(ROOT)), name)
        for folder in ("graph", "schema", "cachegraph")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for name in cached_functions(path)
    }
    assert found - ALLOWED.keys() == set(), "use graph.bounded.BoundedCache (see its docstring)"
    assert found == ALLOWED.keys(), "a listed cache is gone: take it off the list"
