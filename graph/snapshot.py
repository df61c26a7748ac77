"""A snapshot is the store's arrays in one file, mapped into memory at restart and verified.

The file is a header line, the length and checksum of a JSON description (each
array's name, type, shape, offset, size in bytes and checksum; the file's whole
size; the mirrors; the load report; the fingerprint of the sources it was built
from, ``files.fingerprint``), then each array's bytes, aligned. A restart maps the
file read-only (the store's arrays are read-only views of the mapping) and checks
every part before serving it: a file truncated, cut short or with a flipped byte is
refused (``Refused`` says which check failed), as is one whose fingerprint differs
from the sources of the moment or written by another format version; the server then
loads the data in full and writes a new snapshot.

Why mapped, and how it is made safe. A mapping is the file: another process
truncating it killed the server with SIGBUS at its next query, and one rewriting it
changed the answers. So it was read in instead, into memory only this process
writes; at a million mirror specs (a 591 MB snapshot) that copy from the page cache
into fresh pages was 0.9-1.8 s of a 3.3 s restart (docs/benchmarks.md). Mapped, the
file is held by a Linux read lease (``graph.mapped``): a process that opens it to
write or truncates it waits (or, asking not to wait, is refused once) until this one
has copied the mapping's bytes into memory of its own at the same address, so what
was checked is what is served, whatever happens to the file after. This process
never writes into a snapshot: it writes a new one beside the target and renames it
over (a reader never sees half a file, and a mapped one is another file from then
on). Where no lease can be had (a file open for writing elsewhere, a file system
without leases, leases turned off, not Linux) the file is read in and checked as
before. The checks touch every page, so either way the whole file is resident: mapped,
as file pages shared with the page cache (and with a second server on the same
snapshot), not copied. The checksum is xxh3 (see ``_DIGEST_BYTES``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import xxhash

from . import mapped
from .sources import files, source
from .sources.loader import sources_of
from .sources.mirrors import MirrorSource
from .sources.reader import LoadReport, Problem
from .store.columns import Store
from .store.records import MirrorInfo
from .store.view import CacheGraph

#: Changes whenever what a snapshot holds (or how records load) changes.
FORMAT = 10
_MAGIC = b"cachegraph-snapshot"
_ALIGN = 64
#: bytes of a part's checksum: xxh3's 128 bits (the ``xxhash`` package), 6-18 GB/s here where
#: blake2b (the ETag's data version's hash) is 1.4 GB/s. Every part is checked at each
#: restart, so the hash is most of a mapped restart's cost: 591 MB at a million mirror
#: specs hashed in 0.23 s by xxh3 and 4.3 s by blake2b on one busy core (load ~9). A
#: checksum here finds damage, not an attacker: one who can write the file can write the
#: checksum beside it.
_DIGEST_BYTES = 16


@dataclass(frozen=True)
class Refused:
    """Why a snapshot was not used."""

    #: which check failed, e.g. "array 'code.package': checksum 1f.. where the header says 9c.."
    reason: str
    #: True when the file is damaged (truncated, flipped bytes, not a snapshot), False when
    #: it is absent, of another format version or of other sources: a restart's usual news
    damaged: bool = True


def fingerprint(paths: Iterable[str | os.PathLike], mirrors: Iterable[MirrorSource] = ()) -> str:
    """A digest of the sources ``paths`` and ``mirrors`` name (each one's fingerprint,
    ``graph.sources.source``) and this snapshot format."""
    return source.fingerprint(sources_of(paths, mirrors), _labels())


def fingerprinting(
    paths: Iterable[str | os.PathLike], mirrors: Iterable[MirrorSource] = ()
) -> files.Fingerprint:
    """``fingerprint`` worked out in a second process while this one reads a snapshot."""
    return source.fingerprinting(sources_of(paths, mirrors), _labels())


def _labels() -> list[str]:
    return [f"{FORMAT} {sys.version_info[:2]}"]


def checksum(data) -> str:
    """The hex checksum of a part's bytes (xxh3, 128 bits).

    >>> checksum(b"")
    '99aa06d3014798d86001c324468d497f'
    """
    return xxhash.xxh3_128_hexdigest(data)


def save(path: str | os.PathLike, graph: CacheGraph, report: LoadReport, key: str) -> None:
    """Write ``graph``'s store and its load report, built from sources with fingerprint ``key``."""
    store = graph.store
    arrays = {name: np.ascontiguousarray(a) for name, a in store.arrays.items()}
    described, offset = [], 0
    for name, array in arrays.items():
        offset = _aligned(offset)
        data = memoryview(array).cast("B") if array.nbytes else b""
        described.append([name, array.dtype.str, list(array.shape), offset, array.nbytes,
                          checksum(data)])  # fmt: skip
        offset += array.nbytes
    meta = {
        "key": key,
        "arrays": described,
        "mirrors": [asdict(m) for m in store.mirrors],
        "report": {
            **asdict(report),
            "problems": [list(asdict(p).values()) for p in report.problems],
        },
    }
    text = json.dumps(meta).encode()
    start = _aligned(len(_header()) + 8 + _DIGEST_BYTES + len(text))
    # the whole size is in the text it is the size of: worked out until it holds still
    while True:
        meta["size"] = start + offset
        text = json.dumps(meta).encode()
        head = _header() + len(text).to_bytes(8, "little") + bytes.fromhex(checksum(text)) + text
        if _aligned(len(head)) == start:
            break
        start = _aligned(len(head))
    target = Path(path)
    partial = target.with_name(target.name + f".{os.getpid()}.partial")
    remove_abandoned(target.parent, f"{target.name}.", ".partial")
    try:
        with open(partial, "wb") as f:
            f.write(head.ljust(start, b"\0"))
            for (_, _, _, at, _, _), array in zip(described, arrays.values(), strict=True):
                f.seek(start + at)
                f.write(array.data)
            f.truncate(start + offset)  # a last empty array still counts in the size
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def remove_abandoned(folder: Path, before: str, after: str) -> list[str]:
    """Remove the files ``BEFORE….<pid>AFTER`` in ``folder`` whose writer has ended (a
    server killed while writing leaves one: a snapshot's size, 600 MB at a million specs,
    each time); return their names. A file of a process still running is left alone.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> for pid in (os.getpid(), 2**22 + 1):  # this process; none (above Linux's pid_max)
    ...     _ = (folder / f"s.{pid}.partial").write_bytes(b"")
    >>> remove_abandoned(folder, "s.", ".partial")
    ['s.4194305.partial']
    """
    removed = []
    try:
        names = [e.name for e in os.scandir(folder) if e.name.startswith(before)]
    except OSError:
        return removed
    for name in names:
        pid = name.removesuffix(after).rsplit(".", 1)[-1]
        if not name.endswith(after) or not pid.isdigit() or _running(int(pid)):
            continue
        try:
            os.unlink(folder / name)
            removed.append(name)
        except OSError:
            continue
    return removed


