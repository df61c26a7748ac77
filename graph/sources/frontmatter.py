"""Read the YAML front matter of a cache page.

The public site writes every value but one on a single line as JSON, so each
line is tried as JSON first (orjson: the bulk of a large load is these lines);
YAML parses the whole block only when that fails (older pages, hand-edited
pages). Both give the same dict.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import orjson
import yaml

from ..errors import BadRecord
from .chunks import deepest

try:  # libyaml when present: the same results, many times faster
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

# A plain word that YAML reads as a string too (not a number, bool or null).
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_.@=+-]*")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "y", "n", "null"}


def _plain(value: str) -> str | None:
    if _PLAIN.fullmatch(value) and value.lower() not in _YAML_WORDS:
        return value
    return None


def _fast_value(value: str) -> Any:
    """The value of a one-line field without YAML, or None when YAML must decide."""
    if value[0] in '[{"':
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            pass
    if value[0] == "[" and value[-1] == "]":
        words = [_plain(w.strip()) for w in value[1:-1].split(",")]
        return words if all(words) else None
    return _plain(value)


def decode_text(data: bytes) -> str:
    """Decode a file's bytes as UTF-8 text, or say where it is not."""
    if not data.strip():
        raise BadRecord("empty file")
    if b"\0" in data[:8192]:
        raise BadRecord("binary file (NUL bytes), not a text page")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise BadRecord(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}", line
        ) from None


