"""A Spack mirror (v2 or v3 layout, on disk) pushed to an OCI registry as Spack pushes one.

Follows Spack 1.1's ``binary_distribution``: ``_oci_push`` and ``_oci_put_manifest`` (one
image per spec, tagged by ``_oci_default_tag``: ``<name>-<version>-<dag hash>.spack``, its
config the image config of ``default_config`` updated with the spec's dict and the archive's
checksum and size, its layers the tarballs of the spec's link/run dependencies then its own,
last, where Spack's fetch reads it), and ``_oci_update_index`` (the image tagged
``index.spack``: an empty ``{}`` config and the index JSON as its only layer, labelled a
gzipped tar layer as Spack labels it). Uploads are the registry API's monolithic ones, as
``spack.oci.oci.upload_blob`` makes them.

The index pushed is the source mirror's own index bytes (Spack rebuilds it from the pushed
specs): a test compares what it reads back with the source file. A spec is pushed when the
mirror holds its spec file (v2) or spec manifest (v3); its tarball is the mirror's when there
is one, else a small gzipped stand-in (the shared mirrors have no tarballs; listing reads the
index only).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import archspec.cpu
import httpx2

MANIFEST_MEDIA = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA = "application/vnd.oci.image.config.v1+json"
LAYER_MEDIA = "application/vnd.oci.image.layer.v1.tar+gzip"
INDEX_TAG = "index.spack"
INDEX_MEDIA_PREFIX = "application/vnd.spack.db"
#: Spack 1.1's CURRENT_BUILD_CACHE_LAYOUT_VERSION, written into each spec's image config.
LAYOUT_VERSION = 3
#: Spack writes the push time; a fixed one keeps a republished image's digests the same.
ARCHIVE_TIMESTAMP = "2025-01-01T00:00:00+00:00"
#: Spack's _oci_archspec_to_gooarch: a target family's name in Go's GOARCH spelling.
GOARCH = {"aarch64": "arm64", "x86_64": "amd64"}


class MirrorLayoutError(ValueError):
    """The folder is no Spack mirror this module can push."""


@dataclass
class SpecImage:
    """What one spec's image is made of: its spec document and tarball bytes."""

    hash: str
    name: str
    version: str
    doc: dict
    tarball: bytes
    held_dependencies: list[str] = field(default_factory=list)  # link/run deps, deps first


@dataclass
class MirrorContent:
    index: bytes
    specs: dict[str, SpecImage]  # dag hash -> image parts


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def spack_tag(name: str, version: str, hash: str) -> str:
    """Spack's ``_oci_default_tag`` through ``ensure_valid_tag``.

    >>> spack_tag("libelf", "0.8.13", "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez")
    'libelf-0.8.13-rqh2vuf6fqwkmipzgi2wjx352mq7y7ez.spack'
    """
    tag = re.sub(r"[^\w.-]", "_", f"{name}-{version}-{hash}.spack")
    return tag if len(tag) <= 128 else tag[:64] + tag[-64:]


def stand_in_tarball(hash: str) -> bytes:
    return gzip.compress(f"stand-in tarball of {hash}\n".encode(), mtime=0)


def clearsigned_body(text: str) -> str:
    """The text inside a clearsigned message, or the text itself."""
    if text.startswith("-----BEGIN PGP SIGNED MESSAGE-----"):
        return text[text.index("\n\n") + 2 : text.index("-----BEGIN PGP SIGNATURE-----")]
    return text


def read_mirror(root: Path) -> MirrorContent:
    """The index bytes and held specs of the mirror at ``root`` (v3 first, as Spack 1.x)."""
    root = Path(root)
    if (root / "v3" / "manifests" / "index" / "index.manifest.json").is_file():
        content = read_v3(root)
    elif (root / "build_cache" / "index.json").is_file():
        content = read_v2(root / "build_cache")
    else:
        raise MirrorLayoutError(
            f"{root}: no v3/manifests/index/index.manifest.json nor build_cache/index.json"
        )
    link_held_dependencies(content.specs)
    return content


