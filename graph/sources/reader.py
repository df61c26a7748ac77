"""Read build-cache files into a graph's records, reporting whatever is wrong: ``Reader``.

Sources: cache pages (one file, or folders searched recursively), Spack spec
files (``spec-N.json``, ``*.spec.json``, ``*.spec.json.sig``, ``*.spec.yaml``),
build-cache indices (``index.json``) and whole mirrors in the v2 and v3 layouts
(``graph.mirrors``). A file or record that cannot be loaded is reported with
its path, line where known, and the problem; everything else still loads.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import chain
from operator import attrgetter, itemgetter
from pathlib import Path
from sys import intern
from typing import Any

from . import files
from .errors import BadRecord
from .frontmatter import decode_text, parse_front_matter, split_front_matter
from .mirrors import MirrorSource, held, index_installs, read_mirror
from .model import CacheGraph, GraphBuilder, MirrorInfo
from .names import normalize_compiler
from .records import (
    SUMMARIZED,
    Listed,
    node_dependencies,
    node_record,
    page_record,
    well_formed_rows,
)
from .specfiles import is_spec_file, load_json, spec_document, spec_nodes

__all__ = ["LoadReport", "Problem", "Reader", "collector_paused", "source_files"]

#: The virtuals whose provider is a Spack >= 1.0 spec's compiler, in the order looked for.
COMPILER_VIRTUALS = ("c", "cxx", "fortran")
#: Files a build cache keeps beside its specs that hold no spec: keys, digests, manifests.
_COMPANIONS = (".hash", ".pub", ".manifest.json")
_SPEC_FILE = re.compile(r"spec-\d+\.json")


@dataclass(frozen=True)
class Problem:
    path: str
    message: str
    line: int | None = None
    severity: str = "error"  # or "warning"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.severity}: {self.message}"


@dataclass
class LoadReport:
    """What a load read, what it kept, and what was wrong."""

    pages: int = 0
    spec_files: int = 0
    indices: int = 0
    mirrors: int = 0
    records: int = 0
    specs: int = 0
    tags: list[str] = field(default_factory=list)
    unresolved: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        return (
            f"{self.pages} pages, {self.spec_files} spec files, {self.indices} indices"
            + (f", {self.mirrors} mirrors" if self.mirrors else "")
            + ": "
            f"{self.records} records, {self.specs} specs, {len(self.tags)} tags; "
            f"{len(self.errors)} errors, {len(self.problems) - len(self.errors)} warnings"
            + (f"; {self.unresolved} specs unresolved" if self.unresolved else "")
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["problems"] = [asdict(p) for p in self.problems]
        data["ok"] = self.ok
        return data


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: a load makes millions of objects and no cycles.

    Left on, it scans the growing heap again and again (a third of a 1M-spec
    load, and most of a restart from a snapshot).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def source_files(paths: Iterable[str | os.PathLike], report: LoadReport) -> list[Path]:
    """Every file under ``paths``, in the order a load reads them; a missing path is reported."""
    missing: list[str] = []
    irregular: list[str] = []
    found = list(files.source_files(paths, missing, irregular))
    report.problems += [Problem(path, "no such file or folder") for path in missing]
    report.problems += [
        Problem(path, "not a regular file (a FIFO, socket or device); not read")
        for path in irregular
    ]
    return found


class Reader:
    """Reads files and mirrors one at a time (``read_file``, ``read_mirror``), then resolves what
    waits for every file (``resolve``) and builds the graph (``finish``); ``report`` says
    what was wrong. ``graph.loader.load`` reads with one, ``graph.parallel`` with two.
    """

    def __init__(self) -> None:
        self.builder = GraphBuilder()
        self.report = LoadReport()
        self.tags: set[str] = set()
        # Spec files are resolved against old-form pages once every file is read.
        self.spec_file_roots: dict[Path, str] = {}
        self.old_pages: list[tuple[Path, str, list]] = []
        # Dependency edges wait for the end too: another file may describe the child.
        self.edges: list[tuple[Path, str, str, tuple[str, ...], tuple[str, ...]]] = []
        # Spack >= 1.0 specs name their compiler as a dependency: hash -> its hash.
        self.compiler_deps: dict[str, str] = {}
        # Hashes read as spec nodes (with their dependencies) already.
        self.nodes_read: set[str] = set()

    def problem(self, path: Path, message: str, line: int | None = None, warning=False) -> None:
        severity = "warning" if warning else "error"
        self.report.problems.append(Problem(str(path), message, line, severity))

    def read_file(self, path: Path) -> None:
        if path.name.endswith(_COMPANIONS) or path.parent.name == "_pgp":
            return  # a build cache's keys, digests and manifests: give its mirror with --mirror
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.problem(path, f"cannot be read: {exc.strerror}")
            return
        try:
            if is_spec_file(path.name):
                self.read_spec_file(path, spec_document(data, path.name))
            elif path.suffix == ".json":
                self.read_json(path, data)
            else:
                self.read_page(path, decode_text(data))
        except BadRecord as exc:
            self.problem(path, exc.message, exc.line)

    # -- pages -----------------------------------------------------------------

    def read_page(self, path: Path, text: str) -> None:
        lines, first = split_front_matter(text)
        fields, key_lines = parse_front_matter(lines, first)
        title = fields.get("title")
        if not isinstance(title, str) or not title.strip():
            raise BadRecord("'title' (the package name) is missing", key_lines.get("title"))
        package = title.strip()
        if "spec_files" in fields and "spec_details" not in fields:
            self.read_old_page(path, package, fields, key_lines)
            return
        categories = fields.get("categories")
        if not (isinstance(categories, list) and len(categories) >= 2 and categories[1]):
            raise BadRecord(
                f"'categories' must be [package, TAG], not {categories!r}",
                key_lines.get("categories"),
            )
        rows = fields.get("spec_details")
        line = key_lines.get("spec_details")
        if not isinstance(rows, list):
            raise BadRecord("'spec_details' must be a list of records", line)
        tag = str(categories[1])
        self.report.pages += 1
        self.tags.add(tag)
        source = str(path)
        listed = well_formed_rows(rows, package, source, self.builder.shared_tuples)
        if listed is None:
            kept = []
            for number, row in enumerate(rows, 1):
                try:
                    record, stacks = page_record(row, package, source)
                except BadRecord as exc:
                    self.row_problem(path, number, row, exc, line)
                    continue
                if self.add_listing(path, number, row, (record, stacks), tag, line):
                    kept.append((record, stacks))
            self.repeated_hashes(path, [r.hash for r, _ in kept], line)
        else:
            kept = self.add_listed(path, rows, listed, tag, line)
        meta = fields.get("meta")
        if meta is not None and len(kept) == len(rows):  # else it summarizes what we did not read
            if listed is None:
                records = list(map(itemgetter(0), kept))
                columns = {f: list(map(attrgetter(f), records)) for f in SUMMARIZED}
                listed = Listed(records, list(map(itemgetter(1), kept)), columns)
            self.check_meta(path, meta, listed, key_lines.get("meta"))

    def add_listed(
        self, path: Path, rows: list, listed: Listed, tag: str, line: int | None
    ) -> list[tuple]:
        """Add a well-formed page's records; return those kept.

        At once when none would warn or be refused (nearly always), else one by one.
        """
        records, stacks = listed.records, listed.stacks
        hashes = list(map(attrgetter("hash"), records))
        known = list(map(self.builder.records.get, hashes))
        if len(set(hashes)) == len(hashes) and self.builder.add_listings(
            records, stacks, tag, known
        ):
            self.report.records += len(records)
            return list(zip(records, stacks, strict=True))
        self.repeated_hashes(path, hashes, line)
        kept = []
        listings = zip(rows, zip(records, stacks, strict=True), strict=True)
        for number, (row, listing) in enumerate(listings, 1):
            if self.add_listing(path, number, row, listing, tag, line):
                kept.append(listing)
        return kept

    def add_listing(
        self, path: Path, number: int, row: Any, listing: tuple, tag: str, line: int | None
    ) -> bool:
        """Add one row's record to the graph, reporting what is wrong; False if it is not kept."""
        record, stacks = listing
        try:
            warnings = self.builder.add_listing(record, tag, stacks)
        except BadRecord as exc:
            self.row_problem(path, number, row, exc, line)
            return False
        self.report.records += 1
        for message in warnings:
            self.problem(path, f"record {number}: {message}", line, warning=True)
        return True

    def repeated_hashes(self, path: Path, hashes: list[str], line: int | None) -> None:
        """Warn when a page lists a hash more than once: each spec counts once."""
        repeats = len(hashes) - len(set(hashes))
        if repeats:
            first = next(h for h, n in Counter(hashes).items() if n > 1)
            self.problem(
                path,
                f"{repeats} records repeat a hash listed earlier in this page (the first: "
                f"{first}); each spec counts once",
                line,
                warning=True,
            )

    def row_problem(self, path: Path, number: int, row: Any, exc: BadRecord, line: int | None):
        hash = row.get("hash") if isinstance(row, dict) else None
        named = f" ({hash})" if isinstance(hash, str) and hash else ""
        self.problem(path, f"record {number}{named}: {exc.message}", line)

    def check_meta(self, path: Path, meta: Any, listed: Listed, line: int | None) -> None:
        """Warn where a page's ``meta`` summary disagrees with its records."""
        if not isinstance(meta, dict):
            self.problem(path, "'meta' is not a mapping; ignored", line, warning=True)
            return
        columns = listed.columns
        stacks = list(chain.from_iterable(listed.stacks))
        derived = {
            "num_specs": len(listed.records),
            "num_specs_by_stack": dict(Counter(stacks)),
            "versions": set(columns["version"]),
            "compilers": {c or "none" for c in set(columns["compiler"])},
            "oss": set(columns["os"]),
            "platforms": set(columns["platform"]),
            "targets": set(columns["target"]),
            "stacks": set(stacks),
        }
        for key, actual in derived.items():
            if key not in meta:
                continue
            stated = meta[key]
            if isinstance(actual, set) and isinstance(stated, list):
                stated = set(map(str, stated))
                if key == "compilers":
                    stated = {normalize_compiler(c) or "none" for c in stated}
            if stated != actual:
                self.problem(
                    path,
                    f"meta {key} says {_brief(stated)} but spec_details give {_brief(actual)}; "
                    "using spec_details",
                    line,
                    warning=True,
                )

    def read_old_page(self, path: Path, package: str, fields: dict, key_lines: dict) -> None:
        """The oldest form: no tag, ``spec_files`` mapping spec strings to spec-N.json."""
        entries = fields.get("spec_files")
        line = key_lines.get("spec_files")
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise BadRecord("'spec_files' must be a list of 'SPEC: FILE' entries", line)
        self.report.pages += 1
        self.old_pages.append((path, package, [(k, v) for e in entries for k, v in e.items()]))

    # -- spec files and indices --------------------------------------------------

    def read_json(self, path: Path, data: bytes) -> None:
        doc = load_json(decode_text(data))
        if isinstance(doc, dict) and isinstance(doc.get("spec"), dict | list):
            self.read_spec_file(path, doc)
        elif isinstance(doc, dict) and isinstance(doc.get("database"), dict):
            self.read_index(path, doc)
        elif _SPEC_FILE.fullmatch(path.name):
            raise BadRecord("not a spec file: no 'spec' mapping at the top level")
        else:
            raise BadRecord("JSON that is neither a spec file nor a build-cache index")

    def read_spec_file(self, path: Path, doc: dict) -> list[str]:
        """A spec file's nodes; return the hashes added, the root's first."""
        hashes = self.read_nodes(path, [(None, n) for n in spec_nodes(doc)])
        self.report.spec_files += 1
        if hashes:
            self.spec_file_roots[path] = hashes[0]
        return hashes

    def read_index(self, path: Path, doc: dict) -> None:
        """A build-cache ``index.json`` found among the data: its specs join no stack."""
        try:
            installs = index_installs(doc)
        except BadRecord as exc:
            self.problem(path, exc.message, exc.line)
            return
        self.report.indices += 1
        if self.read_nodes(path, _index_nodes(installs)):
            self.problem(
                path,
                "an index found among the data joins no stack; give its mirror "
                "as --mirror TAG:STACK=PATH to set its stack membership",
                warning=True,
            )

    def read_mirror(self, source: MirrorSource) -> None:
        """A whole mirror: its specs, their dependencies, sizes and tarballs; STACK holds them."""
        read = read_mirror(source)
        for path, message, severity in read.problems:
            self.problem(path, message, warning=severity == "warning")
        name = source.label
        if name in self.builder.mirrors:
            self.problem(
                source.path,
                f"a second mirror named {name!r}; give each its own name in a mirrors file",
            )
            return
        self.report.mirrors += 1
        self.tags.add(source.tag)
        self.builder.add_mirror(
            MirrorInfo(name, read.location, read.layout, source.tag, source.stack)
        )
        holding: list[str] = []
        if read.index is not None:
            path, installs = read.index
            self.report.indices += 1
            hashes = self.read_nodes(path, _index_nodes(installs))
            holding += [h for h in hashes if held(installs[h])]
        for path, doc in read.spec_files:
            try:
                holding += self.read_spec_file(path, doc)[:1]
            except BadRecord as exc:
                self.problem(path, exc.message, exc.line)
        for hash in dict.fromkeys(holding):
            record = self.builder.spec(hash)
            try:
                self.builder.add_listing(record, source.tag, [source.stack])
            except BadRecord as exc:
                self.problem(source.path, exc.message)
                continue
            tarball, size = read.tarballs.get(hash, ("", None))
            self.builder.add_held(record, name, size, tarball)

    def read_nodes(self, path: Path, nodes: list[tuple[str | None, Any]]) -> list[str]:
        """Add spec nodes and their dependency edges; return the hashes added, in order."""
        added: list[str] = []
        edges = []
        seen = self.nodes_read
        for number, (hash, node) in enumerate(nodes, 1):
            if hash is not None and hash in seen:
                # A hash names one spec and its whole DAG: another mirror listing it
                # again says nothing new, and reading it again would cost most of a load.
                added.append(hash)
                continue
            try:
                record = node_record(node, f"{path}#{number}", hash)
                deps = node_dependencies(node)
            except BadRecord as exc:
                self.problem(path, f"node {number}: {exc.message}")
                continue
            record = self.builder.add_node_spec(record)
            seen.add(record.hash)
            added.append(record.hash)
            edges.extend((record.hash, d.hash, d.deptypes, d.virtuals) for d in deps)
            if record.compiler is None and not record.from_page:
                provider = _compiler_provider(deps)
                if provider is not None:
                    self.compiler_deps.setdefault(record.hash, provider)
        self.report.records += len(added)
        self.edges.extend((path, *edge) for edge in edges)
        return added

    # -- the end -----------------------------------------------------------------

    def finish(self) -> CacheGraph:
        self.resolve()
        graph = self.builder.build()
        self.report.specs = len(graph.ordered)
        self.report.tags = sorted(self.tags)
        return graph

    def resolve(self) -> None:
        """Add the dependency edges and check old-form pages, once every file is read."""
        for path, parent, child, types, virtuals in self.edges:
            if self.builder.spec(child) is None:
                self.problem(
                    path,
                    f"{parent} depends on {child}, which no loaded node "
                    "describes; dependency dropped",
                )
            else:
                self.builder.add_dependency(parent, child, types, virtuals)
        self.edges = []  # millions of tuples at a mirror's scale: not kept while the graph is built
        for hash, provider in self.compiler_deps.items():
            record, compiler = self.builder.spec(hash), self.builder.spec(provider)
            if compiler is not None and record.compiler is None:
                record.compiler = intern(f"{compiler.package}@{compiler.version}")
        for path, package, entries in self.old_pages:
            for spec_string, filename in entries:
                root = self.spec_file_roots.get(path.parent / filename)
                if root is None:
                    self.report.unresolved += 1
                    self.problem(
                        path,
                        f"{spec_string!r}: spec file {filename} is not present; spec not loaded",
                        warning=True,
                    )
                elif (found := self.builder.spec(root).package) != package:
                    self.problem(path, f"{filename} describes package {found!r}, not {package!r}")


def _index_nodes(installs: dict) -> list[tuple[str, Any]]:
    """(hash, node) of each record of an index's ``installs``."""
    return [
        (h, entry.get("spec") if isinstance(entry, dict) else entry)
        for h, entry in installs.items()
    ]


def _compiler_provider(deps: list) -> str | None:
    """The hash of the dependency providing c, else cxx, else fortran (Spack >= 1.0)."""
    for virtual in COMPILER_VIRTUALS:
        for dep in deps:
            if virtual in dep.virtuals:
                return dep.hash
    return None


def _brief(value: Any) -> str:
    if isinstance(value, set):
        value = sorted(value)
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 120 else text[:117] + "..."
