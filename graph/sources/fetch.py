"""Fetching one file of a remote mirror, with every bound a hostile server could test.

Two clients, chosen by measurement and by what each covers (README, "Serve a remote cache"):

- **httpx2** for ``http(s)://`` and OCI registries (which speak HTTP): the requests Spack
  makes need control no object-store client gives, a conditional ``If-None-Match``, a
  bearer-token challenge, redirects judged one by one (at most 5, http(s) only, the
  ``Authorization`` header dropped when the host changes), ``Retry-After``, and the body
  counted as it is decoded (a gzip bomb in ``Content-Encoding`` stops at the byte limit).
- **obstore** for ``s3://`` and ``gs://``: request signing and the standard credential
  chains (environment, web identity, instance metadata; ``AWS_ENDPOINT_URL`` for
  S3-compatible stores) in a small Rust wheel, where boto3 and google-cloud-storage would be
  two large dependency trees for one GET each. What obstore's chain lacks is the AWS CLI's
  profiles (``~/.aws/config`` and ``credentials``, ``AWS_PROFILE``, SSO, ``credential_process``,
  assumed roles): Spack reads S3 through ``boto3.Session()`` (``spack.util.s3.get_s3_session``),
  so with the optional ``aws`` extra installed (boto3) the credentials are boto3's, handed to
  obstore by its ``Boto3CredentialProvider``, exactly those Spack would sign with. As in
  Spack, a bucket is read unsigned (a public one) when no credentials are found.

Every fetch is bounded: connect and read timeouts, a total time, bytes (compressed and
decompressed), redirects; 5xx answers and broken connections are retried with backoff.
TLS is always verified, against the system's certificates or ``ca_bundle``. Messages
name the URL without credentials and never quote a body.
"""

from __future__ import annotations

import contextlib
import email.utils
import hashlib
import logging
import os
import ssl
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .locations import S3_ENDPOINT_VARIABLES, Remote, redacted, s3_endpoint_from

# httpx2 logs each request's URL at INFO: the fetch's own errors say what a person needs,
# and a URL given with credentials must never reach a log
for _name in ("httpx2", "httpcore2"):
    logging.getLogger(_name).setLevel(logging.WARNING)

#: What Spack sends (``spack.util.web``), with who we are.
USER_AGENT = "Spack/1.1 (spack-cache-graph)"
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_REDIRECTS = 5


@dataclass(frozen=True)
class FetchLimits:
    """The bounds of one fetch (settings of the server: ``cachegraph settings``)."""

    connect_timeout: float = 10.0
    #: seconds without a byte before a read gives up
    read_timeout: float = 30.0
    #: seconds one file may take in all, retries included
    total_timeout: float = 300.0
    #: bytes of one index, compressed or not
    max_bytes: int = 512 << 20
    retries: int = 3
    #: first wait between tries; doubled each time (a ``Retry-After`` wins, up to the total)
    backoff: float = 0.5
    #: a file of CA certificates to trust instead of the system's; "" for the system's
    ca_bundle: str = ""


def ca_bundle_problem(path: str) -> str:
    """What is wrong with a CA bundle file ("" when nothing is, or none is given).

    >>> ca_bundle_problem(""), ca_bundle_problem("/no/such/ca.pem")
    ('', 'cannot be read: No such file or directory')
    """
    if not path:
        return ""
    try:
        ssl.create_default_context(cafile=path)
    except FileNotFoundError as exc:
        return f"cannot be read: {exc.strerror}"
    except OSError as exc:  # ssl.SSLError is one: no certificate in it
        return f"holds no PEM certificate ({type(exc).__name__})"
    return ""


