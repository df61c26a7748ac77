"""Build-cache data as a NetworkX graph, and the questions asked of it."""

from . import snapshot
from .loader import IndexSource, LoadReport, Problem, load
from .model import CacheGraph, SpecRecord

__all__ = ["CacheGraph", "IndexSource", "LoadReport", "Problem", "SpecRecord", "load", "snapshot"]
