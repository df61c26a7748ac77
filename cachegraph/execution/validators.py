"""HTTP validators: an ``ETag`` per data version and operation, ``If-None-Match`` and 304,
and the ``Cache-Control`` that lets browsers, nginx and CDNs keep GET answers.

The data changes only when the server reloads it; an answer depends on nothing
but the data, the schema and the operation (its document, operation name and
variables). So the ETag of an answer is worked out *before* executing it::

    ETag: "<data version>-<operation digest>"

and a client (or a proxy revalidating its copy) that already holds that ETag gets
``304 Not Modified`` without the operation running. The data version is a digest
of the graph's columns and mirrors, the schema and the server's version: the same
data loaded by two replicas has the same version (a proxy in front of both gets
304 from either), and a reload that changes the data changes it, so every cache
revalidates and gets the new answer.

Only answers without errors carry validators (an error may be transient: a
timeout, a limit); GET answers carry ``Cache-Control: public, max-age=N``, error
answers ``Cache-Control: no-store``. The answer depends on no request header but
``Accept`` (``application/graphql-response+json`` or ``application/json``: the ETag
says which) and ``Origin`` (the CORS headers), which the app's CORS layer names in
``Vary`` on every response, 304s included. POST answers carry the ETag too (a client may send
``If-None-Match``), but no shared cache keeps a POST.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import anyio
import orjson
from starlette.responses import Response

#: the default of ``--cache-max-age``: seconds a browser or proxy reuses a GET answer
MAX_AGE = 300
#: bytes of the version and the operation digest shown in an ETag (hex: twice as many)
_VERSION_BYTES, _OPERATION_BYTES = 8, 12
#: where an error answer says so (the body's keys are written data first, errors second)
_ERRORS = b'"errors":['


def graph_digest(graph: Any) -> str:
    """A digest of what a graph holds: every column (the snapshot's arrays) and mirror.

    >>> from cachegraph.graph.store.example import example_graph
    >>> graph_digest(example_graph()) == graph_digest(example_graph())
    True
    """
    store = getattr(graph, "store", None)
    if store is None:  # not built from columns: a version of its own, never equal to another
        return uuid.uuid4().hex
    digest = hashlib.blake2b(digest_size=16)
    for name in sorted(store.arrays):
        array = store.arrays[name]
        digest.update(f"{name} {array.dtype.str} {array.shape}\n".encode())
        digest.update(memoryview(array.ravel(order="C")).cast("B"))
    digest.update(orjson.dumps([repr(m) for m in store.mirrors]))
    return digest.hexdigest()


class DataVersions:
    """The data version of each graph served, worked out once (in a worker thread: at a
    million specs it reads every column, tenths of a second)."""

    def __init__(self, salt: str) -> None:
        #: what else an answer depends on: the server's version and its schema
        self.salt = salt
        self._known: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def known(self, graph: Any) -> str | None:
        return self._known.get(graph)

    def of(self, graph: Any) -> str:
        found = self._known.get(graph)
        if found is None:
            with self._lock:  # two requests on a new graph: one digest
                found = self._known.get(graph)
                if found is None:
                    whole = hashlib.blake2b(digest_size=_VERSION_BYTES)
                    whole.update(self.salt.encode())
                    whole.update(graph_digest(graph).encode())
                    found = self._known[graph] = whole.hexdigest()
        return found

    def warm(self, graph: Any) -> None:
        """Work out ``graph``'s version in a background thread, before a request needs it
        (at a million specs: seconds of hashing, which releases Python's lock)."""
        if graph is not None and graph not in self._known:
            threading.Thread(target=self.of, args=(graph,), daemon=True, name="version").start()

    async def version(self, graph: Any) -> str:
        found = self._known.get(graph)
        return found if found is not None else await anyio.to_thread.run_sync(self.of, graph)


def etag(version: str, operations: Iterable[Any]) -> str | None:
    """The ETag of the answer to ``operations`` (``query``, ``variables``, ``name``) on the data
    of ``version``; None when an operation has no stable key (variables orjson cannot write).

    >>> class Op:
    ...     query, variables, name = "{ stats { specCount } }", {"b": 1, "a": 2}, None
    >>> tag = etag("0123456789abcdef", [Op()])
    >>> tag.startswith('"0123456789abcdef-'), len(tag)
    (True, 43)
    """
    digest = hashlib.blake2b(digest_size=_OPERATION_BYTES)
    for op in operations:
        try:
            variables = orjson.dumps(op.variables, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits
            return None
        query = op.query.encode("utf-8", "surrogatepass")
        name = (op.name or "").encode("utf-8", "surrogatepass")
        for part in (query, variables, name):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
    return f'"{version}-{digest.hexdigest()}"'


def matches(if_none_match: str | None, tag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``tag`` (weak comparison, as RFC 9110 says).

    >>> matches('W/"a-1", "b-2"', '"a-1"'), matches("*", '"x"'), matches('"a-1"', '"a-2"')
    (True, True, False)
    """
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(
        candidate.strip().removeprefix("W/") == tag for candidate in if_none_match.split(",")
    )


@dataclass(frozen=True)
class Validators:
    """What the executor asks before executing and after: 304 or not, and the headers."""

    max_age: int = MAX_AGE

    def not_modified(self, method: str, tag: str) -> Response:
        return Response(status_code=304, headers=self.headers(method, tag))

    def headers(self, method: str, tag: str | None) -> dict[str, str]:
        """The headers of an answer: with its ETag when it has one (no errors)."""
        if tag is None:
            return {"cache-control": "no-store"} if method == "GET" else {}
        if method != "GET":
            return {"etag": tag}
        # The media type answered follows Accept (GraphQL over HTTP): a cache keeps each; the
        # admin's answer (by its bearer) is another, never kept.
        return {
            "etag": tag,
            "cache-control": f"public, max-age={self.max_age}",
            "vary": "Accept, Authorization",
        }

    def respond(
        self,
        method: str,
        tag: str | None,
        body: bytes,
        payloads: list[bytes],
        status: int = 200,
        media: str = "application/json",
    ) -> Response:
        """The answer, its validators dropped when any operation answered with errors."""
        if tag is not None and any(_ERRORS in payload for payload in payloads):
            tag = None
        return Response(body, status, media_type=media, headers=self.headers(method, tag))
