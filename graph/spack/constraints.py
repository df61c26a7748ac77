"""Spack's abstract spec syntax, parsed into a Constraint: ``hdf5@1.14: +mpi %gcc@11: ^openmpi@4:``.

A hand-written lexer (one regular expression per token, tried in order at each
position, as Spack's own parser does) and a recursive-descent parser of a few
dozen lines. Measured by ``bench/parsers.py`` on 15 typical constraints: about
33 µs a constraint, the whole Constraint built; lark's LALR parser took 100 µs
and pyparsing 196 µs for the same tokens, before building anything. Both would
add a dependency, and their error messages would need rewriting in Spack's
terms. The language has no nesting beyond one node after another, which is what
a hand-written parser handles best.

What a constraint says (Spack's meaning, checked by ``graph.store.satisfies``):

- ``name`` (``namespace.name`` is read as ``name``), ``/hashprefix``;
- ``@versions``: ``@1.2`` (1.2 and every 1.2.x), ``@1.2:1.4``, ``@1.2:``, ``@:1.4``,
  ``@=1.2`` (that version only), lists ``@1.2,1.4:1.6``;
- variants: ``+v`` / ``~v`` / ``-v`` (``++v``, ``~~v``, ``--v`` alike), ``k=v``,
  ``k=a,b`` (the spec has both values), ``k:=a,b`` (exactly those), ``k=*`` (any value);
- compiler flags ``cflags="-O3"`` (the spec has those flags);
- ``target=`` with archspec ranges (``x86_64_v3:``, ``:zen3``, lists), ``os=``,
  ``platform=``, ``arch=platform-os-target``;
- ``%name@versions``: a direct dependency (Spack 1.0), or on older specs the recorded
  compiler; ``%clang``, ``%oneapi``, ``%intel``, ``%rocmcc`` and ``%arm`` are read as the
  packages Spack 1.x names them (``llvm``, ``intel-oneapi-compilers``...);
- ``^dep ...``: a link or run dependency (transitively) or a direct build dependency
  satisfies ``dep ...``;
- Spack 1.x edge attributes: ``%c=gcc``, ``%c,cxx=gcc@12:`` (the edge provides those
  virtuals), ``^[virtuals=mpi] openmpi``, ``^[deptypes=build] cmake``, ``%[deptypes=link]
  zlib``.

After ``%name@versions`` the following specifiers apply to the node before
the ``%`` again, as in ``hdf5 %gcc@11: +mpi target=x86_64_v3``: the cache's
specs record a compiler by name and version only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import BadArgument
from .names import LEGACY_COMPILERS
from .versions import VersionList, parse_versions

FLAG_NAMES = frozenset({"cflags", "cppflags", "cxxflags", "fflags", "ldflags", "ldlibs"})
MAX_LENGTH = 2000

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.\-]*"
_IDENTIFIER = r"[A-Za-z0-9_][A-Za-z0-9_\-]*"
#: Spack's ``LEGACY_COMPILER_TO_BUILTIN`` (``spack.aliases``): a ``%`` name read as a package
COMPILER_ALIASES = LEGACY_COMPILERS
DEPTYPES = ("build", "link", "run", "test")
_VALUE = r"""(?:"[^"]*"|'[^']*'|[A-Za-z0-9_\-+*.,:=~/\\]+)"""
_TOKENS = re.compile(
    rf"""
    (?P<space>\s+)
  | (?P<edge>(?P<sigil>\^|%%?)\s*(?:\[(?P<attrs>[^\]]*)\]\s*)?
        (?:(?P<assign>{_IDENTIFIER}(?:,{_IDENTIFIER})*)=(?=[A-Za-z0-9_]))?)
  | (?P<version>@\s*(?:=\s*)?[A-Za-z0-9_.:,=\-]*)
  | (?P<bool>(?:\+\+|\+|~~|~|--|-)\s*(?P<boolname>{_NAME}))
  | (?P<keyvalue>(?P<key>{_NAME})\s*(?P<op>==|:=|=)\s*(?P<value>{_VALUE})?)
  | (?P<hash>/\s*(?P<hashtext>[A-Za-z0-9]*))
  | (?P<name>{_NAME})
    """,
    re.VERBOSE,
)


class SpecSyntaxError(BadArgument):
    """A constraint that does not parse: the column, the text and a caret under the fault."""

    def __init__(self, text: str, column: int, what: str) -> None:
        self.text, self.column, self.what = text, column, what
        shown = text if len(text) <= 120 else text[:117] + "..."
        caret = " " * min(column, len(shown)) + "^"
        super().__init__(f"bad constraint at column {column + 1}: {what}\n  {shown}\n  {caret}")


@dataclass(frozen=True, slots=True)
class Variant:
    """``name=values``; ``values`` None for ``*`` (any value); ``exact`` for ``:=``."""

    name: str
    values: tuple[str, ...] | None
    exact: bool = False


