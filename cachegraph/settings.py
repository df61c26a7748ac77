"""Every setting of the server, each by CLI flag and by environment variable.

A flag wins over its variable, which wins over the default. The README's table
is ``cachegraph settings --markdown``; a test keeps the two equal.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cachegraph.graph import MirrorSource
from cachegraph.graph.changes import ChangeLog
from cachegraph.graph.sources.fetch import Fetcher, FetchLimits, ca_bundle_problem
from cachegraph.graph.sources.locations import is_url
from cachegraph.graph.sources.mirrors import mirrors_file
from cachegraph.graph.store.view import KEPT_BYTES

from .execution import Budgets, Limits
from .execution.persisted import BUDGET as PERSISTED_BUDGET
from .execution.persisted import Documents, load_trusted, sha256
from .execution.tracing import MIN_MS as TRACE_MIN_MS
from .execution.validators import MAX_AGE, Validators

if TYPE_CHECKING:
    from .state import DataSources

ENV_PREFIX = "CACHEGRAPH_"
_DEFAULTS = Limits()
_BUDGETS = Budgets()


def _setting(default: Any, help: str, metavar: str | None = None) -> Any:
    return field(default=default, metadata={"help": help, "metavar": metavar})


@dataclass(frozen=True)
class Settings:
    data: tuple[str, ...] = _setting(
        (),
        "cache pages, spec files or folders of them; the bundled seeds when none "
        "(variable: paths separated by ':')",
        "PATH",
    )
    mirror: tuple[str, ...] = _setting(
        (),
        "a Spack build cache (v2 or v3 layout: its root, build_cache/ or index.json; or a "
        "URL: http(s)://, s3://, gs://, oci://, oci+http://) whose specs STACK holds in TAG; "
        "named TAG/STACK (variable: separated by spaces)",
        "TAG:STACK=PATH",
    )
    mirrors_file: str = _setting(
        "",
        "a YAML or JSON file (or its URL: read again at each refresh, a copy kept in the cache "
        "directory) listing mirrors: {mirrors: [{name, tag, stack, path}]}, or the public cache "
        "indexer's {TAG: [{label, url}]}",
        "PATH",
    )
    refresh: float = _setting(
        600.0,
        "seconds between checks of the remote mirrors for a new index (as Spack's "
        "binary_index_ttl); only a changed mirror is fetched again; 0: never",
        "SECONDS",
    )
    remote_sizes: bool = _setting(
        True,
        "fetch each remote v3 mirror's spec manifests, and each OCI mirror's image manifests, "
        "once its data is served (a request a spec, kept in the cache directory) for sizes "
        "and tarballs, then load again",
    )
    index_first_bytes: int = _setting(
        32 << 20,
        "a local v3 mirror with an index of at least this many bytes is served from its index "
        "first (as Spack lists a mirror); its spec manifests (sizes, tarballs, the checks of "
        "their blobs) are read by a second process once served, then loaded again; -1: every "
        "mirror read whole before serving",
        "BYTES",
    )
    cache_dir: str = _setting(
        "",
        "where remote mirrors' indices are kept with their hashes and ETags (a restart asks "
        "only whether they changed, and serves them, marked stale, with the network down); "
        "none: $XDG_CACHE_HOME/cachegraph or ~/.cache/cachegraph",
        "PATH",
    )
    change_log_bytes: int = _setting(
        16 << 20,
        "bytes of the log of what each refresh or reload changed in each mirror (kept in the "
        "cache directory's changes/, in memory without one); the oldest whole events go first",
        "BYTES",
    )
    followers_per_client: int = _setting(
        4,
        "WebSocket subscription sockets and /changes/stream event streams one client address "
        "may hold at once",
        "N",
    )
    ca_bundle: str = _setting(
        "",
        "a file of CA certificates trusted for https:// and oci:// mirrors instead of the "
        "system's (TLS is always verified)",
        "PATH",
    )
    fetch_timeout: float = _setting(
        300.0,
        "seconds one file of a remote mirror may take to fetch, retries included (connect: "
        "10 s, each read: 30 s)",
        "SECONDS",
    )
    max_index_bytes: int = _setting(
        512 << 20,
        "bytes of one remote mirror's index, as sent and once decompressed (the public "
        "develop index is about 185 MB)",
        "BYTES",
    )
    index: tuple[str, ...] = _setting(
        (),
        "the same as --mirror (its name in earlier versions) (variable: separated by spaces)",
        "TAG:STACK=PATH",
    )
    host: str = _setting("127.0.0.1", "the address to listen on")
    port: int = _setting(8000, "the port to listen on")
    workers: int = _setting(
        1, "server processes, each with its own copy of the graph; prefer replicas"
    )
    log_level: str = _setting("info", "critical, error, warning, info or debug")
    log_format: str = _setting("json", "json (one object a line) or text")
    cors_origins: tuple[str, ...] = _setting(
        (), "browser origins allowed to call the API (variable: separated by commas)", "ORIGIN"
    )
    admin_token_file: str = _setting(
        "",
        "a file holding the bearer token for POST /admin/reload; no token, no endpoint",
        "PATH",
    )
    admin_token: str = _setting(
        "", "the token itself (prefer the file: flags show in process lists)", "TOKEN"
    )
    graphiql: bool = _setting(True, "serve the GraphiQL IDE at GET /graphql")
    ui: bool = _setting(True, "serve the web explorer at GET / and /ui/...")
    federation: bool = _setting(False, "serve the schema as an Apollo Federation 2 subgraph")
    introspection: bool = _setting(_DEFAULTS.introspection, "answer introspection queries")
    max_tokens: int = _setting(_DEFAULTS.max_tokens, "tokens in one query document")
    max_query_bytes: int = _setting(
        _DEFAULTS.max_query_bytes,
        "bytes of one query document (its variables may be larger: max_body_bytes)",
    )
    max_aliases: int = _setting(_DEFAULTS.max_aliases, "aliases in one query document")
    max_depth: int = _setting(_DEFAULTS.max_depth, "fields nested in one operation")
    max_cost: int = _setting(
        _DEFAULTS.max_cost, "fields one operation may return, nested page sizes multiplied"
    )
    max_introspection: int = _setting(
        _DEFAULTS.max_introspection, "whole-schema introspections (__schema) in one operation"
    )
    max_batch: int = _setting(10, "operations in one batched request (a JSON array)")
    max_body_bytes: int = _setting(
        4_194_304, "bytes in one request body (a spack.lock of 1,000 specs is about 2 MB)"
    )
    body_bytes_in_flight: int = _setting(
        67_108_864,
        "bytes of request bodies held at once by the requests being answered (a body is "
        "parsed and kept until its answer is sent); past it, HTTP 503 before reading more",
        "BYTES",
    )
    body_timeout: float = _setting(
        30.0, "seconds a client may take to send a request body", "SECONDS"
    )
    header_timeout: float = _setting(
        10.0,
        "seconds a client may take to send a request's headers (then 408; past 16 KiB of "
        "headers, 400)",
        "SECONDS",
    )
    keep_alive_timeout: float = _setting(
        5.0, "seconds an idle kept-alive connection stays open between requests", "SECONDS"
    )
    timeout: float = _setting(10.0, "seconds one request may run (a batch shares them)", "SECONDS")
    threads: int = _setting(
        0,
        "operations run at once in worker threads (others wait); 0: one a core, from 2 to 4 "
        "(more compete with the event loop for Python's lock)",
    )
    cache_max_age: int = _setting(
        MAX_AGE,
        "seconds a browser or proxy may reuse a GET answer before revalidating it with its "
        "ETag (Cache-Control: public, max-age); 0: revalidate every time",
        "SECONDS",
    )
    persisted_queries: int = _setting(
        PERSISTED_BUDGET,
        "bytes of query texts clients registered by their SHA-256 (automatic persisted "
        "queries); 0 keeps none",
        "BYTES",
    )
    trusted_documents: str = _setting(
        "",
        "a JSON file of sha256 -> document: the only documents answered (by hash or text), "
        "any other refused; `cachegraph trusted-documents` writes the explorer's",
        "PATH",
    )
    trace_min_ms: float = _setting(
        TRACE_MIN_MS,
        "with OTEL_EXPORTER_OTLP_ENDPOINT set (traces): the time a step of a request (parse, "
        "validate, a direct execution) takes to be a span of its own; 0: every step",
        "MS",
    )
    response_cache: int = _setting(
        _BUDGETS.responses,
        "bytes of answers kept for repeated operations until the data changes; 0 turns it off",
        "BYTES",
    )
    query_cache: int = _setting(
        _BUDGETS.queries, "bytes of parsed query texts, their checks and plans kept", "BYTES"
    )
    answer_cache: int = _setting(
        KEPT_BYTES,
        "bytes of answers to the questions clients vary (filtered counts, a name's facts) kept "
        "on the graph",
        "BYTES",
    )
    snapshot: str = _setting(
        "",
        "a snapshot file: written after each load, and read at start instead of the data "
        "when no data file has changed since",
        "PATH",
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Defaults overridden by CACHEGRAPH_* variables; ValueError names a bad one."""
        environ = os.environ if environ is None else environ
        values = {}
        for f in fields(cls):
            raw = environ.get(env_name(f.name))
            if raw is not None:
                values[f.name] = _from_text(f, raw)
        return check(cls(**values), env_name)

    def budgets(self) -> Budgets:
        return Budgets(queries=self.query_cache, responses=self.response_cache)

    def validators(self) -> Validators:
        return Validators(max_age=self.cache_max_age)

    def documents(self, registry: Any = None) -> Documents:
        """The documents known by hash: the trusted ones only, or the explorer's and those
        clients register. TrustedDocumentsError (a ValueError) names a bad file."""
        if self.trusted_documents:
            fixed, trusted = load_trusted(self.trusted_documents), True
        else:
            from .ui import ui_operations

            fixed, trusted = {sha256(t): t for t in ui_operations().values()}, False
        budget = self.persisted_queries
        return Documents(fixed, budget=budget, trusted=trusted, registry=registry)

    def limits(self) -> Limits:
        return Limits(
            max_tokens=self.max_tokens,
            max_query_bytes=self.max_query_bytes,
            max_aliases=self.max_aliases,
            max_depth=self.max_depth,
            max_cost=self.max_cost,
            max_introspection=self.max_introspection,
            introspection=self.introspection,
        )

    def worker_threads(self) -> int:
        """Operations run at once in worker threads: ``threads``, or for 0 one a core this
        process may use, at least 2 (a slow operation does not hold every other) and at
        most 4. Python runs one thread at a time, and the event loop waits its turn behind
        every busy one: under every attack of bench/attacks.py at once on 2 cores,
        /healthz p99 was 106 ms with 4 threads, 72 ms with 2 (docs/reliability.md)."""
        if self.threads:
            return self.threads
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        return min(4, max(2, cores or os.cpu_count() or 2))

    def mirror_sources(self) -> list[MirrorSource]:
        """Every mirror the settings name; ValueError says which is wrong."""
        return mirror_sources(self.mirror + self.index, self.mirrors_file, self.fetch_limits(),
                              self.cache_dir)  # fmt: skip

    def data_sources(self, mirrors: list[MirrorSource] | None = None) -> DataSources:
        """Where the server's data comes from, as the settings say (``mirrors``: those the
        settings name, already read)."""
        from .state import DataSources

        sources = DataSources(
            list(self.data),
            self.mirror_sources() if mirrors is None else mirrors,
            self.snapshot,
            cache_dir=self.cache_dir,
            fetch_limits=self.fetch_limits(),
            index_first_bytes=None if self.index_first_bytes < 0 else self.index_first_bytes,
        )
        if is_url(self.mirrors_file):  # read again at each check: its mirrors come and go
            sources.listing = self.mirrors_file
            sources.listed = sources.mirrors[len(self.mirror + self.index) :]
        sources.changes = self.change_log(sources.remote())
        return sources

    def change_log(self, remote: bool) -> ChangeLog:
        """The change log, in the cache directory's ``changes/`` when there is one (a remote
        mirror's default one included), else in memory."""
        from cachegraph.graph.sources.remote import default_cache_dir

        folder = self.cache_dir or (default_cache_dir() if remote else "")
        return ChangeLog(os.path.join(folder, "changes") if folder else None,
                         self.change_log_bytes)  # fmt: skip

    def fetch_limits(self) -> FetchLimits:
        """The bounds of each fetch from a remote mirror."""
        return FetchLimits(
            total_timeout=self.fetch_timeout,
            max_bytes=self.max_index_bytes,
            ca_bundle=self.ca_bundle,
        )

    def token(self) -> str | None:
        """The admin bearer token, from the file when one is named."""
        if self.admin_token_file:
            return Path(self.admin_token_file).read_text().strip() or None
        return self.admin_token or None

    def to_env(self) -> dict[str, str]:
        """The variables that give these settings to another process (a worker)."""
        return {env_name(f.name): _to_text(f.name, getattr(self, f.name)) for f in fields(self)}


