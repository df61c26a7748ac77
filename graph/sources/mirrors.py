"""Spack build-cache mirrors on disk: which layout, which files, what each says.

A mirror is given as ``TAG:STACK=PATH`` (the stack ``STACK`` holds, in ``TAG``,
every spec the mirror holds: as the public site derives its stacks), or in a
mirrors file. ``PATH`` is the mirror's root, its ``build_cache/`` folder, or a
v2 ``index.json`` itself. The layouts (``../shared/reference/spack/buildcache.rst``):

- **v2**: ``build_cache/index.json`` (``index.json.hash`` holds its sha256), with
  ``*.spec.json``, ``*.spec.json.sig`` or ``*.spec.yaml`` beside it, and tarballs at
  ``build_cache/<arch>/<compiler>/<name>-<version>/<spec file stem>.spack``.
- **v3** (Spack >= 1.0): ``v3/layout.json``; ``v3/manifests/index/[VIEW/]index.manifest.json``
  names the index blob, ``v3/manifests/spec/<name>/<name>-<version>-<hash>.spec.manifest.json``
  the spec blob and the tarball blob (with its ``contentLength``); every blob lives at
  ``blobs/<algorithm>/<first two characters>/<checksum>``.

The index is the source of records and dependencies; spec files and spec blobs
are read for the specs the index does not list (or when it is missing).
Nothing here builds the graph: ``read_mirror`` says what the files hold, and
the loader adds it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from .. import deadline
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
    MAX_SPEC_BYTES,
    clearsigned_text,
    gunzipped,
    is_spec_file,
    load_json,
    spec_document,
    spec_nodes,
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
_HASH_AT_END = re.compile(r"-([a-z0-9]{32})\.spec\.(?:json(?:\.sig)?|ya?ml)$")


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
        (``remote.checked``); on disk: its fingerprint compared with the last check's."""
        if self.url:
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


#: What a mirrors file may hold: a line or two a mirror, 100,000 mirrors and more.
MAX_MIRRORS_FILE_BYTES = 16 << 20


def mirrors_file(path: str | os.PathLike, fetcher: Any = None) -> list[MirrorSource]:
    """The mirrors a YAML or JSON file lists, in either of two shapes.

    ``{"mirrors": [{"tag": T, "stack": S, "path": P, "name": N?}, ...]}``, or the
    public cache indexer's output, ``{TAG: [{"label": STACK, "url": P}, ...]}``
    (paths, ``file://`` or remote URLs). The file itself may be at a URL (fetched with
    ``fetcher``, a ``graph.sources.fetch.Fetcher``). Relative locations are taken from the
    file's folder or URL. Raises ValueError saying what is wrong.
    """
    text_path = os.fspath(path)
    remote = is_url(text_path)
    where = redacted(text_path) if remote else Path(path)
    try:
        # not waiting on a FIFO, nor reading /dev/zero until memory runs out
        data = (
            _fetched_listing(text_path, fetcher)
            if remote
            else read_regular(where, MAX_MIRRORS_FILE_BYTES)
        )
    except OSError as exc:
        raise ValueError(f"{where}: cannot be read: {exc.strerror}") from None
    try:
        text = decode_text(data)
        yaml = text_path.rsplit("?", 1)[0].endswith((".yaml", ".yml"))
        doc = load_yaml(text) if yaml else load_json(text)
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


def _fetched_listing(url: str, fetcher: Any) -> bytes:
    """A mirrors file at a URL (the public cache's ``cache_spack_io_index.json``)."""

    own = fetcher is None
    fetcher = fetcher or Fetcher()
    try:
        base, _, name = url.rstrip("/").rpartition("/")
        got = fetcher.get(Remote.parse(base), name, limit=MAX_MIRRORS_FILE_BYTES)
        if got.status != 200:
            raise ValueError(f"{redacted(url)}: not found (HTTP {got.status})")
        return got.data
    except FetchError as exc:
        raise ValueError(exc.message) from None
    finally:
        if own:
            fetcher.close()


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

    def later(self, listed: set[str]) -> None:
        """Read what the index lacks, given the hashes it listed (fills spec_files, tarballs)."""
        self.read_later(self, listed)


def is_v3(source: MirrorSource) -> bool:
    """Whether a local mirror is in the v3 layout (its ``v3/layout.json``)."""
    return (source.viewed().path / "v3" / "layout.json").is_file()


