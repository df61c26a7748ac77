"""Read build-cache files into a store's rows, reporting whatever is wrong: ``Reader``.

Sources: cache pages (one file, or folders searched recursively), Spack spec
files (``spec-N.json``, ``*.spec.json``, ``*.spec.json.sig``, ``*.spec.yaml``),
build-cache indices (``index.json``) and whole mirrors in the v2 and v3 layouts
(``graph.sources.mirrors``). A file or record that cannot be loaded is reported
with its path, line where known, and the problem; everything else still loads.
Rows go to a ``StoreBuilder`` as they are read, a page or an index at a time;
``finish`` makes the store and the graph over it.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from itertools import chain, repeat
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .. import attributes, deadline
from ..errors import BadRecord
from ..memory import released
from ..spack import virtuals
from ..store.build import WHOLE_FILE, StoreBuilder
from ..store.records import MirrorInfo
from ..store.view import CacheGraph
from ..words import counted
from . import pagemeta, parts, sitedata
from .frontmatter import Unchecked, decode_text, parse_page_front_matter, split_front_matter
from .layouts import read_mirror
from .mirrors import MirrorRead, MirrorSource, held, index_installs, index_node
from .rows import (
    Edges,
    Listed,
    nest_shallowly,
    node_dependencies,
    node_row,
    page_row,
    well_formed_edges,
    well_formed_pages,
    well_formed_rows,
)
from .specfiles import (
    RECONSTRUCTED_FORMATS,
    is_spec_file,
    load_json,
    spec_document,
    spec_format,
    spec_nodes,
)

__all__ = ["LoadReport", "Problem", "Reader"]

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


#: how the warning of a remote mirror read from its copy ends (its check failed): `serve`
#: serves it, `validate` validates it
STALE_COPY = "; reading the copy held (stale)"


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
    #: mirror -> the named index views it has, each loaded as a mirror and stack of its own
    views: dict[str, list[str]] = field(default_factory=dict)
    #: the local v3 mirrors read by their index only: their spec manifests (sizes, tarballs,
    #: the checks of their blobs) come with a later load
    index_first: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def summary(self) -> str:
        """What loaded, in one line.

        >>> LoadReport(pages=1, specs=1, tags=["develop"]).summary()
        '1 page, 0 spec files, 0 indices: 0 records, 1 spec, 1 tag; 0 errors, 0 warnings'
        """
        warnings = len(self.problems) - len(self.errors)
        return (
            f"{counted(self.pages, 'page')}, {counted(self.spec_files, 'spec file')}, "
            f"{counted(self.indices, 'index', 'indices')}"
            + (f", {counted(self.mirrors, 'mirror')}" if self.mirrors else "")
            + f": {counted(self.records, 'record')}, {counted(self.specs, 'spec')}, "
            f"{counted(len(self.tags), 'tag')}; {counted(len(self.errors), 'error')}, "
            f"{counted(warnings, 'warning')}"
            + (f"; {counted(self.unresolved, 'spec')} unresolved" if self.unresolved else "")
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["problems"] = [asdict(p) for p in self.problems]
        data["ok"] = self.ok
        return data


#: A problem and where it sorts: (stage, file position, row, order) -- see ``Reader.problem``.
Keyed = tuple[tuple[int, int, int, int], Problem]
#: Pages read are added together once they hold this many rows (``Reader.flush``)
PAGE_BATCH_ROWS = 4096


class _Page(NamedTuple):
    """A page read whose rows wait to be added (``Reader.flush``)."""

    position: int
    path: Path
    package: str
    tag: str
    rows: list
    line: int | None
    meta: Any
    meta_line: int | None
    #: its records' line, parsed before its nesting was checked
    unchecked: Unchecked | None = None


class Reader:
    """Reads files and mirrors one at a time (``read_file``, ``read_mirror``), then makes the
    store and its graph (``finish``); ``report`` says what was wrong.

    Each file read is given its position in the load (``at``): rows and problems sort by
    it, so a load split between processes (``graph.sources.parallel``) answers as one.
    """

    def __init__(self) -> None:
        self.builder = StoreBuilder()
        self.report = LoadReport()
        self.keyed: list[Keyed] = []
        self.tags: set[str] = set()
        self.position = 0
        # Spec files are resolved against old-form pages once every file is read.
        self.spec_file_roots: dict[str, str] = {}
        self.old_pages: list[tuple[int, Path, str, list]] = []
        # Hashes read as spec nodes (with their dependencies) already: hash -> its row
        # (-1 while the node's own reading is under way).
        self.nodes_read: dict[str, int] = {}
        # The line of each page's spec_details, by the page's position: where a problem
        # found once every file is read points.
        self.page_lines: dict[int, int | None] = {}
        # Pages read, their rows not yet added (``flush``), and how many rows they hold.
        self.pending: list[_Page] = []
        self.pending_rows = 0

    def __getstate__(self) -> dict:
        # What a second process sends back: not the hashes it read as nodes (this one
        # never asks again), which would be most of what it sends.
        return {**vars(self), "nodes_read": {}}

    def merge(self, other: Reader) -> None:
        """Take in what another Reader (a second process's) read."""
        self.flush()
        other.flush()
        self.builder.merge(other.builder)
        other.builder = StoreBuilder()  # its columns, no longer needed beside the merged ones
        self.keyed += other.keyed
        for count in ("pages", "spec_files", "indices", "mirrors", "records", "unresolved"):
            setattr(self.report, count, getattr(self.report, count) + getattr(other.report, count))
        self.tags |= other.tags
        self.spec_file_roots.update(other.spec_file_roots)
        self.old_pages += other.old_pages
        self.page_lines.update(other.page_lines)

    def at(self, position: int) -> None:
        """The next rows and problems come from the source at this position of the load."""
        self.position = self.builder.position = position

    def problem(
        self, path: Path | str, message: str, line: int | None = None, warning: bool = False,
        row: int = WHOLE_FILE, stage: int = 0,
    ) -> None:  # fmt: skip
        severity = "warning" if warning else "error"
        key = (stage, self.position, row, len(self.keyed))
        self.keyed.append((key, Problem(str(path), message, line, severity)))

    def read_file(self, path: Path) -> None:
        if path.name.endswith(_COMPANIONS) or path.parent.name == "_pgp":
            return  # a build cache's keys, digests and manifests: give its mirror with --mirror
        if sitedata.is_site_data(path.name):
            self.flush()
            self.read_site_data(path)
            return
        try:
            data = path.read_bytes()
        except OSError as exc:
            self.problem(path, f"cannot be read: {exc.strerror}")
            return
        if is_spec_file(path.name) or path.suffix == ".json":
            self.flush()  # the pages before it first: rows are added in the order read
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
        fields, key_lines, unchecked = parse_page_front_matter(lines, first)
        try:
            self.read_fields(path, fields, key_lines, unchecked)
        except BadRecord:
            if unchecked is not None:  # read first, so said first when too deep
                unchecked.check()
            raise

    def read_fields(
        self, path: Path, fields: dict, key_lines: dict, unchecked: Unchecked | None
    ) -> None:
        """A page's front matter: its rows wait to be added with others' (``flush``)."""
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
        meta = fields.get("meta")
        page = _Page(self.position, path, package, tag, rows, line, meta, key_lines.get("meta"),
                     unchecked)  # fmt: skip
        self.pending.append(page)
        self.pending_rows += len(rows) + 1
        if self.pending_rows >= PAGE_BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        """Add the rows of the pages read since the last time (``read_page``) to the builder.

        Pages are checked and coded together, a few thousand rows at a time: a page of the
        public site holds a few dozen, and what is done per call (a few dozen C calls over
        its columns) cost more than its rows. When any row of them is unusual, each page
        is read alone as before, so a bad row is reported in its page and left out while
        the rest of it loads; a page's problems name its path and position as ever.
        """
        pages, self.pending, self.pending_rows = self.pending, [], 0
        if not pages:
            return
        position = self.position
        try:
            listed = well_formed_pages([(page.rows, page.package) for page in pages])
            rows = chain.from_iterable(page.rows for page in pages)
            if listed is None or not nest_shallowly(list(rows)):
                kept = self.shallow_pages(pages)
                if listed is None or len(kept) < len(pages):
                    for page in kept:  # each read alone: its bad rows said and left out
                        self.at(page.position)
                        self.counted(page)
                        listed = self.add_page(page.path, page.package, page.tag, page.rows,
                                               page.line)  # fmt: skip
                        if page.meta is not None and len(listed.hashes) == len(page.rows):
                            # (else it summarizes records left out)
                            self.check_meta(page.path, page.meta, listed, page.meta_line)
                    return
            for page in pages:
                self.counted(page)
            self.add_pages(pages, listed)
        finally:
            self.at(position)

    def shallow_pages(self, pages: list[_Page]) -> list[_Page]:
        """The pages whose records' line nests no deeper than any real page; each other is
        refused whole, as parsing it would have been."""
        kept = []
        for page in pages:
            if page.unchecked is not None:
                try:
                    page.unchecked.check()
                except BadRecord as exc:
                    self.at(page.position)
                    self.problem(page.path, exc.message, exc.line)
                    continue
            kept.append(page)
        return kept

    def counted(self, page: _Page) -> None:
        """A page read: counted, its tag known, its records' line where its rows' problems
        found later point."""
        self.page_lines[page.position] = page.line
        self.report.pages += 1
        self.tags.add(page.tag)

    def add_pages(self, pages: list[_Page], listed: Listed) -> None:
        """Pages whose rows are all well formed (``listed``: theirs, end to end), added as
        one: each row with its page's file, tag, position and its number in it."""
        builder = self.builder
        lengths = np.array([len(page.rows) for page in pages], np.int64)
        starts = np.zeros(len(pages) + 1, np.int64)
        np.cumsum(lengths, out=starts[1:])
        files = builder.strings["file"].codes([str(page.path) for page in pages])
        tags = builder.strings["tag"].codes([page.tag for page in pages])
        builder.add_rows(
            listed.hashes,
            listed.columns,
            builder.variant_codes(listed.variants),
            np.repeat(files, lengths),
            np.arange(starts[-1]) - np.repeat(starts[:-1], lengths) + 1,
            True,
            listed.sizes,
            np.repeat(tags, lengths),
            builder.stack_codes(listed.stacks),
            np.repeat([page.position for page in pages], lengths),
        )
        self.report.records += len(listed.hashes)
        spans = list(zip(starts[:-1].tolist(), starts[1:].tolist(), strict=True))
        for page, (start, end) in zip(pages, spans, strict=True):
            hashes = listed.hashes[start:end]
            if len(set(hashes)) < len(hashes):
                self.at(page.position)
                self.repeated_hashes(page.path, hashes, page.line)
        agree = pagemeta.agreeing([page.meta for page in pages], lengths.tolist(), listed)
        for page, (start, end), agrees in zip(pages, spans, agree, strict=True):
            if agrees:
                continue
            self.at(page.position)
            self.check_meta(page.path, page.meta, listed.part(start, end), page.meta_line)

    def add_page(self, path: Path, package: str, tag: str, rows: list, line: int | None) -> Listed:
        """A page's rows: the specs ``tag`` holds, each in the stacks its row lists."""
        self.tags.add(tag)
        listed = well_formed_rows(rows, package)
        numbers: list[int] | range = range(1, len(rows) + 1)
        if listed is None:
            listed, numbers = self.checked_rows(path, rows, package, line)
        builder = self.builder
        builder.add_records(
            listed.hashes,
            listed.columns,
            builder.variant_codes(listed.variants),
            builder.file_code(str(path)),
            numbers,
            page=True,
            sizes=listed.sizes,
            tag=tag,
            stacks=builder.stack_codes(listed.stacks),
        )
        self.report.records += len(listed.hashes)
        self.repeated_hashes(path, listed.hashes, line)
        return listed

    def read_site_data(self, path: Path) -> None:
        """The rebuilt public site's ``specs_data.json.gz`` with the ``package_data.json.gz``
        beside it (``graph.sources.sitedata``): each release a tag, as pages would give."""
        if path.name == sitedata.PACKAGES:
            if not path.with_name(sitedata.SPECS).is_file():
                self.problem(path, f"needs {sitedata.SPECS} beside it; not read")
            return  # read with specs_data.json.gz
        try:
            groups, problems = sitedata.site_pages(path)
        except BadRecord as exc:
            self.problem(path, exc.message, exc.line)
            return
        for message in problems:
            self.problem(path, message)
        self.report.pages += 1
        for tag, package, rows in groups:
            self.add_page(path, package, tag, rows, None)

    def checked_rows(
        self, path: Path, rows: list, package: str, line: int | None
    ) -> tuple[Listed, list[int]]:
        """A page's rows read one by one, each checked; a bad one is reported and left out."""
        hashes: list[str] = []
        columns: dict[str, list] = {a: [] for a in (*attributes.SINGLE, "variants")}
        stacks: list[tuple[str, ...]] = []
        sizes: list[float] = []
        numbers: list[int] = []
        for number, row in enumerate(rows, 1):
            try:
                hash, found, listed, size = page_row(row, package)
            except BadRecord as exc:
                named = row.get("hash") if isinstance(row, dict) else None
                named = f" ({named})" if isinstance(named, str) and named else ""
                self.problem(path, f"record {number}{named}: {exc.message}", line, row=number)
                continue
            hashes.append(hash)
            for name, values in columns.items():
                values.append(found[name])
            stacks.append(listed)
            sizes.append(np.nan if size is None else size)
            numbers.append(number)
        variants = columns.pop("variants")
        return Listed(hashes, columns, variants, stacks, sizes), numbers

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
                row=0,
            )

    def check_meta(self, path: Path, meta: Any, listed: Listed, line: int | None) -> None:
        """Warn where a page's ``meta`` summary disagrees with its records."""
        for message in pagemeta.disagreements(meta, listed):
            self.problem(path, message, line, warning=True)

    def read_old_page(self, path: Path, package: str, fields: dict, key_lines: dict) -> None:
        """The oldest form: no tag, ``spec_files`` mapping spec strings to spec-N.json."""
        entries = fields.get("spec_files")
        line = key_lines.get("spec_files")
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise BadRecord("'spec_files' must be a list of 'SPEC: FILE' entries", line)
        self.report.pages += 1
        listed = [(k, v) for e in entries for k, v in e.items()]
        self.old_pages.append((self.position, path, package, listed))

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
        """A spec file's nodes; return the hashes added, the root's first.

        A file of formats 1-3 has its edges labelled with virtuals as Spack's reader of them
        does (``reconstruct_virtuals_on_edges``); an index's are read as recorded."""
        nodes = spec_nodes(doc)
        if spec_format(doc) in RECONSTRUCTED_FORMATS:
            nodes = virtuals.reconstructed(nodes)
        hashes = self.read_nodes(path, [(None, n) for n in nodes])
        self.report.spec_files += 1
        if hashes:
            self.spec_file_roots[str(path)] = hashes[0]
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
        """A whole mirror: its specs, their dependencies, sizes and tarballs; STACK holds them.

        A remote mirror is read from its local copy (``graph.sources.remote``), every path
        of it named by the mirror's URL; one whose copy could not be fetched holds nothing,
        and says why. Its messages show no value read from its files (``values_hidden``): a
        link in a mirror may reach any file.
        """
        self.flush()
        with attributes.values_hidden():
            self._read_mirror(source)

    def read_mirror_at(self, position: int, source: MirrorSource) -> None:
        """``read_mirror`` at ``position`` of the load. A remote mirror's reading is kept
        beside its copy (``graph.sources.parts``): merged as kept while the copy is
        unchanged, else read alone and kept, so that a reload reads only what changed."""
        self.flush()
        self.at(position)
        if not parts.keeps(source):
            self.read_mirror(source)
            return
        if self.named_again(source):
            return
        key = parts.part_key(source, position)
        part = parts.kept(source, key)
        if part is None:
            part = Reader()
            part.at(position)
            part.read_mirror(source)
            parts.keep(source, key, part)
        self.merge(part)

    def named_again(self, source: MirrorSource) -> bool:
        """Whether a mirror of this name was read already (then said, and not read again)."""
        name = source.label
        if any(m.name == name for m in self.builder.mirrors):
            self.problem(
                source.shown,
                f"a second mirror named {name!r}; give each its own name in a mirrors file",
            )
            return True
        return False

    def _read_mirror(self, source: MirrorSource) -> None:
        if self.named_again(source):
            return
        name = source.label
        copy = os.path.join(source.path, "") if source.url else ""
        if source.url and source.error and not (source.path / "state.json").is_file():
            read = MirrorRead(source.served_layout or "v2", source.shown)
            read.problem(source.shown, source.error.removeprefix(f"{source.shown}: "))
        else:
            read = read_mirror(source)
            if source.error:
                why = source.error.removeprefix(f"{source.shown}: ")
                read.problem(source.shown, why + STALE_COPY, "warning")
        shown = _shown_paths(copy, source.shown)
        self.report.mirrors += 1
        self.tags.add(source.tag)
        layout = source.served_layout or read.layout
        info = MirrorInfo(name, source.shown if copy else read.location, layout, source.tag,
                          source.stack, read.signed)  # fmt: skip
        # a tarball is named within its mirror: by its URL for a remote one (the mirror's
        # URL, held once, then its path), else by its path below the mirror's root (never
        # the server's own folders); an OCI mirror's is its spec's image: REGISTRY/REPOSITORY:TAG
        prefix = f"{source.shown}{':' if layout == 'oci' else '/'}" if copy else ""
        code = self.builder.add_mirror(info, prefix)
        at, before = len(self.builder.mirrors) - 1, len(self.keyed)
        holding: list[str] = []
        listed: set[str] = set()
        tarballs: dict[str, tuple[str, float | None]] = {}
        first_row = self.builder.record_count
        if read.index is not None:
            path, chunks = read.index
            path = shown(path)
            self.report.indices += 1
            first = 1
            for chunk in chunks:
                deadline.check_stopping()
                hashes = self.read_nodes(path, _index_nodes(chunk), first)
                first += len(chunk)
                listed.update(chunk)
                for hash in hashes:
                    if held(chunk[hash]):
                        holding.append(hash)
                        tarballs[hash] = read.tarball(hash, chunk[hash])
        if read.unnamed:  # every record is read: the compilers' versions are known
            read.name_compilers(tarballs, lambda h: self.builder.versions_of(h, first_row))
        read.later(listed)
        for path, message, severity in read.problems:
            self.problem(shown(path), message, warning=severity == "warning")
        for path, doc in read.spec_files:
            try:
                holding += self.read_spec_file(path, doc)[:1]
            except BadRecord as exc:
                self.problem(path, exc.message, exc.line)
        holding = list(dict.fromkeys(holding))
        tarballs.update(read.tarballs)
        found = [tarballs.get(h, ("", None)) for h in holding]
        sizes = [np.nan if size is None else size for _, size in found]
        self.builder.add_held(holding, code, sizes, [below for below, _ in found])
        met = [problem.severity for _, problem in self.keyed[before:]]
        self.builder.mirrors[at] = replace(
            info, errors=met.count("error"), warnings=met.count("warning")
        )
        released()

    def read_nodes(
        self, path: Path, nodes: list[tuple[str | None, Any]], first: int = 1
    ) -> list[str]:
        """Add spec nodes (numbered from ``first``) and their dependency edges; return the
        hashes added, in order."""
        builder, seen = self.builder, self.nodes_read
        added: list[str] = []
        fresh: list[tuple[str, dict, int, dict]] = []  # (hash, node, number, attributes)
        for number, (hash, node) in enumerate(nodes, first):
            if hash is not None and hash in seen:
                # A hash names one spec and its whole DAG: another mirror listing it
                # again says nothing new, and reading it again would cost most of a load.
                # Only its name and version are compared, to say when it does differ.
                if type(node) is dict:
                    self.described_again(path, number, hash, node.get("name"), node.get("version"))
                added.append(hash)
                continue
            try:
                hash, found = node_row(node, hash)
            except BadRecord as exc:
                self.problem(path, f"node {number}: {exc.message}", row=number)
                continue
            if hash not in seen:
                seen[hash] = -1
                fresh.append((hash, node, number, found))
            else:
                self.described_again(path, number, hash, found["package"], found["version"])
            added.append(hash)
        edges = well_formed_edges([node for _, node, _, _ in fresh])
        if edges is None:  # read node by node: a node whose edges are bad is not added
            fresh, edges, dropped = self._checked_edges(path, fresh)
            added = [h for h in added if h not in dropped]
        file = builder.file_code(str(path))
        columns = {a: [f[a] for *_, f in fresh] for a in (*attributes.SINGLE, "variants")}
        variants = builder.variant_codes(columns.pop("variants"))
        first_row = builder.record_count
        builder.add_records(
            [h for h, *_ in fresh], columns, variants, file, [n for _, _, n, _ in fresh], page=False
        )
        rows = range(first_row, builder.record_count)  # each fresh node's row, once per edge
        seen.update(zip([h for h, *_ in fresh], rows, strict=True))
        builder.add_edges(
            list(chain.from_iterable(map(repeat, rows, edges.counts))),
            edges.hashes,
            builder.deptype_masks(edges.deptypes),
            builder.virtual_codes(edges.virtuals),
        )
        self.report.records += len(added)
        return added

    def described_again(self, path: Path, number: int, hash: str, name: Any, version: Any) -> None:
        """Warn, naming both files, when a hash read before comes again as another package
        or version: the first description is kept (a hash names one spec)."""
        row = self.nodes_read.get(hash, -1)
        if row < 0:
            return
        b = self.builder
        known = b.strings["package"].values[b.r_codes["package"][row]]
        known_version = b.strings["version"].values[b.r_codes["version"][row]]
        if name == known and str(version) == known_version:
            return
        first = f"{b.strings['file'].values[b.r_file[row]]}#{b.r_number[row]}"
        self.problem(
            path,
            f"node {number}: hash {hash} is {name}@{version} here but {known}@{known_version} "
            f"in {first}; keeping the first",
            warning=True,
            row=number,
        )

    def _checked_edges(self, path: Path, fresh: list) -> tuple[list, Edges, set[str]]:
        """Each node's dependencies read one by one: the nodes whose are all good, their
        edges, and the hashes of the nodes left out (each reported)."""
        kept, dropped = [], set()
        edges = Edges([], [], [], [])
        for hash, node, number, found in fresh:
            try:
                deps = node_dependencies(node)
            except BadRecord as exc:
                self.problem(path, f"node {number}: {exc.message}", row=number)
                self.nodes_read.pop(hash, None)
                dropped.add(hash)
                continue
            kept.append((hash, node, number, found))
            edges.counts.append(len(deps))
            for dep in deps:
                edges.hashes.append(dep.hash)
                edges.deptypes.append(dep.deptypes)
                edges.virtuals.append(dep.virtuals)
        return kept, edges, dropped

    # -- the end -----------------------------------------------------------------

    def finish(self) -> CacheGraph:
        """The store of every row read and its graph; the report's counts and problems."""
        self.flush()
        store, found, skipped = self.builder.finish()
        graph = CacheGraph(store)
        self.report.records -= skipped
        for key, path, message, severity in found:
            # A row's problem points at its page's spec_details, as those of reading do.
            line = self.page_lines.get(key[1]) if key[0] == 0 else None
            self.keyed.append((key, Problem(path, message, line, severity)))
        self.resolve_old_pages(graph)
        self.report.problems += [problem for _, problem in sorted(self.keyed, key=_key)]
        self.report.specs = store.n
        # The tags some spec is in, as the graph counts them: not those of a page or a mirror
        # whose every record was refused.
        self.report.tags = list(store.names("tag"))
        return graph

    def resolve_old_pages(self, graph: CacheGraph) -> None:
        """Check old-form pages against the spec files beside them, once every file is read."""
        for position, path, package, entries in self.old_pages:
            self.at(position)
            for spec_string, filename in entries:
                root = self.spec_file_roots.get(str(path.parent / filename))
                if root is None:
                    self.report.unresolved += 1
                    self.problem(
                        path,
                        f"{spec_string!r}: spec file {filename} is not present; spec not loaded",
                        warning=True,
                        stage=1,
                    )
                elif (found := graph.spec(root).package) != package:
                    self.problem(
                        path, f"{filename} describes package {found!r}, not {package!r}", stage=1
                    )


def _key(keyed: Keyed) -> tuple:
    return keyed[0]


def _shown_paths(copy: str, shown: str) -> Callable[[Path | str], Path | str]:
    """How a path of a remote mirror's local copy is named: by the mirror's URL.

    >>> _shown_paths("/c/m/", "https://h/m")("/c/m/build_cache/index.json")
    'https://h/m/build_cache/index.json'
    """

    def named(path: Path | str) -> Path | str:
        text = str(path)
        return shown + "/" + text[len(copy) :] if copy and text.startswith(copy) else path

    return named


def _index_nodes(installs: dict) -> list[tuple[str, Any]]:
    """(hash, node) of each record of an index's ``installs``."""
    found = []
    for h, entry in installs.items():
        node = entry.get("spec") if type(entry) is dict else entry
        if type(node) is dict and "name" not in node:  # database version 5: {NAME: node}
            node = index_node(entry)
        found.append((h, node))
    return found
