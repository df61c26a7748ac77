"""Counts said in words: one noun for 1, its plural for 0 and the rest."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and its noun, the plural but for 1, the count with thousands separators.

    >>> [counted(n, "tag") for n in (0, 1, 2)]
    ['0 tags', '1 tag', '2 tags']
    >>> counted(1, "index", "indices"), counted(1_000, "index", "indices")
    ('1 index', '1,000 indices')
    """
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