def read_v2(build_cache: Path) -> MirrorContent:
    tarballs = {p.name.removesuffix(".spack").rsplit("-", 1)[-1]: p
                for p in build_cache.rglob("*.spack")}  # fmt: skip
    specs = {}
    for path in sorted(build_cache.iterdir()):
        if not path.name.endswith((".spec.json", ".spec.json.sig")):
            continue
        doc = json.loads(clearsigned_body(path.read_text()))
        root = doc["spec"]["nodes"][0]
        tarball = tarballs.get(root["hash"])
        body = tarball.read_bytes() if tarball else stand_in_tarball(root["hash"])
        specs[root["hash"]] = SpecImage(root["hash"], root["name"], root["version"], doc, body)
    return MirrorContent((build_cache / "index.json").read_bytes(), specs)


def v3_blob(root: Path, record: dict) -> bytes | None:
    checksum = record["checksum"]
    path = root / "blobs" / record["checksumAlgorithm"] / checksum[:2] / checksum
    return path.read_bytes() if path.is_file() else None


def v3_records(path: Path) -> list[dict]:
    return json.loads(clearsigned_body(path.read_text()))["data"]


def read_v3(root: Path) -> MirrorContent:
    manifest = root / "v3" / "manifests" / "index" / "index.manifest.json"
    found = [r for r in v3_records(manifest) if r["mediaType"].startswith(INDEX_MEDIA_PREFIX)]
    if not found or (index := v3_blob(root, found[0])) is None:
        raise MirrorLayoutError(f"{manifest}: names no index blob the mirror holds")
    if found[0].get("compression") == "gzip":
        index = gzip.decompress(index)
    specs = {}
    for path in sorted((root / "v3" / "manifests" / "spec").glob("*/*.spec.manifest.json")):
        records = v3_records(path)
        spec_record = next(r for r in records if "spack.spec" in r["mediaType"])
        data = v3_blob(root, spec_record)
        if data is None:
            raise MirrorLayoutError(f"{path}: its spec blob is not in {root / 'blobs'}")
        if spec_record.get("compression") == "gzip":
            data = gzip.decompress(data)
        doc = json.loads(data)
        node = doc["spec"]["nodes"][0]
        tarball_record = next((r for r in records if "spack.install" in r["mediaType"]), None)
        tarball = v3_blob(root, tarball_record) if tarball_record else None
        body = tarball if tarball is not None else stand_in_tarball(node["hash"])
        specs[node["hash"]] = SpecImage(node["hash"], node["name"], node["version"], doc, body)
    return MirrorContent(index, specs)


def dependency_types(edge: dict) -> list[str]:
    """An edge's dependency types: ``parameters.deptypes`` (spec format 4+) or ``type``."""
    return edge.get("parameters", {}).get("deptypes") or edge.get("type") or []


def link_run_order(nodes: dict[str, dict], hash: str) -> list[str]:
    """``hash`` and its link/run dependencies, each after its own (the reversed topological
    order of Spack's ``_oci_put_manifest``): ``hash`` last."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(at: str) -> None:
        seen.add(at)
        for edge in nodes.get(at, {}).get("dependencies", []):
            types = dependency_types(edge)
            if edge["hash"] not in seen and ("link" in types or "run" in types):
                visit(edge["hash"])
        order.append(at)

    visit(hash)
    return order


def link_held_dependencies(specs: dict[str, SpecImage]) -> None:
    """Set each spec's link/run dependencies the mirror holds, dependencies first."""
    for image in specs.values():
        nodes = {n["hash"]: n for n in image.doc["spec"]["nodes"]}
        image.held_dependencies = [h for h in link_run_order(nodes, image.hash)[:-1] if h in specs]


def goarch(node: dict) -> str:
    target = node.get("arch", {}).get("target", "")
    name = target["name"] if isinstance(target, dict) else target
    known = archspec.cpu.TARGETS.get(name)
    family = known.family.name if known else name
    return GOARCH.get(family, family)


