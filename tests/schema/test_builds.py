"""Compilers (normalized names) and targets."""

from __future__ import annotations

import pytest

from tests.conftest import execute

COMPILER = """query($n: String!) { compiler(name: $n) { name family version specCount
  packages { nodes { name } } specs(first: 1, filter: {target: "aarch64"}) { totalCount } } }"""


@pytest.mark.parametrize("name", ["gcc@13.2.0", "gcc@=13.2.0"])
def test_a_compiler_by_either_form_of_its_name(run, name):
    assert run(COMPILER, {"n": name}) == {
        "data": {
            "compiler": {
                "name": "gcc@13.2.0",
                "family": "gcc",
                "version": "13.2.0",
                "specCount": 167,
                "packages": {"nodes": [{"name": "py-ml-dtypes"}, {"name": "py-safetensors"}]},
                "specs": {"totalCount": 68},
            }
        }
    }


@pytest.mark.parametrize("name", ["none", "gcc@99", "intel"])
def test_none_and_unknown_compilers_are_null(run, name):
    assert run(COMPILER, {"n": name}) == {"data": {"compiler": None}}


def test_compilers_are_normalized_and_never_none(data_graph):
    result = execute(data_graph, '{ compilers { name } v: compilers(tag: "v0.18.0") { name } }')
    names = [c["name"] for c in result["data"]["compilers"]]
    assert names == sorted(names) and "none" not in names
    assert not any("@=" in n for n in names)
    # one name per compiler, Spack's current one (spack.aliases.LEGACY_COMPILER_TO_BUILTIN)
    assert "gcc@11.4.0" in names and "intel-oneapi-compilers@2024.2.1" in names
    assert "cce@15.0.1" in names and not [n for n in names if n.startswith("oneapi@")]
    assert result["data"]["v"] == [{"name": "gcc@7.5.0"}, {"name": "gcc@8.4.0"}]


def test_targets_with_their_counts(run):
    assert run(
        '{ targets { name specCount } t: target(name: "neoverse_v2") { name '
        "packages { nodes { name } } specs { totalCount } } "
        'n: target(name: "zen9") { name } }'
    ) == {
        "data": {
            "targets": [
                {"name": "aarch64", "specCount": 65 + 30 + 11 + 39 + 38 + 34},
                {"name": "neoverse_v1", "specCount": 6},
                {"name": "neoverse_v2", "specCount": 9},
                {"name": "x86_64_v3", "specCount": 65 + 60 + 22 + 39 + 36},
            ],
            "t": {
                "name": "neoverse_v2",
                "packages": {"nodes": [{"name": "py-pdm-backend"}]},
                "specs": {"totalCount": 9},
            },
            "n": None,
        }
    }