def read_mirror(source: MirrorSource) -> MirrorRead:
    """Read one mirror's metadata; whatever cannot be read is a problem, the rest still counts.

    A remote mirror's copy (``graph.sources.remote``) holds its index and the spec manifests
    fetched for sizes, never the spec blobs: those are not looked for."""
    source = source.viewed()
    path = source.path
    if source.served_layout == "oci":
        return _read_oci(path)
    if is_v3(source):
        return _read_v3(path, source.view, copy=bool(source.url), index_only=source.index_first)
    if path.is_file():
        return _read_v2(path.parent, path, copy=bool(source.url))
    folder = path / "build_cache" if (path / "build_cache").is_dir() else path
    if folder.is_dir():
        return _read_v2(folder, folder / "index.json", copy=bool(source.url))
    read = MirrorRead("v2", str(path))
    read.problem(path, "no such file or folder" if not path.exists() else "not a build cache")
    return read


# -- v2 --------------------------------------------------------------------------------


def _read_v2(folder: Path, index: Path, copy: bool = False) -> MirrorRead:
    """``copy``: a remote mirror's copy, which holds no tarball to look at."""
    read = MirrorRead("v2", str(index if index.name != "index.json" else folder))
    if index.is_file():
        data = _bytes(read, index, MAX_INDEX_BYTES)
        if data is not None:
            _check_v2_hash(read, index, data)
            chunks = _index_chunks(read, index, data)
            if chunks is not None:
                read.index = (index, chunks)
                read.indexed = True
    elif index.name != "index.json" or index.exists():
        read.problem(index, "no such file")
    try:
        names = sorted(e.name for e in os.scandir(folder) if e.is_file() and is_spec_file(e.name))
    except OSError as exc:
        read.problem(folder, f"cannot be listed: {exc.strerror}")
        names = []
    if read.index is None and not names:
        read.problem(folder, "not a build cache: no index.json and no spec files")
    read.signed = (folder / "_pgp").is_dir() or any(n.endswith(".sig") for n in names)
    stems: dict[str, str] = {}
    for name in names:
        found = _HASH_AT_END.search(name)
        if found is not None:
            stems.setdefault(found.group(1), name[: found.start()] + f"-{found.group(1)}")
    read.tarball_of = lambda _, hash, entry: _v2_tarball(
        folder, hash, entry, stems.get(hash), look=not copy
    )

    def later(read: MirrorRead, listed: set[str]) -> None:
        """Without an index, every spec file; beside one, none: Spack lists what the index
        holds, and a spec file it does not list is not in the mirror (said, not read)."""
        if read.indexed:
            unlisted = [n for n in names if (m := _HASH_AT_END.search(n)) is None
                        or m.group(1) not in listed]  # fmt: skip
            _not_listed(read, index, unlisted)
            return
        for name in deadline.stopping_checked(names):
            found = _HASH_AT_END.search(name)
            hash = found.group(1) if found else None
            spec_path = folder / name
            data = _bytes(read, spec_path, MAX_SPEC_BYTES)
            if data is None:
                continue
            try:
                doc = spec_document(data, name)
                root = spec_nodes(doc)[0]
            except BadRecord as exc:
                read.problem(spec_path, exc.message)
                continue
            read.spec_files.append((spec_path, doc))
            if hash is not None:
                read.tarballs[hash] = _v2_tarball(folder, hash, {"spec": root}, stems[hash])

    read.read_later = later
    return read


# -- OCI ---------------------------------------------------------------------------------

#: Where a copy of an OCI mirror keeps its specs' image manifests (``TAG.json``), fetched for
#: sizes (``graph.sources.remote.fetch_oci_manifests``); its index is a v2 one.
OCI_MANIFESTS = "oci/manifests"


def oci_tag(name: str, version: str, hash: str) -> str:
    """A spec's image tag in an OCI build cache: Spack's ``_oci_default_tag``
    (``binary_distribution.py``) through ``ensure_valid_tag`` (``spack.oci.image``).

    >>> oci_tag("libelf", "0.8.13", "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez")
    'libelf-0.8.13-rqh2vuf6fqwkmipzgi2wjx352mq7y7ez.spack'
    >>> oci_tag("py-x", "1.0+local", "h")
    'py-x-1.0_local-h.spack'
    """
    tag = re.sub(r"[^\w.-]", "_", f"{name}-{version}-{hash}.spack")
    return tag if len(tag) <= 128 else tag[:64] + tag[-64:]


