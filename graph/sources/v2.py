"""The v2 layout of a build cache (Spack before 1.0), read on disk and fetched from a URL.

``build_cache/index.json`` (``index.json.hash`` holds its sha256), with ``*.spec.json``,
``*.spec.json.sig`` or ``*.spec.yaml`` beside it, and tarballs at
``build_cache/<arch>/<compiler>/<name>-<version>/<spec file stem>.spack``
(``../shared/reference/spack/buildcache.rst``). ``read`` says what a mirror's files hold;
``sync`` brings a remote one's index into its local copy with the requests Spack makes
(``DefaultIndexFetcher``, ``EtagIndexFetcher``). ``layouts`` chooses the layout.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

from .. import deadline
from ..errors import BadRecord
from .fetch import FetchError
from .mirrors import (
    COMPILER_LATER,
    MAX_INDEX_BYTES,
    MAX_SMALL_FILE_BYTES,
    SHA256,
    MirrorRead,
    file_bytes,
    index_chunks,
    index_node,
    not_listed,
)
from .remote import (
    SMALL,
    Check,
    Held,
    body_digest,
    new_etag,
    partial,
    replace_folder_files,
    write_state,
)
from .specfiles import (
    MAX_SPEC_BYTES,
    is_spec_file,
    spec_document,
    spec_nodes,
)

# -- reading -------------------------------------------------------------------------------

_HASH_AT_END = re.compile(r"-([a-z0-9]{32})\.spec\.(?:json(?:\.sig)?|ya?ml)$")


def read(folder: Path, index: Path, copy: bool = False) -> MirrorRead:
    """``copy``: a remote mirror's copy, which holds no tarball to look at."""
    read = MirrorRead("v2", str(index if index.name != "index.json" else folder))
    if index.is_file():
        data = file_bytes(read, index, MAX_INDEX_BYTES)
        if data is not None:
            _check_v2_hash(read, index, data)
            chunks = index_chunks(read, index, data)
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
    read.tarball_of = lambda read, hash, entry: _v2_tarball(
        folder, hash, entry, stems.get(hash), look=not copy, read=read
    )
    if not copy:  # a tarball named once its compiler's version is known: its size then
        read.size_of = lambda _, tarball: _size_on_disk(folder, tarball)

    def later(read: MirrorRead, listed: set[str]) -> None:
        """Without an index, every spec file; beside one, none: Spack lists what the index
        holds, and a spec file it does not list is not in the mirror (said, not read)."""
        if read.indexed:
            unlisted = [n for n in names if (m := _HASH_AT_END.search(n)) is None
                        or m.group(1) not in listed]  # fmt: skip
            not_listed(read, index, unlisted)
            return
        for name in deadline.stopping_checked(names):
            found = _HASH_AT_END.search(name)
            hash = found.group(1) if found else None
            spec_path = folder / name
            data = file_bytes(read, spec_path, MAX_SPEC_BYTES)
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


def _check_v2_hash(read: MirrorRead, index: Path, data: bytes) -> None:
    stated_at = index.with_name(index.name + ".hash")
    if not stated_at.is_file():
        return
    stated = (
        (file_bytes(read, stated_at, MAX_SMALL_FILE_BYTES) or b"")
        .decode("ascii", "replace")
        .strip()
    )
    actual = hashlib.sha256(data).hexdigest()
    if stated != actual:
        # what it says is shown only when it is a sha256: it may be a link to any file
        says = repr(stated) if SHA256.fullmatch(stated) else "no sha256"
        read.problem(
            index,
            f"sha256 is {actual} but {stated_at.name} says {says}: "
            "the index changed after its hash was written (records loaded anyway)",
        )


def _v2_tarball(
    folder: Path,
    hash: str,
    entry: dict,
    stem: str | None,
    look: bool = True,
    read: MirrorRead | None = None,
) -> tuple[str, float | None]:
    """Where a v2 mirror keeps a spec's tarball, and its size where known (the index's
    ``archive_size``, else, when ``look``, the file's). Without a spec file's name
    (``stem``) it is named from the index node (``_compiler_part``)."""
    node = index_node(entry)
    node = node if isinstance(node, dict) else {}
    name, version = node.get("name", "?"), node.get("version", "?")
    if stem is None:
        arch = node.get("arch") if isinstance(node.get("arch"), dict) else {}
        target = arch.get("target")
        target = target.get("name") if isinstance(target, dict) else target
        stem = (
            f"{arch.get('platform')}-{arch.get('platform_os')}-{target}-"
            f"{_compiler_part(node, hash, read)}-{name}-{version}-{hash}"
        )
    arch, compiler = _arch_and_compiler(stem, name, version, hash)
    below = os.path.join(arch, compiler, f"{name}-{version}", f"{stem}.spack")
    size = entry.get("archive_size")
    if not isinstance(size, int | float) or isinstance(size, bool):
        size = None
    # named below the mirror's root, as Spack's URLs are (never the server's own folders)
    tarball = f"build_cache/{below}" if folder.name == "build_cache" else below
    if size is None and look and COMPILER_LATER not in tarball:  # else once it is named
        size = _size_on_disk(folder, tarball)
    return tarball, size


def _size_on_disk(folder: Path, tarball: str) -> float | None:
    """The size of a tarball named below a v2 mirror's root, where its file is; None where
    there is none."""
    below = tarball.removeprefix("build_cache/") if folder.name == "build_cache" else tarball
    try:
        return float(os.stat(os.path.join(folder, below)).st_size)
    except (OSError, ValueError):
        return None


