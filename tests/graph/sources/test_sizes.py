"""Mirror files larger than a real one can be are refused before they are read: an index
past MAX_INDEX_BYTES (about three times the public develop index, 185 MB) as a file, a
sparse file included, or once inflated; manifests and small files past a megabyte."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from cachegraph.graph import MirrorSource, load
from cachegraph.graph.sources.mirrors import MAX_INDEX_BYTES

from cachegraph.v3mirror import INDEX_MEDIA, V3Writer


def problems_of(mirror: Path) -> list[tuple[str, str]]:
    _, report = load([], [MirrorSource("t", "s", mirror)], processes=1)
    return [(os.path.relpath(p.path, mirror), p.message) for p in report.problems]


def test_a_sparse_index_past_the_limit_is_refused_before_it_is_read(tmp_path):
    index = tmp_path / "index.json"
    with open(index, "wb") as f:
        f.truncate(MAX_INDEX_BYTES + 1)  # 512 MiB and a byte, a few kB on disk
    assert problems_of(tmp_path) == [
        ("index.json",
         f"larger than {MAX_INDEX_BYTES:,} bytes, more than a real one can be; not read"),
        (".", "not a build cache: no index.json and no spec files"),
    ]  # fmt: skip


def gzip_of_zeros(mib: int) -> bytes:
    """A valid gzip of ``mib`` MiB of zeros, made without compressing them: the deflate
    blocks of one MiB repeat once flushed whole."""
    zeros = bytes(1 << 20)
    gz = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = gz.compress(zeros) + gz.flush(zlib.Z_FULL_FLUSH)
    again = gz.compress(zeros) + gz.flush(zlib.Z_FULL_FLUSH)
    end = gz.flush()[:-8]  # the last block; its trailer is for two MiB
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    trailer = crc.to_bytes(4, "little") + ((mib << 20) % 2**32).to_bytes(4, "little")
    return first + again * (mib - 1) + end + trailer


def test_an_index_blob_that_inflates_past_the_limit_is_refused_before_inflating(tmp_path):
    bomb = gzip_of_zeros(600)  # 600 kB that inflate to 600 MiB (before, the limit was 8 GiB)
    writer = V3Writer(tmp_path)
    record = writer.blob(bomb, INDEX_MEDIA.format(8), "gzip")
    writer.manifest(tmp_path / "v3" / "manifests" / "index" / "index.manifest.json", [record])
    blob = os.path.join("blobs", "sha256", record["checksum"][:2], record["checksum"])
    assert problems_of(tmp_path) == [
        (blob, f"decompresses to {600 << 20} bytes, more than {MAX_INDEX_BYTES}; not read")
    ]


def test_a_manifest_past_a_megabyte_is_refused(tmp_path):
    manifest = tmp_path / "v3" / "manifests" / "index" / "index.manifest.json"
    V3Writer(tmp_path)
    manifest.parent.mkdir(parents=True)
    with open(manifest, "wb") as f:
        f.truncate((1 << 20) + 1)
    assert problems_of(tmp_path) == [
        (str(manifest.relative_to(tmp_path)),
         "larger than 1,048,576 bytes, more than a real one can be; not read"),
    ]  # fmt: skip
