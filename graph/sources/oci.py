"""Build caches in an OCI registry (``oci://``): fetched as Spack's ``OCIIndexFetcher`` does,
read from their copy as a v2 index.

The index is the one layer of the image tagged ``index.spack``; each spec is an image of its
own (``oci_tag``), whose last layer is its tarball. ``sync`` brings the index into the local
copy (a bearer token asked for where the registry wants one); ``fetch_oci_manifests`` the
images' manifests that give sizes; ``read`` reads the copy. ``layouts`` chooses the layout.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson

from ..errors import BadRecord
from . import v2
from .fetch import Fetcher, FetchError
from .frontmatter import check_nesting
from .locations import Remote
from .mirrors import (
    MAX_SMALL_FILE_BYTES,
    OCI_MANIFESTS,
    PATH_PART,
    MirrorRead,
    file_bytes,
    held,
    index_node,
)
from .remote import (
    SMALL,
    Check,
    Held,
    body_digest,
    fetch_missing,
    held_state,
    partial,
    replace_folder_files,
    write_state,
)

# -- reading -------------------------------------------------------------------------------


def oci_tag(name: str, version: str, hash: str) -> str:
    """A spec's image tag in an OCI build cache: Spack's ``_oci_default_tag``
    (``binary_distribution.py``) through ``ensure_valid_tag`` (``spack.oci.image``).

    >>> oci_tag("libelf", "0.8.13", "rqh2vuf6fqwkmipzgi2wjx352mq7y7ez")
    'libelf-0.8.13-rqh2vuf6fqwkmipzgi2wjx352mq7y7ez.spack'
    >>> oci_tag("py-x", "1.0+local", "h")
    'py-x-1.0_local-h.spack'
    """
    tag = re.sub(r"[^\w.-]", "_", f"{name}-{version}-{hash}.spack")
    return tag if len(tag) <= 128 else tag[:64] + tag[-64:]


def read(copy: Path) -> MirrorRead:
    """A copy of an OCI build cache: its index (``index.spack``'s layer) as a v2 one; each
    spec's tarball is its image (``oci://REGISTRY/REPOSITORY:TAG``, named by its tag here),
    its size the image's last layer's where its manifest was fetched (Spack's
    ``_oci_get_blob_info``)."""
    read = v2.read(copy / "build_cache", copy / "build_cache" / "index.json")
    read.layout = "oci"

    def tarball(read: MirrorRead, hash: str, entry: dict) -> tuple[str, float | None]:
        tag = _oci_entry_tag(hash, entry)
        if tag is None:
            return "", None
        manifest = copy / OCI_MANIFESTS / f"{tag}.json"
        if not manifest.is_file():
            return tag, None
        return tag, _oci_tarball_size(read, manifest)

    read.tarball_of = tarball
    return read


def _oci_entry_tag(hash: str, entry: dict) -> str | None:
    node = index_node(entry)
    if not isinstance(node, dict):
        return None
    name, version = node.get("name"), node.get("version")
    if not (isinstance(name, str) and isinstance(version, str)):
        return None
    return oci_tag(name, version, hash)


def _oci_tarball_size(read: MirrorRead, manifest: Path) -> float | None:
    """The size of an image's last layer (the spec's tarball); None, and a problem, when the
    manifest says none."""
    data = file_bytes(read, manifest, MAX_SMALL_FILE_BYTES)
    if data is None:
        return None
    try:
        check_nesting(data)
        size = orjson.loads(data)["layers"][-1]["size"]
        if type(size) is not int or size < 0:
            raise TypeError
        return float(size)
    except (BadRecord, orjson.JSONDecodeError, KeyError, IndexError, TypeError):
        read.problem(manifest, "not an image manifest with a layer of known size", "warning")
        return None


def indexed_oci_tags(copy: Path) -> list[str]:
    """The image tags of the specs the index of an OCI mirror's copy holds."""
    read = v2.read(copy / "build_cache", copy / "build_cache" / "index.json")
    tags = []
    for chunk in read.index[1] if read.index is not None else ():
        for hash, entry in chunk.items():
            tag = _oci_entry_tag(hash, entry) if held(entry) else None
            if tag is not None and PATH_PART.fullmatch(tag):
                tags.append(tag)
    return tags


# -- fetching ------------------------------------------------------------------------------

#: The index layer of an OCI build cache, and the media types Spack asks for.
OCI_INDEX_TAG = "index.spack"

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"

OCI_ACCEPT = f"{OCI_MANIFEST}, application/vnd.oci.image.index.v1+json"

_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")


