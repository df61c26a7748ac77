"""The ``cachegraph`` command: serve, query, find, coverage, diff, export-schema,
trusted-documents, validate, synth."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from cachegraph.graph import CacheGraph, LoadReport, MirrorSource, deadline, load
from cachegraph.graph.errors import CacheGraphError, TimedOut
from cachegraph.graph.sources.remote import held_state
from cachegraph.graph.words import counted

from . import settings as config
from .printing import terminal_text
from .progress import ProgressLine
from .state import DataSources, load_sources


class UsageError(Exception):
    """A command given what it cannot take: ``main`` says the message and exits 2, as
    argparse does for its own usage errors."""


class _CommandParser(argparse.ArgumentParser):
    """A command's parser. What it does not know is its usage error, said with its usage:
    argparse leaves unknown arguments to the top level, which printed the top usage."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(_unknown(extras))
        return namespace, extras


class _TopParser(argparse.ArgumentParser):
    """The top level: an unknown option or no command is said with the list of commands."""

    commands: Sequence[str] = ()

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        namespace, extras = super().parse_known_args(args, namespace)
        listed = (
            f"the commands: {', '.join(self.commands)} ('cachegraph COMMAND -h' for one's help)"
        )
        if extras:
            self.error(f"{_unknown(extras)}; {listed}")
        if namespace.command is None:
            self.error(f"no command given; {listed}")
        return namespace, extras


def _unknown(extras: Sequence[str]) -> str:
    """What argparse could not place, the first of it: an option, or an argument too many."""
    first = extras[0]
    return f"unknown option {first}" if first.startswith("-") else f"unexpected argument {first!r}"


def _mirror(text: str) -> MirrorSource:
    try:
        return MirrorSource.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_mirror_options(parser: argparse.ArgumentParser) -> None:
    for flag in ("--mirror", "--index"):
        parser.add_argument(
            flag,
            dest="mirror",
            action="append",
            default=[],
            type=_mirror,
            metavar="TAG:STACK=PATH",
            help="a Spack build cache (a path or a URL) whose specs STACK holds in TAG (repeatable)"
            if flag == "--mirror"
            else "the same as --mirror",
        )
    parser.add_argument(
        "--mirrors-file", metavar="PATH", help="a YAML or JSON list of mirrors (a path or a URL)"
    )
    config.add_fetch_arguments(parser)


def _mirrors(args: argparse.Namespace) -> list[MirrorSource]:
    """The mirrors of --mirror (else CACHEGRAPH_MIRRORS) and of --mirrors-file (else
    CACHEGRAPH_MIRRORS_FILE), each flag overriding its variable as for serve; exits with the
    problem when one is bad."""
    base: config.Settings = args.base
    try:
        named = args.mirror or [MirrorSource.parse(t) for t in base.mirror + base.index]
    except ValueError as exc:
        raise SystemExit(f"cachegraph: error: {config.env_name('mirror')}: {exc}") from None
    listing = args.mirrors_file or base.mirrors_file
    try:
        listed = config.mirror_sources((), listing, base.fetch_limits(), base.cache_dir)
    except ValueError as exc:
        flag = "--mirrors-file" if args.mirrors_file else config.env_name("mirrors_file")
        raise SystemExit(f"cachegraph: error: {flag}: {exc}") from None
    return named + listed


def _add_data_options(parser: argparse.ArgumentParser, required: bool = False) -> None:
    parser.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="PATH",
        help="a cache page, spec file or folder of them (repeatable); default: the bundled seeds",
    )
    _add_mirror_options(parser)
    parser.add_argument(
        "-q", "--quiet", action="store_true",
        help="print only the answer and errors: no warnings about the data "
        "(as CACHEGRAPH_LOG_LEVEL=error)",
    )  # fmt: skip


def _data(args: argparse.Namespace) -> list[str]:
    """--data, else CACHEGRAPH_DATA (as for serve)."""
    return list(args.data) or list(args.base.data)


def _sources(args: argparse.Namespace, paths: list[str] | None = None) -> DataSources:
    """The command's data (``paths``, else --data or CACHEGRAPH_DATA) and mirrors."""
    base: config.Settings = args.base
    sources = base.data_sources(_mirrors(args))
    sources.paths = _data(args) if paths is None else paths
    sources.snapshot = ""  # a command reads its data; only a server keeps a snapshot
    sources.index_first_bytes = None  # and answers on the whole of it: no later load
    sources.listing, sources.listed = "", []  # its mirrors file read once, by _mirrors
    return sources


