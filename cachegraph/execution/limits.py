"""Query limits checked before execution: tokens, aliases, depth, page size and cost.

A document is measured once, before the standard validation rules run, so a
bomb (a thousand aliases, a fragment fan-out, nested ``first: 1000`` pages)
is refused before any rule or resolver spends time on it. Every refusal is a
``LimitExceeded`` error naming the limit and its value.

Why not Strawberry's ``MaxTokensLimiter``, ``MaxAliasesLimiter`` and
``QueryDepthLimiter``: they refuse after parsing (the last two as validation
rules), where ``scan_tokens`` refuses in one pass of the lexer before it.
Measured on this machine: a 1,000-alias query refused in 48 ms here and 280 ms
by the three extensions; 5,000 nested braces in 0.4 ms here and 10 ms there
(graphql-core's parser stops them as "nested too deeply"). None of them
measures cost, which needs the field declarations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLEnumType,
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SchemaMetaFieldDef,
    SelectionSetNode,
    TypeMetaFieldDef,
    ValueNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
    is_abstract_type,
    is_list_type,
    value_from_ast_untyped,
)
from graphql.language import Lexer, Source, TokenKind
from strawberry import Schema

from cachegraph.schema.cost import PAGE, UNDECLARED, Cost, declared
from cachegraph.schema.pagination import DEFAULT_FIRST, MAX_FIRST

#: The size assumed for a list that declares none (a test requires every list to declare it).
LIST_ESTIMATE = 100


@dataclass(frozen=True)
class Limits:
    """What one request may ask for. The defaults suit a public endpoint."""

    max_tokens: int = 10_000
    #: the query document's own size: bodies may be 4 MiB for a lockfile, queries need less
    max_query_bytes: int = 100_000
    max_aliases: int = 100
    max_depth: int = 15
    max_cost: int = 100_000
    #: whole-schema introspections (``__schema``) in one operation: GraphiQL needs one
    max_introspection: int = 1
    introspection: bool = True


class LimitExceeded(GraphQLError):
    """A request refused by a limit; ``extensions`` name the limit and its value."""

    def __init__(self, limit: str, value: int, message: str) -> None:
        super().__init__(
            f"{message} (limit {limit} = {value})",
            extensions={"code": "LIMIT_EXCEEDED", "limit": limit, "value": value},
        )
        self.limit = limit


@dataclass
class Measure:
    """Depth and cost of a selection (cost counted for one parent object), whether it may
    walk the whole data, and how many times it introspects the whole schema."""

    depth: int = 0
    #: fractional where introspection sizes are means
    cost: float = 0
    walks: bool = False
    schemas: int = 0

    def add(self, other: Measure) -> None:
        self.depth = max(self.depth, other.depth)
        self.cost += other.cost
        self.walks = self.walks or other.walks
        self.schemas += other.schemas


class Costs:
    """What each field of a schema costs: declared on the field (``schema.cost``), and for
    introspection, what this schema's introspection answers hold on average."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.graphql: GraphQLSchema = schema._schema
        self._declared: dict[tuple[str, str], Cost] = {}
        self.introspection = _introspection_sizes(self.graphql)

    def of(self, type_name: str, field_name: str) -> Cost:
        key = (type_name, field_name)
        found = self._declared.get(key)
        if found is None:
            if type_name.startswith("__"):
                found = Cost(items=self.introspection.get(key))
            else:
                field = self.schema.get_field_for_type(field_name, type_name)
                found = (field and declared(field.metadata)) or UNDECLARED
            self._declared[key] = found
        return found


def _introspection_sizes(schema: GraphQLSchema) -> dict[tuple[str, str], float]:
    """How many items each list of the introspection types holds: the whole count for the
    schema's types and directives; for the lists of one type or field, their mean over all
    of them (a scalar has no fields: it counts as 0). ``ofType`` is a list of its own kind:
    a type reference is ``d`` wrappers deep, a chain whose mean length a ratio of
    ``d / (1 + d)`` per level gives."""
    named = list(schema.type_map.values())
    objects = [t for t in named if isinstance(t, GraphQLObjectType | GraphQLInterfaceType)]
    inputs = [t for t in named if isinstance(t, GraphQLInputObjectType)]
    fields = [f for t in objects for f in t.fields.values()]
    references = [f.type for f in fields] + [a.type for f in fields for a in f.args.values()]
    references += [f.type for t in inputs for f in t.fields.values()]

    def mean(counts: list[int], among: int = len(named)) -> float:
        return sum(counts) / max(among, 1)

    depth = mean([_wrappers(t) for t in references], len(references))
    return {
        ("__Schema", "types"): len(named),
        ("__Schema", "directives"): len(schema.directives),
        ("__Type", "fields"): mean([len(t.fields) for t in objects]),
        ("__Type", "inputFields"): mean([len(t.fields) for t in inputs]),
        ("__Type", "interfaces"): mean([len(t.interfaces) for t in objects]),
        ("__Type", "possibleTypes"): mean([len(schema.get_possible_types(t)) for t in named
                                            if is_abstract_type(t)]),
        ("__Type", "enumValues"): mean([len(t.values) for t in named
                                         if isinstance(t, GraphQLEnumType)]),
        ("__Type", "ofType"): depth / (1 + depth),
        ("__Field", "args"): mean([len(f.args) for f in fields], len(fields)),
        ("__Directive", "args"): mean([len(d.args) for d in schema.directives],
                                      len(schema.directives)),
        ("__Directive", "locations"): mean([len(d.locations) for d in schema.directives],
                                           len(schema.directives)),
    }  # fmt: skip


