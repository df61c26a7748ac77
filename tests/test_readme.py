"""Every GraphQL example in the README answers with data on the bundled data alone, as
``cachegraph serve`` with no flags loads it (``seeds/``: pages, mirrors and a spack.lock)."""

from __future__ import annotations

import json
import re

import pytest
from cachegraph.graph import CacheGraph

from cachegraph.sources import default_lockfile
from cachegraph.state import DataSources, load_sources
from tests.conftest import ROOT, execute

EXAMPLES = re.findall(r"```graphql\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def empty(value) -> bool:
    return value is None or value == [] or value == {}


@pytest.fixture(scope="module")
def bundled_graph() -> CacheGraph:
    graph, report, _ = load_sources(DataSources())
    assert [str(p) for p in report.problems] == []
    return graph


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 7


@pytest.mark.parametrize(
    "example", EXAMPLES, ids=[e.split("{")[1].split("(")[0].strip() for e in EXAMPLES]
)
def test_each_readme_example_answers_on_the_bundled_data(example, bundled_graph):
    variables = {"lock": json.loads(default_lockfile().read_text())} if "$lock" in example else None
    result = execute(bundled_graph, example, variables)
    assert "errors" not in result, result
    assert [name for name, value in result["data"].items() if empty(value)] == []