def _level(args: argparse.Namespace) -> int:
    """The least severity of what a command prints besides its answer (a logging level)."""
    level = getattr(logging, args.base.log_level.upper())
    return max(level, logging.ERROR) if getattr(args, "quiet", False) else level


def _load(args: argparse.Namespace, command: str) -> tuple[CacheGraph, LoadReport]:
    """Load a command's sources, printing their problems once each, as the level asks."""
    logger = logging.getLogger("cachegraph")
    kept = logger.level
    logger.setLevel(logging.CRITICAL + 1)  # printed below, not logged as well
    try:
        graph, report, _ = load_sources(_sources(args))
    finally:
        logger.setLevel(kept)
    level = _level(args)
    shown = [
        p for p in report.problems
        if (logging.WARNING if p.severity == "warning" else logging.ERROR) >= level
    ]  # fmt: skip
    for problem in shown[:SHOWN_PROBLEMS]:
        _say(command, str(problem))
    if len(shown) > SHOWN_PROBLEMS:
        _say(
            command,
            f"... and {counted(len(shown) - SHOWN_PROBLEMS, 'more problem')} with the data "
            "('cachegraph validate' lists them all)",
        )
    return graph, report


#: Problems with the data a command prints before its answer; validate prints them all.
SHOWN_PROBLEMS = 20


def _say(command: str, message: str) -> None:
    print(f"cachegraph {command}: {terminal_text(message)}", file=sys.stderr)


def _answered_despite(command: str, report: LoadReport) -> int:
    """A command that answered exits 0; it says when some data could not be read."""
    if report.errors:
        _say(
            command,
            f"answered from the data that loaded; {counted(len(report.errors), 'error')} "
            "in the sources (above)",
        )
    return 0


def _time_limit(args: argparse.Namespace) -> contextlib.AbstractContextManager:
    """The server's time limit for one operation (CACHEGRAPH_TIMEOUT), for a command's answer."""
    return deadline.until(time.monotonic() + args.base.timeout)


def _timed_out(command: str, args: argparse.Namespace) -> int:
    _say(
        command,
        f"stopped: the answer took longer than {args.base.timeout:g} s, the server's limit for "
        f"one operation (CACHEGRAPH_TIMEOUT)",
    )
    return 1


def serve(args: argparse.Namespace) -> int:
    from .observe import configure_logging  # (imported already, by the settings' execution)

    settings = config.from_arguments(args, args.base)
    _check_mirrors_given(args, settings)  # a usage error, said before anything else
    configure_logging(settings.log_level, settings.log_format)  # before a mirrors file's fetch
    mirrors = _served_mirrors(args, settings)  # a bad mirror fails here, not in a worker
    try:
        settings.documents()  # and a bad trusted-documents file
    except ValueError as exc:
        raise SystemExit(f"cachegraph: error: {exc}") from None
    given = [*settings.data, *(str(m.path) for m in mirrors if not m.url)]
    if given and not any(m.url for m in mirrors) and not any(map(os.path.exists, given)):
        raise SystemExit(
            f"cachegraph: error: no data to serve: {', '.join(given)}: no such file or folder"
        )
    sources = settings.data_sources(mirrors)
    if settings.workers == 1:  # workers are new processes: each works out its own
        sources.start_fingerprint()  # before the imports below, which it overlaps

    import uvicorn

    from . import server
    from .app import create_app

    server.HEADER_TIMEOUT = settings.header_timeout
    server.raise_open_file_limit()
    options = dict(
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        timeout_keep_alive=settings.keep_alive_timeout,
        **server.uvicorn_options(),  # with a header timeout: see cachegraph/server.py
    )
    # The port first: one in use is said at once, not after a load of minutes.
    listening = _listen(settings.host, settings.port)
    server.log_stack()
    if settings.workers > 1:
        # Workers are new processes: they take the settings from the environment. Uvicorn
        # binds the port again for them, before any loads.
        listening.close()
        os.environ.update(settings.to_env())
        app = "cachegraph.app:app_from_environment"
        uvicorn.run(app, factory=True, workers=settings.workers, **options)
        return 0
    app = create_app(sources=sources, settings=settings)
    server = uvicorn.Server(uvicorn.Config(app, **options))
    app.state.server = server  # the app stops it when there is no data to serve
    server.run(sockets=[listening])
    state = app.state.cache  # nothing loaded at start (NoData): the server stopped, said why
    return 1 if state.graph is None and state.last is not None and state.last.finished else 0


