"""Dependencies from real spec files: Spec.dependencies/dependents, Package.dependencies/
dependents and Query.dependencyPath."""

from __future__ import annotations

import pytest

from tests.conftest import execute
from tests.rawpages import spec_file_nodes

ADIAK = "xki2324ffw7w7mcd2kyrbvmfz2mq7k2r"  # adiak/spec-0.json: adiak -> mpich -> libxml2 -> ...


def test_spec_dependencies_are_exactly_those_of_the_spec_file(data_graph, shared_data):
    for node in spec_file_nodes(shared_data):
        result = execute(
            data_graph,
            "query($h: String!) { spec(hash: $h) { dependencies { hash } } }",
            {"h": node["hash"]},
        )
        expected = sorted(d["hash"] for d in node.get("dependencies", []))
        assert sorted(d["hash"] for d in result["data"]["spec"]["dependencies"]) == expected


def test_dependencies_and_dependents_of_one_spec(data_graph):
    assert execute(
        data_graph,
        """{ spec(hash: "a5l2lj7") { package { name }
        dependencies { package { name } version } dependents { package { name } }
        link: dependencies(deptype: "link") { hash } run: dependencies(deptype: "run") { hash }
      } }""",
    ) == {
        "data": {
            "spec": {
                "package": {"name": "libxml2"},
                "dependencies": [
                    {"package": {"name": "libiconv"}, "version": "1.16"},
                    {"package": {"name": "xz"}, "version": "5.2.5"},
                    {"package": {"name": "zlib"}, "version": "1.2.11"},
                ],
                "dependents": [{"package": {"name": "mpich"}}],
                "link": [
                    {"hash": "w6zptbclncs3jsnl3i4qtg72fgheiwdf"},
                    {"hash": "kamfyq4jqy3je7qoimrp2tgs6gqswzcf"},
                    {"hash": "p7dmb5pqi6svirhovljrkp3uyfiytz3m"},
                ],
                "run": [],
            }
        }
    }


def test_an_unknown_deptype_is_an_error(data_graph):
    assert execute(
        data_graph, f'{{ spec(hash: "{ADIAK}") {{ dependencies(deptype: "lnk") {{ hash }} }} }}'
    ) == {
        "data": {"spec": None},
        "errors": ["unknown deptype 'lnk'; use one of build, link, run, test"],
    }


def test_package_dependencies_and_dependents(data_graph):
    assert execute(
        data_graph, '{ package(name: "mpich") { dependencies { name } dependents { name } } }'
    ) == {
        "data": {
            "package": {
                "dependencies": [{"name": "libpciaccess"}, {"name": "libxml2"}],
                "dependents": [{"name": "adiak"}],
            }
        }
    }


@pytest.mark.parametrize(
    ("source", "target", "path"),
    [
        (ADIAK, "p7dmb5p", ["adiak", "mpich", "libxml2", "zlib"]),
        (ADIAK, ADIAK, ["adiak"]),
        ("p7dmb5p", ADIAK, None),  # dependencies point one way
        (ADIAK, "22xqlommzzzz", None),  # no such spec
    ],
)
def test_dependency_path(data_graph, source, target, path):
    result = execute(
        data_graph,
        "query($f: String!, $t: String!) { dependencyPath(from: $f, to: $t) { package { name } } }",
        {"f": source, "t": target},
    )
    expected = None if path is None else [{"package": {"name": n}} for n in path]
    assert result == {"data": {"dependencyPath": expected}}


def test_seeds_have_no_dependencies(run):
    assert run('{ spec(hash: "22xqlom") { dependencies { hash } dependents { hash } } }') == {
        "data": {"spec": {"dependencies": [], "dependents": []}}
    }


def test_dependency_edges_say_how_each_dependency_is_needed(data_graph):
    # libxml2 a5l2lj7's spec file (format 2): libiconv, xz and zlib, each build and link; no
    # virtuals recorded, labelled as Spack's SpecfileV2.load does (reconstruct_virtuals_on_edges:
    # libxml2 depends on iconv and zlib-api, libiconv and zlib provide them).
    edges = execute(
        data_graph,
        '{ spec(hash: "a5l2lj7") { dependencyEdges { deptypes virtuals spec { hash } } } }',
    )["data"]["spec"]["dependencyEdges"]
    both = ["build", "link"]
    assert edges == [
        {
            "deptypes": both,
            "virtuals": ["iconv"],
            "spec": {"hash": "w6zptbclncs3jsnl3i4qtg72fgheiwdf"},
        },
        {"deptypes": both, "virtuals": [], "spec": {"hash": "kamfyq4jqy3je7qoimrp2tgs6gqswzcf"}},
        {
            "deptypes": both,
            "virtuals": ["zlib-api"],
            "spec": {"hash": "p7dmb5pqi6svirhovljrkp3uyfiytz3m"},
        },
    ]


def test_dependency_edges_are_those_of_the_spec_files(data_graph, shared_data):
    for node in spec_file_nodes(shared_data):
        found = execute(
            data_graph,
            "query($h: String!) { spec(hash: $h) { dependencyEdges { deptypes spec { hash } } } }",
            {"h": node["hash"]},
        )["data"]["spec"]["dependencyEdges"]
        expected: dict[str, set[str]] = {}
        for dep in node.get("dependencies", []):
            types = dep.get("type") or dep.get("parameters", {}).get("deptypes", [])
            expected.setdefault(dep["hash"], set()).update(
                [types] if isinstance(types, str) else types
            )
        assert sorted((e["spec"]["hash"], e["deptypes"]) for e in found) == sorted(
            (h, sorted(t)) for h, t in expected.items()
        )
