"""A registry front that asks for a bearer token, as public registries (ghcr.io, Docker Hub)
do for anonymous pulls: a test's own small server, since no such server is packaged here.

A request under ``/v2/`` without a token this front issued for its repository is answered
``401`` with ``WWW-Authenticate: Bearer realm="<front>/token",service="...",scope="..."``
(the challenge Spack's ``spack.oci.opener`` parses); ``GET /token?service=..&scope=..``
gives ``{"token": ..., "access_token": ...}`` to anyone (anonymous); with the token, the
request is proxied to the registry behind. Every request is recorded for assertions.
"""

from __future__ import annotations

import http.client
import json
import re
import secrets
import ssl
import threading
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SERVICE = "cachegraph-test-registry"
#: Headers of one hop only, not passed on (RFC 9110 7.6.1).
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "upgrade", "te", "trailer"}


@dataclass(frozen=True)
class Seen:
    """One request the front answered: its method, path, whether it had a valid token, status."""

    method: str
    path: str
    authorized: bool
    status: int


def repository_of(path: str) -> str | None:
    """The repository a registry API path is about, or None (``/v2/`` itself).

    >>> repository_of("/v2/org/mirror/manifests/index.spack")
    'org/mirror'
    >>> repository_of("/v2/") is None
    True
    """
    found = re.match(r"^/v2/(.+?)/(manifests|blobs|tags)/", path)
    return found.group(1) if found else None


class BearerFront:
    """Serves on 127.0.0.1:``port`` (0: any), proxying to ``upstream`` (``http://host:port``).

    With ``tls`` (a server context) it speaks HTTPS: Spack asks a token realm over https only.
    """

    def __init__(self, upstream: str, tls: ssl.SSLContext | None = None, port: int = 0) -> None:
        self.upstream = urllib.parse.urlsplit(upstream)
        self.tokens: dict[str, str] = {}  # token -> the scope it was issued for
        self.token_requests: list[dict[str, str]] = []
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", port), self.handler())
        self.server.daemon_threads = True
        if tls is not None:
            # the handshake in the request's thread, not in the accepting one
            self.server.socket = tls.wrap_socket(
                self.server.socket, server_side=True, do_handshake_on_connect=False
            )
        scheme = "https" if tls is not None else "http"
        self.base = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        self.realm = f"{self.base}/token"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    def url(self, repository: str) -> str:
        """The mirror URL of ``repository`` behind this front (``oci://`` is https)."""
        scheme = "oci" if self.base.startswith("https") else "oci+http"
        return f"{scheme}://127.0.0.1:{self.port}/{repository}"

    def start(self) -> BearerFront:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)

    def issue(self, scope: str) -> str:
        token = secrets.token_hex(16)
        with self.lock:
            self.tokens[token] = scope
        return token

    def allows(self, authorization: str | None, repository: str | None) -> bool:
        """A token of this front's, for the repository (any token of its for ``/v2/``)."""
        if not authorization or not authorization.startswith("Bearer "):
            return False
        with self.lock:
            scope = self.tokens.get(authorization.removeprefix("Bearer ").strip())
        if scope is None:
            return False
        if repository is None:
            return True
        # "repository:NAME:pull" or "repository:NAME:pull,push", several space-separated
        return any(s.split(":")[1:2] == [repository] and "pull" in s.rsplit(":", 1)[-1]
                   for s in scope.split())  # fmt: skip

    def challenge(self, repository: str | None) -> str:
        params = f'realm="{self.realm}",service="{SERVICE}"'
        return params + (f',scope="repository:{repository}:pull"' if repository else "")

    def handler(self) -> type[BaseHTTPRequestHandler]:
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass  # the record is front.seen

            def answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                if "Content-Length" not in headers:  # a HEAD's is the upstream's
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def handle_any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = urllib.parse.urlsplit(self.path).path
                if path == "/token":
                    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
                    with front.lock:
                        front.token_requests.append(query)
                    token = front.issue(query.get("scope", ""))
                    doc = {"token": token, "access_token": token, "expires_in": 300}
                    self.answer(200, {"Content-Type": "application/json"}, json.dumps(doc).encode())
                    self.record(path, False, 200)
                    return
                repository = repository_of(path)
                if not front.allows(self.headers.get("Authorization"), repository):
                    error = {"errors": [{"code": "UNAUTHORIZED", "message": "authentication "
                                         "required", "detail": None}]}  # fmt: skip
                    challenge = f"Bearer {front.challenge(repository)}"
                    headers = {"Content-Type": "application/json", "WWW-Authenticate": challenge}
                    self.answer(401, headers, json.dumps(error).encode())
                    self.record(path, False, 401)
                    return
                status = self.proxy(body)
                self.record(path, True, status)

            def proxy(self, body: bytes) -> int:
                upstream = front.upstream
                host, port = upstream.hostname, upstream.port
                connection = http.client.HTTPConnection(host, port, timeout=30)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in HOP_BY_HOP | {"authorization", "host"}}  # fmt: skip
                try:
                    connection.request(self.command, self.path, body=body or None, headers=headers)
                    response = connection.getresponse()
                    data = response.read()
                finally:
                    connection.close()
                dropped = HOP_BY_HOP | ({"content-length"} if self.command != "HEAD" else set())
                back = {k: v for k, v in response.getheaders() if k.lower() not in dropped}
                if "Location" in back:  # the registry names itself: name the front instead
                    origin = f"http://{upstream.hostname}:{upstream.port}"
                    back["Location"] = back["Location"].replace(origin, front.base)
                self.answer(response.status, back, data)
                return response.status

            def record(self, path: str, authorized: bool, status: int) -> None:
                with front.lock:
                    front.seen.append(Seen(self.command, path, authorized, status))

            do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

        return Handler
