"""The walks over dependency rows (``graph.store.walks``), each answer equal to a plain-Python
breadth-first search over the same edges: on the real mirrors, every spec each way and
deptype, and on a deep synthetic DAG (a chain of 2,000 with branches)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from cachegraph.graph.store import levels, walks

from tests.mirrors import load_shared


def plain(children: dict[int, list[tuple[int, int]]], start: int, bits: int | None) -> set[int]:
    """Every node reached from ``start`` through one edge or more whose bits meet ``bits``."""
    found, todo = set(), [start]
    while todo:
        for child, kind in children.get(todo.pop(), ()):
            if (bits is None or kind & bits) and child not in found:
                found.add(child)
                todo.append(child)
    return found


@pytest.fixture(scope="module")
def store(shared_mirrors):
    return load_shared(shared_mirrors)[0].store


@pytest.mark.parametrize("up", [False, True])
@pytest.mark.parametrize("deptype", [None, "build", "link", "run"])
def test_reached_on_the_real_mirrors_equals_a_plain_search(store, up, deptype):
    down: dict[int, list] = {}
    upward: dict[int, list] = {}
    for rank in range(store.n):
        children, types, _ = store.edges(rank)
        for child, kind in zip(children.tolist(), types.tolist(), strict=True):
            down.setdefault(rank, []).append((child, kind))
            upward.setdefault(child, []).append((rank, kind))
    assert down, "the shared mirrors hold DAGs"
    bits = None if deptype is None else store.deptype_mask((deptype,))
    for rank in range(store.n):
        found = walks.reached(store, [rank], up=up, deptypes=bits)
        want = plain(upward if up else down, rank, bits)
        assert set(np.flatnonzero(found).tolist()) == want


def test_reached_mask_on_a_deep_dag_equals_a_plain_search():
    rng = random.Random(40)
    n = 2_600
    edges = [(i, i + 1, 1 + (i % 3 == 0) * 2) for i in range(1_999)]  # the chain, deptypes 1/3
    edges += [
        (rng.randrange(n), rng.randrange(2_000, n), rng.choice((1, 2, 4))) for _ in range(3_000)
    ]
    edges += [(rng.randrange(2_000), rng.randrange(2_000), 2) for _ in range(500)]
    edges = sorted({(a, b): t for a, b, t in edges if a != b}.items())
    parents = np.array([a for (a, _), _ in edges])
    indices = np.array([b for (_, b), _ in edges])
    kinds = np.array([t for _, t in edges])
    indptr = np.concatenate([[0], np.cumsum(np.bincount(parents, minlength=n))])
    children: dict[int, list] = {}
    for (a, b), t in edges:
        children.setdefault(a, []).append((b, t))
    for start in (0, 1, 500, 1_998, 2_100):
        for bits in (None, 1, 2, 4):
            keep = None if bits is None else (lambda p, b=bits: (kinds[p] & b) > 0)
            found = walks.reached_mask(indptr, indices, [start], keep)
            assert set(np.flatnonzero(found).tolist()) == plain(children, start, bits)


# -- reached_far: the first levels in numpy, the rest by scipy's breadth-first search -------


@pytest.mark.parametrize("budget", [0, 30, None])
def test_reached_far_on_the_real_mirrors_equals_a_plain_search(store, budget):
    """The link/run dependents ``^`` walks up (``Store.linked_dependents``), from every spec,
    with the search taking over after one level, a few edges, or the default budget."""
    upward: dict[int, list] = {}
    for rank in range(store.n):
        children, types, _ = store.edges(rank)
        for child, kind in zip(children.tolist(), types.tolist(), strict=True):
            upward.setdefault(child, []).append((rank, kind))
    bits = store.deptype_mask(("link", "run"))
    indptr, indices = store.linked_dependents  # numbered by level: up_row, ranked
    levelled = store.up_levelled
    for rank in range(store.n):
        rows = store.up_row[[rank]]
        for found in (walks.reached_far(indptr, indices, rows, budget),
                      walks.reached_far(indptr, indices, rows, budget, levelled)):  # fmt: skip
            found = store.ranked(found)
            assert set(np.flatnonzero(found).tolist()) == plain(upward, rank, bits)
    everything = np.arange(store.n)
    found = store.ranked(walks.reached_far(indptr, indices, everything, budget, levelled))
    want = set().union(*(plain(upward, r, bits) for r in range(store.n)))
    assert set(np.flatnonzero(found).tolist()) == want


def test_reached_far_on_a_deep_dag_equals_a_plain_search():
    """A chain of 2,000 with branches and cycles among its first nodes: the search takes the
    walk over after one level, a few, many, or never (walked in numpy to its end)."""
    rng = random.Random(41)
    n = 2_600
    edges = {(i, i + 1): 1 + (i % 3 == 0) * 2 for i in range(1_999)}
    edges |= {
        (rng.randrange(n), rng.randrange(2_000, n)): rng.choice((1, 2, 4)) for _ in range(3_000)
    }
    edges |= {(rng.randrange(2_000), rng.randrange(2_000)): 2 for _ in range(500)}
    edges = {k: t for k, t in sorted(edges.items()) if k[0] != k[1]}
    parents = np.array([a for a, _ in edges])
    indices = np.array([b for _, b in edges])
    kinds = np.array(list(edges.values()))
    children: dict[int, list] = {}
    for (a, b), t in edges.items():
        children.setdefault(a, []).append((b, t))
    cycled = []
    for bits in (None, 2, 6):
        # the table of the edges of those bits only, as Store.linked_dependents is
        kept = np.ones(len(kinds), bool) if bits is None else (kinds & bits) > 0
        ptr = np.concatenate([[0], np.cumsum(np.bincount(parents[kept], minlength=n))])
        for starts in ([0], [1], [500, 1_998], [2_100], list(range(0, n, 97))):
            want = set().union(*(plain(children, s, bits) for s in starts))
            for budget in (0, 20, 5_000, None, 10**9):
                found = walks.reached_far(ptr, indices[kept], starts, budget)
                assert set(np.flatnonzero(found).tolist()) == want, (starts, bits, budget)
        # numbered by level (its cycles last), as Store.rdeps is: the search copies less
        order, levelled = levels.upward_order(parents[kept], indices[kept], n)
        cycled.append(levelled < n)
        at = levels.inverse(order)
        rows, up = at[parents[kept]], at[indices[kept]]
        by_row = np.lexsort((up, rows))
        ptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
        for starts in ([0], [1], [500, 1_998], [2_100], list(range(0, n, 97))):
            want = set().union(*(plain(children, s, bits) for s in starts))
            for budget in (0, 20, 5_000, None):
                found = walks.reached_far(ptr, up[by_row], at[starts], budget, levelled)
                assert set(order[np.flatnonzero(found)].tolist()) == want, (starts, bits, budget)
    assert any(cycled)  # the search also starts among specs left unlevelled by a cycle


# -- the dependents' table numbered by level (graph.store.levels) ---------------------------


def test_the_dependents_table_puts_every_spec_after_its_link_run_dependencies(store):
    """``rdeps`` numbers specs by level: each link/run parent after its child, the two
    numberings each other's inverse, and a spec's parents (``in_edges``) the edges naming
    it as a child (``edges``), read back in ranks."""
    assert sorted(store.up_rank.tolist()) == list(range(store.n))
    assert store.up_levelled == store.n  # no cycle among the real mirrors' link/run edges
    assert (store.up_rank[store.up_row] == np.arange(store.n)).all()
    bits = store.deptype_mask(("link", "run"))
    want: dict[int, list] = {}
    linked = 0
    for rank in range(store.n):
        children, types, virtuals = store.edges(rank)
        for child, kind, virtual in zip(children.tolist(), types.tolist(), virtuals.tolist(),
                                        strict=True):  # fmt: skip
            want.setdefault(child, []).append((rank, kind, virtual))
            if kind & bits:
                linked += 1
                assert store.up_row[rank] > store.up_row[child]
    assert linked, "the shared mirrors hold link/run edges"
    for rank in range(store.n):
        parents, types, virtuals = store.in_edges(rank)
        got = list(zip(parents.tolist(), types.tolist(), virtuals.tolist(), strict=True))
        assert got == sorted(want.get(rank, []))


def test_upward_order_on_a_random_graph_with_cycles():
    """Every spec once; a spec off every cycle after all its dependencies, by longest path
    then rank; the specs on or above a cycle last, by rank."""
    rng = random.Random(9)
    n = 3_000
    edges = {(rng.randrange(n), rng.randrange(n)) for _ in range(9_000)}  # (child, parent)
    edges = {(c, p) for c, p in edges if c < p}  # a DAG...
    edges |= {(2_900, 2_950), (2_950, 2_900), (2_950, 2_990)}  # ...but for a cycle near the top
    child = np.array([c for c, _ in edges])
    parent = np.array([p for _, p in edges])
    order, levelled = levels.upward_order(child, parent, n)
    order = order.tolist()
    assert sorted(order) == list(range(n))
    below: dict[int, set] = {}
    for c, p in edges:
        below.setdefault(p, set()).add(c)
    level: dict[int, int | None] = {}

    def depth(spec: int, seen: frozenset = frozenset()) -> int | None:
        if spec in seen:
            return None
        if spec not in level:
            found = [depth(c, seen | {spec}) for c in below.get(spec, ())]
            level[spec] = None if None in found else max(found, default=-1) + 1
        return level[spec]

    for spec in range(n):
        depth(spec)
    cycled = sorted(s for s in range(n) if level[s] is None)
    assert {2_900, 2_950, 2_990} <= set(cycled)
    ordered = sorted((level[s], s) for s in range(n) if level[s] is not None)
    assert order == [s for _, s in ordered] + cycled
    assert levelled == len(ordered)