def _read_oci(copy: Path) -> MirrorRead:
    """A copy of an OCI build cache: its index (``index.spack``'s layer) as a v2 one; each
    spec's tarball is its image (``oci://REGISTRY/REPOSITORY:TAG``, named by its tag here),
    its size the image's last layer's where its manifest was fetched (Spack's
    ``_oci_get_blob_info``)."""
    read = _read_v2(copy / "build_cache", copy / "build_cache" / "index.json")
    read.layout = "oci"

    def tarball(read: MirrorRead, hash: str, entry: dict) -> tuple[str, float | None]:
        tag = _oci_entry_tag(hash, entry)
        if tag is None:
            return "", None
        manifest = copy / OCI_MANIFESTS / f"{tag}.json"
        if not manifest.is_file():
            return tag, None
        return tag, _oci_tarball_size(read, manifest)

    read.tarball_of = tarball
    return read


def _oci_entry_tag(hash: str, entry: dict) -> str | None:
    node = index_node(entry)
    if not isinstance(node, dict):
        return None
    name, version = node.get("name"), node.get("version")
    if not (isinstance(name, str) and isinstance(version, str)):
        return None
    return oci_tag(name, version, hash)


def _oci_tarball_size(read: MirrorRead, manifest: Path) -> float | None:
    """The size of an image's last layer (the spec's tarball); None, and a problem, when the
    manifest says none."""
    data = _bytes(read, manifest, MAX_SMALL_FILE_BYTES)
    if data is None:
        return None
    try:
        check_nesting(data)
        size = orjson.loads(data)["layers"][-1]["size"]
        if type(size) is not int or size < 0:
            raise TypeError
        return float(size)
    except (BadRecord, orjson.JSONDecodeError, KeyError, IndexError, TypeError):
        read.problem(manifest, "not an image manifest with a layer of known size", "warning")
        return None


def indexed_oci_tags(copy: Path) -> list[str]:
    """The image tags of the specs the index of an OCI mirror's copy holds."""
    read = _read_v2(copy / "build_cache", copy / "build_cache" / "index.json")
    tags = []
    for chunk in read.index[1] if read.index is not None else ():
        for hash, entry in chunk.items():
            tag = _oci_entry_tag(hash, entry) if held(entry) else None
            if tag is not None and _PATH_PART.fullmatch(tag):
                tags.append(tag)
    return tags


def _not_listed(read: MirrorRead, index: Path, unlisted: list[str]) -> None:
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


def _check_v2_hash(read: MirrorRead, index: Path, data: bytes) -> None:
    stated_at = index.with_name(index.name + ".hash")
    if not stated_at.is_file():
        return
    stated = (
        (_bytes(read, stated_at, MAX_SMALL_FILE_BYTES) or b"").decode("ascii", "replace").strip()
    )
    actual = hashlib.sha256(data).hexdigest()
    if stated != actual:
        # what it says is shown only when it is a sha256: it may be a link to any file
        says = repr(stated) if _SHA256.fullmatch(stated) else "no sha256"
        read.problem(
            index,
            f"sha256 is {actual} but {stated_at.name} says {says}: "
            "the index changed after its hash was written (records loaded anyway)",
        )


def _v2_tarball(
    folder: Path, hash: str, entry: dict, stem: str | None, look: bool = True
) -> tuple[str, float | None]:
    """Where a v2 mirror keeps a spec's tarball, and its size where known (the index's
    ``archive_size``, else, when ``look``, the file's)."""
    node = index_node(entry)
    node = node if isinstance(node, dict) else {}
    name, version = node.get("name", "?"), node.get("version", "?")
    if stem is None:
        arch = node.get("arch") if isinstance(node.get("arch"), dict) else {}
        target = arch.get("target")
        target = target.get("name") if isinstance(target, dict) else target
        compiler = node.get("compiler") if isinstance(node.get("compiler"), dict) else {}
        stem = (
            f"{arch.get('platform')}-{arch.get('platform_os')}-{target}-"
            f"{compiler.get('name', 'none')}-{compiler.get('version', 'none')}-"
            f"{name}-{version}-{hash}"
        )
    arch, compiler = _arch_and_compiler(stem, name, version, hash)
    below = os.path.join(arch, compiler, f"{name}-{version}", f"{stem}.spack")
    size = entry.get("archive_size")
    if not isinstance(size, int | float) or isinstance(size, bool):
        size = None
    if size is None and look:
        try:
            size = float(os.stat(os.path.join(folder, below)).st_size)
        except OSError:
            size = None
    # named below the mirror's root, as Spack's URLs are (never the server's own folders)
    return (f"build_cache/{below}" if folder.name == "build_cache" else below), size


