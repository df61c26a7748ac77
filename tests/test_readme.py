"""Every GraphQL example in the README answers: on the bundled seeds, or, for the ones that
need dependency DAGs, on the shared spec files and a real mirror."""

from __future__ import annotations

import json
import re

import pytest
from cachegraph.graph import MirrorSource, load

from tests.conftest import ROOT, SHARED, execute

EXAMPLES = re.findall(r"```graphql\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
NEEDS_DAGS = ("dependencies", "mirrors", "coverage", "specDiff", "tagDiff")
#: the lockfile the coverage example is given (its $lock)
LOCKFILE = SHARED / "lockfiles" / "robertu94+mpigdb.spack.lock"


def empty(value) -> bool:
    return value is None or value == [] or value == {}


@pytest.fixture(scope="module")
def dag_graph(shared_data, shared_mirrors):
    unsigned = MirrorSource("test", "e4s", shared_mirrors / "v2_layout" / "unsigned")
    return load([shared_data], [unsigned])[0]


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 7


@pytest.mark.parametrize(
    "example", EXAMPLES, ids=[e.split("{")[1].split("(")[0].strip() for e in EXAMPLES]
)
def test_each_readme_example_answers(example, request, seeds_graph):
    needs = any(word in example for word in NEEDS_DAGS)
    graph = request.getfixturevalue("dag_graph") if needs else seeds_graph
    variables = {"lock": json.loads(LOCKFILE.read_text())} if "$lock" in example else None
    result = execute(graph, example, variables)
    assert "errors" not in result, result
    assert [name for name, value in result["data"].items() if empty(value)] == []
