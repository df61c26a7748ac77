"""The GraphQL schema: Strawberry types and thin resolvers over graph/."""

from .query import build_schema

schema = build_schema()

__all__ = ["build_schema", "schema"]
