"""Persisted queries: documents sent by their SHA-256 instead of their text.

Two modes, as the anchors have them:

- **Automatic persisted queries** (Apollo's protocol): a client sends
  ``extensions.persistedQuery = {"version": 1, "sha256Hash": H}`` without the text;
  when the server knows H it answers, else it answers the error
  ``PersistedQueryNotFound`` and the client sends the text with the hash once, which
  registers it. Over GET, the URL is short and the same for everyone asking the same
  question: what a browser, nginx or a CDN keeps. Registered texts are kept in a cache
  bounded by bytes (``--persisted-queries``), shown in /metrics as ``persisted``.
- **Trusted documents** (``--trusted-documents FILE``): the file lists the only
  documents the server answers, by hash or by text; any other is refused with an error
  that says how to get it answered, and nothing is registered. For public
  deployments that want to answer only known questions.

The explorer's own operations are known by hash from the start (they are fixed,
never evicted), so its GETs are answered by any replica without registering;
``cachegraph trusted-documents`` writes them as a trusted-documents file.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, Counter

from cachegraph.graph.bounded import BoundedCache

#: the default of ``--persisted-queries``: bytes of registered query texts kept
BUDGET = 16 * 2**20
_HASH = re.compile(r"[0-9a-f]{64}")
NOT_FOUND = "PersistedQueryNotFound"


def sha256(text: str) -> str:
    """The hash a persisted query is known by: SHA-256 of its UTF-8 text, in hex.

    >>> sha256("{ stats { specCount } }")[:16]
    '4de0b0c6af896c93'
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _error(message: str, code: str, **extensions: Any) -> bytes:
    return orjson.dumps(
        {"errors": [{"message": message, "extensions": {"code": code, **extensions}}]}
    )


class TrustedDocumentsError(ValueError):
    """A trusted-documents file that cannot be used: says which and why."""


def load_trusted(path: str | Path) -> dict[str, str]:
    """hash -> document of a trusted-documents file: a JSON object ``{sha256: document}``,
    or Apollo's persisted query manifest (``{"operations": [{"id", "body"}]}``).
    TrustedDocumentsError names the file and the entry at fault."""
    try:
        given = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TrustedDocumentsError(f"{path}: cannot read the trusted documents: {exc}") from None
    if isinstance(given, dict) and isinstance(given.get("operations"), list):
        pairs = [(o.get("id"), o.get("body")) if isinstance(o, dict) else (None, None)
                 for o in given["operations"]]  # fmt: skip
    elif isinstance(given, dict):
        pairs = list(given.items())
    else:
        raise TrustedDocumentsError(
            f"{path}: the trusted documents must be a JSON object of sha256 -> document"
        )
    documents = {}
    for key, text in pairs:
        if not isinstance(key, str) or not isinstance(text, str):
            raise TrustedDocumentsError(f"{path}: entry {key!r}: give a sha256 and a document text")
        if sha256(text) != key.lower():
            raise TrustedDocumentsError(
                f"{path}: entry {key}: the document's SHA-256 is {sha256(text)}, not its key"
            )
        documents[key.lower()] = text
    return documents


class Documents:
    """The documents known by hash: ``fixed`` ones, and those clients register (unless
    ``trusted``: then the fixed ones are the only documents answered)."""

    def __init__(
        self,
        fixed: Mapping[str, str] | None = None,
        *,
        budget: int = BUDGET,
        trusted: bool = False,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.fixed = dict(fixed or {})
        self.trusted = trusted
        self.cache = BoundedCache(0 if trusted else budget)
        self.counted = Counter(
            "cachegraph_persisted_queries",
            "operations sent by hash: hit (known), miss (PersistedQueryNotFound), registered "
            "(text and hash sent), refused (not a trusted document, or a hash not of its text)",
            ["result"],
            registry=registry,
        )
        self._hits = self.counted.labels("hit")

    def resolve(self, op: Any) -> Any:
        """``op`` with its document's text, or the error answer (JSON bytes) to give instead."""
        given = (op.extensions or {}).get("persistedQuery") if op.extensions else None
        if given is None:
            if not self.trusted or sha256(op.query) in self.fixed:
                return op
            return self._refused(sha256(op.query))
        if not op.query and isinstance(given, dict):  # a hit first: the common case, checked least
            key = given.get("sha256Hash")
            text = self.fixed.get(key) if isinstance(key, str) else None
            if text is None and not self.trusted and isinstance(key, str):
                text = self.cache.get(key)
            if text is not None and given.get("version") == 1:
                self._hits.inc()
                return type(op)(text, op.variables, op.name, op.extensions)
        if not isinstance(given, dict) or given.get("version") != 1:
            self.counted.labels("refused").inc()
            return _error(
                "Unsupported persisted query version: send extensions.persistedQuery.version 1",
                "PERSISTED_QUERY_NOT_SUPPORTED",
            )
        key = given.get("sha256Hash")
        if not isinstance(key, str) or not _HASH.fullmatch(key):
            self.counted.labels("refused").inc()
            return _error(
                "extensions.persistedQuery.sha256Hash must be the SHA-256 of the query text, "
                "64 lowercase hexadecimal digits",
                "BAD_USER_INPUT",
            )
        if op.query:  # the text with its hash: registered, then answered
            if sha256(op.query) != key:
                self.counted.labels("refused").inc()
                return _error(
                    "provided sha does not match query: sha256Hash must be the SHA-256 of the "
                    "query's UTF-8 text",
                    "BAD_USER_INPUT",
                )
            if self.trusted:
                return op if key in self.fixed else self._refused(key)
            if key not in self.fixed:
                self.cache.put(key, op.query, sys.getsizeof(op.query) + 200)
            self.counted.labels("registered").inc()
            return op
        # by hash, and not found above
        if self.trusted:
            return self._refused(key)
        self.counted.labels("miss").inc()
        return _error(NOT_FOUND, "PERSISTED_QUERY_NOT_FOUND")

    def _refused(self, key: str) -> bytes:
        self.counted.labels("refused").inc()
        return _error(
            f"this server answers only its trusted documents, and {key} is not one of them: "
            "send the sha256Hash of a listed document in extensions.persistedQuery, or ask "
            "the operator to add yours to the --trusted-documents file",
            "PERSISTED_QUERY_NOT_TRUSTED",
            sha256Hash=key,
        )
