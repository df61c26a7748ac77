"""The graph is made through NetworkX's factory hooks: this NetworkX must still ask them in the
order CacheDiGraph hands its dicts out (successors, then predecessors)."""

from __future__ import annotations

import networkx as nx
from cachegraph.graph.model import CacheDiGraph


def test_prebuilt_dicts_become_the_graph_in_the_order_networkx_asks_for_them():
    edge = {"kind": "depends_on"}
    nodes = {"a": {}, "b": {"x": 1}}
    g = CacheDiGraph(nodes, {"a": {"b": edge}, "b": {}}, {"a": {}, "b": {"a": edge}})
    assert (list(g.successors("a")), list(g.predecessors("b"))) == (["b"], ["a"])
    assert list(g.successors("b")) == list(g.predecessors("a")) == []
    assert g.nodes["b"] == {"x": 1} and g.edges["a", "b"] is edge
    assert nx.descendants(g, "a") == {"b"} and nx.ancestors(g, "b") == {"a"}


def test_made_without_dicts_it_is_a_plain_digraph():
    g = CacheDiGraph()
    g.add_edge(1, 2, kind="x")
    assert (list(g.edges(data=True)), type(g.copy()) is CacheDiGraph) == (
        [(1, 2, {"kind": "x"})],
        True,
    )
