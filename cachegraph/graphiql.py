"""The GraphiQL page, loading its scripts and styles from this server (``/static``)."""

from __future__ import annotations

import functools
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
<link rel="stylesheet" href="/static/{graphiql_css}">
<script src="/static/{react}"></script>
<script src="/static/{react_dom}"></script>
<script src="/static/{graphiql_js}"></script>
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


@functools.cache
def graphiql_page() -> str:
    return _PAGE.format(example=json.dumps(EXAMPLE), **ASSETS)
