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

Here is what every layout's fetching shares (``Check``: one check's requests and bytes, the
copy's folder and ``state.json``, files put in place by renames, the spec manifests fetched
a few at a time); the requests of each layout are in its module (``v2``, ``v3``, ``oci``),
and ``layouts.sync`` chooses.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .fetch import Fetched, Fetcher, FetchError
from .locations import Remote
from .mirrors import (
    OCI_MANIFESTS,
)
from .parts import PART
from .source import CHECKS_AT_ONCE

log = logging.getLogger("cachegraph")

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
class Check:
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


#: A copy no check has used for this long (no server configured with its mirror asked since)
#: is removed, with its kept reading: mirrors come and go from configurations, and their
#: copies would stay for good. Copies shared by several servers live while any uses them.
UNUSED_SECONDS = 30 * 24 * 3600


#: The ending of the empty file beside a copy's folder whose modification time is the copy's
#: last use by a check: beside it, not in it, as a check that finds nothing changed writes
#: nothing in the copy (its files are the snapshot's fingerprint of the mirror).
USED = ".used"


def mark_used(folder: Path) -> None:
    """Say that a check used this copy now (when there is one: a fetch that failed before
    any index was held leaves none)."""
    with contextlib.suppress(OSError):
        if (folder / "state.json").is_file():
            used = folder.with_name(folder.name + USED)
            used.touch()
            os.utime(used)


def unused_copies(cache_dir: str | os.PathLike, now: float | None = None) -> list[str]:
    """Remove the copies in ``cache_dir`` that no check used for ``UNUSED_SECONDS`` (with their
    kept readings; and what is left beside a copy that is gone); return the names removed.

    >>> unused_copies("/nonexistent")
    []
    """
    folder = Path(cache_dir) / "mirrors"
    limit = (time.time() if now is None else now) - UNUSED_SECONDS
    removed = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                if _last_used(Path(entry.path)) < limit:
                    shutil.rmtree(entry.path)
                    for beside in (PART, USED):
                        Path(entry.path + beside).unlink(missing_ok=True)
                    removed.append(entry.name)
            elif entry.name.endswith((PART, USED)):
                if not os.path.isdir(entry.path.removesuffix(PART).removesuffix(USED)):
                    os.unlink(entry.path)  # its copy is gone
            elif entry.name.startswith(".read-") and entry.stat().st_mtime < limit:
                os.unlink(entry.path)  # a kept reading's write that never finished
    return removed


def _last_used(copy: Path) -> float:
    """When a check last used a copy: its ``.used`` file's time, else (a copy kept by an
    earlier version) its ``state.json``'s or its folder's."""
    for path in (copy.with_name(copy.name + USED), copy / "state.json", copy):
        with contextlib.suppress(OSError):
            return path.stat().st_mtime
    return 0.0


def held_state(folder: Path) -> Held:
    """The state a copy was left in; an empty one when there is none (or it is unreadable)."""
    try:
        data = json.loads((folder / "state.json").read_text())
        return Held(**{k: data[k] for k in Held.__dataclass_fields__ if k in data})
    except (OSError, ValueError, TypeError):
        return Held()


# -- the copy ----------------------------------------------------------------------------


def partial(check: Check, name: str) -> Path:
    return check.folder / f".{name}.part"


def body_digest(got: Fetched, algorithm: str = "sha256") -> str:
    """The digest of a body fetched to a file: its sha256 as it came, else read again."""
    if algorithm == "sha256" and got.sha256:
        return got.sha256
    return file_digest(got.path, algorithm)


def file_digest(path: Path, algorithm: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, algorithm).hexdigest()


def replace_folder_files(
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
        put_in_place(folder / relative, data)
    for path in sorted(folder.rglob("*"), reverse=True):
        relative = path.relative_to(folder).as_posix()
        kept = relative in wanted or relative.startswith(KEPT_BELOW)
        if path.is_file() and not kept and not path.name.endswith(".part"):
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def new_etag(check: Check, etag: str) -> None:
    """An unchanged index under another ETag: kept, and the copy left as it is otherwise
    (the snapshot's fingerprint of a copy is its files: rewritten, it would not match)."""
    if etag and etag != check.held.etag:
        check.held.etag = etag
        write_state(check.folder, check.held)


#: Spec manifests (v3) and image manifests (OCI) fetched for sizes: named by their spec's
#: hash, they outlive an index change (and are dropped once their spec leaves the index).
KEPT_BELOW = ("v3/manifests/spec/", f"{OCI_MANIFESTS}/")


def write_state(folder: Path, held: Held) -> None:
    put_in_place(folder / "state.json", json.dumps(asdict(held), indent=1).encode())


def put_in_place(target: Path, data: bytes) -> None:
    """Write ``target`` whole beside it (``.NAME.part``), then rename it into place: a
    reader sees the old file or the new one, never half of it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(f".{target.name}.part")
    part.write_bytes(data)
    os.replace(part, target)


# -- sizes ------------------------------------------------------------------------------


#: Fetches of one mirror's sizes that fail in a row by the server (unreachable, or 5xx after
#: their retries) before the rest wait for its next check: a mirror that went down midway
#: is not asked once a spec (a quarter of a million), each with its retries.
GIVE_UP_AFTER = 32


def fetch_missing(
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
        put_in_place(copy / relative, got.data)
        return True

    with ThreadPoolExecutor(CHECKS_AT_ONCE, thread_name_prefix="sizes") as pool:
        count = sum(pool.map(fetched, wanted))
    if in_a_row[0] >= GIVE_UP_AFTER:
        log.warning("mirror %s: %s fetches of its sizes in a row failed; the rest (of %s) are "
                    "asked at its next check", shown, GIVE_UP_AFTER, len(wanted))  # fmt: skip
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
    #: why the newest index held is not the one served: the load that read it was refused
    #: ("" when what is served is the held index's)
    refused: str = ""

    @property
    def stale(self) -> bool:
        """Whether what is served may be older than the mirror: its last check failed, or
        the load of its new index was refused."""
        return bool(self.error or self.refused)

    @property
    def problem(self) -> str:
        """Why it is stale ("" when it is not)."""
        return self.error or self.refused

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


def log_change(watch: MirrorWatch, synced: Synced) -> None:
    """Say what changed for an operator: a mirror going stale (once, not at every failed
    check), coming back, or changing its index."""
    if synced.error and not watch.error:
        kept = "serving its last good data (stale)" if synced.copy else "it holds nothing yet"
        log.warning("mirror %s: %s; %s", watch.name, synced.error, kept)
    elif not synced.error and watch.error:
        log.info("mirror %s: reachable again", watch.name)
    if synced.changed and watch.checks:
        log.info("mirror %s: its index changed (%s bytes)", watch.name, f"{synced.held.size:,}")


def default_cache_dir() -> str:
    """``$XDG_CACHE_HOME/cachegraph``, or ``~/.cache/cachegraph`` (the XDG default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cachegraph")