def _running(pid: int) -> bool:
    """Whether a process of this id runs (another user's counts)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


def load(
    path: str | os.PathLike, key: str | files.Fingerprint
) -> tuple[CacheGraph, LoadReport] | None:
    """The graph and report saved at ``path``, or None unless it was built from sources
    ``key`` and every part of it checks (``read`` says why not)."""
    found = read(path, key)
    return None if isinstance(found, Refused) else found


def read(
    path: str | os.PathLike, key: str | files.Fingerprint
) -> tuple[CacheGraph, LoadReport] | Refused:
    """The graph and report saved at ``path``, mapped (or read) into memory and verified, or
    why not.

    Given a ``Fingerprint`` still being worked out, the snapshot is read meanwhile and
    compared with it at the end.
    """
    try:
        with open(path, "rb") as f:
            held = mapped.lease(f.fileno())  # first: what is checked is what is served
            try:
                found = _read_open(f, key, held)
            finally:
                if held is not None:
                    held.release()
    except FileNotFoundError:
        return Refused("no such file (none written yet)", damaged=False)
    except OSError as exc:
        return Refused(f"cannot be read: {exc.strerror}")
    if isinstance(found, Refused):
        return found
    if not isinstance(key, str) and key.result() != found[2]:
        return Refused("written from other sources (a data file changed since)", damaged=False)
    return found[0], found[1]


def _read_open(f, key: str | files.Fingerprint, held: mapped.Lease | None):
    line = f.readline(len(_header()))
    if line != _header():
        if line.startswith(_MAGIC + b" ") and line.endswith(b"\n"):
            version = line[len(_MAGIC) + 1 : -1].decode("ascii", "replace")[:20]
            return Refused(f"written by format version {version!r}; this reads {FORMAT}", False)
        return Refused("not a snapshot: it does not begin with the snapshot header line")
    frame = f.read(8 + _DIGEST_BYTES)
    if len(frame) < 8 + _DIGEST_BYTES:
        return Refused("truncated within its header")
    length, stated = int.from_bytes(frame[:8], "little"), frame[8:].hex()
    if length > os.fstat(f.fileno()).st_size:
        return Refused(f"truncated or damaged: its header says its description is {length:,} "
                       f"bytes, more than the file's {os.fstat(f.fileno()).st_size:,}")  # fmt: skip
    text = f.read(length)
    if checksum(text) != stated:
        return Refused(f"header: checksum {checksum(text)} where the header says {stated}")
    try:
        meta = json.loads(text)
        size, described = int(meta["size"]), meta["arrays"]
        if isinstance(key, str) and meta["key"] != key:
            return Refused("written from other sources (a data file changed since)", False)
        start = _aligned(len(_header()) + 8 + _DIGEST_BYTES + length)
        parts = [(start + d[3], d[4]) for d in described]
        whole, sums = _contents(f, held, size, parts)
        if sums is None:
            actual = os.fstat(f.fileno()).st_size
            return Refused(f"truncated or grown: {actual:,} bytes where the header says {size:,}")
        arrays = {}
        for (name, dtype, shape, at, nbytes, stated), found in zip(described, sums, strict=True):
            part = whole[start + at : start + at + nbytes]
            if len(part) != nbytes:
                return Refused(f"array {name!r}: its {nbytes:,} bytes lie past the file's end")
            if found != stated:
                return Refused(f"array {name!r}: checksum {found} where the header says {stated}")
            dtype = np.dtype(dtype)
            count = int(np.prod(shape, dtype=np.int64))
            arrays[name] = np.frombuffer(part, dtype, count).reshape(shape)
        mirrors = [MirrorInfo(**m) for m in meta["mirrors"]]
        fields = meta["report"]
        fields["problems"] = [Problem(*p) for p in fields["problems"]]
        report = LoadReport(**fields)
        graph = CacheGraph(Store(arrays, mirrors))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # Its header checked: a snapshot this version cannot have written.
        return Refused(f"header: not a description this version writes ({type(exc).__name__})")
    return graph, report, meta["key"]


def _contents(
    f, held: mapped.Lease | None, size: int, parts: list[tuple[int, int]]
) -> tuple[np.ndarray, list[str] | None]:
    """The file's ``size`` bytes, mapped where it is leased (``graph.mapped``: see the top),
    else read into memory, and the checksum of each part (offset, bytes) within them; None
    for the checksums when the file is not ``size`` bytes long."""
    if held is not None:
        if os.fstat(f.fileno()).st_size != size:  # leased: it stays this size
            return np.empty(0, np.uint8), None
        whole = held.map(size)
        if whole is not None:
            return whole, _summed(whole, parts)
    # Read in whole, into memory only this process writes.
    whole = np.empty(size, np.uint8)
    f.seek(0)
    return whole, _read_summed(f, whole, parts)


def _summed(whole: np.ndarray, parts: list[tuple[int, int]]) -> list[str]:
    """The checksum of each part of ``whole``, two at a time (xxh3 releases Python's lock);
    an empty one for a part past its end."""

    def summed(part: tuple[int, int]) -> str:
        at, nbytes = part
        return checksum(whole[at : at + nbytes]) if at + nbytes <= len(whole) else ""

    largest = sorted(set(parts), key=lambda p: -p[1])
    with ThreadPoolExecutor(2, thread_name_prefix="snapshot-check") as checker:
        found = dict(zip(largest, checker.map(summed, largest), strict=True))
    return [found[part] for part in parts]


#: bytes read at a time: the parts read are checked by a second thread meanwhile
_READ_BYTES = 16 << 20


def _read_summed(f, whole: np.ndarray, parts: list[tuple[int, int]]) -> list[str] | None:
    """Read ``f`` into ``whole`` (every byte, then nothing more; else None) and the checksum
    of each part (offset, bytes) within it, worked out by a thread while the rest is read:
    the way a snapshot that cannot be leased is read (see the top).

    Reading (a copy from the page cache into fresh pages) took 0.9-1.8 s at a million mirror
    specs; the checksums release Python's lock, so they are worked out meanwhile. A part
    lying past the file's end is given an empty checksum (the caller says which)."""
    view, size = memoryview(whole), len(whole)
    with ThreadPoolExecutor(1, thread_name_prefix="snapshot-check") as checker:
        pending, done = [], 0
        for at, nbytes in sorted(parts):
            end = at + nbytes
            if end > size:
                break
            while done < end:  # read up to this part's end, a bounded piece at a time
                got = f.readinto(view[done : min(end, done + _READ_BYTES)])
                if not got:
                    return None
                done += got
            pending.append(((at, nbytes), checker.submit(checksum, view[at:end])))
        while done < size:
            got = f.readinto(view[done : min(size, done + _READ_BYTES)])
            if not got:
                return None
            done += got
        if f.read(1):
            return None
        found = {where: future.result() for where, future in pending}
    return [found.get(where, "") for where in parts]


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _header() -> bytes:
    return b"%s %d\n" % (_MAGIC, FORMAT)
