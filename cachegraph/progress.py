"""A one-line load progress for terminals: files, specs, rate. Silent elsewhere."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from cachegraph.graph.words import counted


class ProgressLine:
    """A ``graph.load`` progress callback that redraws one line on a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.started = time.perf_counter()
        self.shown = False

    def __call__(self, files: int, specs: int) -> None:
        if not self.enabled:
            return
        rate = files / max(time.perf_counter() - self.started, 1e-9)
        said = f"{counted(files, 'file')}, {counted(specs, 'spec')}, {rate:,.0f} files/s"
        self.stream.write(f"\rloading: {said} ")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
