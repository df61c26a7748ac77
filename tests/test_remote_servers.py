"""The test servers of tests/remote.py: a mirror published on each is read back with plain
requests, as Spack reads one (../shared/reference/spack-cache/REMOTE.md: v2 ``index.json``
and ``index.json.hash``; v3 the index manifest then its blob; OCI the ``index.spack``
manifest then its layer), and the bytes are the source files'."""

from __future__ import annotations

import hashlib
import json
import re
import ssl
from pathlib import Path

import httpx2
import pytest

from tests.conftest import ROOT
from tests.mirrors import migrate_to_v3
from tests.remote import client, program_or_skip

pytestmark = pytest.mark.slow

SEED_MIRRORS = ROOT / "seeds" / "mirrors"
SEED_V2 = SEED_MIRRORS / "spack-test" / "unsigned"  # index and spec files
SEED_INDEX_ONLY = SEED_MIRRORS / "mpigdb"  # an index and nothing else
OCI_ACCEPT = "application/vnd.oci.image.manifest.v1+json"
V2_INDEX = "build_cache/index.json"
INDEX_MEDIA = "application/vnd.spack.db"  # + "v<N>+json"


@pytest.fixture(scope="session")
def v3_mirror(shared_mirrors: Path, tmp_path_factory) -> Path:
    """A v3 mirror made from the shared v2 one as ``spack buildcache migrate`` does."""
    return migrate_to_v3(
        shared_mirrors / "v2_layout" / "unsigned" / "build_cache", tmp_path_factory.mktemp("v3")
    )


def v3_index_path(mirror: Path) -> Path:
    """The source v3 index blob, found by its manifest on disk."""
    manifest = json.loads((mirror / "v3/manifests/index/index.manifest.json").read_text())
    (record,) = manifest["data"]
    return mirror / "blobs" / "sha256" / record["checksum"][:2] / record["checksum"]


def get(http: httpx2.Client, url: str, **headers: str) -> httpx2.Response:
    response = http.get(url, headers=headers)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])
    return response


def read_v2(http: httpx2.Client, base: str) -> tuple[bytes, bytes]:
    """(index.json, index.json.hash) of the v2 mirror at ``base``."""
    hash_file = get(http, f"{base}/build_cache/index.json.hash").content
    return get(http, f"{base}/build_cache/index.json").content, hash_file


def read_v3(http: httpx2.Client, base: str) -> bytes:
    """The v3 mirror's index blob, through its manifest; its checksum checked."""
    manifest = get(http, f"{base}/v3/manifests/index/index.manifest.json").json()
    (record,) = [
        r for r in manifest["data"] if r["mediaType"].startswith("application/vnd.spack.db")
    ]
    assert record["checksumAlgorithm"] == "sha256"
    checksum = record["checksum"]
    blob = get(http, f"{base}/blobs/sha256/{checksum[:2]}/{checksum}").content
    assert hashlib.sha256(blob).hexdigest() == checksum
    return blob


def read_oci(http: httpx2.Client, base: str, repository: str, **headers: str) -> bytes:
    """The index of an OCI mirror: ``index.spack``'s manifest, then its first layer."""
    manifest = get(http, f"{base}/v2/{repository}/manifests/index.spack", Accept=OCI_ACCEPT,
                   **headers).json()  # fmt: skip
    assert manifest["mediaType"] == OCI_ACCEPT
    digest = manifest["layers"][0]["digest"]
    blob = get(http, f"{base}/v2/{repository}/blobs/{digest}", **headers).content
    assert "sha256:" + hashlib.sha256(blob).hexdigest() == digest
    assert manifest["layers"][0]["size"] == len(blob)
    return blob


def assert_v2_served(http: httpx2.Client, base: str, source: Path) -> None:
    index, hash_file = read_v2(http, base)
    assert index == (source / "build_cache" / "index.json").read_bytes()
    assert hash_file == (source / "build_cache" / "index.json.hash").read_bytes()


# --- HTTP(S) ---------------------------------------------------------------------------


def test_nginx_serves_a_published_v2_and_v3_mirror(http_server, v3_mirror):
    with client() as http:
        assert_v2_served(http, http_server.publish(SEED_V2), SEED_V2)
        assert_v2_served(http, http_server.publish(SEED_INDEX_ONLY), SEED_INDEX_ONLY)
        assert (
            read_v3(http, http_server.publish(v3_mirror)) == v3_index_path(v3_mirror).read_bytes()
        )