class RegistryPusher:
    """Pushes blobs and manifests to one registry (``base``: ``http://host:port``)."""

    def __init__(self, base: str, client: httpx2.Client | None = None) -> None:
        self.base = base.rstrip("/")
        self.client = client or httpx2.Client(trust_env=False, timeout=30)

    def push_blob(self, repository: str, data: bytes) -> dict:
        """Upload ``data`` unless the registry has it; its descriptor (digest and size)."""
        digest = digest_of(data)
        blob = f"{self.base}/v2/{repository}/blobs/{digest}"
        if self.client.head(blob).status_code != 200:
            start = self.client.post(f"{self.base}/v2/{repository}/blobs/uploads/")
            assert start.status_code == 202, (start.status_code, start.text)
            location = httpx2.URL(self.base).join(start.headers["location"])
            location = location.copy_merge_params({"digest": digest})
            put = self.client.put(
                location, content=data, headers={"content-type": "application/octet-stream"}
            )
            assert put.status_code == 201, (put.status_code, put.text)
        return {"digest": digest, "size": len(data)}

    def push_manifest(self, repository: str, tag: str, manifest: dict) -> str:
        """PUT the manifest under ``tag``; its digest."""
        body = json.dumps(manifest, separators=(",", ":")).encode()
        response = self.client.put(
            f"{self.base}/v2/{repository}/manifests/{tag}",
            content=body,
            headers={"content-type": manifest["mediaType"]},
        )
        assert response.status_code == 201, (response.status_code, response.text)
        return digest_of(body)

    def push_index(self, repository: str, index: bytes) -> str:
        """The ``index.spack`` image of ``_oci_update_index``; the manifest's digest."""
        config = self.push_blob(repository, b"{}")
        layer = self.push_blob(repository, index)
        manifest = {
            "mediaType": MANIFEST_MEDIA,
            "schemaVersion": 2,
            "config": {"mediaType": CONFIG_MEDIA, **config},
            "layers": [{"mediaType": LAYER_MEDIA, **layer}],
        }
        return self.push_manifest(repository, INDEX_TAG, manifest)

    def push_spec(self, repository: str, image: SpecImage, specs: dict[str, SpecImage]) -> str:
        """One spec's image as ``_oci_push`` makes it; its tag."""
        layers = [self.push_blob(repository, specs[h].tarball)
                  for h in [*image.held_dependencies, image.hash]]  # fmt: skip
        diff_ids = [digest_of(gunzipped(specs[h].tarball))
                    for h in [*image.held_dependencies, image.hash]]  # fmt: skip
        node = image.doc["spec"]["nodes"][0]
        config = {
            "architecture": goarch(node),
            "os": "linux",
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
            "config": {"Env": ["PATH=/bin:/usr/bin"]},
            "spec": image.doc["spec"],
            "buildcache_layout_version": LAYOUT_VERSION,
            "binary_cache_checksum": {
                "hash_algorithm": "sha256",
                "hash": layers[-1]["digest"].removeprefix("sha256:"),
            },
            "archive_size": layers[-1]["size"],
            "archive_timestamp": ARCHIVE_TIMESTAMP,
            "archive_compression": "gzip",
        }
        config_blob = self.push_blob(repository, json.dumps(config, separators=(",", ":")).encode())
        manifest = {
            "mediaType": MANIFEST_MEDIA,
            "schemaVersion": 2,
            "config": {"mediaType": CONFIG_MEDIA, **config_blob},
            "layers": [{"mediaType": LAYER_MEDIA, **layer} for layer in layers],
            "annotations": {"org.opencontainers.image.description": spec_description(image)},
        }
        tag = spack_tag(image.name, image.version, image.hash)
        self.push_manifest(repository, tag, manifest)
        return tag

    def push_mirror(self, mirror: Path, repository: str) -> list[str]:
        """Every held spec's image, then the index's (as Spack: index last); the tags."""
        content = read_mirror(mirror)
        tags = [self.push_spec(repository, image, content.specs)
                for image in content.specs.values()]  # fmt: skip
        self.push_index(repository, content.index)
        return [*tags, INDEX_TAG]


def spec_description(image: SpecImage) -> str:
    """A stand-in for ``spec.format()`` (Spack's description annotation)."""
    return f"{image.name}@{image.version}/{image.hash}"


def gunzipped(data: bytes) -> bytes:
    """The uncompressed bytes of a gzipped tarball (an image's diff id), or the bytes."""
    try:
        return gzip.decompress(data)
    except (OSError, EOFError):
        return data
