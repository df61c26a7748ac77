"""Spack build-cache mirrors: how one is given, and what reading any layout shares.

A mirror is given as ``TAG:STACK=PATH`` (the stack ``STACK`` holds, in ``TAG``,
every spec the mirror holds: as the public site derives its stacks), or in a
mirrors file (``mirrors_file``). ``PATH`` is the mirror's root, its ``build_cache/``
folder, a v2 ``index.json`` itself, or a URL. Each layout is a module of its own
(``v2``, ``v3``, ``oci``; ``layouts`` tells which a mirror is in); here is what they share:
``MirrorRead`` (what a mirror's files hold, and what is wrong with them), reading an index a
chunk of records at a time, and the bounds on what is read.

The index is the source of records and dependencies; spec files and spec blobs
are read for the specs the index does not list (or when it is missing).
Nothing here builds the graph: ``layouts.read_mirror`` says what the files hold, and
the loader adds it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from ..attributes import shown
from ..errors import BadRecord
from . import files
from .chunks import split
from .fetch import Fetcher, FetchError
from .files import read_regular
from .frontmatter import MAX_NESTING, check_nesting, decode_text, load_yaml
from .locations import Remote, is_url, mirror_root, redacted, resolved, scheme_of
from .source import Checked, Checking, Described
from .specfiles import (
    load_json,
)

#: Spack build-cache index database versions this loader understands.
INDEX_VERSIONS = {"5", "6", "7", "8"}
#: An index may be this large, as a file and once decompressed: about three times the
#: largest real one (the public develop index, 185 MB). Reading one takes about four times
#: its size at the peak, so the limit keeps a load within the 4 GiB the Kubernetes
#: manifest allows; at 8 GiB a 1 MB blob that inflated to 1 GiB took ``validate`` to 4.1 GB.
#: The size checked is the file's apparent size: a sparse file of 2 GiB (8 kB on disk) is
#: refused before a byte of it is read.
MAX_INDEX_BYTES = 512 << 20
#: A v3 manifest (a few blob records), layout.json or index.json.hash is far smaller.
MAX_SMALL_FILE_BYTES = 1 << 20
#: the media type of an index blob, with its database version (v3 manifests)
INDEX_MEDIA = re.compile(r"application/vnd\.spack\.db\.v(\d+)\+json")


@dataclass(frozen=True)
class MirrorSource:
    """A mirror to load, and the stack that holds its specs in a tag."""

    tag: str
    stack: str
    path: Path
    #: unique among the loaded mirrors; ``TAG/STACK`` when not given
    name: str = ""
    #: the named index view of a v3 mirror to read (Spack 1.2's ``update-index --name``);
    #: empty for its main index, and for each of its views as mirrors of their own
    view: str = ""
    #: a remote mirror's URL as given, credentials included (never shown: see ``shown``);
    #: ``path`` is then its local copy (``graph.sources.remote``), once fetched
    url: str = field(default="", repr=False)
    #: a remote mirror whose copy could not be fetched or checked: what failed
    error: str = ""
    #: a remote mirror's layout as served ("oci" for a registry; the copy reads as v2)
    served_layout: str = ""
    #: a local v3 mirror read by its index only, as Spack reads one: its spec manifests
    #: (sizes, tarballs, the checks of its blobs) are left to a later load
    index_first: bool = False

    @property
    def shown(self) -> str:
        """Where the mirror is, as it may be shown: its URL without credentials, or its path."""
        return mirror_root(redacted(self.url)) if self.url else str(self.path)

    @property
    def label(self) -> str:
        return self.name or f"{self.tag}/{self.stack}"

    def viewed(self) -> MirrorSource:
        """The same mirror with ``view`` set when ``path`` names a view: a view's folder
        (``v3/manifests/index/VIEW``) or its ``index.manifest.json``; the path is the root.

        >>> viewed = MirrorSource("t", "s", Path("/m/v3/manifests/index/e4s/index.manifest.json"))
        >>> viewed.viewed().path, viewed.viewed().view
        (PosixPath('/m'), 'e4s')
        """
        if self.url:  # a view of a remote mirror is named with ``^VIEW`` or ``view:``
            return self
        path = self.path
        if path.name == "index.manifest.json":
            path = path.parent
        parts = path.parts
        if len(parts) > 4 and parts[-4:-1] == ("v3", "manifests", "index"):
            return replace(self, path=Path(*parts[:-4]), view=parts[-1])
        return self

    def views(self) -> list[str]:
        """The named index views of a v3 mirror, by name (none for v2 or a given view)."""
        folder = self.path / "v3" / "manifests" / "index"
        if self.view or self.url or not folder.is_dir():
            return []
        return sorted(p.parent.name for p in folder.glob("*/index.manifest.json"))

    # -- a Source (``graph.sources.source``) ----------------------------------------------

    def described(self) -> Described:
        """Its name, tag, stack and view, and its index files and folders (a remote one's
        copy's: ``files.fingerprint``; the copy changes when a fetch brings a new index or
        the spec manifests of its sizes)."""
        viewed = f"^{self.view}" if self.view else ""
        line = f"mirror {self.label} {self.tag}:{self.stack}{viewed}"
        return [], [line], [str(self.path)]

    def fingerprint(self) -> str:
        return files.fingerprint(*self.described())

    def parts(self, report: Any) -> list[MirrorSource]:
        """The mirror (``viewed``), and each named view of a v3 mirror given without a view
        as a mirror of its own: its stack the view's name, its name ``LABEL^VIEW`` (as Spack
        writes a mirror's view, ``MirrorMetadata`` in ``url_buildcache.py``). The main index,
        when there is one, stays the mirror given; the views found are listed in
        ``report.views``.

        Spack 1.2 reads one index per mirror and view (``get_index_url(mirror_url, view)``):
        a view is the specs its own index lists, no more.
        """
        source = self.viewed()
        named = source.views()
        main = source.path / "v3" / "manifests" / "index" / "index.manifest.json"
        found = [source] if not named or main.is_file() else []
        if named:
            report.views[source.label] = named
        return found + [
            MirrorSource(source.tag, view, source.path, f"{source.label}^{view}", view)
            for view in named
        ]

    def read(self, reader: Any, position: int) -> None:
        """Its specs, their dependencies, sizes and tarballs (``reader.Reader.read_mirror_at``)."""
        reader.read_mirror_at(position, self)

    def check(self, checking: Checking) -> Checked:
        """At a URL: checked with the cheap request Spack makes and fetched when it changed
        (``layouts.checked``); on disk: its fingerprint compared with the last check's."""
        if self.url:
            if checking.remote is None:
                raise ValueError(f"{self.shown}: a mirror at a URL is checked by Checking.remote")
            return checking.remote(self, checking)
        return Checked(self, checking.changed(self))

    @classmethod
    def parse(cls, text: str) -> MirrorSource:
        """``TAG:STACK=PATH`` or ``TAG:STACK=URL`` (a view of a remote v3 mirror: ``URL^VIEW``).

        >>> MirrorSource.parse("develop:e4s=/mirror").path
        PosixPath('/mirror')
        >>> MirrorSource.parse("develop:e4s=https://binaries.spack.io/develop/e4s").shown
        'https://binaries.spack.io/develop/e4s'
        """
        label, sep, path = text.partition("=")
        tag, colon, stack = label.partition(":")
        if not (sep and colon and tag and stack and path):
            raise ValueError(f"expected TAG:STACK=PATH, got {redacted(text)!r}")
        return cls.at(tag, stack, path)

    @classmethod
    def at(
        cls, tag: str, stack: str, location: str, name: str = "", view: str = ""
    ) -> MirrorSource:
        """A mirror at a path, a ``file://`` URL or a remote URL (checked: ValueError)."""
        scheme = scheme_of(location)
        if scheme and scheme != "file" and not is_url(location):
            raise ValueError(
                f"{redacted(location)}: the URL scheme {scheme!r} is not one a mirror is read "
                "from (http, https, s3, gs, oci, oci+http or file)"
            )
        if is_url(location):
            url, _, named = location.partition("^") if "^" in location else (location, "", "")
            Remote.parse(url)  # says what is wrong with it
            return cls(tag, stack, Path(), name, view or named, url=url)
        return cls(tag, stack, Path(location.removeprefix("file://")), name, view)


