"""Spack Cache Graph: a GraphQL server over Spack's binary build caches."""

from .app import create_app
from .settings import Settings
from .state import DataSources

__all__ = ["DataSources", "Settings", "create_app"]
