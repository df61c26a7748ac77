"""Sources on disk that are files: a folder of cache pages, spec files, indices found among
them and the rebuilt site's data files (``Tree``), each read as its files (``File``).

A folder is searched recursively, in name order, hidden names skipped
(``files.source_files``); what each file is, ``reader.Reader.read_file`` tells.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import files
from .reader import LoadReport, Problem, Reader
from .source import Checked, Checking, Described


@dataclass(frozen=True)
class Tree:
    """A file or a folder of files given as data (``--data PATH``).

    >>> Tree("seeds/pages").label
    'seeds/pages'
    """

    path: str

    @property
    def label(self) -> str:
        return self.path

    def described(self) -> Described:
        return [self.path], [], []

    def fingerprint(self) -> str:
        """Every file's path, size and modification time (``files.fingerprint``)."""
        return files.fingerprint(*self.described())

    def parts(self, report: LoadReport) -> list[File]:
        """Its files, in the order a load reads them; a missing path or one that is no
        regular file (a FIFO a read would wait on forever) is said in ``report``."""
        missing: list[str] = []
        irregular: list[str] = []
        found = [File(str(p)) for p in files.source_files([self.path], missing, irregular)]
        report.problems += [Problem(path, "no such file or folder") for path in missing]
        report.problems += [
            Problem(path, "not a regular file (a FIFO, socket or device); not read")
            for path in irregular
        ]
        return found

    def read(self, reader: Reader, position: int) -> None:
        """Its files, at positions from ``position`` on (one each, as ``parts`` lists them)."""
        for at, part in enumerate(self.parts(reader.report), position):
            part.read(reader, at)

    def check(self, checking: Checking) -> Checked:
        return Checked(self, checking.changed(self))


@dataclass(frozen=True)
class File(Tree):
    """One file of a tree: a page, a spec file, an index or the site's data."""

    def parts(self, report: LoadReport) -> list[File]:
        return [self]

    def read(self, reader: Reader, position: int) -> None:
        reader.at(position)
        reader.read_file(Path(self.path))
