"""The Node interface and its global ids: ``base64("Type:key")``."""

from __future__ import annotations

import base64
import binascii

import strawberry
from cachegraph.graph.errors import BadArgument


@strawberry.interface(description="An object with a global id, fetched again by node(id:).")
class Node:
    id: strawberry.ID


def global_id(type_name: str, key: str) -> strawberry.ID:
    return strawberry.ID(base64.urlsafe_b64encode(f"{type_name}:{key}".encode()).decode())


def parse_global_id(value: str) -> tuple[str, str]:
    """(type name, key) of a global id; BadArgument when it is not one."""
    try:
        text = base64.urlsafe_b64decode(value.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        text = ""
    type_name, sep, key = text.partition(":")
    if not (sep and type_name.isalpha() and key):
        raise BadArgument(f"{value[:60]!r} is not an id this server issued")
    return type_name, key
