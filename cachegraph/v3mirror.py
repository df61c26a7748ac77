"""Write a build cache in Spack's v3 layout: for test fixtures and synthetic mirrors.

No real v3 mirror is public, so fixtures are made from real v2 data the way
``spack buildcache migrate`` does, following Spack's ``url_buildcache.py``:
``v3/layout.json``; each spec's JSON gzipped into a blob and named, with its
tarball, by ``v3/manifests/spec/<name>/<name>-<version>-<hash>.spec.manifest.json``;
the index as a blob named by ``v3/manifests/index/index.manifest.json``; every
blob at ``blobs/sha256/<first two>/<checksum>``. Manifests are written as
Spack writes them (``indent=0``, compact separators).

Tarballs are not written: a spec's manifest records the tarball's size that the
caller gives and, as its checksum, the sha256 of a stand-in text. Everything a
metadata reader opens (layout, manifests, spec and index blobs) is real.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

#: The media types Spack 1.0 writes (its migration labels every spec ``spec.v5``).
SPEC_MEDIA = "application/vnd.spack.spec.v5+json"
TARBALL_MEDIA = "application/vnd.spack.install.v2.tar+gzip"
INDEX_MEDIA = "application/vnd.spack.db.v{}+json"


def blob_record(data: bytes, media_type: str, compression: str) -> dict:
    return {
        "contentLength": len(data),
        "mediaType": media_type,
        "compression": compression,
        "checksumAlgorithm": "sha256",
        "checksum": hashlib.sha256(data).hexdigest(),
    }


class V3Writer:
    """Writes one v3 mirror under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        layout = self.root / "v3" / "layout.json"
        layout.parent.mkdir(parents=True, exist_ok=True)
        layout.write_text(json.dumps({"signing": "gpg"}))

    def blob(self, data: bytes, media_type: str, compression: str = "none") -> dict:
        """Store ``data`` as a blob; return its manifest record."""
        record = blob_record(data, media_type, compression)
        path = self.root / "blobs" / "sha256" / record["checksum"][:2] / record["checksum"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return record

    def manifest(self, path: Path, records: list[dict]) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"version": 3, "data": records}
        path.write_text(json.dumps(doc, indent=0, separators=(",", ":")))
        return path

    def add_spec(self, spec_doc: dict, tarball_size: int) -> Path:
        """A spec file's document and its tarball's size; return the manifest's path."""
        root = spec_doc["spec"]["nodes"][0]
        name, version, hash = root["name"], root["version"], root["hash"]
        spec_blob = gzip.compress(json.dumps(spec_doc, separators=(",", ":")).encode(), mtime=0)
        tarball = blob_record(f"tarball of {hash}".encode(), TARBALL_MEDIA, "gzip")
        tarball["contentLength"] = tarball_size
        records = [tarball, self.blob(spec_blob, SPEC_MEDIA, "gzip")]
        folder = self.root / "v3" / "manifests" / "spec" / name
        return self.manifest(folder / f"{name}-{version}-{hash}.spec.manifest.json", records)

    def add_index(self, index_doc: dict[str, Any], view: str = "") -> Path:
        """The build-cache index (``{"database": ...}``), uncompressed as Spack pushes it."""
        version = index_doc["database"]["version"]
        data = json.dumps(index_doc, separators=(",", ":")).encode()
        record = self.blob(data, INDEX_MEDIA.format(version))
        folder = self.root / "v3" / "manifests" / "index"
        return self.manifest(folder / view / "index.manifest.json", [record])
