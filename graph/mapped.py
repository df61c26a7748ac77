"""A file mapped read-only into memory and held so that no other process changes it under
the mapping: a Linux read lease on it, broken by the kernel whenever another process opens
the file to write or truncates it, and at that news the mapping's bytes are copied into
memory of this process's own, swapped in at the same address, before the lease is let go.

Why: a mapping is the file. Truncated under it, the next read of a page past the new end
kills the process with SIGBUS; rewritten in place, the data changes under the answers. A
read lease (``fcntl(F_SETLEASE, F_RDLCK)``) makes the kernel hold any such opener (or
``truncate``) until the holder lets go (or ``/proc/sys/fs/lease-break-time`` passes, 45 s
by default), and tell the holder by a signal. The file's bytes, intact while the writer
waits, are copied into fresh anonymous memory and moved over the mapping's address
(``mremap``): every array over it reads the same bytes before and after, and then the
writer goes on. An opener that asks not to wait (``O_NONBLOCK``, as coreutils'
``truncate``) is refused once ("Resource temporarily unavailable") and succeeds when it
tries again. The lease is on what the file is now: a file already open for writing
elsewhere cannot be leased (nor mapped, then: ``lease`` gives None and the caller reads the
file in), and our own writes of a snapshot go to a new file renamed over the old, never into
a mapped one.

The signal goes to one thread of ours (``F_SETOWN_EX``), which blocks it and waits for it
(``sigwaitinfo``): nothing else of the process sees it, no Python signal handler is needed
(those run in the main thread only, whatever it is doing), and it works from any thread.
The signal is SIGURG (``F_SETSIG``), whose default is to be ignored: in the moment between
taking a lease and naming our thread the kernel sends it to the process, where SIGIO's
default would end it; a lease broken then is found by asking (``F_GETLEASE``) after.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import logging
import mmap
import os
import signal
import threading
import weakref
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger("cachegraph")

_F_SETSIG, _F_SETOWN_EX, _F_OWNER_TID = 10, 15, 0
_F_SETLEASE = getattr(fcntl, "F_SETLEASE", 1024)
_F_GETLEASE = getattr(fcntl, "F_GETLEASE", 1025)
_MREMAP_MAYMOVE, _MREMAP_FIXED = 1, 2
_SIGNAL = signal.SIGURG
#: the least ``/proc/sys/fs/lease-break-time`` (seconds a writer waits for us at most) a
#: file is mapped under: copying a mapping out takes about a second a gigabyte here
_LEAST_BREAK_SECONDS = 10


class _Owner(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("pid", ctypes.c_int)]


@dataclass(eq=False)
class Lease:
    """A read lease on an open file (its own descriptor), and once mapped, the mapping."""

    fd: int
    #: the mapping, its address and size, once mapped (one assignment: read whole)
    region: tuple[weakref.ref, int, int] | None = None
    #: broken before it was mapped: the file is being changed, read it in instead
    broken: bool = False
    done: bool = field(default=False, repr=False)

    def map(self, size: int) -> np.ndarray | None:
        """The file's first ``size`` bytes, mapped read-only; None when the lease was broken
        meanwhile (the caller reads the file in). From now on the mapping owns the lease:
        it lets go when the mapping is freed or copied out."""
        mapping = mmap.mmap(self.fd, size, access=mmap.ACCESS_READ)
        whole = np.frombuffer(mapping, np.uint8)
        with _keeper.lock:
            if self.broken:
                whole = None
                mapping.close()
                return None
            self.region = (
                weakref.ref(mapping, lambda _, held=self: _keeper.forget(held)),
                whole.ctypes.data,
                size,
            )
        return whole

    def release(self) -> None:
        """Let go of the lease unless a mapping holds it now."""
        if self.region is None:
            _keeper.forget(self)


def lease(fd: int) -> Lease | None:
    """A read lease on the file open (read-only) at ``fd``, or None where one cannot be had:
    not Linux, a file system without leases, a file open for writing elsewhere or owned by
    another user, leases off or broken too soon (``/proc/sys/fs``)."""
    if not _keeper.start():
        return None
    own = os.dup(fd)  # the lease is on the open file: this descriptor lets go of it
    try:
        fcntl.fcntl(own, _F_SETSIG, _SIGNAL)
        fcntl.fcntl(own, _F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        log.debug("no lease on a snapshot (%s): read in", exc.strerror)
        os.close(own)
        return None
    held = Lease(own)
    with _keeper.lock:
        _keeper.held[own] = held
    owner = _Owner(_F_OWNER_TID, _keeper.tid)
    if _libc.fcntl(own, _F_SETOWN_EX, ctypes.byref(owner)) != 0:
        _keeper.forget(held)
        return None
    _keeper.check()  # a break in the moment before the signal was ours
    return None if held.broken else held


class _Keeper:
    """The thread that waits for lease breaks and copies mappings out."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.held: dict[int, Lease] = {}
        self.tid = 0
        self._ready = threading.Event()
        self._usable: bool | None = None

    def start(self) -> bool:
        with self.lock:
            if self._usable is None:
                self._usable = _leases_usable()
                if self._usable:
                    threading.Thread(target=self._run, name="snapshot-leases", daemon=True).start()
        if self._usable:
            self._ready.wait()
        return bool(self._usable)

    def _run(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {_SIGNAL})
        self.tid = threading.get_native_id()
        self._ready.set()
        while True:
            signal.sigwaitinfo({_SIGNAL})
            try:
                self.check()
            except Exception:  # this thread must go on: the next break needs it
                log.exception("copying a snapshot out of its mapping failed")

    def check(self) -> None:
        """Copy out every mapping whose lease is being broken, and let go of those."""
        for held in list(self.held.values()):
            with self.lock:  # its descriptor open while asked (a closed one's number is reused)
                if held.done:
                    continue
                state = fcntl.fcntl(held.fd, _F_GETLEASE)
            if state != fcntl.F_RDLCK:
                self._give_up(held)

    def _give_up(self, held: Lease) -> None:
        with self.lock:
            if held.done:
                return
            region = held.region
            mapping = region[0]() if region is not None else None
            if region is None:
                held.broken = True
            elif mapping is not None and not mapping.closed:
                try:
                    _copy_out(region[1], region[2])
                finally:
                    self.forget(held)
                log.warning("a snapshot being served was opened to be written or truncated "
                            "by another process: its %s bytes copied into memory first",
                            f"{region[2]:,}")  # fmt: skip
            self.forget(held)
        del mapping  # outside the lock: its weak reference's callback takes it

    def forget(self, held: Lease) -> None:
        """Let go of ``held``'s lease and close its descriptor (once)."""
        with self.lock:
            if held.done:
                return
            held.done = True
            if self.held.get(held.fd) is held:
                del self.held[held.fd]
            with contextlib.suppress(OSError):
                fcntl.fcntl(held.fd, _F_SETLEASE, fcntl.F_UNLCK)
            os.close(held.fd)


