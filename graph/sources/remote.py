"""Remote mirrors, read by their index as Spack reads them, into a local copy.

A mirror at a URL is fetched with the requests Spack 1.1 makes
(``../shared/reference/spack-cache/REMOTE.md``; ``binary_distribution.py``'s
``DefaultIndexFetcher``, ``EtagIndexFetcher``, ``OCIIndexFetcher`` and ``url_buildcache``'s
index manifest), and decided "unchanged" by the same rule: the index hash file (v2), the
index blob's checksum in its manifest (v3), the ``index.spack`` image's layer digest (OCI),
or ``If-None-Match`` with the ETag held, for http(s). What a fetch brings is kept as a
mirror of the local layout in a folder of the cache directory (the index and what names
it, never the spec files or tarballs), with the hash and ETag in ``state.json``: the load
reads that copy as it reads any local mirror, a restart asks only the cheap request, and
with the network down the copy is served, marked stale.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from ..errors import BadRecord
from .fetch import Fetcher, FetchError, FetchLimits
from .frontmatter import decode_text
from .locations import Remote, mirror_root
from .mirrors import (
    INDEX_MEDIA,
    INDEX_VERSIONS,
    OCI_MANIFESTS,
    indexed_oci_tags,
    indexed_spec_manifests,
)
from .source import CHECKS_AT_ONCE, Checked, Checking
from .specfiles import clearsigned_text, load_json

log = logging.getLogger("cachegraph")

#: The index layer of an OCI build cache, and the media types Spack asks for.
OCI_INDEX_TAG = "index.spack"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_ACCEPT = f"{OCI_MANIFEST}, application/vnd.oci.image.index.v1+json"
_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")
#: The small files beside an index (a hash file, a manifest, a token answer).
SMALL = 1 << 20


@dataclass
class Held:
    """What the copy of a remote mirror holds: kept in its ``state.json``."""

    url: str = ""
    #: "v2", "v3" or "oci"; "" before the first fetch
    layout: str = ""
    #: the held index's hash: sha256 of its bytes (v2, OCI) or its manifest checksum (v3)
    hash: str = ""
    #: the ETag of the index (v2) or its manifest (v3), for ``If-None-Match``
    etag: str = ""
    #: when the held index was fetched (its last change seen), seconds since the epoch
    fetched: float = 0.0
    #: bytes of the held index
    size: int = 0


@dataclass
class Synced:
    """The outcome of one check of a remote mirror."""

    #: the local copy to read (None: nothing held, nothing fetched)
    copy: Path | None
    held: Held
    #: whether the index changed (a new one was fetched) in this check
    changed: bool = False
    #: what failed, when the check failed (the copy, if any, is then stale)
    error: str = ""
    seconds: float = 0.0
    #: bytes fetched in this check
    fetched_bytes: int = 0
    requests: int = 0


@dataclass
class _Check:
    remote: Remote
    view: str
    folder: Path
    held: Held
    fetcher: Fetcher
    requests: int = 0
    fetched_bytes: int = 0
    headers: dict[str, str] = field(default_factory=dict)

    def get(self, relative: str, **kw: Any):
        self.requests += 1
        got = self.fetcher.get(self.remote, relative, **kw)
        self.fetched_bytes += got.size
        return got

    def http(self, url: str, **kw: Any):
        self.requests += 1
        got = self.fetcher.http(url, **kw)
        self.fetched_bytes += got.size
        return got


def copy_folder(cache_dir: str | os.PathLike, shown: str, view: str = "") -> Path:
    """The folder of a remote mirror's local copy: one per URL and view, named by a digest.

    >>> copy_folder("/c", "https://h/m").parent
    PosixPath('/c/mirrors')
    """
    key = hashlib.sha256(f"{shown}^{view}".encode()).hexdigest()[:24]
    return Path(cache_dir) / "mirrors" / key


def held_state(folder: Path) -> Held:
    """The state a copy was left in; an empty one when there is none (or it is unreadable)."""
    try:
        data = json.loads((folder / "state.json").read_text())
        return Held(**{k: data[k] for k in Held.__dataclass_fields__ if k in data})
    except (OSError, ValueError, TypeError):
        return Held()


def sync(remote: Remote, view: str, cache_dir: str | os.PathLike, fetcher: Fetcher) -> Synced:
    """Check a remote mirror with the cheap request and fetch its index when it changed.
    A failure keeps the copy held and says what failed."""
    started = time.monotonic()
    folder = copy_folder(cache_dir, remote.identity, view)
    held = held_state(folder)
    copy = folder if held.hash else None
    check = _Check(remote, view, folder, held, fetcher)
    try:
        if remote.transport == "oci":
            changed = _sync_oci(check)
        elif held.layout == "v2":
            changed = _sync_v2(check)
        elif held.layout == "v3" or view:
            changed = _sync_v3(check)
        else:  # not known yet: Spack 1.x tries the v3 layout first, then v2
            changed = _sync_v3(check, fall_back=True)
    except FetchError as exc:
        return Synced(copy, held, False, exc.message, time.monotonic() - started,
                      check.fetched_bytes, check.requests)  # fmt: skip
    except OSError as exc:
        error = (
            f"{remote.shown}: cannot write its copy in the cache directory (--cache-dir, "
            f"CACHEGRAPH_CACHE_DIR): {exc.strerror or exc}"
        )
        return Synced(copy, held, False, error, time.monotonic() - started,
                      check.fetched_bytes, check.requests)  # fmt: skip
    return Synced(folder, check.held, changed, "", time.monotonic() - started,
                  check.fetched_bytes, check.requests)  # fmt: skip


# -- v2 ----------------------------------------------------------------------------------


def _sync_v2(check: _Check) -> bool:
    """``EtagIndexFetcher`` when an ETag is held (http only), else ``DefaultIndexFetcher``:
    the hash file first, the index only when its hash differs from the one held (a hash
    file that disagrees with the index is kept as it was: the load says so, as on disk)."""
    held = check.held
    stated = None
    if held.etag and check.remote.transport == "http" and held.layout == "v2":
        got = check.get("build_cache/index.json", etag=held.etag, dest=_part(check, "index"))
        if got.status == 304:
            return False
    else:
        stated = _hash_file(check)
        if held.layout == "v2" and held.hash and (stated or b"").strip() == held.hash.encode():
            return False
        got = check.get("build_cache/index.json", dest=_part(check, "index"))
    if got.status == 404:
        raise FetchError(
            f"{check.remote.shown}: no build-cache index (neither "
            "v3/manifests/index/index.manifest.json nor build_cache/index.json)",
            404,
        )
    digest = _file_sha256(got.path)
    if held.layout == "v2" and digest == held.hash:  # the same bytes: a new ETag only
        os.unlink(got.path)
        _new_etag(check, got.etag)
        return False
    signed = check.get("build_cache/_pgp/index.json", limit=SMALL).status == 200
    # the hash file as served, or none where none is: the load checks it as on disk
    stated = {} if stated is None else {"build_cache/index.json.hash": stated}
    _replace_folder_files(
        check.folder, {"build_cache/index.json": got.path}, stated, keep=("state.json",)
    )
    if signed:
        (check.folder / "build_cache" / "_pgp").mkdir(exist_ok=True)
    check.held = Held(check.remote.shown, "v2", digest, got.etag, time.time(), got.size)
    _write_state(check.folder, check.held)
    return True


def _hash_file(check: _Check) -> bytes | None:
    """``index.json.hash`` as served, its first 64 bytes (None: there is none, or it could
    not be had); a failure or a bad value is not fatal, as in Spack."""
    try:
        got = check.get("build_cache/index.json.hash", limit=SMALL)
    except FetchError:
        return None
    return got.data[:64] if got.status == 200 else None


# -- v3 ----------------------------------------------------------------------------------


def _sync_v3(check: _Check, fall_back: bool = False) -> bool:
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
            return _sync_v2(check)
        what = f"no index view named {view!r}" if view else "no v3 index manifest"
        raise FetchError(f"{check.remote.shown}: {what} ({manifest_at})", 404)
    record = _index_record(check.remote.join(manifest_at), got.data)
    algorithm, checksum = record["checksumAlgorithm"], record["checksum"]
    if check.held.layout == "v3" and checksum == check.held.hash:
        _new_etag(check, got.etag)
        return False
    blob_at = f"blobs/{algorithm}/{checksum[:2]}/{checksum}"
    blob = check.get(blob_at, dest=_part(check, "blob"))
    if blob.status == 404:
        raise FetchError(
            f"{check.remote.join(manifest_at)}: names blob {blob_at}, which is missing"
        )
    actual = _file_digest(blob.path, algorithm)
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
    _replace_folder_files(
        check.folder,
        {blob_at: blob.path},
        {manifest_at: got.data, "v3/layout.json": layout},
        keep=("state.json",),
    )
    if signed:
        (check.folder / "v3" / "manifests" / "key").mkdir(exist_ok=True)
    check.held = Held(check.remote.shown, "v3", checksum, got.etag, time.time(), blob.size)
    _write_state(check.folder, check.held)
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


# -- OCI ---------------------------------------------------------------------------------


def _sync_oci(check: _Check) -> bool:
    """``OCIIndexFetcher``: the ``index.spack`` image's manifest, then its first layer when
    the digest differs from the one held; the blob must hash to its digest."""
    remote = check.remote
    scheme = "http" if remote.scheme == "oci+http" else "https"
    base = f"{scheme}://{remote.host}/v2/{remote.path}"
    manifest = _oci_get(check, f"{base}/manifests/{OCI_INDEX_TAG}", {"Accept": OCI_ACCEPT})
    if manifest.status == 404:
        raise FetchError(f"{remote.shown}: no image tagged {OCI_INDEX_TAG}", 404)
    try:
        digest = json.loads(manifest.data)["layers"][0]["digest"]
        found = _DIGEST.fullmatch(digest)
        if found is None:
            raise ValueError
    except (ValueError, KeyError, IndexError, TypeError):
        raise FetchError(
            f"{remote.shown}: the {OCI_INDEX_TAG} manifest names no sha256 index layer"
        ) from None
    wanted = found.group(1)
    if check.held.layout == "oci" and check.held.hash == wanted:
        return False
    blob = _oci_get(check, f"{base}/blobs/{digest}", {}, dest=_part(check, "index"))
    if blob.status == 404:
        raise FetchError(f"{remote.shown}: its index layer {digest} is missing", 404)
    actual = _file_sha256(blob.path)
    if actual != wanted:
        os.unlink(blob.path)
        raise FetchError(
            f"{remote.shown}: checksum mismatch: the index layer's sha256 is {actual}, "
            f"its manifest says {wanted}; not used (as Spack refuses it)"
        )
    _replace_folder_files(
        check.folder,
        {"build_cache/index.json": blob.path},
        {"build_cache/index.json.hash": actual.encode()},
        keep=("state.json",),
    )
    check.held = Held(remote.shown, "oci", wanted, "", time.time(), blob.size)
    _write_state(check.folder, check.held)
    return True


def _oci_get(check: _Check, url: str, headers: dict[str, str], dest: Path | None = None):
    """A registry GET, answering a bearer challenge once: an anonymous pull token, or one
    asked with the credentials of the URL or of ``CACHEGRAPH_OCI_USERNAME`` and
    ``CACHEGRAPH_OCI_PASSWORD`` (as Spack's ``--oci-username-variable``)."""
    sent = {**headers, **check.headers}
    limit = None if dest is not None else SMALL
    got = check.http(url, headers=sent, dest=dest, limit=limit, ok_statuses=frozenset({401}))
    if got.status != 401:
        return got
    challenge = got.headers.get("www-authenticate", "")
    credentials = _oci_credentials(check.remote)
    scheme, _, params = challenge.partition(" ")
    if scheme.lower() == "basic" and credentials:
        got = check.http(url, headers=sent, dest=dest, limit=limit, auth=credentials)
    elif scheme.lower() == "bearer":
        check.headers["Authorization"] = f"Bearer {_token(check, params, credentials)}"
        got = check.http(url, headers={**headers, **check.headers}, dest=dest, limit=limit)
    else:
        raise FetchError(f"{check.remote.shown}: the registry asks for authentication", 401)
    return got


def _oci_credentials(remote: Remote) -> tuple[str, str] | None:
    if any(remote.credentials):
        return remote.credentials
    user = os.environ.get("CACHEGRAPH_OCI_USERNAME", "")
    password = os.environ.get("CACHEGRAPH_OCI_PASSWORD", "")
    return (user, password) if user or password else None


_PARAM = re.compile(r'(\w+)="([^"]*)"')


def _token(check: _Check, params: str, credentials: tuple[str, str] | None) -> str:
    """A bearer token from the realm a registry's challenge names."""
    found = dict(_PARAM.findall(params))
    realm = found.pop("realm", "")
    if not realm.startswith(("https://", "http://")):
        raise FetchError(f"{check.remote.shown}: the registry's token realm is not an http(s) URL")
    query = urlencode({k: v for k, v in found.items() if k in ("service", "scope")})
    url = f"{realm}{'&' if '?' in realm else '?'}{query}" if query else realm
    got = check.http(url, limit=SMALL, auth=credentials)
    try:
        answer = json.loads(got.data)
        token = answer.get("token") or answer.get("access_token")
        if not isinstance(token, str) or not token:
            raise ValueError
    except (ValueError, AttributeError):
        raise FetchError(
            f"{check.remote.shown}: the registry's token service gave no token"
        ) from None
    return token


# -- the copy ----------------------------------------------------------------------------


def _part(check: _Check, name: str) -> Path:
    return check.folder / f".{name}.part"


def _file_sha256(path: Path) -> str:
    return _file_digest(path, "sha256")


def _file_digest(path: Path, algorithm: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, algorithm).hexdigest()


def _replace_folder_files(
    folder: Path, moved: dict[str, Path], written: dict[str, bytes], keep: tuple[str, ...]
) -> None:
    """Make ``folder`` hold exactly these files (and ``keep``): each put in place by a
    rename, so a load reading the copy meanwhile sees the old file or the new one."""
    wanted = set(moved) | set(written) | set(keep)
    for relative, source in moved.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
    for relative, data in written.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(f".{target.name}.part")
        part.write_bytes(data)
        os.replace(part, target)
    for path in sorted(folder.rglob("*"), reverse=True):
        relative = path.relative_to(folder).as_posix()
        kept = relative in wanted or relative.startswith(KEPT_BELOW)
        if path.is_file() and not kept and not path.name.endswith(".part"):
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def _new_etag(check: _Check, etag: str) -> None:
    """An unchanged index under another ETag: kept, and the copy left as it is otherwise
    (the snapshot's fingerprint of a copy is its files: rewritten, it would not match)."""
    if etag and etag != check.held.etag:
        check.held.etag = etag
        _write_state(check.folder, check.held)


#: Spec manifests (v3) and image manifests (OCI) fetched for sizes: named by their spec's
#: hash, they outlive an index change (and are dropped once their spec leaves the index).
KEPT_BELOW = ("v3/manifests/spec/", f"{OCI_MANIFESTS}/")


def _write_state(folder: Path, held: Held) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    part = folder / ".state.json.part"
    part.write_text(json.dumps(asdict(held), indent=1))
    os.replace(part, folder / "state.json")


# -- sizes ------------------------------------------------------------------------------


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

    return _fetch_missing(remote.shown, copy, indexed, held, fetch)


def fetch_oci_manifests(remote: Remote, copy: Path, fetcher: Fetcher) -> int:
    """Fetch into an OCI mirror's copy the image manifests it lacks of the specs its index
    holds (the last layer is the spec's tarball, its size ``Spec.size``: Spack's
    ``_oci_get_blob_info``), a few at once; return how many were fetched."""
    indexed = [f"{OCI_MANIFESTS}/{tag}.json" for tag in indexed_oci_tags(copy)]
    held = (copy / OCI_MANIFESTS).glob("*.json")
    check = _Check(remote, "", copy, held_state(copy), fetcher)
    scheme = "http" if remote.scheme == "oci+http" else "https"
    base = f"{scheme}://{remote.host}/v2/{remote.path}/manifests"

    def fetch(relative: str) -> Any:
        tag = relative.removeprefix(f"{OCI_MANIFESTS}/").removesuffix(".json")
        return _oci_get(check, f"{base}/{tag}", {"Accept": OCI_MANIFEST})

    return _fetch_missing(remote.shown, copy, indexed, held, fetch)


#: Fetches of one mirror's sizes that fail in a row by the server (unreachable, or 5xx after
#: their retries) before the rest wait for its next check: a mirror that went down midway
#: is not asked once a spec (a quarter of a million), each with its retries.
GIVE_UP_AFTER = 32


def _fetch_missing(
    shown: str,
    copy: Path,
    indexed: list[str],
    held: Iterable[Path],
    fetch: Callable[[str], Any],
) -> int:
    """Fetch ``indexed`` files (below ``copy``) not held yet, ``CHECKS_AT_ONCE`` at a time;
    drop the ``held`` ones no longer indexed (their spec left the index). A file that cannot
    be fetched is asked again at the next check, as are all that are left once
    ``GIVE_UP_AFTER`` fail in a row by the server."""
    listed = set(indexed)
    for path in held:
        if path.relative_to(copy).as_posix() not in listed:
            path.unlink()
    wanted = [m for m in indexed if not (copy / m).is_file()]

    in_a_row = [0]  # failures by the server, in a row (threads add to it: about is enough)

    def fetched(relative: str) -> bool:
        if in_a_row[0] >= GIVE_UP_AFTER:
            return False
        try:
            got = fetch(relative)
        except FetchError as exc:
            in_a_row[0] += exc.status is None or exc.status >= 500
            return False
        in_a_row[0] = 0
        if got.status != 200:
            return False
        target = copy / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(f".{target.name}.part")
        part.write_bytes(got.data)
        os.replace(part, target)
        return True

    with ThreadPoolExecutor(CHECKS_AT_ONCE, thread_name_prefix="sizes") as pool:
        count = sum(pool.map(fetched, wanted))
    if in_a_row[0] >= GIVE_UP_AFTER:
        log.warning("mirror %s: %s fetches of its sizes in a row failed; the rest (of %s) are "
                    "asked at its next check", shown, GIVE_UP_AFTER, len(wanted))  # fmt: skip
    return count


def fetch_sizes(sources: list, cache_dir: str | os.PathLike, limits: FetchLimits) -> int:
    """The spec manifests (v3) and image manifests (OCI) every remote mirror's copy lacks,
    fetched; how many were."""
    count = 0
    with Fetcher(limits) as fetcher:
        for source in (s for s in sources if s.url):
            remote = Remote.parse(mirror_root(source.url))
            folder = copy_folder(cache_dir, remote.identity, source.view)
            layout = held_state(folder).layout
            if layout == "v3":
                count += fetch_spec_manifests(remote, source.view, folder, fetcher)
            elif layout == "oci":
                count += fetch_oci_manifests(remote, folder, fetcher)
    return count


# -- many mirrors, and what is known of each -------------------------------------------


@dataclass
class MirrorWatch:
    """What is known of one remote mirror's freshness: the status view, the API and the
    metrics read it; each check updates it in place."""

    name: str
    url: str
    layout: str = ""
    #: seconds since the epoch: the last check (any outcome), the last successful one, and
    #: when the held index was fetched (the mirror's last change seen); 0 for never
    last_check: float = 0.0
    last_success: float = 0.0
    last_change: float = 0.0
    next_check: float = 0.0
    #: what failed at the last check ("" when it succeeded)
    error: str = ""
    checks: int = 0
    #: the check (by its number) that found the last change
    changed_at: int = 0
    failures: int = 0
    fetched_bytes: int = 0
    #: seconds the last check took
    seconds: float = 0.0

    @property
    def stale(self) -> bool:
        """Whether what is served may be older than the mirror: its last check failed."""
        return bool(self.error)

    def record(self, synced: Synced, now: float) -> None:
        self.checks += 1
        self.last_check = now
        self.seconds = synced.seconds
        self.fetched_bytes += synced.fetched_bytes
        self.layout = synced.held.layout or self.layout
        self.last_change = synced.held.fetched or self.last_change
        self.error = synced.error
        if synced.changed:
            self.changed_at = self.checks
        if synced.error:
            self.failures += 1
        else:
            self.last_success = now


def checked(source: Any, checking: Checking) -> Checked:
    """A remote mirror (a ``MirrorSource`` with a URL) checked with the cheap request, fetched
    into the cache directory when it changed, and given as its local copy; also whether it
    changed. What is known of it (``checking.watches``, by label) is updated.

    A mirror that could not be checked keeps its copy, with ``error`` saying what failed;
    one never fetched has no copy. Mirrors sharing a copy (one listed in two tags, say)
    share one check a round.
    """
    root = Remote.parse(mirror_root(source.url))
    synced = checking.once(
        (root.identity, source.view),
        lambda: sync(root, source.view, checking.cache_dir, checking.fetcher),
    )
    with checking.lock:
        watch = checking.watches.setdefault(source.label, MirrorWatch(source.label, root.shown))
        _log_change(watch, synced)
        watch.record(synced, time.time())
    layout = "oci" if root.transport == "oci" else synced.held.layout
    copy = synced.copy or copy_folder(checking.cache_dir, root.identity, source.view)
    return Checked(replace(source, path=copy, error=synced.error, served_layout=layout),
                   synced.changed)  # fmt: skip


def _log_change(watch: MirrorWatch, synced: Synced) -> None:
    """Say what changed for an operator: a mirror going stale (once, not at every failed
    check), coming back, or changing its index."""
    if synced.error and not watch.stale:
        kept = "serving its last good data (stale)" if synced.copy else "it holds nothing yet"
        log.warning("mirror %s: %s; %s", watch.name, synced.error, kept)
    elif not synced.error and watch.stale:
        log.info("mirror %s: reachable again", watch.name)
    if synced.changed and watch.checks:
        log.info("mirror %s: its index changed (%s bytes)", watch.name, f"{synced.held.size:,}")


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/cachegraph``, or ``~/.cache/cachegraph`` (the XDG default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cachegraph")