FIELDS = {f.name: f for f in fields(Settings)}

#: Variables not named after their setting: one variable lists every mirror.
_ENV_NAMES = {"mirror": "CACHEGRAPH_MIRRORS"}


def _at_least(low: float) -> Callable[[Any], bool]:
    return lambda value: value >= low


LOG_LEVELS = ("critical", "error", "warning", "info", "debug")
#: what a setting allows where its type allows more: a test, and how to say it
_ALLOWED: dict[str, tuple[Callable[[Any], bool], str]] = {
    "port": (lambda v: 1 <= v <= 65535, "a port number (1-65535)"),
    "workers": (_at_least(1), "at least 1"),
    "log_level": (lambda v: v.lower() in LOG_LEVELS, "one of " + ", ".join(LOG_LEVELS)),
    "log_format": (("json", "text").__contains__, "json or text"),
    "max_tokens": (_at_least(1), "at least 1"),
    "max_query_bytes": (_at_least(1), "at least 1"),
    "max_aliases": (_at_least(1), "at least 1"),
    "max_depth": (_at_least(1), "at least 1"),
    "max_cost": (_at_least(1), "at least 1"),
    "max_introspection": (_at_least(0), "0 or more"),
    "max_batch": (_at_least(1), "at least 1"),
    "max_body_bytes": (_at_least(1), "at least 1"),
    "body_bytes_in_flight": (_at_least(1), "at least 1"),
    "timeout": (lambda v: 0 < v < math.inf, "a number of seconds above 0"),
    "body_timeout": (lambda v: 0 < v < math.inf, "a number of seconds above 0"),
    "header_timeout": (lambda v: 0 < v < math.inf, "a number of seconds above 0"),
    "keep_alive_timeout": (lambda v: 0 < v < math.inf, "a number of seconds above 0"),
    "response_cache": (_at_least(0), "0 (off) or more"),
    "cache_max_age": (_at_least(0), "0 or more seconds"),
    "persisted_queries": (_at_least(0), "0 or more"),
    "trace_min_ms": (lambda v: 0 <= v < math.inf, "0 or more milliseconds"),
    "query_cache": (_at_least(0), "0 or more"),
    "threads": (_at_least(0), "0 (one a core) or more"),
    "answer_cache": (_at_least(0), "0 or more"),
    "refresh": (lambda v: 0 <= v < math.inf, "0 (never) or more seconds"),
    "fetch_timeout": (lambda v: 0 < v < math.inf, "a number of seconds above 0"),
    "max_index_bytes": (_at_least(1), "at least 1"),
    "change_log_bytes": (_at_least(1), "at least 1"),
    "index_first_bytes": (_at_least(-1), "-1 (off) or a number of bytes"),
    "ca_bundle": (lambda v: not ca_bundle_problem(v), "a readable file of PEM CA certificates"),
}


