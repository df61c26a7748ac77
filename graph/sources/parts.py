"""What a load read of each remote mirror, kept beside its copy: a reload reads again only
the mirrors that changed.

A remote mirror's copy (``graph.sources.remote``) changes only when a refresh fetches a new
index. The rows its reading made (a ``Reader`` of that mirror alone, as a load's second
process sends one back, ``graph.sources.parallel``) are written beside the copy's folder,
as ``FOLDER.read.pickle`` (written in it, it would change the folder it describes), under
a key of all they depend on: the mirror's name, tag, stack, view and position in the load,
the copy's files (``files.fingerprint``: its index files and folders, which change when
sizes arrive) and the code that reads and builds. A reload of twelve mirrors where one
changed reads that one and merges the eleven kept readers, and the store is decided once
over every row, as a load in two processes does: the answer is that of reading all twelve.

A kept part is a pickle this server wrote into its own cache directory (never one a client
or a mirror gives); anything wrong with it -- another key, a truncated or damaged file, a
class that changed -- and the mirror is read again.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import xxhash

from . import files
from .mirrors import MirrorSource

if TYPE_CHECKING:
    from .reader import Reader

log = logging.getLogger("cachegraph")

#: The ending of the file beside a copy's folder that holds its kept reading.
PART = ".read.pickle"
_DIGEST = 16  # xxh3's 128 bits, as a snapshot's parts (graph.snapshot.checksum)
_code: str = ""


def code_digest() -> str:
    """A digest of the source of the modules that make a Reader's rows (``graph/``): a
    part kept by other code is read again, never merged."""
    global _code
    if not _code:
        top = Path(__file__).resolve().parents[1]
        digest = hashlib.blake2b(digest_size=16)
        for path in sorted(top.rglob("*.py")):
            digest.update(path.relative_to(top).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
        _code = digest.hexdigest()
    return _code


def part_key(source: MirrorSource, position: int) -> str:
    """What a kept part of ``source`` read at ``position`` depends on, as a digest."""
    labels = [
        code_digest(),
        f"{position} {source.label} {source.tag}:{source.stack}^{source.view}",
        f"{source.served_layout} {source.error}",
    ]
    return files.fingerprint([], labels, [str(source.path)])


def kept(source: MirrorSource, key: str) -> Reader | None:
    """The reading of ``source`` kept under ``key`` (``part_key``), or None (none kept, or
    not usable).

    Unpickled as it is read, its checksum worked out meanwhile and compared at the end (a
    damaged one is then dropped): the bytes of a part (190 MB for a mirror of 250,000
    specs) are never held beside what they become."""
    path = part_path(source)
    try:
        with open(path, "rb") as f:
            kept_key, checksum = f.readline().split()
            if kept_key.decode() != key:
                return None
            summed = _Summed(f)
            try:
                part = pickle.load(summed)
            except Exception as exc:  # any unpickling failure: the mirror is read again
                part, failure = None, exc
            summed.read()  # anything after the pickle counts too
    except (OSError, ValueError):
        return None
    if summed.hexdigest() != checksum.decode():
        log.warning("the kept reading of %s is damaged: reading it again", source.shown)
        return None
    if part is None:
        log.warning("the kept reading of %s cannot be used (%s): reading it again",
                    source.shown, failure)  # fmt: skip
    return part


def keep(source: MirrorSource, key: str, reader: Reader) -> None:
    """Write ``reader`` (``source`` alone) beside its copy under ``key`` (``part_key``),
    whole or not at all (a temporary file renamed over the last).

    Pickled straight to the file, its checksum worked out as it goes and written into the
    first line last: never the whole pickle in memory beside the rows it is of."""
    path = part_path(source)
    handle, temporary = tempfile.mkstemp(prefix=".read-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as f:
            head = f"{key} {'0' * 2 * _DIGEST}\n".encode()
            f.write(head)
            summed = _Summed(f)
            pickle.dump(reader, summed, protocol=5)
            f.seek(0)
            f.write(f"{key} {summed.hexdigest()}\n".encode())
        os.replace(temporary, path)
    except OSError as exc:
        log.warning("cannot keep the reading of %s: %s", source.shown, exc)
        with contextlib.suppress(OSError):
            os.unlink(temporary)


class _Summed:
    """A file read or written through, its bytes' xxh3 checksum worked out as they pass
    (what ``pickle.load`` and ``pickle.dump`` ask of a file)."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.digest = xxhash.xxh3_128()  # some 20 times blake2b's speed: it is not a signature

    def write(self, data) -> int:
        self.digest.update(data)
        return self.f.write(data)

    def read(self, size: int = -1) -> bytes:
        data = self.f.read(size)
        self.digest.update(data)
        return data

    def readinto(self, buffer) -> int:
        got = self.f.readinto(buffer)
        self.digest.update(memoryview(buffer)[:got])
        return got

    def readline(self, size: int = -1) -> bytes:
        data = self.f.readline(size)
        self.digest.update(data)
        return data

    def hexdigest(self) -> str:
        return self.digest.hexdigest()


def part_path(source: MirrorSource) -> Path:
    """Where ``source``'s reading is kept: beside its copy's folder."""
    return Path(source.path).with_name(Path(source.path).name + PART)


def keeps(source: MirrorSource) -> bool:
    """Whether ``source``'s reading is kept: a remote mirror with a copy held."""
    return bool(source.url) and (Path(source.path) / "state.json").is_file()
