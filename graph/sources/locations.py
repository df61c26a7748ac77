"""Where a mirror lives: a local path, or a URL of one of the schemes Spack reads mirrors from.

``file://`` and plain paths are local; ``http://``, ``https://``, ``s3://``, ``gs://``,
``oci://`` and ``oci+http://`` are remote (``../shared/reference/spack-cache/REMOTE.md``).
A URL may carry credentials (``https://user:token@host/...``): they are used, and never
shown: ``shown`` is the URL with them removed, and every message names that.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urljoin, urlsplit, urlunsplit

#: The remote schemes, and the transport each is read with.
REMOTE_SCHEMES = {
    "http": "http",
    "https": "http",
    "s3": "s3",
    "gs": "gs",
    "oci": "oci",
    "oci+http": "oci",
}


def is_url(text: str) -> bool:
    """Whether ``text`` is a URL of a remote scheme (``file://`` and paths are not).

    >>> is_url("https://binaries.spack.io/develop"), is_url("/srv/mirror")
    (True, False)
    >>> is_url("file:///srv/mirror"), is_url("OCI://ghcr.io/spack/cache")
    (False, True)
    """
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in REMOTE_SCHEMES


def scheme_of(text: str) -> str:
    """The scheme of a location that names one (``file`` for ``file://``), else ``""``.

    >>> scheme_of("s3://bucket/x"), scheme_of("/x"), scheme_of("C:/x")
    ('s3', '', '')
    """
    scheme, sep, _ = text.partition("://")
    return scheme.lower() if sep and scheme.replace("+", "").isalnum() else ""


@dataclass(frozen=True)
class Remote:
    """A remote mirror's root URL, with its credentials kept apart from what is shown."""

    #: the URL without credentials, without a final slash: what every message names
    shown: str
    scheme: str
    #: (user, password) given in the URL; empty when none
    credentials: tuple[str, str] = field(default=("", ""), repr=False, compare=False)

    @classmethod
    def parse(cls, text: str) -> Remote:
        """
        >>> Remote.parse("https://me:s3cret@cache.example.org/e4s/")
        Remote(shown='https://cache.example.org/e4s', scheme='https')
        >>> Remote.parse("oci://ghcr.io/spack/cache").transport
        'oci'
        """
        try:
            parts = urlsplit(text.strip())
            port = parts.port
        except ValueError as exc:  # a port that is no number, a broken [IPv6] host
            raise ValueError(f"{redacted(text)}: not a URL: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in REMOTE_SCHEMES:
            raise ValueError(f"{redacted(text)}: not a URL of {', '.join(REMOTE_SCHEMES)}")
        if not parts.hostname:
            raise ValueError(f"{redacted(text)}: the URL names no host (or bucket)")
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        host = parts.hostname + (f":{port}" if port else "")
        path = parts.path.rstrip("/")
        shown = urlunsplit((scheme, host, path, "", ""))
        return cls(shown, scheme, (user, password))

    @property
    def transport(self) -> str:
        return REMOTE_SCHEMES[self.scheme]

    @property
    def identity(self) -> str:
        """What names the mirror's content: its URL, and for a bucket the endpoint it is read
        from (``s3_endpoint()``: the same ``s3://`` name on another store is another
        mirror)."""
        if self.scheme != "s3":
            return self.shown
        endpoint = self.endpoint
        return f"{self.shown} at {redacted(endpoint)}" if endpoint else self.shown

    @property
    def endpoint(self) -> str:
        """The S3-compatible store an ``s3://`` URL is read from: ``s3_endpoint()``."""
        return s3_endpoint() if self.scheme == "s3" else ""

    @property
    def host(self) -> str:
        return urlsplit(self.shown).netloc

    @property
    def path(self) -> str:
        """The path after the host (a bucket's prefix, an OCI repository), no slashes around."""
        return urlsplit(self.shown).path.strip("/")

    def join(self, relative: str) -> str:
        """The URL of a file of the mirror, by its path relative to the root.

        >>> Remote.parse("https://h/m").join("build_cache/index.json")
        'https://h/m/build_cache/index.json'
        """
        return f"{self.shown}/{quote(relative.lstrip('/'), safe='/:@+~=')}"


def redacted(text: str) -> str:
    """A location as it may be shown: any ``user:password@`` of a URL removed.

    >>> redacted("s3://AKIA:secret@bucket/x"), redacted("/plain/path")
    ('s3://bucket/x', '/plain/path')
    """
    if "://" not in text or "@" not in text:
        return text
    parts = urlsplit(text)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def resolved(location: str, base: str) -> str:
    """A location given in a mirrors file, resolved against the file's own URL or folder.

    >>> resolved("e4s/", "https://h/cache_index.json"), resolved("s3://b/x", "https://h/i.json")
    ('https://h/e4s/', 's3://b/x')
    """
    if scheme_of(location) or not is_url(base):
        return location
    return urljoin(base, location)


def mirror_root(text: str) -> str:
    """A remote mirror's root, when given as its ``build_cache/`` or its v2 ``index.json``.

    >>> mirror_root("https://h/m/build_cache/index.json"), mirror_root("s3://b/m/build_cache/")
    ('https://h/m', 's3://b/m')
    """
    text = text.rstrip("/")
    for tail in ("/build_cache/index.json", "/build_cache"):
        if text.endswith(tail):
            return text[: -len(tail)]
    return text


def s3_endpoint() -> str:
    """The S3-compatible store's endpoint the environment names, with a scheme.

    ``S3_ENDPOINT_URL`` is Spack's name for it (``spack.util.s3.get_mirror_s3_connection_info``,
    which adds ``https://`` to an endpoint given without a scheme, as here); the AWS tools'
    ``AWS_ENDPOINT_URL_S3`` and ``AWS_ENDPOINT_URL`` are read after it.

    >>> os.environ["S3_ENDPOINT_URL"] = "minio.site:9000"
    >>> s3_endpoint()
    'https://minio.site:9000'
    >>> del os.environ["S3_ENDPOINT_URL"]
    """
    return s3_endpoint_from()[0]


#: where an S3-compatible store's endpoint is read from, first found first
S3_ENDPOINT_VARIABLES = ("S3_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")


def s3_endpoint_from() -> tuple[str, str]:
    """``s3_endpoint()`` and the variable it comes from (two empty strings: none set)."""
    for name in S3_ENDPOINT_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return (value if "://" in value else f"https://{value}"), name
    return "", ""