def check(settings: Settings, name_of: Callable[[str], str]) -> Settings:
    """``settings`` when every value is one its setting allows; else ValueError naming it.

    >>> check(Settings(port=99999), flag_name)
    Traceback (most recent call last):
    ...
    ValueError: --port 99999: must be a port number (1-65535)
    """
    for name, (allowed, wanted) in _ALLOWED.items():
        value = getattr(settings, name)
        if not allowed(value):
            raise ValueError(f"{name_of(name)} {value!r}: must be {wanted}")
    return settings


def env_name(name: str) -> str:
    return _ENV_NAMES.get(name) or ENV_PREFIX + name.upper()


def mirror_sources(
    texts: Iterable[str],
    listing: str = "",
    limits: FetchLimits | None = None,
    cache_dir: str = "",
) -> list[MirrorSource]:
    """The mirrors of ``TAG:STACK=PATH`` texts, then those of a mirrors file (a path or a
    URL, fetched within ``limits`` and kept in the cache directory, ``cache_dir`` or the
    default one); ValueError names a bad one."""
    found = [MirrorSource.parse(text) for text in texts]
    if not listing:
        return found
    from cachegraph.graph.sources.remote import default_cache_dir

    with Fetcher(limits) as fetcher:
        return found + mirrors_file(listing, fetcher, cache_dir or default_cache_dir())


