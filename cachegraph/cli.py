"""The ``cachegraph`` command: serve, query, find, coverage, diff, export-schema, validate,
synth."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from cachegraph.graph import MirrorSource, load

from . import settings as config
from .progress import ProgressLine
from .state import DataSources, load_sources


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
            help="a Spack build cache whose specs STACK holds in TAG (repeatable)"
            if flag == "--mirror"
            else "the same as --mirror",
        )
    parser.add_argument("--mirrors-file", metavar="PATH", help="a YAML or JSON list of mirrors")


def _mirrors(args: argparse.Namespace) -> list[MirrorSource]:
    """The mirrors of --mirror and --mirrors-file; exits with the problem when the file is bad."""
    try:
        listed = config.mirror_sources((), args.mirrors_file or "")
    except ValueError as exc:
        raise SystemExit(f"cachegraph: error: --mirrors-file: {exc}") from None
    return args.mirror + listed


def _add_data_options(parser: argparse.ArgumentParser, required: bool = False) -> None:
    parser.add_argument(
        "--data",
        action="append",
        default=[],
        metavar="PATH",
        help="a cache page, spec file or folder of them (repeatable); default: the bundled seeds",
    )
    _add_mirror_options(parser)


def _sources(args: argparse.Namespace) -> DataSources:
    return DataSources(paths=args.data, mirrors=_mirrors(args))


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .app import create_app
    from .observe import configure_logging

    settings = config.from_arguments(args, args.base)
    try:
        mirrors = settings.mirror_sources()  # a bad mirror fails here, not in a worker
    except ValueError as exc:
        raise SystemExit(f"cachegraph: error: {exc}") from None
    given = [*settings.data, *(str(m.path) for m in mirrors)]
    if given and not any(map(os.path.exists, given)):
        raise SystemExit(
            f"cachegraph: error: no data to serve: {', '.join(given)}: no such file or folder"
        )
    configure_logging(settings.log_level, settings.log_format)
    options = dict(host=settings.host, port=settings.port, log_config=None, access_log=False)
    if settings.workers > 1:
        # Workers are new processes: they take the settings from the environment.
        os.environ.update(settings.to_env())
        app = "cachegraph.app:app_from_environment"
        uvicorn.run(app, factory=True, workers=settings.workers, **options)
    else:
        uvicorn.run(create_app(settings=settings), **options)
    return 0


def show_settings(args: argparse.Namespace) -> int:
    print(config.markdown_table())
    return 0


def query(args: argparse.Namespace) -> int:
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
    graph, report, _ = load_sources(_sources(args))
    for problem in report.errors:
        print(f"cachegraph query: {problem}", file=sys.stderr)
    settings = config.Settings()
    executor = Executor(served_schema(settings), limits=settings.limits())
    try:
        body = executor.run(Operation(text, variables), {"graph": graph})
    except BadRequest as exc:
        print(f"cachegraph query: {exc.message}", file=sys.stderr)
        return 2
    print(json.dumps(body, indent=2))
    return 1 if "errors" in body or report.errors else 0


def find(args: argparse.Namespace) -> int:
    from cachegraph.graph.errors import BadArgument
    from cachegraph.graph.questions.specs import SpecQuery, select_specs

    from .printing import listing, record

    graph, report, _ = load_sources(_sources(args))
    for problem in report.errors:
        print(f"cachegraph find: {problem}", file=sys.stderr)
    try:
        selection = select_specs(graph, SpecQuery(satisfies=args.constraint))
        specs = list(selection.after(None))
    except BadArgument as exc:
        print(f"cachegraph find: {exc}", file=sys.stderr)
        return 1
    for warning in selection.warnings:
        print(f"cachegraph find: warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps([record(s) for s in specs], indent=2))
    else:
        print(listing(specs, long=args.long, variants=args.variants))
    return 1 if report.errors else 0


def coverage(args: argparse.Namespace) -> int:
    from cachegraph.graph.errors import BadArgument
    from cachegraph.graph.questions import coverage as covering
    from cachegraph.graph.questions import likeness
    from cachegraph.graph.sources import lockfiles

    from .printing import coverage_table, lockfile_externals, record, weather

    try:
        doc = json.loads(Path(args.lockfile).read_text(encoding="utf-8"))
        env = lockfiles.read_lockfile(doc)
    except OSError as exc:
        print(f"cachegraph coverage: {args.lockfile}: cannot be read: {exc.strerror}",
              file=sys.stderr)  # fmt: skip
        return 1
    except (ValueError, BadArgument) as exc:
        print(f"cachegraph coverage: {args.lockfile}: {exc}", file=sys.stderr)
        return 1
    graph, report, _ = load_sources(_sources(args))
    for problem in report.errors:
        print(f"cachegraph coverage: {problem}", file=sys.stderr)
    found = covering.coverage(graph, env, args.tag, args.stack or None)
    externals = lockfile_externals(doc, env)
    nearest = {}
    for e in found.entries:
        if e.spec is None and e.wanted is not None:
            deps = {n: env.specs[h].version for n, h in env.dependencies[e.hash] if h in env.specs}
            nearest[e.hash] = likeness.nearest_to_spec(graph, e.wanted, deps, 3, args.tag)
    if args.json:
        forecast = weather(found, env, externals)
        print(json.dumps({
            "summary": forecast.summary(),
            "externals": sorted(externals),
            "missesByDependents": [
                {"hash": e.hash, "dependents": forecast.dependents[e.hash]}
                for e in forecast.misses
            ],
            "total": len(found.entries), "hits": len(found.hits),
            "misses": len(found.entries) - len(found.hits), "hitBytes": found.hit_bytes,
            "cachedRoots": list(found.cached_roots),
            "entries": [{
                "hash": e.hash, "name": e.wanted.package if e.wanted else None,
                "version": e.wanted.version if e.wanted else None, "hit": e.spec is not None,
                "spec": record(e.spec) if e.spec else None, "reason": e.reason,
                "nearest": [{"hash": n.spec.hash, "distance": n.distance} for n in
                            nearest.get(e.hash, [])],
            } for e in found.entries],
        }, indent=2))  # fmt: skip
    else:
        print(coverage_table(found, nearest, env, externals))
    return 1 if report.errors else 0


def diff(args: argparse.Namespace) -> int:
    from cachegraph.graph.errors import BadArgument
    from cachegraph.graph.questions.likeness import spec_diff

    from .printing import diff_table

    graph, report, _ = load_sources(_sources(args))
    for problem in report.errors:
        print(f"cachegraph diff: {problem}", file=sys.stderr)
    try:
        a, b, differences = spec_diff(graph, args.a, args.b)
    except BadArgument as exc:
        print(f"cachegraph diff: {exc}", file=sys.stderr)
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
        print(diff_table(a, b, differences))
    return 1 if report.errors else 0


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


def validate(args: argparse.Namespace) -> int:
    if not (args.paths or args.mirror or args.mirrors_file):
        raise SystemExit("cachegraph validate: give a PATH, --mirror or --mirrors-file")
    progress = ProgressLine()
    _, report = load(args.paths, _mirrors(args), progress=progress)
    progress.done()
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        for problem in report.problems:
            print(problem)
        print(report.summary())
        print("tags: " + (", ".join(report.tags) or "none"))
    return 0 if report.ok else 1


def synth(args: argparse.Namespace) -> int:
    if args.specs < 1 or (args.tags is not None and args.tags < 1):
        raise SystemExit("cachegraph: error: --specs and --tags must be at least 1")
    if args.mirror:
        from .synthmirror import synthesize_mirrors

        held = synthesize_mirrors(args.out, args.specs, args.tags or 2, args.seed)
        for name, n in held.items():
            print(f"{name}: {n:,} specs held")
        print(f"{len(held)} mirrors listed in {args.out / 'mirrors.yaml'} (--mirrors-file)")
        return 0
    from .synth import synthesize

    counts = synthesize(args.out, args.specs, args.tags or 1, args.seed)
    print(
        ", ".join(f"{tag}: {n:,} specs" for tag, n in counts.items()) + f"; {args.specs:,} distinct"
    )
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("spack-cache-graph")
    except PackageNotFoundError:  # run from a checkout that was not installed
        return "unknown (not installed)"


def parser(base: config.Settings | None = None) -> argparse.ArgumentParser:
    base = base or config.Settings()
    top = argparse.ArgumentParser(prog="cachegraph", description=__doc__)
    top.add_argument("--version", action="version", version=f"cachegraph {_version()}")
    commands = top.add_subparsers(dest="command", required=True)

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
        description="CONSTRAINT is Spack's spec syntax, e.g. 'hdf5@1.14: +mpi %%gcc@11: "
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

    p = commands.add_parser("validate", help="load data and report what is wrong with it")
    p.add_argument("paths", nargs="*", metavar="PATH")
    _add_mirror_options(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(run=validate)

    p = commands.add_parser("synth", help="write a realistic page tree or mirrors of any size")
    p.add_argument("out", type=Path, help="the folder to write <tag>/<package>/specs.md into")
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
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(run=synth)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    try:
        base = config.Settings.from_env()
    except ValueError as exc:
        print(f"cachegraph: {exc}", file=sys.stderr)
        return 2
    args = parser(base).parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        return args.run(args)
    except ValueError as exc:
        print(f"cachegraph: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`cachegraph settings | head`): nothing more to say.
        # Python's own flush at exit would raise again: point stdout at nothing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