log = logging.getLogger("cachegraph")

#: What a mirrors file may hold: a line or two a mirror, 100,000 mirrors and more.
MAX_MIRRORS_FILE_BYTES = 16 << 20


def mirrors_file(
    path: str | os.PathLike, fetcher: Any = None, cache_dir: str = ""
) -> list[MirrorSource]:
    """The mirrors a YAML or JSON file lists, in either of two shapes.

    ``{"mirrors": [{"tag": T, "stack": S, "path": P, "name": N?}, ...]}``, or the
    public cache indexer's output, ``{TAG: [{"label": STACK, "url": P}, ...]}``
    (paths, ``file://`` or remote URLs). The file itself may be at a URL (fetched with
    ``fetcher``, a ``graph.sources.fetch.Fetcher``; a copy kept in ``cache_dir``, read when
    the URL cannot be). Relative locations are taken from the file's folder or URL. Raises
    ValueError saying what is wrong.
    """
    text_path = os.fspath(path)
    remote = is_url(text_path)
    where = redacted(text_path) if remote else Path(path)
    copy = listing_copy(cache_dir, text_path) if remote and cache_dir else None
    try:
        # not waiting on a FIFO, nor reading /dev/zero until memory runs out
        data, fetched = (
            _fetched_listing(text_path, fetcher, copy)
            if remote
            else (read_regular(where, MAX_MIRRORS_FILE_BYTES), False)
        )
    except OSError as exc:
        raise ValueError(f"{where}: cannot be read: {exc.strerror}") from None
    found = _listed(data, text_path, where, remote)
    if fetched and copy is not None:  # kept once it reads as a mirrors file, never before
        _keep(copy, data, where)
    return found