class FetchError(Exception):
    """A fetch that failed: the message names the URL (no credentials) and what went wrong."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Fetched:
    """One answer: 200 with its bytes (or written to ``path``), 304, or 404."""

    status: int
    data: bytes = b""
    #: where the body was written, when a destination was given
    path: Path | None = None
    etag: str = ""
    size: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    #: the body's sha256 (hex), worked out as it came: a large index is not read again for it
    sha256: str = ""


@dataclass
class _Sink:
    """Where a body goes: memory (small files) or a file (an index), counted as it comes."""

    url: str
    limit: int
    path: Path | None = None
    size: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    _chunks: list[bytes] = field(default_factory=list)
    _file: Any = None

    def __post_init__(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # closed in close(), once the body is whole or the fetch failed
            self._file = open(self.path, "wb")  # noqa: SIM115

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise FetchError(f"{self.url}: larger than {self.limit:,} bytes; not read")
        self.digest.update(chunk)
        if self._file is not None:
            self._file.write(chunk)
        else:
            self._chunks.append(chunk)

    def close(self, ok: bool) -> None:
        if self._file is not None:
            self._file.close()
            if not ok:
                with contextlib.suppress(OSError):
                    os.unlink(self.path)

    def data(self) -> bytes:
        return b"".join(self._chunks)


class Fetcher:
    """Fetches files of remote mirrors; one per load or refresh, closed after."""

    def __init__(self, limits: FetchLimits | None = None) -> None:
        self.limits = limits or FetchLimits()
        self._http: Any = None
        self._stores: dict[str, Any] = {}

    def close(self) -> None:
        if self._http is not None:
            self._http.close()
            self._http = None
        self._stores.clear()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- any scheme ---------------------------------------------------------------------

    def get(
        self,
        remote: Remote,
        relative: str,
        *,
        etag: str = "",
        dest: Path | None = None,
        limit: int | None = None,
    ) -> Fetched:
        """A file of a mirror by its path below the root: 200, 304 (``etag`` held) or 404."""
        limit = self.limits.max_bytes if limit is None else limit
        if remote.transport == "http":
            auth = remote.credentials if any(remote.credentials) else None
            return self.http(remote.join(relative), etag=etag, dest=dest, limit=limit, auth=auth)
        return self._object(remote, relative, dest=dest, limit=limit)

    # -- http(s) and OCI ----------------------------------------------------------------

    def _client(self) -> Any:
        if self._http is None:
            import httpx2  # only a server with remote mirrors pays for importing it

            limits = self.limits
            problem = ca_bundle_problem(limits.ca_bundle)
            if problem:
                raise FetchError(f"the CA bundle {limits.ca_bundle} (--ca-bundle): {problem}")
            context = ssl.create_default_context(cafile=limits.ca_bundle or None)
            self._http = httpx2.Client(
                timeout=httpx2.Timeout(
                    limits.read_timeout, connect=limits.connect_timeout, pool=limits.connect_timeout
                ),
                follow_redirects=False,  # judged one at a time below
                verify=context,
                headers={"User-Agent": USER_AGENT},
                trust_env=False,  # no proxy or .netrc picked up behind the operator's back
            )
        return self._http

    def http(
        self,
        url: str,
        *,
        etag: str = "",
        dest: Path | None = None,
        limit: int | None = None,
        headers: dict[str, str] | None = None,
        auth: tuple[str, str] | None = None,
        ok_statuses: frozenset[int] = frozenset({200}),
    ) -> Fetched:
        """GET ``url`` within the limits; 304 and 404 are answers, other failures FetchError.

        ``ok_statuses`` may add statuses whose (small) body the caller reads, such as an OCI
        registry's 401 with its challenge.
        """
        limit = self.limits.max_bytes if limit is None else limit
        started = time.monotonic()
        shown = redacted(url)
        attempt = 0
        while True:
            try:
                return self._http_once(url, etag, dest, limit, headers, auth, started, ok_statuses)
            except _Retry as retry:
                attempt += 1
                left = self.limits.total_timeout - (time.monotonic() - started)
                wait = (
                    retry.after
                    if retry.after is not None
                    else self.limits.backoff * 2 ** (attempt - 1)
                )
                if attempt > self.limits.retries or wait >= left:
                    tries = f"{attempt} {'try' if attempt == 1 else 'tries'}"
                    raise FetchError(f"{shown}: {retry.reason} ({tries})", retry.status) from None
                time.sleep(wait)

    def _http_once(
        self,
        url: str,
        etag: str,
        dest: Path | None,
        limit: int,
        headers: dict[str, str] | None,
        auth: tuple[str, str] | None,
        started: float,
        ok_statuses: frozenset[int],
    ) -> Fetched:
        """One try: redirects followed one by one; ``_Retry`` for what may pass."""
        import httpx2

        client = self._client()
        sent = dict(headers or {})
        if etag:
            sent["If-None-Match"] = f'"{etag}"' if not etag.startswith(('"', "W/")) else etag
        origin = urlsplit(url).netloc.rpartition("@")[2]
        for _ in range(MAX_REDIRECTS + 1):
            shown = redacted(url)
            sink = None
            try:
                with client.stream("GET", url, headers=sent, auth=auth) as response:
                    status = response.status_code
                    if status in (301, 302, 303, 307, 308):
                        target = response.headers.get("location", "")
                        url = str(response.url.join(target))
                        scheme = urlsplit(url).scheme
                        if scheme not in ("http", "https"):
                            raise FetchError(
                                f"{shown}: redirected to a {scheme or 'relative'}: URL; "
                                "only http and https redirects are followed"
                            )
                        if urlsplit(url).netloc.rpartition("@")[2] != origin:
                            # credentials go to the host they were given for, no other
                            sent.pop("Authorization", None)
                            auth = None
                        continue
                    if status == 304 and etag:
                        return Fetched(304, etag=etag)
                    if status == 404:
                        return Fetched(404)
                    if status in RETRY_STATUSES:
                        raise _Retry(f"HTTP {status}", status, _retry_after(response.headers))
                    if status != 200 and status not in ok_statuses:
                        raise FetchError(f"{shown}: HTTP {status}", status)
                    sink = _Sink(shown, limit, dest if status == 200 else None)
                    # decoded by httpx2 a bounded piece at a time (its ZlibDecompressor):
                    # a gzip bomb's small chunk never becomes one large piece
                    for chunk in response.iter_bytes():
                        sink.write(chunk)
                        if time.monotonic() - started > self.limits.total_timeout:
                            raise FetchError(
                                f"{shown}: took longer than {self.limits.total_timeout:g} s "
                                "in all; not read"
                            )
                    sink.close(ok=True)
                    return Fetched(
                        status,
                        data=sink.data(),
                        path=sink.path,
                        etag=_etag(response.headers.get("etag", "")),
                        size=sink.size,
                        headers=dict(response.headers),
                        sha256=sink.digest.hexdigest(),
                    )
            except FetchError:
                if sink is not None:
                    sink.close(ok=False)
                raise
            except (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError) as e:
                if sink is not None:
                    sink.close(ok=False)
                tls = _tls_failure(e)
                if tls:
                    raise FetchError(f"{shown}: {tls}") from None
                raise _Retry(_network_reason(e), None, None) from None
            except httpx2.DecodingError:
                if sink is not None:
                    sink.close(ok=False)
                raise FetchError(f"{shown}: the body's Content-Encoding is broken") from None
            except httpx2.HTTPError as e:
                if sink is not None:
                    sink.close(ok=False)
                raise FetchError(f"{shown}: {type(e).__name__}") from None
        raise FetchError(f"{redacted(url)}: more than {MAX_REDIRECTS} redirects")

    # -- s3:// and gs:// ----------------------------------------------------------------

    def _store(self, remote: Remote) -> Any:
        key = f"{remote.scheme}://{remote.host}"
        store = self._stores.get(key)
        if store is None:
            store = self._stores[key] = _object_store(remote, self.limits)
        return store

    def _object(self, remote: Remote, relative: str, *, dest: Path | None, limit: int) -> Fetched:
        import obstore

        shown = remote.join(relative)
        key = "/".join(p for p in (remote.path, relative.lstrip("/")) if p)
        started = time.monotonic()
        sink = None
        try:
            result = obstore.get(self._store(remote), key)
            size = result.meta["size"]
            if size > limit:
                raise FetchError(f"{shown}: larger than {limit:,} bytes; not read")
            sink = _Sink(shown, limit, dest)
            for chunk in result.stream(min_chunk_size=1 << 20):
                sink.write(bytes(chunk))
                if time.monotonic() - started > self.limits.total_timeout:
                    raise FetchError(
                        f"{shown}: took longer than {self.limits.total_timeout:g} s in all"
                    )
            sink.close(ok=True)
            return Fetched(
                200, data=sink.data(), path=sink.path, etag=result.meta.get("e_tag") or "",
                size=sink.size, sha256=sink.digest.hexdigest(),
            )  # fmt: skip
        except FetchError:
            if sink is not None:
                sink.close(ok=False)
            raise
        except FileNotFoundError:
            return Fetched(404)
        except Exception as exc:  # obstore's errors carry the request; name the kind only
            if sink is not None:
                sink.close(ok=False)
            reason = _object_reason(exc)
            if reason == "cannot connect" and remote.scheme == "s3":  # where it was tried
                endpoint, variable = s3_endpoint_from()
                reason += (
                    f" to {redacted(endpoint)} (from {variable})" if endpoint
                    else f" to AWS S3 (none of {', '.join(S3_ENDPOINT_VARIABLES)} is set)"
                )  # fmt: skip
            raise FetchError(f"{shown}: {reason}") from None


class _Retry(Exception):
    def __init__(self, reason: str, status: int | None, after: float | None) -> None:
        self.reason, self.status, self.after = reason, status, after


def _retry_after(headers: Any) -> float | None:
    """``Retry-After`` in seconds (a number or an HTTP date), at most a minute.

    >>> _retry_after({"retry-after": "2"}), _retry_after({})
    (2.0, None)
    """
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return min(max(seconds, 0.0), 60.0)


def _etag(value: str) -> str:
    """An ETag without its quotes (a weak one keeps its ``W/``).

    >>> _etag('"abc"'), _etag('W/"abc"'), _etag("")
    ('abc', 'W/"abc"', '')
    """
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        return value[1:-1]
    return value


def _tls_failure(exc: BaseException) -> str:
    """What a TLS failure was, from an exception and its causes; "" when it was none."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY" in str(exc):
            return "TLS certificate not trusted (--ca-bundle names a site's CA)"
        if isinstance(exc, ssl.SSLError) or "SSL" in type(exc).__name__:
            return (
                "the TLS handshake failed: does it speak https? (a registry without TLS is "
                "oci+http://, a plain server http://)"
            )
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return ""