def _arch_and_compiler(stem: str, name: str, version: str, hash: str) -> tuple[str, str]:
    """The tarball's folders, from its spec file's stem: platform, os and target have no dash.

    >>> _arch_and_compiler("test-debian6-m1-gcc-10.2.1-libelf-0.8.13-" + "a" * 32, "libelf",
    ...                    "0.8.13", "a" * 32)
    ('test-debian6-m1', 'gcc-10.2.1')
    """
    parts = stem.removesuffix(f"-{name}-{version}-{hash}").split("-")
    return "-".join(parts[:3]), "-".join(parts[3:]) or "none-none"


# -- v3 --------------------------------------------------------------------------------


def _read_v3(
    root: Path, view: str = "", copy: bool = False, index_only: bool = False
) -> MirrorRead:
    """``index_only``: with an index, no spec manifest is looked at (``index_first``)."""
    read = MirrorRead("v3", str(root) + (f"^{view}" if view else ""))
    read.signed = (root / "v3" / "manifests" / "key").is_dir()
    layout = root / "v3" / "layout.json"
    data = _bytes(read, layout, MAX_SMALL_FILE_BYTES)
    if data is not None:
        try:
            if not isinstance(load_json(decode_text(data)), dict):
                read.problem(layout, "layout.json must be a JSON object")
        except BadRecord as exc:
            read.problem(layout, exc.message)
    manifests = _index_manifests(root, view)
    if view and not manifests:
        read.problem(root, f"no index view named {view!r} (no v3/manifests/index/{view}/)")
        return read
    if manifests:
        read.index = (manifests[0], _v3_index_chunks(read, root, manifests))
    spec_folder = root / "v3" / "manifests" / "spec"
    # index-first, listed only where the index cannot be read (a million files at a million)
    listed = [] if manifests and index_only else _spec_manifests(spec_folder)
    if not manifests and not listed:
        read.problem(root, "v3 mirror without an index manifest or spec manifests")
    # The tarball of a spec comes from its spec manifest, read with the rest.
    read.tarball_of = lambda read, hash, entry: read.tarballs.get(hash, ("", None))

    def later(read: MirrorRead, indexed: set[str]) -> None:
        """Each spec manifest's tarball; the spec blob of each, without an index (beside
        one, a spec it does not list is not in the mirror: said, not read)."""
        if index_only and read.indexed:
            return
        if manifests and index_only:  # its index could not be read after all
            listed.extend(_spec_manifests(spec_folder))
        unlisted = []
        for manifest in deadline.stopping_checked(listed):
            found = _MANIFEST_HASH.search(manifest)
            if read.indexed and found is not None and found.group(1) not in indexed:
                unlisted.append(os.path.basename(manifest))
                continue
            _v3_spec(read, root, manifest, indexed, copy)
        # a view lists some of the mirror's specs; a copy's are those its index held
        if read.indexed and not view and not copy:
            _not_listed(read, manifests[0], unlisted)

    read.read_later = later
    return read


def _v3_index_chunks(read: MirrorRead, root: Path, manifests: list[Path]) -> Iterator[dict]:
    """The records of each index manifest's blob."""
    for manifest in manifests:
        chunks = _v3_index(read, root, manifest)
        if chunks is not None:
            yield from chunks


def _spec_manifests(folder: Path) -> list[str]:
    """Every ``<name>/*.spec.manifest.json`` under ``folder``, by name (paths as strings:
    a large mirror has a quarter of a million)."""
    found: list[str] = []
    try:
        packages = sorted(e.path for e in os.scandir(folder) if e.is_dir())
    except OSError:
        return []
    for package in packages:
        with os.scandir(package) as entries:
            names = [e.name for e in entries if e.name.endswith(".spec.manifest.json")]
        found += [os.path.join(package, name) for name in sorted(names)]
    return found