def _compiler_part(node: dict, hash: str, read: MirrorRead | None) -> str:
    """``{compiler.name}-{compiler.version}`` of a tarball's name; a version that is in
    another record (spec format 5) is the hash of that record between ``COMPILER_LATER``,
    and the spec is in ``read.unnamed`` (``MirrorRead.name_compilers`` puts it in)."""
    found = _compiler_of(node)
    if found is None:
        return "none-none"
    compiler, compiler_version, provider = found
    if provider and read is not None:
        read.unnamed.append(hash)
        return f"{compiler}-{COMPILER_LATER}{provider}{COMPILER_LATER}"
    return f"{compiler}-{compiler_version or 'none'}"


def _compiler_of(node: dict) -> tuple[str, str, str] | None:
    """The compiler a v2 tarball's name gives (``{compiler.name}-{compiler.version}`` in
    Spack's ``buildcache_migrate.v2_tarball_name``), as ``spack.spec.DeprecatedCompilerSpec``
    finds it, as (name, version, ""): a legacy node's ``compiler``, or the one its
    annotations keep from an older spec file (``gcc@=10.2.1``); for a node of spec format
    5, its first dependency providing c, then cxx, then fortran, as (name, "", its hash):
    its version is in its own record. None where there is none (Spack writes
    ``none-none``).

    >>> _compiler_of({"annotations": {"original_specfile_version": 4,
    ...                               "compiler": "gcc@=10.2.1"}})
    ('gcc', '10.2.1', '')
    >>> _compiler_of({"dependencies": [
    ...     {"name": "zlib", "hash": "z", "parameters": {"virtuals": []}},
    ...     {"name": "gcc", "hash": "g", "parameters": {"virtuals": ["c", "cxx"]}}]})
    ('gcc', '', 'g')
    >>> _compiler_of({"compiler": {"name": "gcc", "version": "9.4.0"}}), _compiler_of({})
    (('gcc', '9.4.0', ''), None)
    """
    compiler = node.get("compiler")
    if isinstance(compiler, dict):
        return str(compiler.get("name", "none")), str(compiler.get("version", "none")), ""
    annotations = node.get("annotations")
    noted = annotations.get("compiler") if isinstance(annotations, dict) else None
    if isinstance(noted, str) and "@" in noted:
        name, _, version = noted.partition("@")
        return name, version.lstrip("="), ""
    edges = node.get("dependencies")
    edges = [e for e in edges if isinstance(e, dict)] if isinstance(edges, list) else []
    for language in ("c", "cxx", "fortran"):
        for edge in edges:
            parameters = edge.get("parameters")
            virtuals = parameters.get("virtuals") if isinstance(parameters, dict) else None
            if isinstance(virtuals, list) and language in virtuals:
                return str(edge.get("name")), "", str(edge.get("hash"))
    return None


def _arch_and_compiler(stem: str, name: str, version: str, hash: str) -> tuple[str, str]:
    """The tarball's folders, from its spec file's stem: platform, os and target have no dash.

    >>> _arch_and_compiler("test-debian6-m1-gcc-10.2.1-libelf-0.8.13-" + "a" * 32, "libelf",
    ...                    "0.8.13", "a" * 32)
    ('test-debian6-m1', 'gcc-10.2.1')
    """
    parts = stem.removesuffix(f"-{name}-{version}-{hash}").split("-")
    return "-".join(parts[:3]), "-".join(parts[3:]) or "none-none"


# -- fetching ------------------------------------------------------------------------------


def sync(check: Check) -> bool:
    """``EtagIndexFetcher`` when an ETag is held (http only), else ``DefaultIndexFetcher``:
    the hash file first, the index only when its hash differs from the one held (a hash
    file that disagrees with the index is kept as it was: the load says so, as on disk)."""
    held = check.held
    stated = None
    if held.etag and check.remote.transport == "http" and held.layout == "v2":
        got = check.get("build_cache/index.json", etag=held.etag, dest=partial(check, "index"))
        if got.status == 304:
            return False
    else:
        stated = _hash_file(check)
        if held.layout == "v2" and held.hash and (stated or b"").strip() == held.hash.encode():
            return False
        got = check.get("build_cache/index.json", dest=partial(check, "index"))
    if got.status == 404:
        raise FetchError(
            f"{check.remote.shown}: no build-cache index (neither "
            "v3/manifests/index/index.manifest.json nor build_cache/index.json)",
            404,
        )
    digest = body_digest(got)
    if held.layout == "v2" and digest == held.hash:  # the same bytes: a new ETag only
        os.unlink(got.path)
        new_etag(check, got.etag)
        return False
    signed = check.get("build_cache/_pgp/index.json", limit=SMALL).status == 200
    # the hash file as served, or none where none is: the load checks it as on disk
    stated = {} if stated is None else {"build_cache/index.json.hash": stated}
    replace_folder_files(
        check.folder, {"build_cache/index.json": got.path}, stated, keep=("state.json",)
    )
    if signed:
        (check.folder / "build_cache" / "_pgp").mkdir(exist_ok=True)
    check.held = Held(check.remote.shown, "v2", digest, got.etag, time.time(), got.size)
    write_state(check.folder, check.held)
    return True


def _hash_file(check: Check) -> bytes | None:
    """``index.json.hash`` as served, its first 64 bytes (None: there is none, or it could
    not be had); a failure or a bad value is not fatal, as in Spack."""
    try:
        got = check.get("build_cache/index.json.hash", limit=SMALL)
    except FetchError:
        return None
    return got.data[:64] if got.status == 200 else None