def _network_reason(exc: Exception) -> str:
    name = type(exc).__name__
    if "Timeout" in name:
        return "timed out"
    if "Connect" in name:
        return "cannot connect"
    return "the connection broke"


def _object_reason(exc: Exception) -> str:
    """What went wrong in an object-store request, in a few words, nothing of its request."""
    text = str(exc)
    for words, reason in (
        ("403", "access denied (HTTP 403): check the credentials"),
        ("Forbidden", "access denied (HTTP 403): check the credentials"),
        ("401", "not authorized (HTTP 401): check the credentials"),
        ("timed out", "timed out"),
        ("error sending request", "cannot connect"),
        ("NoSuchBucket", "no such bucket"),
    ):
        if words in text:
            return reason
    return f"the object store refused the request ({type(exc).__name__})"


def _object_store(remote: Remote, limits: FetchLimits) -> Any:
    """An obstore store for a bucket: signed with the environment's credentials where there
    are any, unsigned (a public bucket) where there are none."""
    from obstore.store import GCSStore, S3Store

    client = {
        "connect_timeout": timedelta(seconds=limits.connect_timeout),
        "timeout": timedelta(seconds=limits.total_timeout),
        "user_agent": USER_AGENT,
    }
    retry = {
        "max_retries": limits.retries,
        "backoff": {"init_backoff": timedelta(seconds=limits.backoff)},
        "retry_timeout": timedelta(seconds=limits.total_timeout),
    }
    bucket = remote.host
    if remote.scheme == "gs":
        return GCSStore(bucket, client_options=client, retry_config=retry)
    config: dict[str, Any] = {}
    endpoint = remote.endpoint
    if endpoint:
        config["endpoint"] = endpoint
        client["allow_http"] = endpoint.startswith("http://")
    user, password = remote.credentials
    provider = None
    if user and password:
        config.update(access_key_id=user, secret_access_key=password)
    else:
        provider = _boto3_credentials()
        if provider is None and not _aws_credentials():
            config["skip_signature"] = True
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if provider is not None and "region" in provider.config:
        region = region or provider.config["region"]
    config["region"] = region or "us-east-1"
    return S3Store(
        bucket, config=config, client_options=client, retry_config=retry,
        credential_provider=provider,
    )  # fmt: skip


def _boto3_credentials() -> Any:
    """boto3's credentials (the AWS CLI's whole chain, profiles included) for obstore, or
    None: when the ``aws`` extra is not installed, or when boto3 finds none."""
    try:
        import boto3
        from obstore.auth.boto3 import Boto3CredentialProvider
    except ImportError:
        return None
    # botocore says at INFO where it found credentials, at every fetch: not news to an operator
    logging.getLogger("botocore.credentials").setLevel(logging.WARNING)
    try:
        session = boto3.Session()
        if session.get_credentials() is None:
            return None
        return Boto3CredentialProvider(session)
    except Exception as exc:  # a broken profile: say which, rather than read unsigned
        raise FetchError(f"the AWS configuration cannot be read: {exc}") from None


def _aws_credentials() -> bool:
    """Whether the environment names AWS credentials of any kind the chain reads."""
    return any(
        os.environ.get(name)
        for name in (
            "AWS_ACCESS_KEY_ID",
            "AWS_WEB_IDENTITY_TOKEN_FILE",
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        )
    )