def _wrappers(type_: Any) -> int:
    """How many list and non-null wrappers a type reference has."""
    count = 0
    while hasattr(type_, "of_type"):
        type_, count = type_.of_type, count + 1
    return count


class _Measurer:
    """Measures a document against the schema, each fragment once."""

    def __init__(self, costs: Costs, document: DocumentNode, variables: dict[str, Any]) -> None:
        self.costs, self.schema = costs, costs.graphql
        self.variables = variables
        self.fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        self.measured: dict[str, Measure] = {}
        self.visiting: set[str] = set()

    def operation(self, op: OperationDefinitionNode) -> Measure:
        root = self.schema.get_root_type(op.operation)
        return self.selection(op.selection_set, root)

    def selection(self, selections: SelectionSetNode, parent: GraphQLNamedType | None) -> Measure:
        total = Measure()
        for node in selections.selections:
            if isinstance(node, FieldNode):
                part = self.field(node, parent)
            elif isinstance(node, InlineFragmentNode):
                cond = node.type_condition
                part = self.selection(
                    node.selection_set, self.schema.get_type(cond.name.value) if cond else parent
                )
            else:
                part = self.spread(node)
            total.add(part)
        return total

    def spread(self, node: FragmentSpreadNode) -> Measure:
        name = node.name.value
        fragment = self.fragments.get(name)
        if fragment is None or name in self.visiting:
            # Unknown fragments and cycles: the standard rules report them.
            return Measure()
        if name not in self.measured:
            self.visiting.add(name)
            cond = self.schema.get_type(fragment.type_condition.name.value)
            self.measured[name] = self.selection(fragment.selection_set, cond)
            self.visiting.discard(name)
        return self.measured[name]

    def field(self, node: FieldNode, parent: GraphQLNamedType | None) -> Measure:
        name = node.name.value
        fields = getattr(parent, "fields", None)
        definition = _META_FIELDS.get(name) or (fields.get(name) if fields else None)
        if definition is None:
            return Measure(depth=1, cost=1)  # unknown: the standard rules report it
        declared = self.costs.of(parent.name, name)
        arguments = {a.name.value: self.argument(a.value) for a in node.arguments or ()}
        if node.selection_set is None:
            return Measure(depth=1, cost=1, walks=declared.may_walk(arguments))
        inner = self.selection(node.selection_set, get_named_type(definition.type))
        if "first" in definition.args:
            size = self.first(node, definition)
        elif declared.items is not None:
            size = 1 if declared.items == PAGE else declared.items
        else:
            size = LIST_ESTIMATE if is_list_type(get_nullable_type(definition.type)) else 1
        return Measure(
            depth=inner.depth + 1,
            cost=1 + size * inner.cost,
            walks=inner.walks or declared.may_walk(arguments),
            schemas=inner.schemas + (name == "__schema"),
        )

    def argument(self, value: ValueNode) -> Any:
        if isinstance(value, VariableNode):
            return self.variables.get(value.name.value, True)
        return value_from_ast_untyped(value)

    def first(self, node: FieldNode, definition: Any) -> int:
        default = definition.args["first"].default_value
        value: Any = default if isinstance(default, int) else DEFAULT_FIRST
        for arg in node.arguments or ():
            if arg.name.value != "first":
                continue
            if isinstance(arg.value, IntValueNode):
                value = int(arg.value.value)
            elif isinstance(arg.value, VariableNode):
                value = self.variables.get(arg.value.name.value, value)
        if isinstance(value, int) and value > MAX_FIRST:
            raise LimitExceeded(
                "first", MAX_FIRST, f"'first' must be between 0 and {MAX_FIRST}, got {value}"
            )
        return value if isinstance(value, int) and value >= 0 else DEFAULT_FIRST