def flag_name(name: str) -> str:
    return "--" + name.replace("_", "-")


_SEPARATORS = {"data": ":", "index": " ", "mirror": " ", "cors_origins": ","}


def _from_text(f: dataclasses.Field, raw: str, name_of: Callable[[str], str] | None = None) -> Any:
    """A setting's value from its variable's (or flag's) text; ValueError names the variable
    (or flag, by ``name_of``), the text and what it should be, in one line.

    >>> _from_text(FIELDS["port"], "abc", flag_name)
    Traceback (most recent call last):
    ...
    ValueError: --port: 'abc' is not a port number (1-65535)
    """
    kind = type(f.default)
    name = (name_of or env_name)(f.name)
    if kind is tuple:
        sep = _SEPARATORS[f.name]
        return tuple(part for part in (p.strip() for p in raw.split(sep)) if part)
    if kind is bool:
        lowered = raw.strip().lower()
        if lowered not in ("1", "true", "yes", "on", "0", "false", "no", "off"):
            raise ValueError(f"{name}: {raw!r} is not true or false")
        return lowered in ("1", "true", "yes", "on")
    if kind is str:
        return raw
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if f.name == "port" and (value is None or not 1 <= value <= 65535):
        # 0 would be a port the system picks, which nothing would tell the user
        raise ValueError(f"{name}: {raw!r} is not a port number (1-65535)")
    if value is None:
        wanted = "a whole number" if kind is int else "a number"
        raise ValueError(f"{name}: {raw!r} is not {wanted}")
    return value


