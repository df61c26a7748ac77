"""The web explorer: one page, at ``/`` and ``/ui/...``, that the browser turns into every view.

Every view asks ``/graphql`` and nothing else: the explorer is a client of the public
API like any other. It sends each operation by its hash (``ui_hashes``: the server
knows the explorer's documents), over GET where the URL is short enough, so that
its answers carry validators a browser or a proxy keeps. Its operations are the
files of ``static/ui/queries`` (one operation each, plus the shared
``fragments.graphql``); the page carries them inline,
each with the fragments it uses, so that a view's first request is its data, and a
test validates each against the committed ``schema.graphql``. Scripts, styles and the
vendored libraries (``static/ui/vendor``, whose README says why each) are static
files. Paths are under the ASGI ``root_path`` (Uvicorn's ``--root-path``).
"""

from __future__ import annotations

import functools
import hashlib
import html
import json

from graphql import FragmentSpreadNode, OperationDefinitionNode, parse, print_ast, visit
from graphql.language import Visitor

from .graphiql import STATIC

UI = STATIC / "ui"
QUERIES = UI / "queries"
SHARED_FRAGMENTS = "fragments.graphql"

#: every ES module of the explorer, fetched at once (``modulepreload``) rather than one
#: import after another: the views and their helpers are 60 kB, dagre 49 kB
_MODULES = sorted(
    str(path.relative_to(UI))
    for path in [*UI.glob("*.js"), *UI.glob("views/*.js"), *UI.glob("vendor/*.mjs")]
)  # fmt: skip

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="cg-root" content="{root}">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>Spack Cache Graph</title>
<link rel="stylesheet" href="{root}/static/ui/style.css">
<script type="importmap">{imports}</script>
{preloads}
<script type="application/json" id="cg-queries">{queries}</script>
<script type="application/json" id="cg-hashes">{hashes}</script>
<script type="module" src="{root}/static/ui/app.js"></script>
</head>
<body>
<div id="app"><p class="loading">Loading…</p></div>
<noscript>This explorer needs JavaScript; the API is at
<a href="{root}/graphql">/graphql</a>.</noscript>
</body>
</html>
"""


class _Spreads(Visitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def enter_fragment_spread(self, node: FragmentSpreadNode, *_: object) -> None:
        self.names.add(node.name.value)


def _spreads(node: object) -> set[str]:
    visitor = _Spreads()
    visit(node, visitor)
    return visitor.names


@functools.cache
def ui_operations() -> dict[str, str]:
    """name -> the text a view sends: one operation of a file, and the fragments it uses."""
    shared = {d.name.value: d for d in parse((QUERIES / SHARED_FRAGMENTS).read_text()).definitions}
    operations = {}
    for path in sorted(QUERIES.iterdir(), key=lambda p: p.name):
        if path.name == SHARED_FRAGMENTS or not path.name.endswith(".graphql"):
            continue
        document = parse(path.read_text())
        [operation] = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        own = {d.name.value: d for d in document.definitions if d is not operation}
        wanted, todo = [], [operation]
        while todo:
            for name in sorted(_spreads(todo.pop())):
                fragment = own.get(name) or shared[name]
                if fragment not in wanted:
                    wanted.append(fragment)
                    todo.append(fragment)
        operations[operation.name.value] = "\n\n".join(map(print_ast, [operation, *wanted]))
    return operations


def ui_hashes() -> dict[str, str]:
    """name -> the SHA-256 of its text: the explorer asks by hash (a persisted query), over
    GET, so that the browser and any proxy keep its answers."""
    return {
        name: hashlib.sha256(text.encode()).hexdigest() for name, text in ui_operations().items()
    }


@functools.lru_cache(maxsize=8)
def ui_page(root: str = "") -> str:
    """The page, its assets under ``root`` (the ASGI root path: set by the server, not clients)."""
    root = root.rstrip("/")
    base = f"{root}/static/ui/vendor/"
    imports = {
        "preact": base + "preact.mjs",
        "preact/hooks": base + "hooks.mjs",
        "htm": base + "htm.mjs",
        "dagre": base + "dagre.esm.js",
    }
    preloads = "\n".join(
        f'<link rel="modulepreload" href="{html.escape(root)}/static/ui/{name}">'
        for name in _MODULES
    )
    return _PAGE.format(
        root=html.escape(root),
        imports=_script_json({"imports": imports}),
        preloads=preloads,
        queries=_script_json(ui_operations()),
        hashes=_script_json(ui_hashes()),
    )


def _script_json(value: object) -> str:
    # Inside <script>, only "</" can end the element early.
    return json.dumps(value, separators=(",", ":")).replace("</", "<\\/")