def _listed(data: bytes, text_path: str, where: Any, remote: bool) -> list[MirrorSource]:
    """The mirrors a mirrors file's bytes list; ValueError says what is wrong."""
    try:
        doc = _listing_document(decode_text(data), text_path.rsplit("?", 1)[0])
    except BadRecord as exc:
        raise ValueError(f"{where}: {exc.message}") from None
    if isinstance(doc, dict) and isinstance(doc.get("mirrors"), list):
        entries = [(e.get("tag"), e.get("stack"), e.get("path") or e.get("url"), e.get("name"), e)
                   for e in doc["mirrors"] if isinstance(e, dict)]  # fmt: skip
        if len(entries) != len(doc["mirrors"]):
            raise ValueError(f"{where}: every entry of 'mirrors' must be a mapping")
    elif isinstance(doc, dict) and all(isinstance(v, list) for v in doc.values()):
        entries = [
            (tag, e.get("label"), e.get("url") or e.get("path"), e.get("name"), e)
            for tag, listed in doc.items()
            for e in listed
            if isinstance(e, dict)
        ]
    else:
        raise ValueError(
            f"{where}: expected {{mirrors: [{{tag, stack, path}}]}} or {{TAG: [{{label, url}}]}}"
        )
    found = []
    for tag, stack, location, name, entry in entries:
        if not all(isinstance(v, str) and v for v in (tag, stack, location)):
            shown = json.dumps(entry, default=str)[:200]
            raise ValueError(f"{where}: entry {redacted(shown)} needs a tag, a stack and a path")
        view = entry.get("view") or ""
        if not isinstance(view, str):
            raise ValueError(f"{where}: entry {redacted(json.dumps(entry, default=str)[:200])}: "
                             "'view' must be a string")  # fmt: skip
        location = resolved(location, text_path)
        if not is_url(location):
            location = location.removeprefix("file://")
            if scheme_of(location):
                raise ValueError(f"{where}: {redacted(location)!r}: a scheme this does not read")
            location = str(Path(where).parent / location) if not remote else location
        try:
            found.append(MirrorSource.at(tag, stack, location, name or "", view))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return found