def _index_manifests(root: Path, view: str = "") -> list[Path]:
    """The index manifest of the main index, or of the view named (``MirrorSource.parts`` makes
    each other view a mirror of its own)."""
    folder = root / "v3" / "manifests" / "index"
    manifest = folder / view / "index.manifest.json" if view else folder / "index.manifest.json"
    return [manifest] if manifest.is_file() else []


_CHECKSUM = re.compile(r"[0-9a-f]{16,128}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# hashlib's fixed-length digests (a shake_* digest's hexdigest() needs a length; Spack
# writes sha256)
_ALGORITHMS = frozenset(a for a in hashlib.algorithms_guaranteed if not a.startswith("shake_"))
_SIGNED = b"-----BEGIN PGP SIGNED MESSAGE-----"


def _manifest(read: MirrorRead, path: Path | str) -> list[dict] | None:
    """The blob records of a v3 manifest; None (a problem) when it is not one."""
    data = _bytes(read, path, MAX_SMALL_FILE_BYTES)
    if data is None:
        return None
    try:
        check_nesting(data)
        try:
            doc = orjson.loads(data) if not data.lstrip().startswith(_SIGNED) else None
        except orjson.JSONDecodeError:
            doc = None
        if doc is None:  # clearsigned, or not JSON: the careful reading says what is wrong
            doc = load_json(clearsigned_text(decode_text(data)))
        blobs = doc["data"]
        if doc.get("version") != 3:
            raise BadRecord(f"unknown manifest version {shown(doc.get('version'))}; this reads 3")
        if not isinstance(blobs, list) or not all(isinstance(b, dict) for b in blobs):
            raise BadRecord("'data' must be a list of blob records")
        for number, b in enumerate(blobs, 1):
            fault = _record_fault(b)
            if fault:
                raise BadRecord(f"blob record {number} is malformed: {fault}")
    except (KeyError, TypeError, AttributeError) as exc:
        read.problem(Path(path), f"not a build-cache manifest: {exc}")
        return None
    except BadRecord as exc:
        read.problem(Path(path), exc.message)
        return None
    return blobs


def _record_fault(record: dict) -> str:
    """What is wrong with a manifest's blob record ("" when nothing), naming fields, never
    their values: the manifest may be a link to any file.

    >>> _record_fault({"checksum": "ab" * 32, "checksumAlgorithm": "shake_128"})
    "'checksumAlgorithm' must name a fixed-length hashlib digest, as sha256"
    """
    checksum = record.get("checksum")
    if not (type(checksum) is str and _CHECKSUM.fullmatch(checksum)):
        return "'checksum' must be 16 to 128 lowercase hexadecimal digits"
    if record.get("checksumAlgorithm") not in _ALGORITHMS:
        return "'checksumAlgorithm' must name a fixed-length hashlib digest, as sha256"
    if type(record.get("contentLength")) is not int:
        return "'contentLength' must be an integer"
    if type(record.get("mediaType")) is not str:
        return "'mediaType' must be a string"
    return ""


def blob_path(root: Path, record: dict) -> str:
    """Where a v3 mirror keeps the blob a manifest record names."""
    checksum = record["checksum"]
    return os.path.join(root, "blobs", record["checksumAlgorithm"], checksum[:2], checksum)


def _missing_blob(read: MirrorRead, root: Path, manifest: Path, path: str) -> None:
    read.problem(manifest, f"names blob {os.path.relpath(path, root)}, which is missing")


def _blob(read: MirrorRead, root: Path, manifest: Path, record: dict, limit: int) -> bytes | None:
    """A blob's bytes once its checksum holds, decompressed; None (a problem) otherwise.

    A symbolic link on the way (``blobs/`` itself, a folder, the blob) is followed, as
    Spack opens the blob's path (``URLBuildcacheEntry.fetch_blob`` in
    ``lib/spack/spack/url_buildcache.py``); what it reaches must be a regular file
    (``_bytes``), and its checksum must hold.
    """
    path = blob_path(root, record)
    if not os.path.exists(path):  # a FIFO is there, and refused by _bytes
        _missing_blob(read, root, manifest, path)
        return None
    data = _bytes(read, Path(path), limit)  # compressed, it is smaller still
    if data is None:
        return None
    actual = hashlib.new(record["checksumAlgorithm"], data).hexdigest()
    if actual != record["checksum"]:
        algorithm, stated = record["checksumAlgorithm"], record["checksum"]
        read.problem(
            Path(path),
            f"checksum mismatch: the blob's {algorithm} is {actual}, "
            f"its manifest {manifest.name} says {stated}",
        )
        return None
    if record.get("compression") == "gzip" or data[:2] == b"\x1f\x8b":
        try:
            data = gunzipped(data, limit)
        except BadRecord as exc:
            read.problem(Path(path), exc.message)
            return None
    return data


def _v3_index(read: MirrorRead, root: Path, manifest: Path) -> Iterator[dict] | None:
    blobs = _manifest(read, manifest)
    if blobs is None:
        return None
    versions = {}
    for record in blobs:
        found = INDEX_MEDIA.fullmatch(record["mediaType"])
        if found:
            versions[found.group(1)] = record
    usable = sorted((v for v in versions if v in INDEX_VERSIONS), key=int)
    if not usable:
        stated = ", ".join(sorted(versions)) or "none"
        known = ", ".join(sorted(INDEX_VERSIONS))
        read.problem(
            manifest,
            f"no index blob of a database version this reads ({known}); the manifest has {stated}",
        )
        return None
    data = _blob(read, root, manifest, versions[usable[-1]], MAX_INDEX_BYTES)
    if data is None:
        return None
    chunks = _index_chunks(read, Path(blob_path(root, versions[usable[-1]])), data)
    read.indexed = read.indexed or chunks is not None
    return chunks


_MANIFEST_HASH = re.compile(r"-([a-z0-9]{32})\.spec\.manifest\.json$")
#: what a name or a version may be to name a file (Spack's package names and versions are)
_PATH_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+=~-]*")


