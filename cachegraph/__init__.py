"""Spack Cache Graph: a GraphQL server over Spack's binary build caches."""

from .app import DataSources, create_app

__all__ = ["DataSources", "create_app"]
