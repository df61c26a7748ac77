"""The v3 layout of a build cache (Spack 1.0 and later), read on disk and fetched from a URL.

``v3/layout.json``; ``v3/manifests/index/[VIEW/]index.manifest.json`` names the index blob,
``v3/manifests/spec/<name>/<name>-<version>-<hash>.spec.manifest.json`` the spec blob and
the tarball blob (with its ``contentLength``); every blob lives at
``blobs/<algorithm>/<first two characters>/<checksum>``
(``../shared/reference/spack/buildcache.rst``). ``read`` says what a mirror's files hold;
``sync`` brings a remote one's index into its local copy as ``url_buildcache`` fetches it
(the manifest, then the blob its checksum names, verified); ``fetch_spec_manifests``
brings the spec manifests that give sizes. ``layouts`` chooses the layout.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from .. import deadline
from ..attributes import shown
from ..errors import BadRecord
from . import v2
from .fetch import Fetcher, FetchError
from .frontmatter import check_nesting, decode_text
from .locations import Remote
from .mirrors import (
    INDEX_MEDIA,
    INDEX_VERSIONS,
    MAX_INDEX_BYTES,
    MAX_SMALL_FILE_BYTES,
    PATH_PART,
    MirrorRead,
    file_bytes,
    held,
    index_chunks,
    index_node,
    not_listed,
)
from .remote import (
    SMALL,
    Check,
    Held,
    body_digest,
    fetch_missing,
    new_etag,
    partial,
    replace_folder_files,
    write_state,
)
from .specfiles import (
    MAX_SPEC_BYTES,
    clearsigned_text,
    gunzipped,
    load_json,
    spec_document,
)

# -- reading -------------------------------------------------------------------------------


def read(root: Path, view: str = "", copy: bool = False, index_only: bool = False) -> MirrorRead:
    """``index_only``: with an index, no spec manifest is looked at (``index_first``)."""
    read = MirrorRead("v3", str(root) + (f"^{view}" if view else ""))
    read.signed = (root / "v3" / "manifests" / "key").is_dir()
    layout = root / "v3" / "layout.json"
    data = file_bytes(read, layout, MAX_SMALL_FILE_BYTES)
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
            not_listed(read, manifests[0], unlisted)

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

# hashlib's fixed-length digests (a shake_* digest's hexdigest() needs a length; Spack
# writes sha256)
_ALGORITHMS = frozenset(a for a in hashlib.algorithms_guaranteed if not a.startswith("shake_"))

_SIGNED = b"-----BEGIN PGP SIGNED MESSAGE-----"


def _manifest(read: MirrorRead, path: Path | str) -> list[dict] | None:
    """The blob records of a v3 manifest; None (a problem) when it is not one."""
    data = file_bytes(read, path, MAX_SMALL_FILE_BYTES)
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
    (``file_bytes``), and its checksum must hold.
    """
    path = blob_path(root, record)
    if not os.path.exists(path):  # a FIFO is there, and refused by file_bytes
        _missing_blob(read, root, manifest, path)
        return None
    data = file_bytes(read, Path(path), limit)  # compressed, it is smaller still
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
    chunks = index_chunks(read, Path(blob_path(root, versions[usable[-1]])), data)
    read.indexed = read.indexed or chunks is not None
    return chunks


_MANIFEST_HASH = re.compile(r"-([a-z0-9]{32})\.spec\.manifest\.json$")


def indexed_spec_manifests(root: Path, view: str = "") -> list[str]:
    """Where a v3 mirror keeps the spec manifest of each spec its index holds, below its root
    (``url_buildcache``'s ``get_manifest_url``: ``v3/manifests/spec/NAME/NAME-VERSION-HASH.spec
    .manifest.json``); a record whose name or version could not name a file is left out.
    """
    index = read(root, view, copy=True).index
    found: list[str] = []
    for chunk in index[1] if index is not None else ():
        for hash, entry in chunk.items():
            node = index_node(entry)
            if not (held(entry) and isinstance(node, dict)):
                continue
            name, version = node.get("name"), node.get("version")
            if all(isinstance(v, str) and PATH_PART.fullmatch(v) for v in (name, version, hash)):
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