def test_nginx_serves_a_file_replaced_by_rename_at_once(http_server):
    base = http_server.publish(SEED_INDEX_ONLY, "replaced")
    with client() as http:
        before = get(http, f"{base}/build_cache/index.json.hash").content
        http_server.replace("replaced/build_cache/index.json.hash", b"0" * 64)
        after = get(http, f"{base}/build_cache/index.json.hash").content
    assert (before, after) == ((SEED_INDEX_ONLY / "build_cache/index.json.hash").read_bytes(),
                               b"0" * 64)  # fmt: skip


def test_publishing_a_name_twice_is_refused(http_server):
    http_server.publish(SEED_INDEX_ONLY, "twice")
    with pytest.raises(FileExistsError, match="twice: already published"):
        http_server.publish(SEED_INDEX_ONLY, "twice")


def test_https_with_the_test_ca(https_server, test_ca, v3_mirror):
    assert https_server.url.startswith("https://127.0.0.1:")
    with client(verify=test_ca.client_context()) as http:
        assert_v2_served(http, https_server.publish(SEED_V2), SEED_V2)
        assert (
            read_v3(http, https_server.publish(v3_mirror)) == v3_index_path(v3_mirror).read_bytes()
        )
    # the CA is what makes it trusted: the system's CAs alone refuse it
    with client(verify=ssl.create_default_context()) as http, pytest.raises(httpx2.ConnectError):
        http.get(f"{https_server.url}/-/ready")


def test_a_self_signed_certificate_is_refused(self_signed_server, test_ca):
    base = self_signed_server.publish(SEED_INDEX_ONLY)
    context = ssl.create_default_context(cafile=str(test_ca.ca_file))
    with client(verify=context) as http, pytest.raises(httpx2.ConnectError, match="CERTIFICATE"):
        http.get(f"{base}/build_cache/index.json")
    # the same server, its certificate trusted as such, serves the file: only trust was missing
    with client(verify=ssl._create_unverified_context()) as http:
        assert_v2_served(http, base, SEED_INDEX_ONLY)


# --- S3 --------------------------------------------------------------------------------


def test_seaweedfs_serves_published_mirrors(s3_server, v3_mirror):
    assert s3_server.publish(SEED_V2, "mirrors", "spack-test/unsigned") == (
        "s3://mirrors/spack-test/unsigned"
    )
    assert s3_server.publish(v3_mirror, "mirrors", "v3") == "s3://mirrors/v3"
    assert s3_server.publish(SEED_INDEX_ONLY, "mpigdb") == "s3://mpigdb"
    endpoint = s3_server.endpoint
    assert s3_server.env()["AWS_ENDPOINT_URL"] == endpoint
    with client() as http:
        assert_v2_served(http, f"{endpoint}/mirrors/spack-test/unsigned", SEED_V2)
        assert_v2_served(http, f"{endpoint}/mpigdb", SEED_INDEX_ONLY)
        assert read_v3(http, f"{endpoint}/mirrors/v3") == v3_index_path(v3_mirror).read_bytes()
        # every file is there, listed under its key
        listing = get(http, f"{endpoint}/mirrors?list-type=2&prefix=spack-test/").text
    keys = set(re.findall(r"<Key>([^<]+)</Key>", listing))
    files = {f"spack-test/unsigned/{p.relative_to(SEED_V2).as_posix()}"
             for p in SEED_V2.rglob("*") if p.is_file()}  # fmt: skip
    assert keys == files


# --- OCI -------------------------------------------------------------------------------


def spack_tags(mirror: Path) -> set[str]:
    """``<name>-<version>-<hash>.spack`` of each spec file of a v2 mirror, from its JSON."""
    tags = set()
    for path in (mirror / "build_cache").glob("*.spec.json"):
        node = json.loads(path.read_text())["spec"]["nodes"][0]
        tags.add(f"{node['name']}-{node['version']}-{node['hash']}.spack")
    return tags