def _listing_document(text: str, name: str) -> Any:
    """A mirrors file's document: YAML or JSON by its name's ending, else (a URL ending
    otherwise) JSON if it is JSON, else YAML. BadRecord says what is wrong.

    >>> _listing_document("mirrors: []", "https://h/list")
    {'mirrors': []}
    """
    if name.endswith((".yaml", ".yml")):
        return load_yaml(text)
    if name.endswith(".json"):
        return load_json(text)
    try:
        return load_json(text)
    except BadRecord as as_json:
        try:
            return load_yaml(text)
        except BadRecord as as_yaml:
            json_says = as_json.message.removeprefix("not valid JSON: ")
            yaml_says = as_yaml.message.removeprefix("YAML is not valid YAML: ")
            raise BadRecord(f"neither valid JSON ({json_says}) nor valid YAML ({yaml_says})",
                            as_yaml.line) from None  # fmt: skip


def _fetched_listing(url: str, fetcher: Any, copy: Path | None) -> tuple[bytes, bool]:
    """A mirrors file at a URL (the public cache's ``cache_spack_io_index.json``), and
    whether it was fetched: one that cannot be is read from its ``copy`` when there is one
    (a restart with the network down, which serves the mirrors' copies too), with a
    warning."""
    own = fetcher is None
    fetcher = fetcher or Fetcher()
    try:
        base, _, name = url.rstrip("/").rpartition("/")
        got = fetcher.get(Remote.parse(base), name, limit=MAX_MIRRORS_FILE_BYTES)
        if got.status != 200:
            raise FetchError(f"{redacted(url)}: not found (HTTP {got.status})")
    except FetchError as exc:
        if copy is None or not copy.is_file():
            raise ValueError(exc.message) from None
        fetched = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(copy.stat().st_mtime))
        log.warning("%s; reading the copy of the mirrors file held from %s", exc.message, fetched)
        return read_regular(copy, MAX_MIRRORS_FILE_BYTES), False
    finally:
        if own:
            fetcher.close()
    return got.data, True


def _keep(copy: Path, data: bytes, where: Any) -> None:
    try:
        copy.parent.mkdir(parents=True, exist_ok=True)
        part = copy.with_name(f"{copy.name}.{os.getpid()}.partial")
        part.write_bytes(data)
        os.replace(part, copy)
    except OSError as exc:
        log.warning("cannot keep a copy of %s in %s: %s", where, copy.parent, exc.strerror)


def listing_copy(cache_dir: str | os.PathLike, url: str) -> Path:
    """Where the copy of a mirrors file at ``url`` is kept: one per URL (credentials left
    out: a rotated token is the same file), named by a digest.

    >>> listing_copy("/c", "https://u:t@h/index.json") == listing_copy("/c", "https://h/index.json")
    True
    """
    key = hashlib.sha256(redacted(url).encode()).hexdigest()[:24]
    return Path(cache_dir) / "listings" / f"{key}.data"


#: around the hash of a compiler's record in a tarball's name, until its version is known
COMPILER_LATER = "\0"


