"""Symbolic links inside a mirror are followed, as Spack follows them: it opens a blob's or
a spec file's path (``URLBuildcacheEntry.fetch_blob`` in ``lib/spack/spack/url_buildcache.py``
stages ``get_blob_url``, a ``file://`` URL that ``urllib`` opens). What a link reaches must be
a regular file: a FIFO or a device is refused. And no message ever carries what a file that
is not a valid mirror file holds: a problem names its path and what is wrong."""

from __future__ import annotations

import json
import logging
import os
import shutil
from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource, load

from cachegraph.state import log_problems
from tests.conftest import execute
from tests.mirrors import migrate_to_v3

#: every spec's own attributes and where it is cached
SPECS = """{ stats { specCount packageCount } mirrors { name layout specCount errors warnings }
  specs(first: 50) { edges { node { hash package { name } version compiler { name version }
    os target { name } size tarball stacks { name } } } } }"""
PROBLEMS = "{ loadStatus { problems(first: 100) { totalCount nodes { path message line } } } }"
SECRET = "planted-s3cr3t-Zq7WvK2pT9"


def blob_of(v3: Path, manifest: Path, media: str) -> Path:
    """The blob a v3 manifest names for ``media``."""
    data = json.loads(manifest.read_text())["data"]
    record = next(r for r in data if media in r["mediaType"])
    return v3 / "blobs" / record["checksumAlgorithm"] / record["checksum"][:2] / record["checksum"]


def moved_behind_a_link(folder: Path, elsewhere: Path) -> None:
    """``folder`` moved to ``elsewhere`` (outside the mirror), a link left in its place."""
    shutil.move(folder, elsewhere)
    folder.symlink_to(elsewhere)


def answers(mirror: Path) -> tuple[dict, list]:
    graph, report = load([], [MirrorSource("t", "s", mirror)], processes=1)
    return execute(graph, SPECS), [(p.message, p.severity) for p in report.problems]


@pytest.fixture
def v2(shared_mirrors: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(shared_mirrors / "v2_layout/unsigned", tmp_path / "v2"))


@pytest.fixture
def v3(shared_mirrors: Path, tmp_path: Path) -> Path:
    return migrate_to_v3(shared_mirrors / "v2_layout/unsigned/build_cache", tmp_path / "v3")


def test_a_v3_mirror_whose_blobs_folder_is_a_link_loads_every_spec(v3: Path, tmp_path: Path):
    plain, problems = answers(v3)
    assert problems == [] and plain["data"]["stats"]["specCount"] == 7
    moved_behind_a_link(v3 / "blobs", tmp_path / "blob-store")
    assert answers(v3) == (plain, [])
    # without the index, every spec blob is read, through the link
    shutil.rmtree(v3 / "v3/manifests/index")
    linked, problems = answers(v3)
    assert problems == [] and linked["data"]["stats"] == plain["data"]["stats"]


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "without an index"])
def test_a_v2_mirror_whose_build_cache_is_a_link_loads_every_spec(v2, tmp_path, indexed):
    if not indexed:
        (v2 / "build_cache/index.json").unlink()
        (v2 / "build_cache/index.json.hash").unlink()
    plain, problems = answers(v2)
    assert problems == [] and plain["data"]["stats"]["specCount"] == 7
    moved_behind_a_link(v2 / "build_cache", tmp_path / "cache-store")
    assert answers(v2) == (plain, [])


def test_a_blob_linked_out_of_the_mirror_is_read_and_checked(v3: Path, tmp_path: Path):
    plain, _ = answers(v3)
    index = blob_of(v3, v3 / "v3/manifests/index/index.manifest.json", "spack.db")
    (tmp_path / "elsewhere").mkdir()
    shutil.move(index, tmp_path / "elsewhere/index")
    index.symlink_to(tmp_path / "elsewhere/index")
    assert answers(v3) == (plain, [])
    # what the link reaches is checked as any blob: its checksum must hold
    (tmp_path / "elsewhere/index").write_text("{}")
    _, problems = answers(v3)
    assert [m.split(":")[0] for m, _ in problems] == ["checksum mismatch"]


@pytest.mark.parametrize("linked", [False, True], ids=["a FIFO", "a link to a FIFO"])
def test_a_blob_that_is_no_regular_file_is_refused(v3: Path, tmp_path: Path, linked: bool):
    shutil.rmtree(v3 / "v3/manifests/index")  # every spec blob is read
    manifest = sorted((v3 / "v3/manifests/spec").glob("*/*.json"))[0]
    blob = blob_of(v3, manifest, "spack.spec")
    blob.unlink()
    fifo = tmp_path / "fifo" if linked else blob
    os.mkfifo(fifo)
    if linked:
        blob.symlink_to(fifo)
    graph, report = load([], [MirrorSource("t", "s", v3)], processes=1)
    assert [(p.path, p.message) for p in report.problems] == [(str(blob), "not a regular file")]
    # its spec still loads, from the DAGs of the specs that depend on it
    assert len(graph.all_specs()) == 7