# -- fetching ------------------------------------------------------------------------------


def sync(check: Check, fall_back: bool = False) -> bool:
    """The index manifest (``If-None-Match`` with its ETag over http), then the index blob
    when its checksum differs from the one held; the blob must hash to the checksum."""
    view = check.view
    manifest_at = "v3/manifests/index/" + (f"{view}/" if view else "") + "index.manifest.json"
    use_etag = check.remote.transport == "http" and check.held.layout == "v3"
    got = check.get(manifest_at, etag=check.held.etag if use_etag else "", limit=SMALL)
    if got.status == 304:
        return False
    if got.status == 404:
        if fall_back:
            return v2.sync(check)
        what = f"no index view named {view!r}" if view else "no v3 index manifest"
        raise FetchError(f"{check.remote.shown}: {what} ({manifest_at})", 404)
    record = _index_record(check.remote.join(manifest_at), got.data)
    algorithm, checksum = record["checksumAlgorithm"], record["checksum"]
    if check.held.layout == "v3" and checksum == check.held.hash:
        new_etag(check, got.etag)
        return False
    blob_at = f"blobs/{algorithm}/{checksum[:2]}/{checksum}"
    blob = check.get(blob_at, dest=partial(check, "blob"))
    if blob.status == 404:
        raise FetchError(
            f"{check.remote.join(manifest_at)}: names blob {blob_at}, which is missing"
        )
    actual = body_digest(blob, algorithm)
    if actual != checksum:
        os.unlink(blob.path)
        raise FetchError(
            f"{check.remote.join(blob_at)}: checksum mismatch: the blob's {algorithm} is "
            f"{actual}, its manifest says {checksum}; not used (as Spack refuses it)"
        )
    layout = b'{"signing": null}'
    with contextlib.suppress(FetchError):
        found = check.get("v3/layout.json", limit=SMALL)
        if found.status == 200:
            layout = found.data
    signed = check.get("v3/manifests/key/keys.manifest.json", limit=SMALL).status == 200
    replace_folder_files(
        check.folder,
        {blob_at: blob.path},
        {manifest_at: got.data, "v3/layout.json": layout},
        keep=("state.json",),
    )
    if signed:
        (check.folder / "v3" / "manifests" / "key").mkdir(exist_ok=True)
    check.held = Held(check.remote.shown, "v3", checksum, got.etag, time.time(), blob.size)
    write_state(check.folder, check.held)
    return True


def _index_record(shown: str, data: bytes) -> dict:
    """The index blob's record in an index manifest (clearsigned or not: Spack does not
    verify the index's signature): the newest database version read here."""
    try:
        records = load_json(clearsigned_text(decode_text(data)))["data"]
        usable = {}
        for record in records:
            found = INDEX_MEDIA.fullmatch(str(record.get("mediaType")))
            if found and found.group(1) in INDEX_VERSIONS:
                usable[found.group(1)] = record
        record = usable[max(usable, key=int)]
        if not (
            isinstance(record.get("checksum"), str)
            and re.fullmatch(r"[0-9a-f]{16,128}", record["checksum"])
            and record.get("checksumAlgorithm") in hashlib.algorithms_guaranteed
        ):
            raise ValueError
        return record
    except (BadRecord, ValueError, KeyError, TypeError, AttributeError):
        versions = ", ".join(sorted(INDEX_VERSIONS))
        raise FetchError(
            f"{shown}: not an index manifest naming an index blob of database version {versions}"
        ) from None


def fetch_spec_manifests(remote: Remote, view: str, copy: Path, fetcher: Fetcher) -> int:
    """Fetch into a v3 mirror's copy the spec manifests it lacks of the specs its index
    holds (each names its tarball's blob and size: ``Spec.size``, ``Spec.tarball``), a few
    at once; return how many were fetched. A request a spec: done in the background, never
    before the data is served; one that fails is asked again at the next check.
    """
    indexed = indexed_spec_manifests(copy, view)
    held = (copy / "v3" / "manifests" / "spec").glob("*/*.spec.manifest.json")

    def fetch(relative: str) -> Any:
        return fetcher.get(remote, relative, limit=SMALL)

    return fetch_missing(remote.shown, copy, indexed, held, fetch)
