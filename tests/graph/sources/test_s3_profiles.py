"""S3 credentials as Spack finds them: ``spack.util.s3.get_s3_session`` opens a
``boto3.Session()`` (the AWS CLI's chain: environment, ``AWS_PROFILE`` and the profiles of
``~/.aws/config`` and ``credentials``, SSO, assumed roles), and reads unsigned when it finds
no credentials; ``get_mirror_s3_connection_info`` takes the endpoint from ``S3_ENDPOINT_URL``,
``https://`` added when it has no scheme. Here against a SeaweedFS that refuses anonymous
requests, with the ``aws`` extra (boto3) installed as the test extra installs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cachegraph.graph import MirrorSource
from cachegraph.graph.sources.fetch import FetchLimits

from cachegraph.state import DataSources, load_sources

pytestmark = pytest.mark.slow

MIRROR = Path(__file__).resolve().parents[3] / "seeds" / "mirrors" / "spack-test" / "unsigned"
#: every variable through which an AWS client finds credentials, a region or an endpoint
AWS_VARIABLES = (
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
    "S3_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
)  # fmt: skip


@pytest.fixture
def aws_home(tmp_path, monkeypatch, private_s3_server) -> Path:
    """A home with no AWS settings but an endpoint given as Spack names it; no metadata
    service asked (there is none here; boto3 would wait for it)."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("S3_ENDPOINT_URL", private_s3_server.endpoint)
    return home


@pytest.fixture(scope="module")
def private_mirror(private_s3_server) -> str:
    return private_s3_server.publish(MIRROR, "private", "test/e4s")


def _load(url: str, tmp_path: Path) -> tuple[int, list[str]]:
    """The mirror's spec count, and the problems its load met."""
    sources = DataSources(
        mirrors=[MirrorSource.parse(f"test:e4s={url}")],
        cache_dir=str(tmp_path / "cache"),
        fetch_limits=FetchLimits(retries=0),
    )
    graph, report, _ = load_sources(sources)
    return graph.spec_count, [str(problem) for problem in report.problems]


def test_a_named_profile_of_the_aws_files_signs_the_requests(aws_home, private_mirror,
                                                              private_s3_server, tmp_path,
                                                              monkeypatch):  # fmt: skip
    key, secret = private_s3_server.keys
    (aws_home / ".aws" / "credentials").write_text(
        f"[site]\naws_access_key_id = {key}\naws_secret_access_key = {secret}\n"
    )
    (aws_home / ".aws" / "config").write_text("[profile site]\nregion = us-east-1\n")
    monkeypatch.setenv("AWS_PROFILE", "site")
    # the 7 records of the mirror's index.json (two libdwarf, two libelf, gcc-runtime,
    # compiler-wrapper and the external gcc), all read
    assert _load(private_mirror, tmp_path) == (7, [])


def test_without_credentials_the_bucket_is_read_unsigned_and_refused(aws_home, private_mirror,
                                                                     tmp_path):  # fmt: skip
    count, problems = _load(private_mirror, tmp_path)
    assert count == 0
    assert len(problems) == 1 and "access denied (HTTP 403): check the credentials" in problems[0]


def test_a_profile_that_is_not_there_is_named(aws_home, private_mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_PROFILE", "nowhere")
    count, problems = _load(private_mirror, tmp_path)
    assert count == 0
    assert len(problems) == 1
    assert "the AWS configuration cannot be read: " in problems[0]
    assert "The config profile (nowhere) could not be found" in problems[0]
