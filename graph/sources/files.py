"""Which files a load reads, and a fingerprint of them; run as a script, it prints one.

Only the standard library: a restart works out the fingerprint in a second
process (``Fingerprint``) started as ``python files.py``, without importing
the package, while this one reads the snapshot; both are mostly CPU work in
Python, so threads would take turns and two processes take half the time.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path


def source_files(
    paths: Iterable[str | os.PathLike], missing: list[str], irregular: list[str] | None = None
) -> Iterator[Path]:
    """Every regular file under ``paths``, in the order a load reads them.

    Folders are searched recursively, in name order, skipping hidden names.
    Missing paths go to ``missing``; FIFOs, sockets and devices, which a read could
    wait on forever, to ``irregular`` (never read).
    """
    irregular = [] if irregular is None else irregular
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            yield path
        elif path.is_dir():
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    if not name.startswith("."):
                        found = Path(root, name)
                        if found.is_file():
                            yield found
                        elif not found.is_dir():
                            irregular.append(str(found))
        elif path.exists():
            irregular.append(str(path))
        else:
            missing.append(str(path))


def fingerprint(paths: Sequence[str], labels: Sequence[str] = (), more: Sequence[str] = ()) -> str:
    """A digest of ``labels`` and every source file's path, size and modification time.

    ``more`` are files or folders outside ``paths`` to include (mirrors given on their own).
    """
    lines = list(labels)
    missing: list[str] = []
    for path in [*map(str, source_files(paths, [])), *map(str, source_files(more, missing))]:
        try:
            st = os.stat(path)
            lines.append(f"{path}\t{st.st_size}\t{st.st_mtime_ns}")
        except OSError:
            lines.append(f"{path}\tmissing")
    lines += [f"{path}\tmissing" for path in missing]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


class Fingerprint:
    """``fingerprint`` worked out in a second process; ``result()`` waits for it."""

    def __init__(self, paths: Sequence[str], labels: Sequence[str] = (), more: Sequence[str] = ()):
        self.args = json.dumps([list(map(str, paths)), list(labels), list(map(str, more))])
        self.digest = ""
        try:
            self.process: subprocess.Popen | None = subprocess.Popen(
                [sys.executable, "-I", __file__, self.args], stdout=subprocess.PIPE
            )
        except OSError:  # no second process here: this one will do it
            self.process = None

    def result(self) -> str:
        if not self.digest and self.process is not None:
            out, _ = self.process.communicate()
            if self.process.returncode == 0 and len(out.strip()) == 64:
                self.digest = out.strip().decode()
        if not self.digest:
            self.digest = fingerprint(*json.loads(self.args))
        return self.digest


if __name__ == "__main__":
    print(fingerprint(*json.loads(sys.argv[1])))