def test_registry_serves_a_published_mirror_index_and_specs(oci_registry, v3_mirror):
    assert oci_registry.publish(SEED_V2, "spack/test") == (
        f"oci+http://127.0.0.1:{oci_registry.port}/spack/test"
    )
    oci_registry.publish(v3_mirror, "spack/v3")
    oci_registry.publish(SEED_INDEX_ONLY, "mpigdb")
    oci_registry.publish(SEED_MIRRORS / "spack-test" / "signed", "spack/signed")
    base = oci_registry.base
    with client() as http:
        assert (
            read_oci(http, base, "spack/test") == (SEED_V2 / "build_cache/index.json").read_bytes()
        )
        assert read_oci(http, base, "spack/v3") == v3_index_path(v3_mirror).read_bytes()
        assert (
            read_oci(http, base, "mpigdb")
            == (SEED_INDEX_ONLY / "build_cache/index.json").read_bytes()
        )
        tags = {r: set(get(http, f"{base}/v2/{r}/tags/list").json()["tags"])
                for r in ("spack/test", "spack/v3", "spack/signed", "mpigdb")}  # fmt: skip
        # one spec image: its config is the spec file's spec, its last layer the tarball
        spec_file = next((SEED_V2 / "build_cache").glob("*libelf-0.8.13-rqh2*.spec.json"))
        tag = "libelf-0.8.13-rqh2vuf6fqwkmipzgi2wjx352mq7y7ez.spack"
        manifest = get(http, f"{base}/v2/spack/test/manifests/{tag}", Accept=OCI_ACCEPT).json()
        config = get(http, f"{base}/v2/spack/test/blobs/{manifest['config']['digest']}").json()
        tarball = manifest["layers"][-1]
        body = get(http, f"{base}/v2/spack/test/blobs/{tarball['digest']}").content
    expected = {*spack_tags(SEED_V2), "index.spack"}
    assert tags == {"spack/test": expected, "spack/v3": expected, "spack/signed": expected,
                    "mpigdb": {"index.spack"}}  # fmt: skip
    assert config["spec"] == json.loads(spec_file.read_text())["spec"]
    assert config["binary_cache_checksum"] == {
        "hash_algorithm": "sha256",
        "hash": hashlib.sha256(body).hexdigest(),
    }
    assert (config["archive_size"], tarball["size"]) == (len(body), len(body))
    assert config["architecture"] == "amd64"  # core2's family, x86_64, in Go's spelling


# --- the bearer-token front ------------------------------------------------------------


def challenge_params(header: str) -> dict[str, str]:
    scheme, _, params = header.partition(" ")
    assert scheme == "Bearer", header
    return dict(re.findall(r'(\w+)="([^"]*)"', params))


def test_bearer_front_asks_for_a_token_then_proxies(oci_registry, oci_bearer, test_ca):
    oci_registry.publish(SEED_INDEX_ONLY, "bearer/mpigdb")
    assert oci_bearer.url("bearer/mpigdb") == f"oci://127.0.0.1:{oci_bearer.port}/bearer/mpigdb"
    manifest_url = f"{oci_bearer.base}/v2/bearer/mpigdb/manifests/index.spack"
    start = len(oci_bearer.seen)
    with client(verify=test_ca.client_context()) as http:
        first = http.get(manifest_url, headers={"Accept": OCI_ACCEPT})
        assert first.status_code == 401
        params = challenge_params(first.headers["www-authenticate"])
        assert params == {
            "realm": f"{oci_bearer.base}/token",
            "service": "cachegraph-test-registry",
            "scope": "repository:bearer/mpigdb:pull",
        }
        # as Spack's opener asks: service, scope and client_id, anonymously
        query = {"service": params["service"], "scope": params["scope"], "client_id": "spack"}
        token = get(http, params["realm"] + "?" + str(httpx2.QueryParams(query))).json()["token"]
        # a token for another repository does not open this one
        other = oci_bearer.issue("repository:elsewhere:pull")
        denied = http.get(manifest_url, headers={"Authorization": f"Bearer {other}"})
        assert denied.status_code == 401
        index = read_oci(http, oci_bearer.base, "bearer/mpigdb", Authorization=f"Bearer {token}")
    assert index == (SEED_INDEX_ONLY / "build_cache/index.json").read_bytes()
    assert oci_bearer.token_requests[-1] == query
    seen = [(s.path.rsplit("/", 1)[-1], s.authorized, s.status) for s in oci_bearer.seen[start:]]
    blob = seen[-1][0]
    assert seen == [("index.spack", False, 401), ("token", False, 200),
                    ("index.spack", False, 401), ("index.spack", True, 200),
                    (blob, True, 200)]  # fmt: skip


def test_a_server_whose_program_is_absent_skips_saying_why():
    with pytest.raises(pytest.skip.Exception, match=r"no-such-server is not installed \(why\)"):
        program_or_skip("no-such-server", "why", "/nonexistent/no-such-server")