@dataclass
class Node:
    """What one node must be: each field None or empty when unconstrained."""

    name: str | None = None
    hash: str | None = None
    versions: VersionList | None = None
    variants: list[Variant] = field(default_factory=list)
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: (low, high) target ranges, any of which the target is in; an exact name is (name, name)
    targets: list[tuple[str | None, str | None]] | None = None
    os: str | None = None
    platform: str | None = None
    #: ``%`` nodes: the compiler or a direct dependency
    direct: list[Node] = field(default_factory=list)
    #: the virtuals the edge to this node must provide (``%c=gcc``, ``^[virtuals=mpi]``)
    virtuals: tuple[str, ...] = ()
    #: the deptypes the edge to this node must have (``^[deptypes=build]``)
    deptypes: tuple[str, ...] = ()
    #: the name as written when Spack reads it as another (``%clang`` is ``llvm``)
    alias: str | None = None


@dataclass
class Constraint:
    """A parsed constraint: its root node and the ``^`` nodes its DAG must hold."""

    text: str
    root: Node
    transitive: list[Node] = field(default_factory=list)


@dataclass
class _Token:
    kind: str
    text: str
    start: int
    match: re.Match


def _tokens(text: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(text):
        match = _TOKENS.match(text, position)
        if match is None:
            char = text[position]
            what = (
                f"a variant name must follow {char!r}" if char in "+~" else f"unexpected {char!r}"
            )
            raise SpecSyntaxError(text, position, what)
        kind = match.lastgroup  # the outermost group: it closes last
        if kind != "space":
            tokens.append(_Token(kind, match.group(), position, match))
        position = match.end()
    return tokens


def parse(text: str) -> Constraint:
    """The constraint ``text`` says; SpecSyntaxError naming the column of the fault.

    >>> c = parse("hdf5@1.14: +mpi %gcc@11: ^openmpi@4:")
    >>> c.root.name, str(c.root.versions), c.root.variants, c.root.direct[0].name
    ('hdf5', '1.14:', [Variant(name='mpi', values=('true',), exact=False)], 'gcc')
    >>> [(n.name, str(n.versions)) for n in c.transitive]
    [('openmpi', '4:')]
    >>> print(parse_error("hdf5 ^"))
    bad constraint at column 7: a package name must follow '^'
      hdf5 ^
            ^
    """
    if len(text) > MAX_LENGTH:
        raise BadArgument(f"the constraint is {len(text):,} characters long (at most {MAX_LENGTH})")
    return _Parser(text).constraint()


def parse_error(text: str) -> str | None:
    """What is wrong with ``text`` as a constraint; None when it parses."""
    try:
        parse(text)
    except BadArgument as exc:
        return str(exc)
    return None


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def fail(self, token: _Token | None, what: str) -> SpecSyntaxError:
        column = len(self.text.rstrip()) if token is None else token.start
        return SpecSyntaxError(self.text, column, what)

    def next(self) -> _Token | None:
        token = self.tokens[self.at] if self.at < len(self.tokens) else None
        self.at += token is not None
        return token

    def peek(self) -> _Token | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def constraint(self) -> Constraint:
        if not self.tokens:
            raise self.fail(None, "the constraint is empty")
        root = Node()
        found = Constraint(self.text, root)
        current = root
        while (token := self.next()) is not None:
            if token.kind == "edge" and token.match["sigil"] == "^":
                current = self.named_node(token, "^")
                found.transitive.append(current)
            elif token.kind == "edge":
                direct = self.named_node(token, "%")
                if (following := self.peek()) is not None and following.kind == "version":
                    self.next()
                    self.versions(direct, following)
                current.direct.append(direct)
            elif token.kind == "name":
                if current is not root or root.name is not None or self.at != 1:
                    raise self.fail(
                        token, f"a second package name {token.text!r}: write '^{token.text}' "
                        "for a dependency, or quote a value with spaces",
                    )  # fmt: skip
                root.name = _package(token.text)
            else:
                self.specifier(current, token)
        return found

    def named_node(self, sigil: _Token, text: str) -> Node:
        virtuals, deptypes = self.edge_attributes(sigil)
        token = self.next()
        if token is not None and token.kind == "hash" and text == "^" and not virtuals:
            node = Node(deptypes=deptypes)
            self.specifier(node, token)
            return node
        if token is None or token.kind != "name":
            raise self.fail(token, f"a package name must follow {text!r}")
        name = _package(token.text)
        node = Node(name=name, virtuals=virtuals, deptypes=deptypes)
        if text == "%" and name in COMPILER_ALIASES:  # Spack's parser renames them so
            node.name, node.alias = COMPILER_ALIASES[name], name
        return node

    def edge_attributes(self, sigil: _Token) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The virtuals and deptypes of ``^[virtuals=mpi deptypes=build,link]`` and
        ``%c,cxx=``, as Spack's ``EdgeAttributeParser`` and ``parse_virtual_assignment``."""
        virtuals: list[str] = []
        deptypes: list[str] = []
        for pair in (sigil.match["attrs"] or "").split():
            key, equals, value = pair.partition("=")
            values = [v for v in value.strip("'\"").split(",") if v]
            if key.endswith(":"):
                key = key[:-1]
            if not equals or not values:
                raise self.fail(sigil, f"an edge attribute is key=value, not {pair!r}")
            if key == "virtuals":
                virtuals += values
            elif key == "deptypes":
                if bad := [v for v in values if v not in DEPTYPES]:
                    raise self.fail(sigil, f"{bad[0]!r} is not a deptype (one of "
                                    f"{', '.join(DEPTYPES)})")  # fmt: skip
                deptypes += values
            elif key == "when":
                raise self.fail(sigil, "a conditional edge ('when=') is not supported here")
            else:
                raise self.fail(sigil, "the only edge attributes are 'deptypes', 'virtuals' "
                                "and 'when'")  # fmt: skip
        if sigil.match["attrs"] is not None and not sigil.match["attrs"].strip():
            raise self.fail(sigil, "edge attributes go inside '[...]', e.g. '^[virtuals=mpi]'")
        if sigil.match["assign"]:
            virtuals += sigil.match["assign"].split(",")
        return tuple(dict.fromkeys(virtuals)), tuple(dict.fromkeys(deptypes))

    def specifier(self, node: Node, token: _Token) -> None:
        if token.kind == "version":
            self.versions(node, token)
        elif token.kind == "bool":
            value = "false" if token.text[0] in "~-" else "true"
            self.variant(node, token, Variant(token.match["boolname"], (value,)))
        elif token.kind == "hash":
            prefix = token.match["hashtext"].lower()
            if not prefix:
                raise self.fail(token, "a hash prefix must follow '/'")
            if node.hash is not None:
                raise self.fail(token, "a second hash")
            node.hash = prefix
        elif token.kind == "keyvalue":
            self.keyvalue(node, token)
        else:  # pragma: no cover - every token kind is handled above
            raise self.fail(token, f"unexpected {token.text!r}")

    def versions(self, node: Node, token: _Token) -> None:
        if node.versions is not None:
            raise self.fail(token, "a second version: list versions with commas, '@1.2,1.4'")
        try:
            node.versions = parse_versions(token.text[1:].strip())
        except BadArgument as e:
            raise self.fail(token, str(e)) from None

    def variant(self, node: Node, token: _Token, variant: Variant) -> None:
        if any(v.name == variant.name for v in node.variants):
            raise self.fail(token, f"variant {variant.name!r} is given twice")
        node.variants.append(variant)

    def keyvalue(self, node: Node, token: _Token) -> None:
        key, op, raw = token.match["key"], token.match["op"], token.match["value"]
        if raw is None:
            raise self.fail(token, f"a value must follow '{key}{op}'")
        value = raw[1:-1] if raw[0] in "\"'" else raw
        if key == "target":
            self.targets(node, token, value)
        elif key in ("os", "platform"):
            if getattr(node, key) is not None:
                raise self.fail(token, f"a second {key}")
            setattr(node, key, value)
        elif key in ("arch", "architecture"):
            parts = value.split("-")
            if len(parts) != 3:
                raise self.fail(token, f"{key}= takes platform-os-target, e.g. "
                                "'linux-ubuntu22.04-x86_64_v3'")  # fmt: skip
            for name, part in zip(("platform", "os"), parts, strict=False):
                if part not in ("", "None"):
                    setattr(node, name, part)
            if parts[2] not in ("", "None"):
                self.targets(node, token, parts[2])
        elif key in FLAG_NAMES:
            node.flags[key] = tuple(value.split())
        elif key in ("namespace", "dev_path"):
            raise self.fail(token, f"'{key}' is not recorded in a build cache's specs")
        else:
            values = None if value == "*" else tuple(v for v in value.split(",") if v)
            if values == ():
                raise self.fail(token, f"a value must follow '{key}{op}'")
            self.variant(node, token, Variant(key, _booleans(values), exact=op == ":="))

    def targets(self, node: Node, token: _Token, value: str) -> None:
        if node.targets is not None:
            raise self.fail(token, "a second target: list targets with commas")
        ranges = []
        for part in value.split(","):
            low, colon, high = part.partition(":")
            if not (low or high) or ":" in high:
                raise self.fail(token, f"{part!r} is not a target or a target range")
            ranges.append((low or None, high or None) if colon else (low, low))
        node.targets = ranges


def _package(name: str) -> str:
    """The package name without a namespace (``builtin.hdf5`` is ``hdf5``)."""
    return name.rpartition(".")[2]


def _booleans(values: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """``True``/``False`` written as values mean the boolean variant."""
    if values is not None and len(values) == 1 and values[0].lower() in ("true", "false"):
        return (values[0].lower(),)
    return values
