"""Adding a spec attribute is one row of ``graph.attributes.ATTRIBUTES`` and its reader
functions (issue 39): a copy of the package is given one more row, ``arch_family`` (the
archspec family of the spec's target), and nothing else; the copy's schema, filters,
facets, orderings, spec strings and the CLI's output then have it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import archspec.cpu
import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # starts processes: the copy's CLI

#: the reader function, placed before the table
READER = '''
def _family(target: str) -> str:
    """The archspec family of a target (x86_64 for zen2), or the target when archspec has none."""
    known = archspec.cpu.TARGETS.get(target)
    return known.family.name if known else target


'''
#: the one row, placed last in the table
ROW = """    Attribute(
        "arch_family",
        page=lambda r: _family(text(r, "target")),
        node=lambda n: _family(_arch(n, "target")),
        shown=" family={}".format,
        weight=None,
        place=3.5,
        doc="The archspec family of the target.",
        facet="Target families.",
        plural="arch_families",
        ordered=True,
        searched=True,
    ),
"""
TABLE_END = "\n)\n\n#: The attributes a spec has one value of"
DECLARATION = "# -- the declaration"


def _family(target: str) -> str:
    known = archspec.cpu.TARGETS.get(target)
    return known.family.name if known else target


@pytest.fixture(scope="module")
def added(tmp_path_factory) -> Path:
    """The package laid out as installed (cachegraph/, with graph/, schema/, seeds/ in it),
    its attribute table given one more row."""
    root = tmp_path_factory.mktemp("added")
    package = root / "cachegraph"
    ignore = shutil.ignore_patterns("__pycache__", "static")
    shutil.copytree(ROOT / "cachegraph", package, ignore=ignore)
    for folder in ("graph", "schema", "seeds"):
        shutil.copytree(ROOT / folder, package / folder, ignore=ignore)
    table = package / "graph" / "attributes.py"
    source = table.read_text()
    assert source.count(TABLE_END) == source.count(DECLARATION) == 1
    source = source.replace(DECLARATION, READER + DECLARATION)
    source = source.replace(TABLE_END, "\n" + ROW.rstrip("\n") + TABLE_END)
    table.write_text(source.replace("import re\n", "import re\n\nimport archspec.cpu\n", 1))
    return root


def _cli(added: Path, *args: str) -> str:
    """The copy's CLI: its own modules first on the path, through the environment."""
    env = {**os.environ, "PYTHONPATH": str(added), "CACHEGRAPH_LOG_LEVEL": "error"}
    code = "import sys; from cachegraph.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=added, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_copy_is_the_one_imported(added):
    env = {**os.environ, "PYTHONPATH": str(added)}
    code = "import cachegraph.graph.attributes as a; print(a.__file__)"
    done = subprocess.run([sys.executable, "-c", code], cwd=added, env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    assert Path(done.stdout.strip()) == added / "cachegraph" / "graph" / "attributes.py"


def test_the_schema_has_it(added):
    schema = _cli(added, "export-schema")
    blocks = {block.split(" {")[0]: block for block in schema.split("\n}\n")}

    def block(name: str) -> str:
        return next(b for head, b in blocks.items() if head.strip().endswith(name))

    assert "archFamily: String!" in block("type Spec implements Node")
    assert "archFamily: String = null" in block("input SpecFilter")
    assert "archFamilies(" in block("type Facets")
    assert "Target families." in block("type Facets")
    assert "ARCH_FAMILY" in block("enum SpecOrderField")
    assert (ROOT / "schema.graphql").read_text() != schema + "\n"  # the real one has it not


SPECS = """{ specs(first: 1000) { totalCount nodes { hash archFamily specString
  target { name } } } }"""


def test_each_spec_has_it_in_its_fields_and_spec_string(added):
    specs = json.loads(_cli(added, "query", SPECS))["data"]["specs"]
    nodes = specs["nodes"]
    assert 100 < len(nodes) == specs["totalCount"]  # every spec, on one page
    for node in nodes:
        family = _family(node["target"]["name"])
        assert node["archFamily"] == family
        assert node["specString"].endswith(f" family={family}")


def test_filters_facets_and_orderings_have_it(added):
    nodes = json.loads(_cli(added, "query", SPECS))["data"]["specs"]["nodes"]
    families = Counter(_family(n["target"]["name"]) for n in nodes)
    assert len(families) >= 2
    query = """{ facets { archFamilies { value count } }
      aarch64: specs(filter: {archFamily: "aarch64"}) { totalCount }
      ordered: specs(first: 1000, orderBy: [{field: ARCH_FAMILY, direction: DESC}]) {
        nodes { archFamily } } }"""
    data = json.loads(_cli(added, "query", query))["data"]
    assert data["facets"]["archFamilies"] == [
        {"value": v, "count": n} for v, n in sorted(families.items(), key=lambda i: (-i[1], i[0]))
    ]
    assert data["aarch64"]["totalCount"] == families["aarch64"]
    ordered = [n["archFamily"] for n in data["ordered"]["nodes"]]
    assert ordered == sorted(ordered, reverse=True) and len(ordered) == len(nodes)


def test_the_cli_prints_it(added):
    records = json.loads(_cli(added, "find", "zlib", "--json"))
    assert records
    for record in records:
        assert record["arch_family"] == _family(record["target"])
        assert list(record)[: list(record).index("variants")][-1] == "arch_family"


@pytest.mark.parametrize("kind", [(), ("--mirror",)], ids=["pages", "mirrors"])
def test_generated_data_has_it(added, tmp_path, kind):
    out = tmp_path / "made"
    _cli(added, "synth", str(out), "--specs", "60", *kind)
    data = ["--mirrors-file", str(out / "mirrors.yaml")] if kind else ["--data", str(out)]
    query = "{ specs(first: 1000) { totalCount nodes { archFamily target { name } } } }"
    specs = json.loads(_cli(added, "query", query, *data))["data"]["specs"]
    assert 60 <= specs["totalCount"] == len(specs["nodes"])
    assert all(n["archFamily"] == _family(n["target"]["name"]) for n in specs["nodes"])


def test_the_example_graph_and_the_networkx_view_have_it(added):
    """The docstrings' example graph gives it, and each value is a node of the graph with an
    edge from each spec that has it."""
    code = """if True:
        import json
        from cachegraph.graph.store.example import example_graph
        G = example_graph()
        specs = list(G.all_specs())
        print(json.dumps({
            "specs": [(s.hash, s.target, s.arch_family) for s in specs],
            "succ": {s.hash: [v for k, v in G.succ["spec", s.hash] if k == "arch_family"]
                     for s in specs},
            "pred": {v: sorted(h for _, h in G.pred["arch_family", v])
                     for v in {s.arch_family for s in specs}},
        }))"""
    env = {**os.environ, "PYTHONPATH": str(added)}
    done = subprocess.run([sys.executable, "-c", code], cwd=added, env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    found = json.loads(done.stdout)
    assert {family for _, _, family in found["specs"]} == {"x86_64"}
    assert all(family == _family(target) for _, target, family in found["specs"])
    assert found["succ"] == {hash: [family] for hash, _, family in found["specs"]}
    assert found["pred"] == {"x86_64": sorted(hash for hash, _, _ in found["specs"])}