def indexed_spec_manifests(root: Path, view: str = "") -> list[str]:
    """Where a v3 mirror keeps the spec manifest of each spec its index holds, below its root
    (``url_buildcache``'s ``get_manifest_url``: ``v3/manifests/spec/NAME/NAME-VERSION-HASH.spec
    .manifest.json``); a record whose name or version could not name a file is left out.
    """
    read = _read_v3(root, view, copy=True)
    found: list[str] = []
    for chunk in read.index[1] if read.index is not None else ():
        for hash, entry in chunk.items():
            node = index_node(entry)
            if not (held(entry) and isinstance(node, dict)):
                continue
            name, version = node.get("name"), node.get("version")
            if all(isinstance(v, str) and _PATH_PART.fullmatch(v) for v in (name, version, hash)):
                found.append(f"v3/manifests/spec/{name}/{name}-{version}-{hash}.spec.manifest.json")
    return found


def _v3_spec(
    read: MirrorRead, root: Path, manifest: str, indexed: set[str], copy: bool = False
) -> None:
    found = _MANIFEST_HASH.search(manifest)
    if found is None:
        read.problem(Path(manifest), "a spec manifest's name must end in -HASH.spec.manifest.json")
        return
    hash = found.group(1)
    blobs = _manifest(read, manifest)
    if blobs is None:
        return
    spec = [b for b in blobs if b["mediaType"].startswith("application/vnd.spack.spec.")]
    tarball = [b for b in blobs if b["mediaType"].startswith("application/vnd.spack.install.")]
    if not spec:
        read.problem(Path(manifest), "names no spec blob")
        return
    if hash in indexed:
        if not copy and not os.path.isfile(blob_path(root, spec[0])):
            _missing_blob(read, root, Path(manifest), blob_path(root, spec[0]))
    else:  # not in the index: the spec blob says what it is
        data = _blob(read, root, Path(manifest), spec[0], MAX_SPEC_BYTES)
        if data is None:
            return
        where = Path(blob_path(root, spec[0]))
        try:
            read.spec_files.append((where, spec_document(data)))
        except BadRecord as exc:
            read.problem(where, exc.message)
            return
    if tarball:
        below = os.path.relpath(blob_path(root, tarball[0]), root)
        read.tarballs[hash] = (below, float(tarball[0]["contentLength"]))
    else:
        read.tarballs[hash] = ("", None)


# -- both --------------------------------------------------------------------------------


def _bytes(read: MirrorRead, path: Path | str, limit: int) -> bytes | None:
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


def _index_chunks(read: MirrorRead, path: Path, data: bytes) -> Iterator[dict] | None:
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
