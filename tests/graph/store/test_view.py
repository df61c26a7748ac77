"""The NetworkX graph is a view over the store: NetworkX's own algorithms answer on it as on an
eager ``nx.DiGraph`` of the same real mirror and pages, built here from the raw files; and
writing to it raises NetworkX's frozen-graph error and changes nothing."""

from __future__ import annotations

import networkx as nx
import pytest
from cachegraph.graph import MirrorSource, load

from tests.conftest import SEEDS
from tests.graph.sources.test_mirrors import expected_compiler, expected_dependencies
from tests.mirrors import raw_index
from tests.rawpages import normalized, raw_pages

TAG, STACK, MIRROR = "site", "e4s", "site/e4s"


@pytest.fixture(scope="module")
def graphs(shared_mirrors):
    """(the view, an eager DiGraph made from the same files without the project's code)."""
    cache = shared_mirrors / "v2_layout" / "unsigned"
    view, report = load([SEEDS], [MirrorSource(TAG, STACK, cache)], processes=1)
    assert report.ok
    return view, eager(cache / "build_cache")


def _target(node: dict) -> str:
    target = node["arch"]["target"]
    return target["name"] if isinstance(target, dict) else target


def eager(cache) -> nx.DiGraph:
    g = nx.DiGraph()

    def attributes(spec, package, compiler, target, os, platform):
        g.add_edge(spec, ("package", package), kind="package")
        if compiler:
            g.add_edge(spec, ("compiler", compiler), kind="compiler")
        g.add_edge(spec, ("target", target), kind="target")
        g.add_edge(spec, ("os", os), kind="os")
        g.add_edge(spec, ("platform", platform), kind="platform")

    layouts: dict = {}
    for page in raw_pages(SEEDS):
        for r in page.records:
            spec = ("spec", r["hash"])
            attributes(spec, page.package, normalized(r["compiler"]), r["target"], r["os"],
                       r["platform"])  # fmt: skip
            layouts.setdefault(spec, {}).setdefault(page.tag, set()).update(r["stacks"])
    installs = raw_index(cache)
    nodes = {h: e["spec"] for h, e in installs.items()}
    for hash, entry in installs.items():
        node, spec = entry["spec"], ("spec", hash)
        attributes(spec, node["name"], expected_compiler(node, nodes), _target(node),
                   node["arch"]["platform_os"], node["arch"]["platform"])  # fmt: skip
        for child, deptypes, virtuals in expected_dependencies(node):
            g.add_edge(spec, ("spec", child), kind="depends_on", deptypes=deptypes,
                       virtuals=virtuals)  # fmt: skip
        if entry.get("in_buildcache", True):
            layouts.setdefault(spec, {}).setdefault(TAG, set()).add(STACK)
            g.add_edge(spec, ("mirror", MIRROR), kind="mirror")
    for spec, layout in layouts.items():
        for tag, stacks in layout.items():
            g.add_edge(spec, ("tag", tag), kind="tag")
            for stack in stacks:
                held = frozenset(t for t, s in layout.items() if stack in s)
                g.add_edge(spec, ("stack", stack), kind="stack", tags=held)
    g.add_edge(("mirror", MIRROR), ("tag", TAG), kind="tag")
    g.add_edge(("mirror", MIRROR), ("stack", STACK), kind="stack", tags=frozenset({TAG}))
    return g


def test_the_view_has_the_nodes_and_edges_of_the_files(graphs):
    view, g = graphs
    assert sorted(view.nodes) == sorted(g.nodes)
    assert len(view) == len(g) and view.number_of_edges() == g.number_of_edges()
    assert sorted(view.edges(data=True), key=str) == sorted(g.edges(data=True), key=str)
    assert {n: dict(view.pred[n]) for n in g} == {n: dict(g.pred[n]) for n in g}


def _spec_nodes(g) -> list:
    return sorted(n for n in g if n[0] == "spec")


def test_networkx_algorithms_answer_on_the_view_as_on_the_eager_graph(graphs):
    view, g = graphs
    with_dags = [n for n in _spec_nodes(g) if any(c[0] == "spec" for c in g.succ[n])]
    assert with_dags
    for spec in _spec_nodes(g):
        assert nx.descendants(view, spec) == nx.descendants(g, spec), spec
        assert nx.ancestors(view, spec) == nx.ancestors(g, spec), spec
    for spec in with_dags:
        dag = {spec} | {n for n in nx.descendants(g, spec) if n[0] == "spec"}
        for other in sorted(dag):
            assert nx.shortest_path_length(view, spec, other) == nx.shortest_path_length(
                g, spec, other
            )
        ours, theirs = view.subgraph(dag), g.subgraph(dag)
        assert sorted(nx.transitive_reduction(ours).edges) == sorted(
            nx.transitive_reduction(theirs).edges
        )
        order = list(nx.topological_sort(ours))
        assert sorted(order) == sorted(dag)
        assert all(order.index(a) < order.index(b) for a, b in theirs.edges)


def test_writing_to_the_view_raises_and_changes_nothing(graphs):
    view, _ = graphs
    spec = _spec_nodes(view)[0]
    before = (sorted(view.nodes), sorted(view.edges(data=True), key=str), dict(view.nodes[spec]))
    package = next(n for n in view.succ[spec] if n[0] == "package")
    writes = [
        lambda: view.add_edge(spec, ("package", "x")),
        lambda: view.add_node(("package", "x")),
        lambda: view.remove_node(spec),
        lambda: view.remove_edge(spec, package),
        lambda: view.nodes[package].update(x=1),
        lambda: view.nodes[spec].__setitem__("x", 1),
        lambda: view.edges[spec, package].__setitem__("kind", "x"),
        lambda: view.succ[spec][package].clear(),
        lambda: view.graph.__setitem__("x", 1),
    ]
    for write in writes:
        with pytest.raises(nx.NetworkXError, match="Frozen graph can't be modified"):
            write()
    after = (sorted(view.nodes), sorted(view.edges(data=True), key=str), dict(view.nodes[spec]))
    assert after == before
    assert list(view.succ[package]) == []  # no phantom successor