#: The introspection entry points, which no object type lists among its fields.
_META_FIELDS = {"__schema": SchemaMetaFieldDef, "__type": TypeMetaFieldDef}


def scan_tokens(query: str, limits: Limits) -> int:
    """The number of tokens; refuses, before parsing, a query with too many tokens, aliases or
    nesting levels.

    The parser recurses once per nesting level, so a depth bomb must be stopped
    here; and an alias is a name and a colon outside parentheses (where names and
    colons are arguments), so counting them here spares parsing a thousand.

    >>> scan_tokens("{ a { b { c { d { e } } } } }", Limits(max_depth=1))
    Traceback (most recent call last):
    ...
    cachegraph.execution.limits.LimitExceeded: the query nests 5 levels deep (limit max_depth = 1)
    >>> scan_tokens('{ x: spec(hash: "a") { hash } y: stats { specCount } }', Limits(max_aliases=1))
    Traceback (most recent call last):
    ...
    cachegraph.execution.limits.LimitExceeded: the query uses 2 aliases (limit max_aliases = 1)
    """
    # Comments and long strings are few tokens: the text's size has a limit of its own.
    if len(query) > limits.max_query_bytes or len(query.encode()) > limits.max_query_bytes:
        size = len(query.encode())
        message = f"the query document is {size:,} bytes"
        raise LimitExceeded("max_query_bytes", limits.max_query_bytes, message)
    lexer = Lexer(Source(query))
    count = nesting = parens = aliases = 0
    previous = None
    # Inline fragments and input objects add braces of their own: allow for them.
    max_nesting = 2 * limits.max_depth + 2
    while (kind := lexer.advance().kind) != TokenKind.EOF:
        count += 1
        if count > limits.max_tokens:
            message = f"the query has more than {limits.max_tokens} tokens"
            raise LimitExceeded("max_tokens", limits.max_tokens, message)
        if kind in (TokenKind.BRACE_L, TokenKind.BRACKET_L):
            nesting += 1
            if nesting > max_nesting:
                raise LimitExceeded(
                    "max_depth", limits.max_depth, f"the query nests {nesting} levels deep"
                )
        elif kind in (TokenKind.BRACE_R, TokenKind.BRACKET_R):
            nesting -= 1
        elif kind == TokenKind.PAREN_L:
            parens += 1
        elif kind == TokenKind.PAREN_R:
            parens -= 1
        elif kind == TokenKind.COLON and previous == TokenKind.NAME and parens == 0:
            aliases += 1
        previous = kind
    if aliases > limits.max_aliases:
        raise LimitExceeded("max_aliases", limits.max_aliases, f"the query uses {aliases} aliases")
    return count


@dataclass(frozen=True)
class Measured:
    """What an operation may cost, and whether it may walk the whole data."""

    cost: int
    walks: bool


def check_document(
    costs: Costs,
    document: DocumentNode,
    variables: dict[str, Any] | None,
    limits: Limits,
    operation_name: str | None = None,
) -> Measured:
    """What the operation that will run may cost; LimitExceeded if it is too deep or costly,
    or introspects the whole schema more than ``limits.max_introspection`` times.

    A variable the client did not send counts at its default in the query text, as
    the resolvers will get it: ``query($n: Int = 1000)`` costs what ``first: 1000`` does.
    """
    found = Measured(0, False)
    for op in document.definitions:
        if not isinstance(op, OperationDefinitionNode):
            continue
        if operation_name and (op.name is None or op.name.value != operation_name):
            continue
        defaults = {
            d.variable.name.value: value_from_ast_untyped(d.default_value)
            for d in op.variable_definitions or ()
            if d.default_value is not None
        }
        measure = _Measurer(costs, document, {**defaults, **(variables or {})}).operation(op)
        measure.cost = math.ceil(measure.cost)
        if measure.depth > limits.max_depth:
            raise LimitExceeded(
                "max_depth", limits.max_depth, f"the query nests {measure.depth} fields deep"
            )
        if measure.schemas > limits.max_introspection:
            raise LimitExceeded(
                "max_introspection",
                limits.max_introspection,
                f"the query introspects the whole schema {measure.schemas} times",
            )
        if measure.cost > limits.max_cost:
            raise LimitExceeded(
                "max_cost",
                limits.max_cost,
                f"the query may return up to {measure.cost:,} fields: nested page sizes "
                "multiply; ask for smaller pages or fewer nested lists",
            )
        found = Measured(max(found.cost, measure.cost), found.walks or measure.walks)
    return found
