"""The GraphiQL page, loading its scripts and styles from this server (``/static``).

Paths are under the ASGI ``root_path`` (Uvicorn's ``--root-path``), so the page
works behind a reverse proxy that serves the app under a prefix.
"""

from __future__ import annotations

import functools
import html
import json
from importlib.resources import files

STATIC = files("cachegraph") / "static"
ASSETS = {
    "react": "graphiql/react.production.min.js",
    "react_dom": "graphiql/react-dom.production.min.js",
    "graphiql_js": "graphiql/graphiql.min.js",
    "graphiql_css": "graphiql/graphiql.min.css",
}
EXAMPLE = """# Spack Cache Graph. Run with Ctrl-Enter or the play button.
{
  stats {
    specCount
    packageCount
    tagCount
  }
}
"""

_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Spack Cache Graph: GraphiQL</title>
<style>body {{ margin: 0; }} #graphiql {{ height: 100vh; }}</style>
<link rel="stylesheet" href="{root}/static/{graphiql_css}">
<script src="{root}/static/{react}"></script>
<script src="{root}/static/{react_dom}"></script>
<script src="{root}/static/{graphiql_js}"></script>
</head>
<body>
<div id="graphiql">Loading…</div>
<script>
  const fetcher = GraphiQL.createFetcher({{ url: window.location.pathname }});
  ReactDOM.createRoot(document.getElementById("graphiql")).render(
    React.createElement(GraphiQL, {{ fetcher, defaultQuery: {example} }})
  );
</script>
</body>
</html>
"""


@functools.lru_cache(maxsize=8)
def graphiql_page(root: str = "") -> str:
    """The page, its assets under ``root`` (the ASGI root path: set by the server, not clients)."""
    return _PAGE.format(example=json.dumps(EXAMPLE), root=html.escape(root.rstrip("/")), **ASSETS)