def _to_text(name: str, value: Any) -> str:
    if isinstance(value, tuple):
        return _SEPARATORS[name].join(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def add_arguments(parser: argparse.ArgumentParser, base: Settings) -> None:
    """One flag a setting, its default taken from ``base`` (the environment)."""
    for f in fields(Settings):
        default = getattr(base, f.name)
        kind = type(f.default)
        options: dict[str, Any] = {"dest": f.name, "help": f.metadata["help"]}
        if f.metadata["metavar"]:
            options["metavar"] = f.metadata["metavar"]
        if kind is tuple:
            options.update(action="append", default=None)
        elif kind is bool:
            options.update(action=argparse.BooleanOptionalAction, default=default)
        else:
            # Text, converted by from_arguments as a variable's is: a bad value is one
            # line naming the flag, not argparse's usage and "invalid int value".
            options.update(default=default)
        parser.add_argument(flag_name(f.name), **options)


#: How remote mirrors are fetched: flags of every command that reads mirrors, not only serve.
FETCH_SETTINGS = ("cache_dir", "ca_bundle", "fetch_timeout", "max_index_bytes")


def add_fetch_arguments(parser: argparse.ArgumentParser) -> None:
    """The fetch settings' flags, for a command other than serve (which has every setting)."""
    for f in fields(Settings):
        if f.name in FETCH_SETTINGS:
            parser.add_argument(flag_name(f.name), dest=f.name, default=None,
                                metavar=f.metadata["metavar"], help=f.metadata["help"])  # fmt: skip


def with_fetch_arguments(args: argparse.Namespace, base: Settings) -> Settings:
    """``base`` with the fetch settings a command's flags give (text, converted and checked
    as a variable's is: ValueError names a bad one)."""
    given = {
        f.name: _from_text(f, value, flag_name) if type(f.default) is not str else value
        for f in fields(Settings)
        if f.name in FETCH_SETTINGS and (value := getattr(args, f.name, None)) is not None
    }
    return check(dataclasses.replace(base, **given), flag_name) if given else base


def from_arguments(args: argparse.Namespace, base: Settings) -> Settings:
    values = {}
    for f in fields(Settings):
        value = getattr(args, f.name)
        if type(f.default) is tuple:
            value = tuple(value) if value is not None else getattr(base, f.name)
        elif isinstance(value, str) and type(f.default) is not str:
            value = _from_text(f, value, flag_name)
        values[f.name] = value
    return check(Settings(**values), flag_name)


def markdown_table() -> str:
    """The README's table of settings."""
    rows = ["| flag | environment variable | default | what it sets |", "|---|---|---|---|"]
    for f in fields(Settings):
        default = f"`{_to_text(f.name, f.default)}`" if f.default not in ((), "") else "none"
        help = f.metadata["help"]
        rows.append(f"| `{flag_name(f.name)}` | `{env_name(f.name)}` | {default} | {help} |")
    return "\n".join(rows)
