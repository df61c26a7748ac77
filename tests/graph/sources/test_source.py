"""Every kind of source is a ``Source`` (``graph.sources.source``): the loader, the snapshot's
key and the refresh ask only its label, fingerprint, parts, read and check -- so a new kind
is one module, as the tar file of pages below shows."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, load
from cachegraph.graph.sources.loader import load_sources, sources_of
from cachegraph.graph.sources.reader import LoadReport, Problem, Reader
from cachegraph.graph.sources.source import Checked, Checking, Source, checked
from cachegraph.graph.sources.trees import File, Tree

from cachegraph.state import DataSources
from tests.conftest import execute

SEEDS = Path(__file__).resolve().parents[3] / "seeds"
MIRROR = SEEDS / "mirrors" / "mpigdb"


def test_every_kind_is_a_source(tmp_path):
    remote = MirrorSource.parse("develop:e4s=https://binaries.spack.io/develop/e4s")
    kinds = [Tree(str(SEEDS / "pages")), File(str(SEEDS / "spack.lock")),
             MirrorSource("t", "s", MIRROR), remote]  # fmt: skip
    assert all(isinstance(kind, Source) for kind in kinds)
    with pytest.raises(ValueError, match=r"a mirror at a URL is checked by Checking\.remote"):
        remote.check(Checking())  # the caller gives how (``layouts.checked``)
    assert [s.label for s in sources_of([SEEDS / "pages"], [remote])] == [
        str(SEEDS / "pages"),
        "develop/e4s",
    ]


def test_a_tree_is_read_as_its_files_and_a_missing_one_is_said(tmp_path):
    report = LoadReport()
    found = Tree(str(SEEDS / "pages")).parts(report)
    assert found == [File(str(p)) for p in sorted((SEEDS / "pages").glob("*.txt"))]
    reader = Reader()
    Tree(str(SEEDS / "pages")).read(reader, 0)  # its files, one position each
    graph, expected = reader.finish(), load([SEEDS / "pages"], processes=1)[0]
    assert execute(graph, QUERY) == execute(expected, QUERY)
    assert Tree(str(tmp_path / "none")).parts(report) == []
    assert report.problems == [Problem(str(tmp_path / "none"), "no such file or folder")]


@pytest.mark.parametrize("kind", ["tree", "mirror"])
def test_a_local_source_is_changed_when_its_fingerprint_is(tmp_path, kind):
    if kind == "tree":
        shutil.copytree(SEEDS / "pages", tmp_path / "data")
        source: Source = Tree(str(tmp_path / "data"))
        touched = next((tmp_path / "data").glob("*.txt"))
    else:
        shutil.copytree(MIRROR, tmp_path / "data")
        source = MirrorSource("t", "s", tmp_path / "data")
        touched = tmp_path / "data" / "build_cache" / "index.json"
    checking = Checking()
    assert source.check(checking) == Checked(source, False)  # the first check: what was read
    assert source.check(checking) == Checked(source, False)
    touched.write_bytes(touched.read_bytes() + b"\n")
    os.utime(touched, ns=(1, 1))
    assert checked([source], checking) == ([source], True)
    assert checked([source], checking) == ([source], False)


@dataclass(frozen=True)
class PagesTar:
    """A new kind of source, in one place: cache pages in a tar file, read without
    unpacking it (each page named ``TAR/MEMBER`` in messages)."""

    path: str

    @property
    def label(self) -> str:
        return self.path

    def described(self):
        return [self.path], [], []

    def fingerprint(self) -> str:
        return str(os.stat(self.path).st_mtime_ns)

    def parts(self, report: LoadReport) -> list[PagesTar]:
        return [self]

    def read(self, reader: Reader, position: int) -> None:
        reader.at(position)
        with tarfile.open(self.path) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    text = tar.extractfile(member).read().decode()
                    reader.read_page(Path(self.path, member.name), text)

    def check(self, checking: Checking) -> Checked:
        return Checked(self, checking.changed(self))


QUERY = """{
  stats { packageCount specCount }
  tags { name }
  specs(first: 1000) { totalCount nodes { hash package { name } version stacks { name } } }
}"""


def test_a_new_kind_of_source_loads_as_one_module(tmp_path):
    tarred = tmp_path / "pages.tar"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for page in sorted((SEEDS / "pages").glob("*.txt")):
            tar.add(page, arcname=str(page.relative_to(SEEDS / "pages")))
    tarred.write_bytes(buffer.getvalue())
    source = PagesTar(str(tarred))
    assert isinstance(source, Source)
    mirror = MirrorSource("develop", "mpigdb", MIRROR)
    graph, report = load_sources([source, mirror], processes=1)
    expected, expected_report = load([SEEDS / "pages"], [mirror], processes=1)
    assert report.problems == expected_report.problems == []
    assert (report.pages, report.specs, report.tags) == (
        expected_report.pages, expected_report.specs, expected_report.tags
    )  # fmt: skip
    answer = execute(graph, QUERY)
    assert "errors" not in answer and answer["data"]["specs"]["totalCount"] == report.specs
    assert answer == execute(expected, QUERY)


@pytest.mark.slow
def test_a_refresh_checks_local_sources_beside_remote_ones(http_server, tmp_path):
    """With a remote mirror, each refresh checks every source: a page changed on disk is
    found by its tree's fingerprint, as a changed index is by the cheap request."""
    shutil.copytree(SEEDS / "pages", tmp_path / "data")
    url = http_server.publish(MIRROR)
    sources = DataSources(
        paths=[str(tmp_path / "data")],
        mirrors=[MirrorSource.parse(f"develop:mpigdb={url}")],
        cache_dir=str(tmp_path / "cache"),
    )
    assert sources.check_sources()  # the first: the remote index fetched
    assert not sources.check_sources()
    page = next((tmp_path / "data").glob("*.txt"))
    page.write_text(page.read_text())
    os.utime(page, ns=(1, 1))
    assert sources.check_sources()
    assert not sources.check_sources()
    assert [m.stack for m in sources.local_mirrors()] == ["mpigdb"]
