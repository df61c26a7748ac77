"""Read a large tree of files in two processes, with the answer of a load in one.

The files are split by the folder that holds them -- the package, on the
public site -- into two parts. A second Python process reads one part into a
``Reader`` of its own while this process reads the other; its rows, problems
and counts are then merged into this process's (``Reader.merge``), and the
store is decided once over every row. Rows and problems carry the position of
the file they came from, so nothing depends on which process read what: a hash
listed in both parts, spec files and the pages that name them, all come out as
one process would have them. Reading is most of a large load and costs the
same per row everywhere, so two cores take it in about half the time.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path
from typing import IO

from .. import deadline
from .mirrors import MirrorSource
from .source import Source

#: Fewer files than this load in one process: a second one would not pay for its start.
MIN_FILES = 2000
#: Nor do mirrors with fewer bytes of index than this.
MIN_INDEX_BYTES = 32 << 20
#: The share of the files this process reads: the second one also starts Python and
#: sends its rows back (and this one merges them), about a tenth more work per file.
MINE = 0.55

Placed = list[tuple[int, str]]  # (position in the load, path)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def halves(files: Placed) -> tuple[Placed, Placed] | None:
    """Files (at their positions) by folder name, split into two parts (``MINE`` of them
    first); None when there is only one folder to split.

    >>> mine, theirs = halves([(0, "t/a/x.md"), (1, "t/b/y.md"), (2, "t/a/z.md")])
    >>> mine, theirs
    ([(0, 't/a/x.md'), (2, 't/a/z.md')], [(1, 't/b/y.md')])
    """
    folders: dict[str, Placed] = defaultdict(list)
    for position, path in files:
        folders[os.path.basename(os.path.dirname(path))].append((position, path))
    if len(folders) < 2:
        return None
    first: Placed = []
    second: Placed = []
    for name in sorted(folders):
        (first if len(first) < len(files) * MINE else second).extend(folders[name])
    if not second:
        return None
    return sorted(first), sorted(second)


def read_placed(files: Placed, others: list[tuple[int, Source]] = ()):
    """A Reader of these files and other sources, each read at its position (in the second
    process)."""
    from .reader import Reader
    from .trees import File

    reader = Reader()
    for position, path in files:
        File(path).read(reader, position)
    for position, source in others:
        source.read(reader, position)
    reader.flush()  # the last pages' rows: sent as columns, not as the pages' parsed text
    return reader


def mirror_halves(
    placed: list[tuple[int, Source]],
) -> tuple[list[tuple[int, Source]], list[tuple[int, Source]]]:
    """Mirrors (at their positions) in two parts of about equal index bytes.

    >>> mirrors = [(at, MirrorSource("t", s, Path("/none"))) for at, s in enumerate("abc", 10)]
    >>> mine, theirs = mirror_halves(mirrors)
    >>> [(p, m.stack) for p, m in mine], [(p, m.stack) for p, m in theirs]
    ([(10, 'a'), (12, 'c')], [(11, 'b')])
    """
    sized = [(at, source, index_bytes(source)) for at, source in placed]
    parts: tuple[list, list] = ([], [])
    loads = [[0, 0], [0, 0]]  # (bytes, mirrors) of each part
    for at, source, size in sorted(sized, key=lambda p: -p[2]):  # the largest first,
        part = 0 if loads[0] <= loads[1] else 1  # each to the lighter part
        parts[part].append((at, source))
        loads[part][0] += size
        loads[part][1] += 1
    return sorted(parts[0], key=_first), sorted(parts[1], key=_first)


def _first(placed: tuple) -> int:
    return placed[0]


def index_bytes(source: Source) -> int:
    """About how much index a mirror has to read: its index file's size, or for the v3
    layout the size its index manifest states (0 when there is none, or no mirror)."""
    if not isinstance(source, MirrorSource):
        return 0
    root = source.path
    for path in (root / "build_cache" / "index.json", root / "index.json", root):
        if path.is_file():
            return path.stat().st_size
    manifest = root / "v3" / "manifests" / "index" / source.view / "index.manifest.json"
    try:
        blobs = json.loads(manifest.read_text()).get("data", [])
        return sum(b.get("contentLength", 0) for b in blobs if isinstance(b, dict))
    except (OSError, ValueError, AttributeError, TypeError):
        return 0


class Helper:
    """A second Python process reading files into a Reader of its own.

    A plain subprocess, not multiprocessing: it imports no one's main module,
    and forks no process that has threads (the server loads in one). It is
    started with ``-c``, not ``-m``: its module is already imported by the
    package, which ``-m`` would run a second time.
    """

    def __init__(self, files: Placed, others: list[tuple[int, Source]] = ()) -> None:
        self.sent = None  # the Reader it read, once it has sent it whole
        import cachegraph  # where the package is: the second process imports the same one

        root = str(Path(cachegraph.__file__).resolve().parents[1])
        path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
        code = "from cachegraph.graph.sources.parallel import main; main()"
        try:
            # A session of its own: Ctrl-C at a terminal reaches the first process only,
            # which ends this one (``stop``). In the terminal's group, a Ctrl-C while it
            # still imported (before ``main`` ignores it) printed a KeyboardInterrupt.
            self.process = subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": path},
                start_new_session=True,
            )
        except OSError:
            self.thread = None
            return
        # A thread talks to it, so this process reads its own part meanwhile.
        sent = pickle.dumps((files, list(others)))
        self.thread = threading.Thread(target=self._talk, args=(sent,), daemon=True)
        self.thread.start()

    def _talk(self, files: bytes) -> None:
        read = None
        # Unpickled from the pipe as it comes, not read whole first: the rows are never
        # held twice (as bytes and as what they become), some 170 MB at 250k mirror specs.
        with contextlib.suppress(
            OSError, ValueError, EOFError, AttributeError, pickle.UnpicklingError
        ):  # it ended early: it said why on stderr
            with self.process.stdin as stdin:
                _send(stdin, files)
            with self.process.stdout as stdout:
                read = pickle.load(stdout)
        if self.process.wait() == 0:
            self.sent = read

    def result(self):
        """The second process's Reader; None when it could not be had (it said why).

        Raises Stopped (``graph.deadline``) if the process is stopping meanwhile."""
        if self.thread is not None:
            while self.thread.is_alive():
                deadline.check_stopping()
                self.thread.join(0.1)
        read, self.sent = self.sent, None
        return read

    def why(self) -> str:
        """Why ``result`` gave None: no second process, or how it ended."""
        if self.thread is None:
            return "no second process could be started"
        code = self.process.poll()
        return "it ended without them" if code in (0, None) else f"it ended with status {code}"

    def stop(self) -> None:
        """End the second process unless it is done (this one gave up on it)."""
        if self.thread is not None and self.thread.is_alive():
            self.process.kill()
            self.thread.join()


def _send(pipe: IO[bytes], data: bytes) -> None:
    pipe.write(len(data).to_bytes(8, "little") + data)
    pipe.flush()


def _received(pipe: IO[bytes]) -> bytes:
    size = int.from_bytes(pipe.read(8), "little")
    return pipe.read(size)


def main() -> None:
    """The second process: read the files sent, send the Reader back.

    Ctrl-C at a terminal reaches the first process only (this one has a session of its
    own), which ends this one (``Helper.stop``); a SIGINT sent here anyway is ignored. It
    ends quietly when the first is gone before it answers.
    """
    import signal

    from ..memory import loading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with loading():
        received = _received(sys.stdin.buffer)
        if not received:  # the first process went away before sending
            return
        files, others = pickle.loads(received)
        reader = read_placed(files, others)
        try:
            pickle.dump(reader, sys.stdout.buffer, protocol=5)  # as made: no second copy
            sys.stdout.buffer.flush()
        except BrokenPipeError:  # the first process gave up on it: nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
