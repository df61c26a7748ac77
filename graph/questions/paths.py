"""Paths as a client sees them: no path of the server's disk, only where the operator's
sources put a file.

A local path is shown under the source the operator configured: a mirror's files under the
mirror's name (``develop/e4s/build_cache/x.spec.json``), a page folder's or file's under
its own name (``pages/develop/x.md``), the snapshot by its file name. A path under none of
them (a link's target, say) is shown by its file name alone. URLs are shown as they are
(their credentials are never kept). An admin (the server's admin token, as a bearer) sees
the paths as the operator gave them; the status view is theirs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..sources.locations import is_url
from ..store.view import CacheGraph
from .mirrors import local_root
from .status import load_status

_KEY = ("shown paths",)

#: An absolute path in a message: a "/" that starts a word (not one inside a URL, a
#: fraction or a relative path) followed by more than spaces and quotes.
_ABSOLUTE = re.compile(r"(?<![\w:/.~-])/[^\s'\"()\[\],;]+")


@dataclass(frozen=True)
class _Roots:
    status: object  # the load status the roots were worked out from
    roots: tuple[tuple[str, str], ...]  # (root, its shown name), the longest first


def public_path(G: CacheGraph, path: str) -> str:
    """``path`` as a client without the admin token sees it: under its source's name.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    path : str
        A path as the server read it (a mirror's location, a file of the load report).

    Returns
    -------
    path : str
        The path under its source's name, as a client without the admin token sees it.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> from dataclasses import replace
    >>> G = example_graph()
    >>> G.mirrors["develop/e4s"] = replace(G.mirrors["develop/e4s"], location="/srv/e4s")
    >>> public_path(G, "/srv/e4s/build_cache/index.json")
    'develop/e4s/build_cache/index.json'
    >>> public_path(G, "/etc/passwd"), public_path(G, "https://cache.example/e4s")
    ('passwd', 'https://cache.example/e4s')
    """
    if is_url(path):
        return path
    for root, name in _roots(G):
        if path == root:
            return name
        if path.startswith(root + "/"):
            return name + path[len(root) :]
    return PurePosixPath(path).name or path if path.startswith("/") else path


def public_text(G: CacheGraph, text: str) -> str:
    """A message with every path of the server's disk in it shown as ``public_path`` shows it.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    text : str
        A message that may name paths of the server's disk.

    Returns
    -------
    text : str
        The message with each such path shown as ``public_path`` shows it.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> from dataclasses import replace
    >>> G = example_graph()
    >>> G.mirrors["develop/e4s"] = replace(G.mirrors["develop/e4s"], location="/srv/e4s")
    >>> public_text(G, "/srv/e4s/blobs/x: a link to /root/.ssh/id_rsa, 3/4 read")
    'develop/e4s/blobs/x: a link to id_rsa, 3/4 read'
    """
    for root, name in _roots(G):
        text = text.replace(root, name)
    return _ABSOLUTE.sub(lambda m: PurePosixPath(m[0]).name or "/", text)


def _roots(G: CacheGraph) -> tuple[tuple[str, str], ...]:
    """The configured sources' folders and files with the names they are shown under,
    worked out once per load (the memo is the graph's: it goes with it)."""
    status = load_status(G)
    kept = G.memo.get(_KEY)
    if kept is not None and kept.status is status:
        return kept.roots
    named: dict[str, str] = {}
    for m in G.mirrors.values():
        if not is_url(m.location):
            root = str(local_root(m))
            named.setdefault(root, m.name)
            # its location as given (its root, build_cache/ or its index) below the name
            below = os.path.abspath(m.location)[len(root) :]
            named.setdefault(str(PurePosixPath(m.location)), m.name + below)
    if status is not None:
        for path in status.paths:
            named.setdefault(str(PurePosixPath(path)), PurePosixPath(path).name or "data")
        if status.snapshot:
            named.setdefault(status.snapshot, PurePosixPath(status.snapshot).name)
    roots: dict[str, str] = {}
    for root, name in named.items():  # as given, and as the absolute path it stands for
        roots.setdefault(root, name)
        roots.setdefault(os.path.abspath(root), name)
    ordered = tuple(sorted(roots.items(), key=lambda item: -len(item[0])))
    G.memo[_KEY] = _Roots(status, ordered)
    return ordered
