"""What the server loaded: its sources, the report of the load (its problems paged), and the
snapshot it started from -- the facts of an admin's status view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..sources.reader import LoadReport, Problem
from ..store.view import CacheGraph

_KEY = ("load status",)


@dataclass(frozen=True)
class LoadStatus:
    """How a graph was loaded: from which paths and mirrors, with what report, when."""

    report: LoadReport
    #: the pages, spec files and folders read
    paths: tuple[str, ...] = ()
    #: the snapshot file asked for ("" when none), and whether the graph came from it
    snapshot: str = ""
    from_snapshot: bool = False
    #: when the load finished (seconds since the epoch)
    finished: float = 0.0
    #: the bundled data, served because no data was given
    bundled: bool = False


def record_load(G: CacheGraph, status: LoadStatus) -> None:
    """Keep how ``G`` was loaded with it (the server does, once a load is done).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.
    status : LoadStatus
        The load's report and paths.

    Returns
    -------
    None
        Kept in ``G``'s memo.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> record_load(G, LoadStatus(LoadReport(mirrors=1), snapshot="/var/cg.snap"))
    >>> load_status(G).snapshot, load_status(G).from_snapshot
    ('/var/cg.snap', False)
    """
    G.memo[_KEY] = status


def load_status(G: CacheGraph) -> LoadStatus | None:
    """How ``G`` was loaded, when the server recorded it (None for a graph made elsewhere).

    Parameters
    ----------
    G : CacheGraph
        The loaded graph: its columnar store, and the memo its answers are kept in.

    Returns
    -------
    status : LoadStatus or None
        None for a graph the server did not load.

    Examples
    --------
    >>> from cachegraph.graph.store.example import example_graph
    >>> G = example_graph()
    >>> load_status(G) is None
    True
    >>> record_load(G, LoadStatus(LoadReport(pages=2), ("pages/",)))
    >>> load_status(G).report.pages, load_status(G).paths
    (2, ('pages/',))
    """
    return G.memo.get(_KEY)


def load_problems(
    report: LoadReport,
    severity: str | None = None,
    under: str | None = None,
    shown: Callable[[str], str] | None = None,
) -> list[Problem]:
    """The problems of a load, in their order: of one severity, under one path, when given
    (a path as ``shown`` shows it to the client, when given).

    Parameters
    ----------
    report : LoadReport
        A load's report.
    severity : str or None, optional
        Only ``error`` or ``warning`` problems; None: both.
    under : str or None, optional
        Only problems of this path or a path under it.
    shown : callable or None, optional
        A path as the client sees it (``paths.public_path``); ``under`` is compared with
        that. None: as the report has it.

    Returns
    -------
    problems : list of Problem
        In the report's order.

    Examples
    --------
    >>> report = LoadReport(problems=[Problem("m/index.json", "broken"),
    ...                               Problem("p.md", "odd", 3, "warning")])
    >>> [p.path for p in load_problems(report)], [p.path for p in load_problems(report, "error")]
    (['m/index.json', 'p.md'], ['m/index.json'])
    >>> [p.message for p in load_problems(report, under="m")]
    ['broken']
    >>> [p.message for p in load_problems(report, under="e4s", shown=lambda p: "e4s/" + p)]
    ['broken', 'odd']
    """
    return [
        p
        for p in report.problems
        if (severity is None or p.severity == severity)
        and (under is None or _under(shown(p.path) if shown else p.path, under))
    ]


def _under(path: str, folder: str) -> bool:
    folder = folder.rstrip("/")
    return path == folder or path.startswith(folder + "/")