def _given_as(args: argparse.Namespace, setting: str) -> str:
    """How serve was given a setting: its flag, else its variable."""
    return config.flag_name(setting) if getattr(args, setting) is not None else (
        config.env_name(setting))  # fmt: skip


def _check_mirrors_given(args: argparse.Namespace, settings: config.Settings) -> None:
    """A ``TAG:STACK=PATH`` that is not one is a usage error: ValueError naming its flag or
    variable (main says it, and exits 2)."""
    for setting in ("mirror", "index"):
        for text in getattr(settings, setting):
            try:
                MirrorSource.parse(text)
            except ValueError as exc:
                raise ValueError(f"{_given_as(args, setting)}: {exc}") from None


def _served_mirrors(args: argparse.Namespace, settings: config.Settings) -> list[MirrorSource]:
    """The mirrors serve is given; a mirrors file that cannot be read, or is wrong, exits 1
    naming its flag or variable."""
    try:
        return settings.mirror_sources()
    except ValueError as exc:
        flag = _given_as(args, "mirrors_file")
        raise SystemExit(f"cachegraph: error: {flag}: {exc}") from None


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to the address (uvicorn listens on it once the data is loaded)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose ``proto`` says TCP
    # (``base_events._set_nodelay``); with proto 0 every kept-alive answer waited ~40 ms
    # for the client's delayed ACK (Nagle's algorithm).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise SystemExit(f"cachegraph: error: {_cannot_listen(host, port, exc)}") from None
    return sock


def _cannot_listen(host: str, port: int, exc: OSError) -> str:
    """Why a bind failed, naming the setting at fault: an address that is no name
    (``socket.gaierror``) or not this machine's is the host's; one in use or reserved, the
    port's.

    >>> _cannot_listen("999.1.1.1", 8000, socket.gaierror(-2, "Name or service not known"))
    'cannot listen on 999.1.1.1:8000: Name or service not known (--host, CACHEGRAPH_HOST)'
    """
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        culprit = "--host, CACHEGRAPH_HOST"
    elif exc.errno in (errno.EADDRINUSE, errno.EACCES):
        culprit = "--port, CACHEGRAPH_PORT"
    else:
        culprit = "--host, --port; CACHEGRAPH_HOST, CACHEGRAPH_PORT"
    return f"cannot listen on {host}:{port}: {exc.strerror} ({culprit})"


def show_settings(args: argparse.Namespace) -> int:
    print(config.markdown_table())
    return 0


