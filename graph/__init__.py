"""Build-cache data held in one columnar store, seen as a NetworkX graph, and the questions
asked of it: ``store`` (the data), ``sources`` (reading it), ``spack`` (Spack's rules) and
``questions`` (one module per answer)."""

from . import snapshot
from .sources.loader import IndexSource, LoadReport, MirrorSource, Problem, load
from .store.records import SpecRecord
from .store.view import CacheGraph

__all__ = [
    "CacheGraph",
    "IndexSource",
    "LoadReport",
    "MirrorSource",
    "Problem",
    "SpecRecord",
    "load",
    "snapshot",
]