@dataclass
class MirrorRead:
    """What one mirror's files hold, and what is wrong with them.

    The index is read a chunk of records at a time (``index``), then ``later``
    is told every hash it listed and reads what the index lacks: the spec files
    of the other specs, and their tarballs.
    """

    layout: str
    location: str
    #: its spec files are clearsigned, or it publishes the keys that signed them
    signed: bool = False
    #: (path, chunks) of the index: each chunk hash -> its record ({"spec": node, ...})
    index: tuple[Path, Iterator[dict]] | None = None
    #: (path, spec document) of the spec files read beside or instead of the index
    spec_files: list[tuple[Path, dict]] = field(default_factory=list)
    #: hash -> (tarball location, size in bytes or None)
    tarballs: dict[str, tuple[str, float | None]] = field(default_factory=dict)
    #: (path, message, severity)
    problems: list[tuple[Path, str, str]] = field(default_factory=list)
    #: the specs whose tarball names a compiler by the hash of its record (``COMPILER_LATER``
    #: around it): its version is put in once every record is read (``name_compilers``)
    unnamed: list[str] = field(default_factory=list)
    #: the size of a tarball named so, where the layout can tell (its file on disk)
    size_of: Callable[[MirrorRead, str], float | None] = field(default=lambda read, tarball: None)
    #: the layout's ``tarball`` and ``later``, given this read: they do not close over it,
    #: as a cycle would keep every mirror's read (its spec files' names, its manifests'
    #: tarballs: some 70 MB a mirror at a million specs) while a load pauses the collector
    tarball_of: Callable[[MirrorRead, str, dict], tuple[str, float | None]] = field(
        default=lambda read, hash, entry: ("", None)
    )
    read_later: Callable[[MirrorRead, set[str]], None] = field(default=lambda read, listed: None)
    #: whether an index's records were read: then it alone says what the mirror holds
    indexed: bool = False

    def problem(self, path: Path, message: str, severity: str = "error") -> None:
        self.problems.append((path, message, severity))

    def tarball(self, hash: str, entry: dict) -> tuple[str, float | None]:
        """The tarball of a spec an index record holds: (location, size or None)."""
        return self.tarball_of(self, hash, entry)

    def name_compilers(
        self,
        tarballs: dict[str, tuple[str, float | None]],
        versions_of: Callable[[set[str]], dict[str, str]],
    ) -> None:
        """Put in each ``unnamed`` tarball its compiler's version, found by hash among the
        records read (``versions_of``; "none" for a compiler no record describes).

        >>> read, at = MirrorRead("v2", "m"), f"gcc-{COMPILER_LATER}g{COMPILER_LATER}"
        >>> read.unnamed.append("h")
        >>> tarballs = {"h": (f"a/{at}/zlib/a-{at}-zlib.spack", None)}
        >>> read.name_compilers(tarballs, lambda hashes: {"g": "12.1.0"})
        >>> tarballs
        {'h': ('a/gcc-12.1.0/zlib/a-gcc-12.1.0-zlib.spack', None)}
        """
        named = [(h, tarballs[h]) for h in self.unnamed if h in tarballs]
        versions = versions_of({path.split(COMPILER_LATER)[1] for _, (path, _) in named})
        for hash, (path, size) in named:
            parts = path.split(COMPILER_LATER)
            path = versions.get(parts[1], "none").join(parts[::2])
            tarballs[hash] = (path, self.size_of(self, path) if size is None else size)
        self.unnamed = []

    def later(self, listed: set[str]) -> None:
        """Read what the index lacks, given the hashes it listed (fills spec_files, tarballs)."""
        self.read_later(self, listed)


# -- v2 --------------------------------------------------------------------------------


# -- OCI ---------------------------------------------------------------------------------

#: Where a copy of an OCI mirror keeps its specs' image manifests (``TAG.json``), fetched for
#: sizes (``graph.sources.oci.fetch_oci_manifests``); its index is a v2 one.
OCI_MANIFESTS = "oci/manifests"


def not_listed(read: MirrorRead, index: Path, unlisted: list[str]) -> None:
    """A warning naming the spec files an index does not list: not in its mirror.

    Spack's ``BinaryCacheIndex`` knows a mirror by its index alone
    (``_associate_built_specs_with_mirror`` in ``binary_distribution.py``): ``spack
    buildcache list`` and ``spack install`` see no spec the index does not list.
    """
    if unlisted:
        read.problem(
            index,
            f"{len(unlisted)} spec file{'s' if len(unlisted) > 1 else ''} beside the index "
            f"{'are' if len(unlisted) > 1 else 'is'} not listed in it (the first: "
            f"{unlisted[0]}): not in this mirror, as Spack lists what the index holds; not read",
            "warning",
        )


