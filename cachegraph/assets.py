"""The package's static files (GraphiQL's and the explorer's), answered from memory.

They are part of the installed package and never change while the server runs, so
each is read once, at the first request for it, and answered from the event loop with
an ETag; a browser that has it gets 304. Starlette's ``StaticFiles`` stats and reads
the file in a worker thread on every request: the explorer asks for a dozen files at
once, and on two cores that cost about 100 ms of its first paint (``bench/ui.py``).
"""

from __future__ import annotations

import hashlib
import mimetypes
from collections.abc import Iterator
from importlib.abc import Traversable

from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

#: what the files are, whatever the machine's mime.types says (.mjs is not in every one)
_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css"}


class Assets:
    """An ASGI app serving the files under ``root`` (a package folder)."""

    def __init__(self, root: Traversable) -> None:
        self.root = root
        self.kept: dict[str, tuple[bytes, str, str]] = {}
        #: every file's path under root ("ui/app.js"), listed at the first request: a
        #: path a client makes up is answered 404 without asking the file system (a
        #: 256-byte name made stat() raise)
        self.files: frozenset[str] | None = None

    def _read(self, path: str) -> tuple[bytes, str, str] | None:
        if self.files is None:
            self.files = frozenset(_listed(self.root, ""))
        path = path.strip("/")
        if path not in self.files:
            return None
        if path not in self.kept:
            parts = path.split("/")
            data = self.root.joinpath(*parts).read_bytes()
            suffix = "." + parts[-1].rpartition(".")[2]
            kind = _TYPES.get(suffix) or mimetypes.guess_type(parts[-1])[0]
            etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
            self.kept[path] = (data, kind or "application/octet-stream", etag)
        return self.kept[path]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self._read(scope["path"][len(scope.get("root_path", "")) :])
        if scope["method"] not in ("GET", "HEAD"):
            response: Response = PlainTextResponse("Method Not Allowed", 405)
        elif found is None:
            response = PlainTextResponse("Not Found", 404)
        else:
            data, kind, etag = found
            headers = {"etag": etag, "cache-control": "no-cache"}
            if etag in _header(scope, b"if-none-match"):
                response = Response(status_code=304, headers=headers)
            else:
                response = Response(data, media_type=kind, headers=headers)
        await response(scope, receive, send)


def _listed(folder: Traversable, prefix: str) -> Iterator[str]:
    """The paths of the files under ``folder``, hidden names left out."""
    for entry in folder.iterdir():
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            yield from _listed(entry, f"{prefix}{entry.name}/")
        elif entry.is_file():
            yield prefix + entry.name


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return ""