def sync(check: Check) -> bool:
    """``OCIIndexFetcher``: the ``index.spack`` image's manifest, then its first layer when
    the digest differs from the one held; the blob must hash to its digest."""
    remote = check.remote
    scheme = "http" if remote.scheme == "oci+http" else "https"
    base = f"{scheme}://{remote.host}/v2/{remote.path}"
    manifest = _oci_get(check, f"{base}/manifests/{OCI_INDEX_TAG}", {"Accept": OCI_ACCEPT})
    if manifest.status == 404:
        raise FetchError(f"{remote.shown}: no image tagged {OCI_INDEX_TAG}", 404)
    try:
        digest = json.loads(manifest.data)["layers"][0]["digest"]
        found = _DIGEST.fullmatch(digest)
        if found is None:
            raise ValueError
    except (ValueError, KeyError, IndexError, TypeError):
        raise FetchError(
            f"{remote.shown}: the {OCI_INDEX_TAG} manifest names no sha256 index layer"
        ) from None
    wanted = found.group(1)
    if check.held.layout == "oci" and check.held.hash == wanted:
        return False
    blob = _oci_get(check, f"{base}/blobs/{digest}", {}, dest=partial(check, "index"))
    if blob.status == 404:
        raise FetchError(f"{remote.shown}: its index layer {digest} is missing", 404)
    actual = body_digest(blob)
    if actual != wanted:
        os.unlink(blob.path)
        raise FetchError(
            f"{remote.shown}: checksum mismatch: the index layer's sha256 is {actual}, "
            f"its manifest says {wanted}; not used (as Spack refuses it)"
        )
    replace_folder_files(
        check.folder,
        {"build_cache/index.json": blob.path},
        {"build_cache/index.json.hash": actual.encode()},
        keep=("state.json",),
    )
    check.held = Held(remote.shown, "oci", wanted, "", time.time(), blob.size)
    write_state(check.folder, check.held)
    return True


def _oci_get(check: Check, url: str, headers: dict[str, str], dest: Path | None = None):
    """A registry GET, answering a bearer challenge once: an anonymous pull token, or one
    asked with the credentials of the URL or of ``CACHEGRAPH_OCI_USERNAME`` and
    ``CACHEGRAPH_OCI_PASSWORD`` (as Spack's ``--oci-username-variable``)."""
    sent = {**headers, **check.headers}
    limit = None if dest is not None else SMALL
    got = check.http(url, headers=sent, dest=dest, limit=limit, ok_statuses=frozenset({401}))
    if got.status != 401:
        return got
    challenge = got.headers.get("www-authenticate", "")
    credentials = _oci_credentials(check.remote)
    scheme, _, params = challenge.partition(" ")
    if scheme.lower() == "basic" and credentials:
        got = check.http(url, headers=sent, dest=dest, limit=limit, auth=credentials)
    elif scheme.lower() == "bearer":
        check.headers["Authorization"] = f"Bearer {_token(check, params, credentials)}"
        got = check.http(url, headers={**headers, **check.headers}, dest=dest, limit=limit)
    else:
        wanted = "other credentials" if credentials else "credentials"
        raise FetchError(f"{check.remote.shown}: the registry asks for authentication (give "
                         f"{wanted}: CACHEGRAPH_OCI_USERNAME and CACHEGRAPH_OCI_PASSWORD)",
                         401)  # fmt: skip
    return got


def _oci_credentials(remote: Remote) -> tuple[str, str] | None:
    if any(remote.credentials):
        return remote.credentials
    user = os.environ.get("CACHEGRAPH_OCI_USERNAME", "")
    password = os.environ.get("CACHEGRAPH_OCI_PASSWORD", "")
    return (user, password) if user or password else None


_PARAM = re.compile(r'(\w+)="([^"]*)"')


def _token(check: Check, params: str, credentials: tuple[str, str] | None) -> str:
    """A bearer token from the realm a registry's challenge names."""
    found = dict(_PARAM.findall(params))
    realm = found.pop("realm", "")
    if not realm.startswith(("https://", "http://")):
        raise FetchError(f"{check.remote.shown}: the registry's token realm is not an http(s) URL")
    query = urlencode({k: v for k, v in found.items() if k in ("service", "scope")})
    url = f"{realm}{'&' if '?' in realm else '?'}{query}" if query else realm
    got = check.http(url, limit=SMALL, auth=credentials)
    try:
        answer = json.loads(got.data)
        token = answer.get("token") or answer.get("access_token")
        if not isinstance(token, str) or not token:
            raise ValueError
    except (ValueError, AttributeError):
        raise FetchError(
            f"{check.remote.shown}: the registry's token service gave no token"
        ) from None
    return token


def fetch_oci_manifests(remote: Remote, copy: Path, fetcher: Fetcher) -> int:
    """Fetch into an OCI mirror's copy the image manifests it lacks of the specs its index
    holds (the last layer is the spec's tarball, its size ``Spec.size``: Spack's
    ``_oci_get_blob_info``), a few at once; return how many were fetched."""
    indexed = [f"{OCI_MANIFESTS}/{tag}.json" for tag in indexed_oci_tags(copy)]
    held = (copy / OCI_MANIFESTS).glob("*.json")
    check = Check(remote, "", copy, held_state(copy), fetcher)
    scheme = "http" if remote.scheme == "oci+http" else "https"
    base = f"{scheme}://{remote.host}/v2/{remote.path}/manifests"

    def fetch(relative: str) -> Any:
        tag = relative.removeprefix(f"{OCI_MANIFESTS}/").removesuffix(".json")
        return _oci_get(check, f"{base}/{tag}", {"Accept": OCI_MANIFEST})

    return fetch_missing(remote.shown, copy, indexed, held, fetch)