# -- v3 --------------------------------------------------------------------------------


SHA256 = re.compile(r"[0-9a-f]{64}")


#: what a name or a version may be to name a file (Spack's package names and versions are)
PATH_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+=~-]*")


# -- both --------------------------------------------------------------------------------


def file_bytes(read: MirrorRead, path: Path | str, limit: int) -> bytes | None:
    """A regular file's bytes, when it is at most ``limit`` bytes; else None (a problem)."""
    try:
        return read_regular(path, limit)
    except FileNotFoundError:
        read.problem(Path(path), "no such file")
    except OSError as exc:
        if exc.strerror == "not a regular file":
            read.problem(Path(path), "not a regular file")
        elif exc.strerror.startswith("larger than"):
            read.problem(Path(path), f"{exc.strerror}, more than a real one can be; not read")
        else:
            read.problem(Path(path), f"cannot be read: {exc.strerror}")
    return None


def index_chunks(read: MirrorRead, path: Path, data: bytes) -> Iterator[dict] | None:
    """The records of a build-cache index, a chunk at a time (``graph.sources.chunks``), or
    None (a problem) when it is not one. An index the chunked scan cannot follow is parsed
    whole, which says what is wrong with it."""
    try:
        rest, chunks = split(data, b"installs", 2, deepest_allowed=MAX_NESTING)
        index_installs(rest)  # the database and its version
        return chunks
    except ValueError:
        pass  # not the shape of an index: parsed whole below, to say why
    except BadRecord as exc:
        read.problem(path, exc.message)
        return None
    try:
        check_nesting(data)
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError:  # not UTF-8 or not JSON: the plain parser says where
            doc = load_json(decode_text(data))
        return iter([index_installs(doc)])
    except BadRecord as exc:
        read.problem(path, exc.message)
    return None


def index_installs(doc: Any) -> dict:
    """The ``installs`` of a parsed build-cache index; BadRecord says what is wrong.

    >>> index_installs({"database": {"version": "8", "installs": {}}})
    {}
    """
    db = doc.get("database") if isinstance(doc, dict) else None
    if not isinstance(db, dict):
        raise BadRecord("not a build-cache index: no 'database' mapping")
    version = str(db.get("version"))
    if version not in INDEX_VERSIONS:
        raise BadRecord(
            f"unknown index database version {shown(db.get('version'))}; "
            f"this loader reads versions {', '.join(sorted(INDEX_VERSIONS))}"
        )
    installs = db.get("installs")
    if not isinstance(installs, dict):
        raise BadRecord("index 'installs' must be a mapping of hash to record")
    return installs


def index_node(entry: Any) -> Any:
    """The spec node of an index record, with its ``name``.

    Database version 5 and older key the node by its package name
    (``{"spec": {"zlib": {...}}}``); Spack's ``Database._read_spec_from_dict`` reads a
    spec mapping without ``name`` that way (``lib/spack/spack/database.py``).

    >>> index_node({"spec": {"zlib": {"version": "1.2"}}})
    {'name': 'zlib', 'version': '1.2'}
    >>> index_node({"spec": {"name": "zlib"}})
    {'name': 'zlib'}
    """
    spec = entry.get("spec") if isinstance(entry, dict) else entry
    if isinstance(spec, dict) and "name" not in spec and len(spec) == 1:
        ((name, body),) = spec.items()
        if isinstance(body, dict):
            return {"name": name, **body}
    return spec


def held(entry: Any) -> bool:
    """Whether an index record's binary is in the mirror (a referenced compiler is not)."""
    return not isinstance(entry, dict) or entry.get("in_buildcache", True) is not False
