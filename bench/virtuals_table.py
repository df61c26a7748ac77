"""Regenerate ``graph/spack/virtuals.json``: who provides which virtual, read from spack-packages.

Usage::

    python -m bench.virtuals_table GIT_DIR [COMMIT] > graph/spack/virtuals.json

``GIT_DIR`` is a clone (or bare mirror) of https://github.com/spack/spack-packages;
``COMMIT`` defaults to ``HEAD``. Each ``repos/spack_repo/builtin/packages/*/package.py``
is parsed with ``ast`` (never imported): every ``provides("mpi@:3.1", when="@2:")``
call becomes ``[package, "@:3.1", "@2:"]`` under ``providers["mpi"]``, the ``when`` of
enclosing ``with when(...)`` blocks joined to its own. ``needs`` lists, for each package,
the virtuals it may ``depends_on`` (any condition; ``c``, ``cxx`` and ``fortran`` left out:
spec files older than Spack 1.0 never record a compiler node), which is what Spack's
``reconstruct_virtuals_on_edges`` intersects with a child's provided virtuals to label the
edges of spec files written before Spack 0.21. Calls whose arguments are not literal
strings (a loop's f-string) are skipped and counted in ``skipped``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys

PACKAGES = "repos/spack_repo/builtin/packages"
LANGUAGES = {"c", "cxx", "fortran"}


def git(directory: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", directory, *args], check=True, capture_output=True, text=True
    ).stdout


def package_name(folder: str) -> str:
    """Spack's package name of a package's folder (``py_numpy`` -> ``py-numpy``, ``_7zip`` ->
    ``7zip``)."""
    if folder.startswith("_") and folder[1:2].isdigit():
        folder = folder[1:]
    return folder.replace("_", "-")


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _when(call: ast.Call) -> str | bool:
    """The call's ``when=`` string, "" without one, False when not a literal."""
    for keyword in call.keywords:
        if keyword.arg == "when":
            found = _literal(keyword.value)
            return False if found is None else found
    return ""


def directives(source: str) -> tuple[list[tuple[str, str, str]], set[str], int]:
    """(provided virtuals as (name, versions, when), names depended on, skipped calls)."""
    provided: list[tuple[str, str, str]] = []
    depended: set[str] = set()
    skipped = 0

    def visit(node: ast.AST, whens: tuple[str, ...]) -> None:
        nonlocal skipped
        if isinstance(node, ast.With):
            inner = whens
            for item in node.items:
                call = item.context_expr
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
                        and call.func.id == "when" and call.args):  # fmt: skip
                    text = _literal(call.args[0])
                    inner = (*inner, text) if text is not None else inner
            for child in node.body:
                visit(child, inner)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "provides":
                when = _when(node)
                names = [_literal(a) for a in node.args]
                if when is False or None in names:
                    skipped += 1
                else:
                    condition = " ".join(w for w in (*whens, when) if w)
                    for spec in names:
                        name, at, versions = spec.partition("@")
                        provided.append((name.strip(), f"@{versions}" if at else "", condition))
            elif node.func.id == "depends_on" and node.args:
                spec = _literal(node.args[0])
                if spec is not None:
                    name = spec.split("@")[0].split()[0] if spec.split() else ""
                    depended.add(name.strip("+~"))
        for child in ast.iter_child_nodes(node):
            visit(child, whens)

    visit(ast.parse(source), ())
    return provided, depended, skipped


def table(directory: str, commit: str = "HEAD") -> dict:
    sha = git(directory, "rev-parse", commit).strip()
    date = git(directory, "show", "-s", "--format=%cI", sha).strip()
    paths = [p for p in git(directory, "ls-tree", "-r", "--name-only", sha, PACKAGES).split()
             if p.endswith("/package.py")]  # fmt: skip
    providers: dict[str, list] = {}
    depends: dict[str, set[str]] = {}
    skipped = 0
    for path in paths:
        name = package_name(path.split("/")[-2])
        source = git(directory, "show", f"{sha}:{path}")
        try:
            provided, depended, missed = directives(source)
        except SyntaxError:
            skipped += 1
            continue
        skipped += missed
        for virtual, versions, when in provided:
            providers.setdefault(virtual, []).append([name, versions, when])
        depends[name] = depended
    virtuals = set(providers)
    needs = {
        name: sorted((names & virtuals) - LANGUAGES)
        for name, names in sorted(depends.items())
        if (names & virtuals) - LANGUAGES
    }
    return {
        "origin": "https://github.com/spack/spack-packages",
        "commit": sha,
        "commit_date": date,
        "source": f"{PACKAGES}/*/package.py: provides(...) and depends_on(...) directives",
        "generated_by": "bench/virtuals_table.py",
        "packages_read": len(paths),
        "skipped": skipped,
        "providers": {v: sorted(providers[v]) for v in sorted(providers)},
        "needs": needs,
    }


if __name__ == "__main__":
    found = table(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "HEAD")
    json.dump(found, sys.stdout, indent=0, separators=(",", ":"))
    sys.stdout.write("\n")
