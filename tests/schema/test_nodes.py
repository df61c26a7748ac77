"""Global ids: every Node type fetched again by node(id:)."""

from __future__ import annotations

import pytest

IDS = """{ spec(hash: "22xqlom") { id } package(name: "py-keras") { id }
  stack(name: "e4s") { id } compiler(name: "gcc@=13.2.0") { id } target(name: "aarch64") { id }
  tag(name: "develop") { id } }"""

NODE = """query($id: ID!) { node(id: $id) { __typename id
  ... on Spec { hash } ... on Package { name } ... on Stack { name } ... on Compiler { name }
  ... on Target { name } ... on Tag { name } } }"""


@pytest.mark.parametrize(
    ("field", "typename", "key", "value"),
    [
        ("spec", "Spec", "hash", "22xqlomma3rncrgywukvxs53oiorwmgd"),
        ("package", "Package", "name", "py-keras"),
        ("stack", "Stack", "name", "e4s"),
        ("compiler", "Compiler", "name", "gcc@13.2.0"),
        ("target", "Target", "name", "aarch64"),
        ("tag", "Tag", "name", "develop"),
    ],
)
def test_every_id_fetches_its_object_again(run, field, typename, key, value):
    node_id = run(IDS)["data"][field]["id"]
    assert run(NODE, {"id": node_id}) == {
        "data": {"node": {"__typename": typename, "id": node_id, key: value}}
    }


def test_the_id_of_a_missing_object_is_null(run):
    # base64 of "Package:nope" and of "Widget:x"
    assert run(NODE, {"id": "UGFja2FnZTpub3Bl"}) == {"data": {"node": None}}
    assert run(NODE, {"id": "V2lkZ2V0Ong="}) == {"data": {"node": None}}


def test_an_id_the_server_did_not_issue_is_an_error(run):
    assert run(NODE, {"id": "hello"}) == {
        "data": {"node": None},
        "errors": ["'hello' is not an id this server issued"],
    }
