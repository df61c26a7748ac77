"""Which layout a mirror is in, and its module's work: read (on disk or its copy), checked
and fetched (at a URL), sized.

Each layout is a module with ``read`` and ``sync`` (and what it fetches for sizes): ``v2``,
``v3`` and ``oci``. A new layout is one more such module, and a line here saying when a
mirror is in it (as Spack 1.x tries the v3 layout first, then v2).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any

from . import oci, v2, v3
from .fetch import Fetcher, FetchError, FetchLimits
from .locations import Remote, mirror_root
from .mirrors import (
    MirrorRead,
    MirrorSource,
)
from .remote import (
    Check,
    MirrorWatch,
    Synced,
    copy_folder,
    held_state,
    log_change,
    mark_used,
)
from .source import Checked, Checking


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
        return oci.read(path)
    if is_v3(source):
        return v3.read(path, source.view, copy=bool(source.url), index_only=source.index_first)
    if path.is_file():
        return v2.read(path.parent, path, copy=bool(source.url))
    folder = path / "build_cache" if (path / "build_cache").is_dir() else path
    if folder.is_dir():
        return v2.read(folder, folder / "index.json", copy=bool(source.url))
    read = MirrorRead("v2", str(path))
    read.problem(path, "no such file or folder" if not path.exists() else "not a build cache")
    return read


def sync(remote: Remote, view: str, cache_dir: str | os.PathLike, fetcher: Fetcher) -> Synced:
    """Check a remote mirror with the cheap request and fetch its index when it changed.
    A failure keeps the copy held and says what failed."""
    started = time.monotonic()
    folder = copy_folder(cache_dir, remote.identity, view)
    held = held_state(folder)
    copy = folder if held.hash else None
    check = Check(remote, view, folder, held, fetcher)
    try:
        if remote.transport == "oci":
            changed = oci.sync(check)
        elif held.layout == "v2":
            changed = v2.sync(check)
        elif held.layout == "v3" or view:
            changed = v3.sync(check)
        else:  # not known yet: Spack 1.x tries the v3 layout first, then v2
            changed = v3.sync(check, fall_back=True)
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
    finally:
        mark_used(folder)  # what the check left, if anything: its mirror is still configured
    return Synced(folder, check.held, changed, "", time.monotonic() - started,
                  check.fetched_bytes, check.requests)  # fmt: skip


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
                count += v3.fetch_spec_manifests(remote, source.view, folder, fetcher)
            elif layout == "oci":
                count += oci.fetch_oci_manifests(remote, folder, fetcher)
    return count


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
        log_change(watch, synced)
        watch.record(synced, time.time())
    layout = "oci" if root.transport == "oci" else synced.held.layout
    copy = synced.copy or copy_folder(checking.cache_dir, root.identity, source.view)
    return Checked(replace(source, path=copy, error=synced.error, served_layout=layout),
                   synced.changed)  # fmt: skip
