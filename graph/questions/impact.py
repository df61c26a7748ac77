"""What a change would reach: the cached specs whose DAG holds a node satisfying a constraint."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..errors import BadArgument
from ..spack.constraints import parse
from ..store.satisfies import holding, unknown_names, unknown_value
from ..store.view import CacheGraph
from .counts import counts_in


@dataclass(frozen=True)
class Impact:
    #: ranks of the specs reached, in spec order
    ranks: np.ndarray
    packages: list[tuple[str, int]]
    stacks: list[tuple[str, int]]
    warnings: tuple[str, ...] = ()


def impact(G: CacheGraph, text: str, tag: str | None = None) -> Impact:
    """Every spec (in the tag) with a node satisfying ``text`` among its dependencies as
    Spack's ``^text`` finds it (its link and run dependencies, transitively, and its own
    build dependencies: what links against it or was built with it), not the node itself,
    counted by package and by stack. A name nothing loaded has reaches nothing, and a
    warning says so.

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    text : str
        A Spack constraint (``zlib@1.3 +pic``).
    tag : str or None, optional
        Only the specs in this tag; None: every tag.

    Returns
    -------
    impact : Impact
        The ranks of the specs reached (in spec order), their counts by package and by
        stack, and the warnings.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> found = impact(example_graph(), "gcc")
    >>> found.ranks.tolist(), found.packages, found.stacks
    ([2, 4], [('hdf5', 1), ('zlib', 1)], [('e4s', 2), ('ml', 1)])
    """
    constraint = parse(text)
    if constraint.transitive:
        raise BadArgument("impact takes the constraint of one node, e.g. 'openssl@3.0:3.0.99'")
    # Kept within the graph's byte budget: the dependents of a library every spec links
    # are a walk over every edge, and a dashboard asks the same impact again and again.
    found = G.kept(("impact", text, tag), lambda: _impact(G, constraint, tag))
    unknown = unknown_names(G, constraint.root)
    if tag is not None and (missing := unknown_value(G, "tag", tag)) is not None:
        unknown.append(missing)
    if unknown:
        found = Impact(found.ranks, found.packages, found.stacks, (*unknown, *found.warnings))
    return found


def _impact(G: CacheGraph, constraint, tag: str | None) -> Impact:
    store = G.store
    warnings = () if store.edge_count else (
        "the loaded data has no dependency DAGs: nothing is reached",)  # fmt: skip
    holders = holding(G, constraint.root)
    ranks = holders.ranks()
    if tag is not None:
        in_tag = np.asarray(store.ranks("tag", tag), np.int64)
        ranks = in_tag[holders.mask[in_tag]]
    counts = counts_in(G, ranks, ("package", "stack"), tag)
    return Impact(ranks, _ranked(counts["package"]), _ranked(counts["stack"]), warnings)


def _ranked(counts: Counter) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