def split_front_matter(text: str) -> tuple[list[str], int]:
    """The lines between the opening and closing ``---``, and the line number of the first."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise BadRecord("no front matter: the first line is not '---'", 1)
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            return lines[1:end], 2
    raise BadRecord("front matter is not closed by a '---' line", len(lines))


def parse_front_matter(lines: list[str], first_line: int) -> tuple[dict[str, Any], dict[str, int]]:
    """Parse front-matter lines into a dict, and the line number of each top-level key."""
    fields, key_lines, _ = _parsed(lines, first_line, None)
    return fields, key_lines


class Unchecked(NamedTuple):
    """A one-line value parsed before its nesting was checked (``parse_page_front_matter``)."""

    text: str
    line: int

    def check(self) -> None:
        """Raise BadRecord as parsing would have, when the value nests too deeply."""
        check_nesting(self.text, _TOO_DEEP_FRONT_MATTER, self.line)


def parse_page_front_matter(
    lines: list[str], first_line: int
) -> tuple[dict[str, Any], dict[str, int], Unchecked | None]:
    """``parse_front_matter`` of a cache page, leaving the nesting of its one-line
    ``spec_details`` unchecked (returned), for the caller to check or to prove otherwise.

    The records' line is most of a page, and checking its nesting cost nearly what parsing
    it does; rows proven well formed nest three levels (``graph.sources.rows``), so only a
    page whose rows are not needs the check. Whatever else goes wrong first checks it, so
    a page too deep is refused with the same message as ever.
    """
    return _parsed(lines, first_line, "spec_details")


def _parsed(
    lines: list[str], first_line: int, defer: str | None
) -> tuple[dict[str, Any], dict[str, int], Unchecked | None]:
    unchecked: Unchecked | None = None
    try:
        fields, key_lines, unchecked = _parse_lines(lines, first_line, defer)
        if fields is None:  # not one line a value: YAML reads the whole block
            if unchecked is not None:
                unchecked.check()
            return (*_parse_yaml(lines, first_line), None)
        return fields, key_lines, unchecked
    except BadRecord:
        if unchecked is not None:  # it came first: as if checked where it was read
            unchecked.check()
        raise


def _parse_lines(
    lines: list[str], first_line: int, defer: str | None
) -> tuple[dict[str, Any] | None, dict[str, int], Unchecked | None]:
    """The fields of one-line values (None when YAML must read the block), their lines, and
    the value of key ``defer`` whose nesting was not checked."""
    fields: dict[str, Any] = {}
    key_lines: dict[str, int] = {}
    unchecked: Unchecked | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        key, sep, value = line.partition(":")
        value = value.strip()
        if not sep or line[:1].isspace() or not key:
            return None, key_lines, unchecked
        key_lines[key] = first_line + i
        i += 1
        if not value:  # a block list follows: "- item" or '- "key": value' lines
            items = []
            while i < len(lines) and (lines[i][:1].isspace() or not lines[i]):
                if lines[i].strip():
                    item = _list_item(lines[i])
                    if item is None:
                        return None, key_lines, unchecked
                    items.append(item)
                i += 1
            fields[key] = items
            continue
        if key == defer and unchecked is None and value[0] in "[{":
            parsed = _fast_value(value)
            if parsed is not None:
                fields[key] = parsed
                unchecked = Unchecked(value, key_lines[key])
                continue
        elif key == defer and unchecked is not None:  # given twice: the first is checked
            unchecked.check()
            unchecked = None
        # Before any parser: orjson takes 1,024 levels, and YAML's scanner stops at 1,000.
        check_nesting(value, _TOO_DEEP_FRONT_MATTER, key_lines[key])
        parsed = _fast_value(value)
        if parsed is None:
            return None, key_lines, unchecked
        fields[key] = parsed
    return fields, key_lines, unchecked


# '- "SPEC STRING": spec-3.json'; the public site never escaped quotes inside the
# key (fflags="-qzerosize"), which YAML rejects, so the key runs to the last '":'.
_MAPPING_ITEM = re.compile(r'\s*-\s*"(.*)"\s*:\s*(\S.*?)\s*')


def _list_item(line: str) -> Any:
    match = _MAPPING_ITEM.fullmatch(line)
    if match:
        return {match[1]: match[2]}
    word = line.strip()
    return _plain(word[1:].strip()) if word.startswith("-") else None


#: Nesting deeper than this is refused before a YAML or JSON parser recurses into it:
#: real pages and spec files nest a few levels; libyaml's composer crashes past ~30,000,
#: and a value orjson accepts (up to 1,024 levels) breaks whatever recurses into it later
#: (repr, pickle, json.dumps) at Python's recursion limit.
MAX_NESTING = 64
#: What a JSON text nesting deeper than MAX_NESTING is told.
TOO_DEEP_JSON = f"JSON nests more deeply than any real file (over {MAX_NESTING} levels); not read"


_TOO_DEEP_FRONT_MATTER = f"front matter nests more than {MAX_NESTING} levels deep; not read"


def check_nesting(text: str | bytes, message: str = TOO_DEEP_JSON, line: int | None = None) -> None:
    """Raise BadRecord(``message``) when the brackets and braces of ``text`` nest more than
    MAX_NESTING levels deep (outside its double-quoted strings), before any parser reads it.

    A text with few brackets is passed at once: two counts, no scan.

    >>> check_nesting("[" * 65 + "]" * 65)
    Traceback (most recent call last):
    ...
    cachegraph.graph.errors.BadRecord: JSON nests more deeply than any real file (over 64 ...
    >>> check_nesting('{"a": "' + "[" * 100 + '"}')
    """
    opened = text.count("[") + text.count("{") if isinstance(text, str) else (
        text.count(b"[") + text.count(b"{"))  # fmt: skip
    if opened <= MAX_NESTING:
        return
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if not _surely_shallow(data) and deepest(data) > MAX_NESTING:
        raise BadRecord(message, line)


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')


def _surely_shallow(data: bytes) -> bool:
    """True when ``data`` nests at most MAX_NESTING deep; False when unsure (deeper,
    unbalanced, or not JSON), for the exact scan to decide.

    A page's line of records has hundreds of brackets, few levels deep: its strings cut
    out and every other byte dropped (a few C calls over the line, no regular expression
    unless a string holds an escape), each ``replace`` takes out the innermost empty pairs
    of one kind -- one level at most -- so a text empty after MAX_NESTING of them nests at
    most MAX_NESTING deep. A line of records takes three, where the exact scan costs
    several numpy calls a line.

    >>> _surely_shallow(rb'[{"a": ["]]", "\\"["]}, {"b": {}}]')
    True
    >>> _surely_shallow(b'["' + b"[" * 99 + b'"]'), _surely_shallow(rb'["\\"' + b"[" * 99 + b'"]')
    (True, True)
    >>> _surely_shallow(b"[" * 65 + b"]" * 65), _surely_shallow(b"[{" * 20 + b"}]" * 20)
    (False, True)
    """
    if b"\\" in data:  # an escaped quote may hide in a string: match the strings
        kept = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    else:
        # Brackets and quotes only; two quotes side by side open and close an empty string
        # or close one and open the next, so taking them out leaves what lies outside every
        # string unchanged; of what remains, every second piece between quotes is inside one.
        kept = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
        if b'"' in kept:
            kept = b"".join(kept.split(b'"')[::2])
    for pair in _PAIRS:
        if not kept:
            return True
        kept = kept.replace(pair, b"")
    return not kept


def surely_shallow_value(value: Any) -> bool:
    """True when a parsed JSON value surely nests at most MAX_NESTING deep (the value
    itself is the first level); False when unsure, for an exact walk to decide.

    Proved on its text: orjson writes it in about a millisecond a megabyte, each list or
    mapping one pair of brackets, and ``_surely_shallow`` reads the brackets in a few C
    calls, where walking every value of a 500-spec lockfile in Python took 9 ms. A value
    orjson does not write (a key not a string, an integer past 64 bits, 255 levels or more)
    is left to the walk.

    >>> surely_shallow_value({"a": [["]]"]]}), surely_shallow_value([[[]]] * 2)
    (True, True)
    >>> deep: list = []
    >>> for _ in range(MAX_NESTING // 2):  # 65 levels
    ...     deep = [{"a": deep}]
    >>> surely_shallow_value(deep), surely_shallow_value(deep[0]["a"]), surely_shallow_value({1: 2})
    (False, True, False)
    """
    try:
        text = orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is one
        return False
    return _surely_shallow(text)


#: The pairs each ``replace`` of _surely_shallow takes out, in turn
_PAIRS = (b"[]", b"{}") * (MAX_NESTING // 2)


def load_yaml(text: str, what: str = "YAML", first_line: int = 1) -> Any:
    """``text`` parsed as YAML, refusing aliases and deep nesting first (BadRecord says where).

    Real build-cache files have no anchors: refusing aliases stops an alias bomb
    before it expands, and the event scan (which does not recurse) stops deep
    nesting before the composer (which does) sees it.

    >>> load_yaml("a: [1, {b: 2}]")
    {'a': [1, {'b': 2}]}
    >>> load_yaml("[&x 1, *x]")
    Traceback (most recent call last):
    ...
    cachegraph.graph.errors.BadRecord: YAML aliases are not allowed (real pages have none)
    """

    def line_of(event: Any) -> int:
        return first_line + event.start_mark.line

    try:
        depth = 0
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                raise BadRecord(
                    "YAML aliases are not allowed (real pages have none)", line_of(event)
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_NESTING:
                    raise BadRecord(
                        f"{what} nests more than {MAX_NESTING} levels deep; not read",
                        line_of(event),
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = first_line + mark.line if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if "maximum nesting depth" in problem:
            # libyaml's own limit (1,000 levels), met while its scanner looks ahead for a
            # key, before the events above reach MAX_NESTING
            message = f"{what} nests more than {MAX_NESTING} levels deep; not read"
            raise BadRecord(message, line) from None
        raise BadRecord(f"{what} is not valid YAML: {problem}", line) from None


def _parse_yaml(lines: list[str], first_line: int) -> tuple[dict[str, Any], dict[str, int]]:
    node = load_yaml("\n".join(lines), "front matter", first_line)
    if not isinstance(node, dict):
        raise BadRecord(f"front matter is a {type(node).__name__}, not a mapping", first_line)
    key_lines = {
        line.partition(":")[0]: first_line + i
        for i, line in enumerate(lines)
        if line[:1].strip() and ":" in line
    }
    return {str(k): v for k, v in node.items()}, key_lines
