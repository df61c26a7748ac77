"""Persisted queries: Apollo's automatic persisted queries over POST and GET (not found,
then registered, then answered by hash), bounded by bytes; and the trusted-documents
mode, which answers the documents of its file and refuses every other."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cachegraph import Settings, create_app
from cachegraph.execution.persisted import TrustedDocumentsError
from tests.app.test_reload import ONE_PAGE, STATS

TEXT = STATS["query"]
HASH = hashlib.sha256(TEXT.encode()).hexdigest()
BY_HASH = {"persistedQuery": {"version": 1, "sha256Hash": HASH}}
NOT_FOUND = {
    "errors": [
        {"message": "PersistedQueryNotFound", "extensions": {"code": "PERSISTED_QUERY_NOT_FOUND"}}
    ]
}
UNSUPPORTED = "PERSISTED_QUERY_NOT_SUPPORTED"
TAGS = "query Tags {\n  tags(order: NEWEST_FIRST) {\n    name\n    specCount\n  }\n}"


def app_on(data: Path, **settings):
    return create_app(settings=Settings(data=(str(data),), **settings))


def get(client: TestClient, **params):
    encoded = {k: json.dumps(v) if isinstance(v, dict) else v for k, v in params.items()}
    return client.get("/graphql", params=encoded)


def counted(client: TestClient) -> dict[str, float]:
    text = client.get("/metrics").text
    found = re.findall(r'cachegraph_persisted_queries_total\{result="(\w+)"\} (\S+)', text)
    return {result: float(n) for result, n in found}


def cache_line(client: TestClient, metric: str) -> float:
    text = client.get("/metrics").text
    return float(re.search(rf'{metric}\{{cache="persisted"\}} (\S+)', text).group(1))


def test_a_hash_unknown_is_not_found_then_registered_then_answered(data: Path):
    with TestClient(app_on(data)) as client:
        missing = get(client, extensions=BY_HASH)
        assert missing.status_code == 200 and missing.json() == NOT_FOUND
        assert missing.headers["cache-control"] == "no-store"  # no proxy keeps it
        assert client.post("/graphql", json={"extensions": BY_HASH}).json() == NOT_FOUND

        registered = client.post("/graphql", json={"query": TEXT, "extensions": BY_HASH})
        assert registered.json() == ONE_PAGE

        by_get = get(client, extensions=BY_HASH)
        assert by_get.status_code == 200 and by_get.json() == ONE_PAGE
        assert by_get.headers["cache-control"] == "public, max-age=300"
        # The answer by hash is the answer to the text: the same validator.
        assert by_get.headers["etag"] == get(client, query=TEXT).headers["etag"]
        by_post = client.post("/graphql", json={"extensions": BY_HASH})
        assert by_post.json() == ONE_PAGE
        assert counted(client) == {"miss": 2.0, "registered": 1.0, "hit": 2.0}
        assert cache_line(client, "cachegraph_cache_entries") == 1.0
        assert 0 < cache_line(client, "cachegraph_cache_bytes") < 1000


def test_a_hash_with_variables_and_an_operation_name_by_get(data: Path):
    query = "query One($h: String!) { spec(hash: $h) { package { name } } }"
    key = hashlib.sha256(query.encode()).hexdigest()
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": key}}
    variables = {"h": "fc4ffi7"}
    with TestClient(app_on(data)) as client:
        client.post("/graphql", json={"query": query, "extensions": extensions})
        answer = get(client, extensions=extensions, variables=variables, operationName="One")
        direct = client.post("/graphql", json={"query": query, "variables": variables})
    assert answer.json() == direct.json()
    assert "errors" not in answer.json()


@pytest.mark.parametrize(
    ("extensions", "code", "says"),
    [
        ({"persistedQuery": {"version": 1, "sha256Hash": "0" * 64}}, "BAD_USER_INPUT", "sha"),
        ({"persistedQuery": {"version": 1, "sha256Hash": "xyz"}}, "BAD_USER_INPUT", "64"),
        ({"persistedQuery": {"version": 2, "sha256Hash": HASH}}, UNSUPPORTED, "1"),
    ],
)  # fmt: skip
def test_a_hash_not_of_its_text_or_an_unknown_version_is_refused(data, extensions, code, says):
    with TestClient(app_on(data)) as client:
        answer = client.post("/graphql", json={"query": TEXT, "extensions": extensions}).json()
        [error] = answer["errors"]
        assert error["extensions"] == {"code": code} and says in error["message"]
        # and nothing was registered
        assert client.post("/graphql", json={"extensions": BY_HASH}).json() == NOT_FOUND


def test_the_explorers_queries_are_known_by_hash_from_the_start(data: Path):
    key = hashlib.sha256(TAGS.encode()).hexdigest()
    with TestClient(app_on(data)) as client:
        answer = get(client, extensions={"persistedQuery": {"version": 1, "sha256Hash": key}})
    assert answer.json() == {"data": {"tags": [{"name": "develop", "specCount": 130}]}}


def test_registered_texts_are_bounded_by_bytes(data: Path):
    with TestClient(app_on(data, persisted_queries=5_000)) as client:
        for n in range(40):
            text = f"{{ stats {{ specCount }} a{n}: stats {{ packageCount }} }}"
            extensions = {"persistedQuery": {"version": 1, "sha256Hash": _sha(text)}}
            assert (
                "errors"
                not in client.post(
                    "/graphql", json={"query": text, "extensions": extensions}
                ).json()
            )
        assert cache_line(client, "cachegraph_cache_bytes") <= 5_000
        assert cache_line(client, "cachegraph_cache_evictions") > 0
        assert cache_line(client, "cachegraph_cache_budget_bytes") == 5_000


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def trusted(tmp_path: Path) -> Path:
    path = tmp_path / "trusted.json"
    path.write_text(json.dumps({HASH: TEXT}))
    return path


def test_trusted_documents_answer_their_documents_and_refuse_any_other(data, trusted):
    other = "{ stats { packageCount } }"
    with TestClient(app_on(data, trusted_documents=str(trusted))) as client:
        assert get(client, extensions=BY_HASH).json() == ONE_PAGE
        assert client.post("/graphql", json=STATS).json() == ONE_PAGE  # its text, too
        refused = client.post("/graphql", json={"query": other})
        assert refused.status_code == 200
        assert refused.json() == {
            "errors": [
                {
                    "message": f"this server answers only its trusted documents, and "
                    f"{_sha(other)} is not one of them: send the sha256Hash of a listed "
                    "document in extensions.persistedQuery, or ask the operator to add yours "
                    "to the --trusted-documents file",
                    "extensions": {
                        "code": "PERSISTED_QUERY_NOT_TRUSTED",
                        "sha256Hash": _sha(other),
                    },
                }
            ]
        }
        # Registering is refused too, and so are the explorer's queries (not in the file).
        extensions = {"persistedQuery": {"version": 1, "sha256Hash": _sha(other)}}
        registering = client.post("/graphql", json={"query": other, "extensions": extensions})
        assert (
            registering.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_TRUSTED"
        )
        tags = {"persistedQuery": {"version": 1, "sha256Hash": _sha(TAGS)}}
        assert "errors" in get(client, extensions=tags).json()
        assert counted(client) == {"hit": 1.0, "refused": 3.0}


def test_the_explorers_exported_documents_are_a_trusted_documents_file(data, tmp_path):
    exported = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", "trusted-documents"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    documents = json.loads(exported)
    assert documents[_sha(TAGS)] == TAGS
    assert all(_sha(text) == key for key, text in documents.items())
    path = tmp_path / "explorer.json"
    path.write_text(exported)
    with TestClient(app_on(data, trusted_documents=str(path))) as client:
        tags = {"persistedQuery": {"version": 1, "sha256Hash": _sha(TAGS)}}
        assert get(client, extensions=tags).json() == {
            "data": {"tags": [{"name": "develop", "specCount": 130}]}
        }
        assert "errors" in client.post("/graphql", json=STATS).json()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "cannot read the trusted documents"),
        ("[1, 2]", "must be a JSON object"),
        (json.dumps({"0" * 64: TEXT}), f"the document's SHA-256 is {HASH}, not its key"),
        (json.dumps({HASH: 5}), "give a sha256 and a document text"),
    ],
)
def test_a_bad_trusted_documents_file_is_named_with_what_is_wrong(tmp_path, content, says):
    path = tmp_path / "trusted.json"
    path.write_text(content)
    with pytest.raises(TrustedDocumentsError, match=re.escape(says)) as raised:
        create_app(settings=Settings(trusted_documents=str(path)))
    assert str(path) in str(raised.value)
    served = subprocess.run(
        [sys.executable, "-m", "cachegraph.cli", "serve", "--trusted-documents", str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert served.returncode != 0
    assert f"cachegraph: error: {path}" in served.stderr and "Traceback" not in served.stderr


def test_apollo_manifests_are_read_too(data, tmp_path):
    path = tmp_path / "manifest.json"
    manifest = {
        "format": "apollo-persisted-query-manifest",
        "version": 1,
        "operations": [{"id": HASH, "body": TEXT, "name": "Stats", "type": "query"}],
    }
    path.write_text(json.dumps(manifest))
    with TestClient(app_on(data, trusted_documents=str(path))) as client:
        assert get(client, extensions=BY_HASH).json() == ONE_PAGE
