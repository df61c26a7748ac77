"""A large JSON mapping parsed a chunk of entries at a time: ``mapping_chunks``.

A build-cache index is one JSON object whose ``database.installs`` holds every
record; the public develop index is 185 MB, which ``orjson.loads`` turns into
some 1.8 GB of Python objects at once. Here the bytes are scanned first, in
numpy, for the structure of the document -- where its strings are, and the
depth of every brace and bracket outside them -- which says where each entry
of that mapping ends. The entries are then handed to orjson a few thousand at a
time, each chunk a small JSON object of its own: the same values, at about
orjson's speed, with the memory of one chunk.

Anything the scan does not understand (the mapping missing, braces that do not
balance) raises ValueError, and the caller parses the whole document as before,
which says precisely what is wrong with it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import orjson

#: bytes scanned at once: bounds the scan's own arrays (some 10 bytes per byte scanned)
WINDOW = 8 << 20
_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_OPEN = (ord("{"), ord("["))
_CLOSE = (ord("}"), ord("]"))


def _escaped(data: bytes, quote: int) -> bool:
    """Whether the quote at ``quote`` is escaped: preceded by an odd run of backslashes."""
    run = 0
    while quote - run - 1 >= 0 and data[quote - run - 1] == _BACKSLASH:
        run += 1
    return run % 2 == 1


def structure(data: bytes) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(positions, is_open, depth after) of every brace and bracket outside strings, a window
    at a time, in order.

    One pass finds every byte that matters (a quote, a backslash, a brace or bracket); the
    rest is worked out on those few: a mark is in a string when an odd number of quotes
    precede it (counted with the state carried in from the window before).

    >>> found = structure(b'{"a{": [1, {"\\\\"}": 2}]}')
    >>> [(p.tolist(), o.tolist(), d.tolist()) for p, o, d in found]
    [([0, 7, 11, 20, 21, 22], [True, True, True, False, False, False], [1, 2, 3, 2, 1, 0])]
    """
    view = np.frombuffer(data, np.uint8)
    in_string, depth = 0, 0
    for start in range(0, len(view), WINDOW):
        block = view[start : start + WINDOW]
        # '{' and '[' are 0x7B and 0x5B, '}' and ']' 0x7D and 0x5D: one bit apart
        folded = block | 0x20
        at = np.flatnonzero(
            (folded == _OPEN[0]) | (folded == _CLOSE[0]) | (block == _QUOTE) | (block == _BACKSLASH)
        )
        kind = block[at]
        quote, slash = kind == _QUOTE, kind == _BACKSLASH
        brace = ~(quote | slash)
        slashes = at[slash]
        if len(slashes) or (start and view[start - 1] == _BACKSLASH):  # rare: one by one
            which = np.flatnonzero(quote)
            quotes = at[which]
            for q in np.flatnonzero(np.isin(quotes - 1, slashes) | (quotes == 0)).tolist():
                if _escaped(data, start + int(quotes[q])):
                    quote[which[q]] = False
        # quotes counted modulo 256 (an even number): the parity is all that is wanted
        counted = np.cumsum(quote.view(np.uint8), dtype=np.uint8)
        mark = brace & ((counted & 1) == in_string)
        marks, kinds = at[mark], kind[mark]
        opens = (kinds == _OPEN[0]) | (kinds == _OPEN[1])
        depths = depth + np.cumsum(np.where(opens, 1, -1))
        if len(depths):
            depth = int(depths[-1])
        if len(counted):
            in_string = (in_string + int(counted[-1])) % 2
        yield marks + start, opens, depths


def deepest(data: bytes) -> int:
    """How deep the braces and brackets of a JSON text nest, outside its strings.

    >>> deepest(b'{"a": [[1], "]]]["], "b": {}}')
    3
    """
    found = 0
    for _, _, depths in structure(data):
        if len(depths):
            found = max(found, int(depths.max()))
    return found


def split(
    data: bytes, key: bytes, depth: int, size: int = 1024, deepest_allowed: int = 1 << 30
) -> tuple[dict, Iterator[dict]]:
    """The document without the JSON object that is the value of ``key`` at nesting
    ``depth`` (the object opening at ``depth + 1``), and that object's entries as dicts of
    at most ``size`` entries each. Raises ValueError when there is no such object, the
    document is not well formed, or it nests deeper than ``deepest_allowed``.

    >>> doc = b'{"db": {"version": "8", "installs": {"a": {"x": "}"}, "b": {}, "c": {}}}}'
    >>> rest, chunks = split(doc, b"installs", 2, size=2)
    >>> rest, list(chunks)
    ({'db': {'version': '8', 'installs': {}}}, [{'a': {'x': '}'}, 'b': {}}, {'c': {}}])
    """
    start, end, ends = _locate(data, key, depth, deepest_allowed)
    rest_text = data[:start] + b"{}" + data[end + 1 :]
    if deepest(rest_text) > deepest_allowed:
        raise ValueError(f"nests deeper than {deepest_allowed} levels")
    rest = orjson.loads(rest_text)
    return rest, _chunks(data, start, end, ends, size)


def _locate(data: bytes, key: bytes, depth: int, allowed: int) -> tuple[int, int, list[int]]:
    """(where the object opens, where it closes, where each entry's value ends)."""
    inner = depth + 2  # the depth inside one entry's value
    start = end = None
    ends: list[int] = []
    for positions, opens, depths in structure(data):
        if len(depths) and int(depths.max()) > allowed:
            raise ValueError(f"nests deeper than {allowed} levels")
        if start is None:
            for at in np.flatnonzero(opens & (depths == depth + 1)).tolist():
                head = data[max(0, positions[at] - len(key) - 64) : positions[at]].rstrip()
                if head.endswith(b":") and head[:-1].rstrip().endswith(b'"' + key + b'"'):
                    start = int(positions[at])
                    positions, opens, depths = positions[at:], opens[at:], depths[at:]
                    break
            if start is None:
                continue
        # An entry's value ends where a close leaves the depth inside entries; the
        # object ends where one leaves its own depth.
        closes = ~opens
        done = np.flatnonzero(closes & (depths == depth))
        stop = int(done[0]) if len(done) else len(positions)
        ends += positions[:stop][closes[:stop] & (depths[:stop] == inner - 1)].tolist()
        if len(done):
            end = int(positions[stop])
            break
    if start is None or end is None:
        raise ValueError(f"no JSON object under {key.decode()!r} at depth {depth}")
    return start, end, ends


def _chunks(data: bytes, start: int, end: int, ends: list[int], size: int) -> Iterator[dict]:
    begin = start + 1
    for first in range(0, len(ends), size):
        last = ends[min(first + size, len(ends)) - 1]
        yield orjson.loads(b"{" + data[begin : last + 1].lstrip(b" \t\r\n,") + b"}")
        begin = last + 1
    rest = data[begin:end].strip(b" \t\r\n,")
    if rest:  # entries whose values are no objects (scalars) after the last object
        yield orjson.loads(b"{" + rest + b"}")
