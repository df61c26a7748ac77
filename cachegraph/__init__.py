"""Spack Cache Graph: a GraphQL server over Spack's binary build caches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app
    from .settings import Settings
    from .state import DataSources

__all__ = ["DataSources", "Settings", "create_app"]
_HOMES = {"create_app": "app", "Settings": "settings", "DataSources": "state"}


def __getattr__(name: str) -> Any:
    # Imported when first asked for: ``cachegraph.graph`` (a loading process, a script)
    # does not need the server's modules, which take most of a second to import.
    if name in _HOMES:
        from importlib import import_module

        return getattr(import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
