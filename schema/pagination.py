"""Relay-style connections: opaque cursors, ``first`` limits and page slicing."""

from __future__ import annotations

import base64
import binascii
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import strawberry
from cachegraph.graph.errors import BadArgument

from .cost import PAGE, cost

MAX_FIRST = 1000
DEFAULT_FIRST = 50
_CURSOR_PREFIX = "cg1:"

T = TypeVar("T")


def encode_cursor(kind: str, key: str) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{kind}:{key}".encode()).decode()


def decode_cursor(kind: str, cursor: str | None) -> str | None:
    """The key inside a cursor of this kind; BadArgument for anything else."""
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode()
    except (binascii.Error, UnicodeError, ValueError):
        text = ""
    found_kind, _, key = text.removeprefix(_CURSOR_PREFIX).partition(":")
    if not text.startswith(_CURSOR_PREFIX) or not key:
        raise BadArgument(
            f"'after' is not a cursor this server issued: {cursor[:40]!r}; "
            "pass the endCursor or an edge cursor of a previous page"
        )
    if found_kind != kind:
        raise BadArgument(f"'after' is a cursor of a {found_kind[:40]} list, not of a {kind} list")
    return key


def check_first(first: int | None) -> int:
    """``first`` as given, or the default when null; BadArgument outside 0..1000."""
    if first is None:
        return DEFAULT_FIRST
    if not 0 <= first <= MAX_FIRST:
        raise BadArgument(f"'first' must be between 0 and {MAX_FIRST}, got {first}")
    return first


def first_of(values: list[T], first: int | None) -> list[T]:
    """The first ``first`` values, or all when null; BadArgument when negative."""
    if first is None:
        return values
    if first < 0:
        raise BadArgument(f"'first' must be 0 or more, got {first}")
    return values[:first]


@dataclass
class Page(Generic[T]):
    items: Sequence[T]
    has_next: bool
    #: the cursor of each item, made when first asked (a page of nodes needs none)
    cursor_of: Callable[[T], str]
    _cursors: list[str] | None = None

    @property
    def cursors(self) -> list[str]:
        if self._cursors is None:
            self._cursors = list(map(self.cursor_of, self.items))
        return self._cursors


@strawberry.type
class PageInfo:
    has_next_page: bool
    has_previous_page: bool
    #: the page, whose cursors are made only when asked (a spec page's need its records)
    page: strawberry.Private[Page]

    @strawberry.field
    def start_cursor(self) -> str | None:
        return self.page.cursor_of(self.page.items[0]) if self.page.items else None

    @strawberry.field
    def end_cursor(self) -> str | None:
        return self.page.cursor_of(self.page.items[-1]) if self.page.items else None


class Slice(Generic[T]):
    """A page of an ordered list, computed on first use; the arguments checked at once.

    ``walk(key)`` yields the list's items after the item with that key (from
    the start when None); ``key(item)`` is what a cursor holds. ``take(key, n)``, when
    given, is the first ``n`` of them at once, as a sequence whose slices are of its kind
    (a page of specs as ranks, its records made when asked).
    """

    def __init__(
        self,
        kind: str,
        walk: Callable[[str | None], Iterator[T]],
        key: Callable[[T], str],
        count: Callable[[], int],
        first: int | None,
        after: str | None,
        take: Callable[[str | None, int], Sequence[T]] | None = None,
    ) -> None:
        self.kind, self.walk, self.key, self.count = kind, walk, key, count
        self.take = take
        self.first = check_first(first)
        self.after = decode_cursor(kind, after)
        self._page: Page[T] | None = None

    def page(self) -> Page[T]:
        if self._page is None:
            if self.take is not None:
                items: Sequence[T] = self.take(self.after, self.first + 1)
            else:
                items = list(itertools.islice(self.walk(self.after), self.first + 1))
            self._page = Page(items[: self.first], len(items) > self.first, self.cursor)
        return self._page

    def cursor(self, item: T) -> str:
        return encode_cursor(self.kind, self.key(item))


@strawberry.type
class Edge(Generic[T]):
    cursor: str
    node: T


@strawberry.type
class Connection(Generic[T]):
    """Named ``SpecConnection``, ``PackageConnection``... by Strawberry's generics."""

    slice: strawberry.Private[Slice]
    #: makes a GraphQL object of a page item; None when the item is one already
    wrap: strawberry.Private[Callable | None] = None

    @strawberry.field(metadata=cost(walks=True))
    def total_count(self) -> int:
        return self.slice.count()

    @strawberry.field
    def page_info(self) -> PageInfo:
        page = self.slice.page()
        return PageInfo(
            has_next_page=page.has_next, has_previous_page=self.slice.after is not None, page=page
        )

    @strawberry.field(metadata=cost(items=PAGE))
    def edges(self) -> list[Edge[T]]:
        page = self.slice.page()
        return [Edge(cursor=c, node=n) for c, n in zip(page.cursors, self._nodes(), strict=True)]

    @strawberry.field(metadata=cost(items=PAGE))
    def nodes(self) -> list[T]:
        return self._nodes()

    def _nodes(self) -> list:
        items = self.slice.page().items
        return items if self.wrap is None else [self.wrap(i) for i in items]
