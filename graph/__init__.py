"""Build-cache data as a NetworkX graph, and the questions asked of it."""

from . import snapshot
from .loader import IndexSource, LoadReport, MirrorSource, Problem, load
from .model import CacheGraph, SpecRecord

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