def query(args: argparse.Namespace) -> int:
    from cachegraph.schema.context import Context

    from .app import served_schema
    from .execution import BadRequest, Executor, Operation

    try:
        text = _query_text(args.query)
        variables = json.loads(args.variables) if args.variables else None
    except OSError as exc:
        print(f"cachegraph query: {args.query}: cannot be read: {exc.strerror}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"cachegraph query: --variables is not JSON: {exc}", file=sys.stderr)
        return 2
    if not isinstance(variables, dict | None):
        print("cachegraph query: --variables must be a JSON object", file=sys.stderr)
        return 2
    graph, report = _load(args, "query")
    settings = args.base
    executor = Executor(served_schema(settings), limits=settings.limits())
    try:  # the operator, at the server's own shell, sees its paths
        body = executor.run(Operation(text, variables), Context(graph, admin=True))
    except BadRequest as exc:
        print(f"cachegraph query: {exc.message}", file=sys.stderr)
        return 2
    print(json.dumps(body, indent=2))
    return 1 if "errors" in body or report.errors else 0


def find(args: argparse.Namespace) -> int:
    from cachegraph.graph.errors import BadArgument
    from cachegraph.graph.questions.coverage import held
    from cachegraph.graph.questions.specs import SpecQuery, select_specs

    from .printing import compilers, listing, record

    graph, report = _load(args, "find")
    try:
        with _time_limit(args):
            selection = select_specs(graph, SpecQuery(satisfies=args.constraint))
            # What 'spack buildcache list' lists: what a mirror's index holds (in_buildcache),
            # or a page lists; a dependency known from a DAG alone is no cached build.
            specs = [s for s in selection.after(None) if held(s, None, None)]
    except TimedOut:
        return _timed_out("find", args)
    except BadArgument as exc:
        _say("find", str(exc))
        return 1
    if _level(args) <= logging.WARNING:
        for warning in selection.warnings:
            _say("find", f"warning: {warning}")
    if args.json:
        print(json.dumps([record(s) for s in specs], indent=2))
    else:
        text = listing(specs, long=args.long, variants=args.variants,
                       heading=lambda s: compilers(graph, s), tty=sys.stdout.isatty())  # fmt: skip
        if text:
            print(terminal_text(text))
    return _answered_despite("find", report)


def coverage(args: argparse.Namespace) -> int:
    from cachegraph.graph.errors import BadArgument
    from cachegraph.graph.questions import coverage as covering
    from cachegraph.graph.questions import likeness
    from cachegraph.graph.sources import lockfiles
    from cachegraph.graph.sources.files import read_regular

    from .printing import coverage_table, record, weather

    try:
        # As the server takes a lockfile: at most its body limit, never waiting on a FIFO.
        data = read_regular(args.lockfile, args.base.max_body_bytes)
        env = lockfiles.read_lockfile(lockfiles.lockfile_document(data))
    except OSError as exc:
        _say("coverage", f"{args.lockfile}: cannot be read: {exc.strerror}")
        return 1
    except BadArgument as exc:
        _say("coverage", f"{args.lockfile}: {exc}")
        return 1
    graph, report = _load(args, "coverage")
    try:
        with _time_limit(args):
            found = covering.coverage(graph, env, args.tag, args.stack or None)
            nearest = {}
            for e in found.entries:
                if e.spec is None and e.wanted is not None and not e.external:
                    deps = {n: env.specs[h].version for n, h in env.dependencies[e.hash]
                            if h in env.specs}  # fmt: skip
                    nearest[e.hash] = likeness.nearest_to_spec(graph, e.wanted, deps, 3, args.tag)
    except TimedOut:
        return _timed_out("coverage", args)
    except CacheGraphError as exc:
        _say("coverage", f"{args.lockfile}: {exc}")
        return 1
    if args.json:
        forecast = weather(found, env)
        print(json.dumps({
            "summary": forecast.summary(),
            "missesByDependents": [
                {"hash": e.hash, "dependents": forecast.dependents[e.hash]}
                for e in forecast.misses
            ],
            "total": len(found.entries), "hits": len(found.hits),
            "misses": len(found.misses), "externals": len(found.externals),
            "hitBytes": found.hit_bytes, "hitsOfUnknownSize": found.unknown_sizes,
            "cachedRoots": list(found.cached_roots),
            "entries": [{
                "hash": e.hash, "name": e.wanted.package if e.wanted else None,
                "version": e.wanted.version if e.wanted else None, "hit": e.spec is not None,
                "external": e.external,
                "spec": record(e.spec) if e.spec else None, "reason": e.reason,
                "nearest": [{"hash": n.spec.hash, "distance": n.distance} for n in
                            nearest.get(e.hash, [])],
            } for e in found.entries],
        }, indent=2))  # fmt: skip
    else:
        print(terminal_text(coverage_table(found, nearest, env)))
    return _answered_despite("coverage", report)


def diff(args: argparse.Namespace) -> int:
    from cachegraph.graph.questions.likeness import spec_diff

    from .printing import diff_table

    graph, report = _load(args, "diff")
    try:
        with _time_limit(args):
            a, b, differences = spec_diff(graph, args.a, args.b)
    except TimedOut:
        return _timed_out("diff", args)
    except CacheGraphError as exc:  # no such spec, a prefix too short or ambiguous
        _say("diff", str(exc))
        return 1
    if args.json:
        print(
            json.dumps(
                {
                    "a": a.hash,
                    "b": b.hash,
                    "differences": [
                        {"field": d.field, "a": d.wanted, "b": d.cached} for d in differences
                    ],
                },
                indent=2,
            )
        )
    else:
        print(terminal_text(diff_table(a, b, differences)))
    return _answered_despite("diff", report)


def _query_text(given: str) -> str:
    """The query itself, or read from ``@FILE``, or from standard input for ``-``."""
    if given == "-":
        return sys.stdin.read()
    if given.startswith("@"):
        return Path(given[1:]).read_text(encoding="utf-8")
    return given


def export_schema(args: argparse.Namespace) -> int:
    from .app import served_schema

    print(served_schema(config.Settings(federation=args.federation)).as_str())
    return 0


def trusted_documents(args: argparse.Namespace) -> int:
    from .execution.persisted import sha256
    from .ui import ui_operations

    documents = {sha256(text): text for text in ui_operations().values()}
    print(json.dumps(documents, indent=2, sort_keys=True))
    return 0


def validate(args: argparse.Namespace) -> int:
    # Nothing given (no PATH, --data, mirror or variable): the bundled data, as serve loads it.
    given = [*args.paths, *args.data] or list(args.base.data)
    sources = _sources(args, given)
    if sources.bundled():
        _say("validate", "no PATH, --data or mirror given: the bundled data, as serve loads it")
    sources.check_sources()  # each remote mirror read from its local copy, checked first
    progress = ProgressLine()
    _, report = load(sources.resolved_paths(), sources.resolved_mirrors(), progress=progress)
    progress.done()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for problem in report.problems:
            print(problem)
        print(report.summary())
        print("tags: " + (", ".join(report.tags) or "none"))
        for label, views in report.views.items():
            print(f"views of {label}: " + ", ".join(f"{v} (mirror {label}^{v})" for v in views))
    # A remote mirror whose server could not be asked is not validated, though its copy held
    # may be (its warning says why).
    unreached = [m for m in sources.local_mirrors() if m.url and m.error]
    if unreached and not args.json:
        print("not validated against their servers: " + ", ".join(
            f"{m.label} ({'its copy held was' if held_state(m.path).hash else 'no copy held'})"
            for m in unreached))  # fmt: skip
    return 0 if report.ok and not unreached else 1


def synth(args: argparse.Namespace) -> int:
    if args.specs < 1 or (args.tags is not None and args.tags < 1):
        raise UsageError("cachegraph synth: error: --specs and --tags must be at least 1")
    refused = _not_a_folder_to_write(args.out, args.force)
    if refused:
        raise UsageError(f"cachegraph synth: error: {args.out}: {refused}")
    if args.mirror:
        from .synthmirror import synthesize_mirrors

        held = synthesize_mirrors(args.out, args.specs, args.tags or 2, args.seed)
        for name, n in held.items():
            print(f"{name}: {counted(n, 'spec')} held")
        print(
            f"{counted(len(held), 'mirror')} listed in {args.out / 'mirrors.yaml'} (--mirrors-file)"
        )
        return 0
    from .synth import synthesize

    counts = synthesize(args.out, args.specs, args.tags or 1, args.seed, short=args.short)
    print(
        ", ".join(f"{tag}: {counted(n, 'spec')}" for tag, n in counts.items())
        + f"; {args.specs:,} distinct"
    )
    return 0


def _not_a_folder_to_write(out: Path, force: bool) -> str:
    """Why ``synth`` will not write into ``out``, or "": a folder already holding files
    would mix its pages with the new ones (and ``validate`` would count both)."""
    if out.exists() and not out.is_dir():
        return "is not a folder"
    if not force and out.is_dir() and any(out.iterdir()):
        return "is not empty: give an empty or new folder, or --force to write into it"
    return ""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("spack-cache-graph")
    except PackageNotFoundError:  # run from a checkout that was not installed
        return "unknown (not installed)"


def parser(base: config.Settings | None = None) -> argparse.ArgumentParser:
    base = base or config.Settings()
    top = _TopParser(prog="cachegraph", description=__doc__)
    top.set_defaults(base=base)
    top.add_argument("--version", action="version", version=f"cachegraph {_version()}")
    # Not required: _TopParser says what is missing, with the list of commands.
    commands = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)

    p = commands.add_parser(
        "serve",
        help="serve the GraphQL API over HTTP",
        description="Each flag has a CACHEGRAPH_* environment variable: 'cachegraph settings'.",
    )
    config.add_arguments(p, base)
    p.set_defaults(run=serve, base=base)

    p = commands.add_parser("settings", help="print the table of settings (Markdown)")
    p.set_defaults(run=show_settings)

    p = commands.add_parser("query", help="run one GraphQL query and print the JSON result")
    p.add_argument("query", help="the GraphQL document, @FILE to read it from a file, - for stdin")
    _add_data_options(p)
    p.add_argument("--variables", help="the query's variables as a JSON object")
    p.set_defaults(run=query)

    p = commands.add_parser(
        "find",
        help="list the cached specs satisfying a Spack constraint, as 'spack find' does",
        description="CONSTRAINT is Spack's spec syntax, e.g. 'hdf5@1.14: +mpi %gcc@11: "
        "target=x86_64_v3: ^openmpi@4:' (see the README).",
    )
    p.add_argument("constraint", metavar="CONSTRAINT")
    _add_data_options(p)
    p.add_argument("-l", "--long", action="store_true", help="show the hash prefix of each spec")
    p.add_argument("-v", "--variants", action="store_true", help="show each spec's variants")
    p.add_argument("--json", action="store_true", help="print the spec records as JSON")
    p.set_defaults(run=find)

    p = commands.add_parser(
        "coverage", help="which specs of a spack.lock the cache holds, and the nearest for misses"
    )
    p.add_argument("lockfile", metavar="SPACK_LOCK")
    _add_data_options(p)
    p.add_argument("--tag", help="count only what this tag holds")
    p.add_argument(
        "--stack", action="append", default=[], help="count only these stacks (repeatable)"
    )
    p.add_argument("--json", action="store_true", help="print the entries as JSON")
    p.set_defaults(run=coverage)

    p = commands.add_parser("diff", help="what differs between two cached specs (spack diff)")
    p.add_argument("a", metavar="HASH")
    p.add_argument("b", metavar="HASH")
    _add_data_options(p)
    p.add_argument("--json", action="store_true", help="print the differences as JSON")
    p.set_defaults(run=diff)

    p = commands.add_parser("export-schema", help="print the schema (SDL)")
    p.add_argument("--federation", action="store_true", help="the Apollo Federation subgraph's")
    p.set_defaults(run=export_schema)

    p = commands.add_parser(
        "trusted-documents",
        help="print the explorer's queries as a trusted-documents file (JSON: sha256 -> text)",
    )
    p.set_defaults(run=trusted_documents)

    p = commands.add_parser(
        "validate",
        help="load data and report what is wrong with it",
        description="With no PATH, --data or mirror (nor CACHEGRAPH_DATA, CACHEGRAPH_MIRRORS "
        "or CACHEGRAPH_MIRRORS_FILE), the bundled data, as 'cachegraph serve' loads it.",
    )
    p.add_argument(
        "paths", nargs="*", metavar="PATH",
        help="a cache page, spec file or folder of them; default: the bundled data",
    )  # fmt: skip
    p.add_argument("--data", action="append", default=[], metavar="PATH",
                   help="a cache page, spec file or folder of them (the same as PATH)")  # fmt: skip
    _add_mirror_options(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=validate)

    p = commands.add_parser("synth", help="write a realistic page tree or mirrors of any size")
    p.add_argument(
        "out", type=Path, metavar="OUT",
        help="a new or empty folder to write <tag>/<package>/specs.md into",
    )  # fmt: skip
    p.add_argument("--specs", type=int, required=True, help="distinct specs in all")
    p.add_argument(
        "--tags", type=int, help="tags (default 1, with --mirror 2); later ones share hashes"
    )
    p.add_argument(
        "--mirror",
        action="store_true",
        help="write Spack mirrors (v2 layout for the first tag, v3 for later ones) with "
        "dependency DAGs, and mirrors.yaml listing them, instead of pages",
    )
    p.add_argument(
        "--short",
        action="store_true",
        help="pages of about 35 short records (~460 bytes, as the public site writes them now)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--force", action="store_true", help="write into OUT even when it holds files already"
    )
    p.set_defaults(run=synth)
    top.commands = list(commands.choices)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    try:
        base = config.Settings.from_env()
    except ValueError as exc:  # a variable's value: one line naming it
        print(f"cachegraph: error: {exc}", file=sys.stderr)
        return 2
    args = parser(base).parse_args(argv)
    logging.basicConfig(level=base.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.run is not serve:  # serve reads every setting from its flags itself
            args.base = config.with_fetch_arguments(args, base)
        return args.run(args)
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except ValueError as exc:  # a flag's value (serve's settings): one line naming it
        print(f"cachegraph: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the operator knows
        return 130
    except BrokenPipeError:
        # The reader went away (`cachegraph settings | head`): nothing more to say.
        # Python's own flush at exit would raise again: point stdout at nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
