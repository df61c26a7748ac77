"""``^dep`` checked lazily (``satisfies.Holders.test`` on a small block: a downward search
from each candidate) gives what the whole walk of dependents gives (``Holders.mask``), and a
first page of ``^dep`` equals the matching specs of the full walk, in order: on the real
mirrors and on synthetic mirrors whose DAGs are deep.

Both follow Spack's ``Spec._satisfies`` for ``^``: a dependency among the link and run
dependencies, transitively (``traverse_edges(deptype=("link", "run"))``), or a direct build
dependency. The meaning itself is tested against the raw files in test_satisfies.py; here
the two ways of computing it are compared, every spec of each graph, with a fresh and a
shared search state.
"""

from __future__ import annotations

import numpy as np
import pytest
from cachegraph.graph import load
from cachegraph.graph.questions import specs
from cachegraph.graph.sources.mirrors import mirrors_file
from cachegraph.graph.spack.constraints import parse
from cachegraph.graph.store import satisfies

from cachegraph.synthmirror import synthesize_mirrors
from tests.mirrors import load_shared


@pytest.fixture(scope="module")
def shared(shared_mirrors):
    return load_shared(shared_mirrors)[0]


@pytest.fixture(scope="module")
def deep(tmp_path_factory):
    out = tmp_path_factory.mktemp("deep-mirrors")
    synthesize_mirrors(out, 3_000, 2, 40)
    return load([], mirrors_file(out / "mirrors.yaml"))[0]


def depth(G) -> int:
    """The longest chain of dependencies, counted level by level (what the lazy path must
    not pay for)."""
    indptr, _ = G.store.deps
    remaining = np.diff(indptr).astype(np.int64)  # children not yet levelled, per spec
    parents_ptr, parents = G.store.rdeps
    frontier = np.flatnonzero(remaining == 0)
    levels = 0
    while frontier.size:
        levels += 1
        _, above = satisfies.walks.neighbours(parents_ptr, parents, frontier)
        np.subtract.at(remaining, above, 1)
        frontier = np.unique(above[remaining[above] == 0])
    return levels


def constraints(G, limit: int) -> list[str]:
    """``^name`` and ``^name@MAJOR:`` for the most depended-on packages."""
    store = G.store
    _, children = store.deps
    counts = np.bincount(store.codes["package"][children], minlength=len(store.names("package")))
    names = [store.names("package")[c] for c in np.argsort(-counts)[:limit] if counts[c]]
    found = []
    for name in names:
        version = G.records(np.asarray(store.ranks("package", name)[:1], np.int64))
        major = next(iter(version)).version.split(".")[0]
        found += [f"^{name}", f"^{name}@{major}:", f"^{name}@:{major}"]
    return found


def lazy_equals_walk(G, text: str) -> None:
    node = parse(text).transitive[0]
    want = satisfies.holding(G, node).mask
    shared_state = satisfies.holding(G, node)
    for start in range(0, G.store.n, 51):
        block = np.arange(start, min(start + 51, G.store.n))
        assert shared_state.test(block).tolist() == want[block].tolist(), (text, start)
        assert satisfies.holding(G, node).test(block).tolist() == want[block].tolist()
    assert shared_state._mask is None or shared_state._visits > satisfies.LAZY_VISITS


def first_page_equals_walk(G, text: str) -> None:
    node = parse(text).transitive[0]
    want = np.flatnonzero(satisfies.holding(G, node).mask)[:51]
    selection = specs.select_specs(G, specs.SpecQuery(satisfies=text))
    page = [r.hash for _, r in zip(range(51), selection.after(None), strict=False)]
    assert page == [r.hash for r in G.records(want)]
    assert selection.count() == int(satisfies.holding(G, node).count)


def test_the_lazy_check_equals_the_walk_on_the_real_mirrors(shared):
    asked = constraints(shared, 8)
    assert asked, "the shared mirrors hold DAGs"
    for text in asked:
        lazy_equals_walk(shared, text)
        first_page_equals_walk(shared, text)


def test_the_lazy_check_equals_the_walk_on_deep_dags(deep):
    assert depth(deep) > 20, "the synthetic DAGs are deep (21 levels at 3,000 specs)"
    for text in constraints(deep, 6):
        lazy_equals_walk(deep, text)
        first_page_equals_walk(deep, text)