def planted(kind: str, secret: Path, tmp_path: Path, shared_mirrors: Path) -> Path:
    """A mirror with one file replaced by a link to ``secret``: the mirror's root."""
    v2_cache = shared_mirrors / "v2_layout/unsigned/build_cache"
    if kind.startswith("v3"):
        root = migrate_to_v3(v2_cache, tmp_path / kind.replace(" ", "_"))
        index_manifest = root / "v3/manifests/index/index.manifest.json"
        spec_manifest = sorted((root / "v3/manifests/spec").glob("*/*.json"))[0]
        target = {
            "v3 layout.json": root / "v3/layout.json",
            "v3 index manifest": index_manifest,
            "v3 spec manifest": spec_manifest,
            "v3 index blob": blob_of(root, index_manifest, "spack.db"),
            "v3 spec blob": blob_of(root, spec_manifest, "spack.spec"),
        }[kind]
        if kind == "v3 spec blob":
            shutil.rmtree(root / "v3/manifests/index")  # so the spec blob is read
    else:
        source = v2_cache if "yaml" not in kind else shared_mirrors / "legacy_yaml/build_cache"
        root = tmp_path / kind.replace(" ", "_")
        cache = Path(shutil.copytree(source, root / "build_cache"))
        if "unindexed" in kind:
            (cache / "index.json").unlink()
            (cache / "index.json.hash").unlink()
        name = kind.split()[-1]
        target = next(p for p in sorted(cache.iterdir()) if p.name.endswith(name))
    target.unlink()
    target.symlink_to(secret)
    return root


KINDS = ["v2 index.json", "v2 index.json.hash", "v2 unindexed .spec.json",
         "v2 unindexed yaml .spec.yaml", "v3 layout.json", "v3 index manifest",
         "v3 spec manifest", "v3 index blob", "v3 spec blob"]  # fmt: skip
#: what the secret file holds: a line of text, or JSON with it where a reader looks
SECRETS = {
    "text": f"{SECRET}\n",
    "json": json.dumps({
        "version": SECRET, "data": [{"checksum": SECRET, "mediaType": SECRET}],
        "database": {"version": SECRET, "installs": {SECRET: SECRET}},
        "spec": {"_meta": {"bucildcache_layout_version": SECRET}, "nodes": [SECRET]},
        SECRET: [SECRET],
    }),
    "a manifest": json.dumps({"version": 3, "data": [{"checksum": SECRET}]}),
    "an index": json.dumps({"database": {"version": "8", "installs": {SECRET: {"spec": SECRET}}}}),
    "a spec file": json.dumps({"spec": {"_meta": {"version": 5}, "nodes": [{"name": SECRET}]},
                               "buildcache_layout_version": SECRET}),
}  # fmt: skip


@pytest.mark.parametrize("form", list(SECRETS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_link_to_a_secret_never_shows_what_it_holds(
    shared_mirrors, tmp_path, caplog, kind: str, form: str
):
    secret = tmp_path / "secret"
    secret.write_text(SECRETS[form])
    root = planted(kind, secret, tmp_path, shared_mirrors)
    graph, report = load([], [MirrorSource("t", "s", root)], processes=1)
    if kind != "v3 layout.json" or form == "text":  # any JSON object is a layout.json
        assert report.problems, "the linked file is not a valid mirror file: a problem says so"
    shown = [json.dumps(execute(graph, q)) for q in (PROBLEMS, SPECS)]
    with caplog.at_level(logging.DEBUG, logger="cachegraph"):
        log_problems(report)
    said = [str(p) for p in report.problems] + shown + [caplog.text]
    assert not [s for s in said if SECRET in s]
    # each problem names a path of the mirror, the link itself
    assert all(p.path.startswith(str(root)) for p in report.problems), report.problems


@pytest.mark.parametrize("indexed", [True, False], ids=["indexed", "without an index"])
def test_a_spec_file_added_behind_a_linked_build_cache_changes_the_fingerprint(
    v2: Path, tmp_path: Path, indexed: bool
):
    """A snapshot is not used once the linked folder changes, as for a folder of the mirror."""
    from cachegraph.graph import snapshot

    if not indexed:
        (v2 / "build_cache/index.json").unlink()
        (v2 / "build_cache/index.json.hash").unlink()
    moved_behind_a_link(v2 / "build_cache", tmp_path / "cache-store")
    sources = [MirrorSource("t", "s", v2)]
    before = snapshot.fingerprint([], sources)
    spec = next((tmp_path / "cache-store").glob("*.spec.json"))
    shutil.copy(spec, spec.with_name(spec.name.replace("-", "_", 1)))
    assert snapshot.fingerprint([], sources) != before
    assert snapshot.fingerprinting([], sources).result() == snapshot.fingerprint([], sources)