def _copy_out(address: int, size: int) -> None:
    """Put a copy of the ``size`` bytes mapped at ``address`` in their place, as memory of
    this process's own (read-only, as the mapping was), in one step that no reader sees."""
    copy = _libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE,
                      mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)  # fmt: skip
    if copy in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "cannot copy a mapped snapshot out: no memory")
    ctypes.memmove(copy, address, size)
    _libc.mprotect(copy, size, mmap.PROT_READ)
    moved = _libc.mremap(copy, size, size, _MREMAP_MAYMOVE | _MREMAP_FIXED, address)
    if moved != address:
        raise OSError(ctypes.get_errno(), "cannot move a copied snapshot into place")


def _leases_usable() -> bool:
    try:
        with open("/proc/sys/fs/leases-enable") as on, open("/proc/sys/fs/lease-break-time") as t:
            if on.read().strip() != "1" or int(t.read()) < _LEAST_BREAK_SECONDS:
                return False
    except (OSError, ValueError):
        return False  # not Linux
    return _libc is not None and hasattr(signal, "sigwaitinfo")


def _c_library() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]  # fmt: skip
    libc.mremap.restype = ctypes.c_void_p
    libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int,
                            ctypes.c_void_p]  # fmt: skip
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    libc.fcntl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    return libc


_libc = _c_library()
_keeper = _Keeper()
