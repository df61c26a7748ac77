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
from importlib.abc import Traversable

from starlette.responses import PlainTextResponse, Response
from starlette.types import Receive, Scope, Send

#: what the files are, whatever the machine's mime.types says (.mjs is not in every one)
_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css"}


class Assets:
    """An ASGI app serving the files under ``root`` (a package folder)."""

    def __init__(self, root: Traversable) -> None:
        self.root = root
        self.kept: dict[str, tuple[bytes, str, str] | None] = {}

    def _read(self, path: str) -> tuple[bytes, str, str] | None:
        if path not in self.kept:
            parts = [p for p in path.split("/") if p]
            found = None
            if parts and not any(p in (".", "..") or p.startswith(".") for p in parts):
                file = self.root.joinpath(*parts)
                if file.is_file():
                    data = file.read_bytes()
                    suffix = "." + parts[-1].rpartition(".")[2]
                    kind = _TYPES.get(suffix) or mimetypes.guess_type(parts[-1])[0]
                    etag = '"' + hashlib.sha256(data).hexdigest()[:32] + '"'
                    found = (data, kind or "application/octet-stream", etag)
            # Unknown paths are kept too (as None), but only as many as there are files.
            if found is not None or len(self.kept) < 4096:
                self.kept[path] = found
            return found
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


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return ""
