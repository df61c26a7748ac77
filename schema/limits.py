"""Query limits checked before execution: tokens, aliases, depth, page size and cost.

A document is measured once, before the standard validation rules run, so a
bomb (a thousand aliases, a fragment fan-out, nested ``first: 1000`` pages)
is refused before any rule or resolver spends time on it. Every refusal is a
``LimitExceeded`` error naming the limit and its value.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    BooleanValueNode,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLList,
    GraphQLNamedType,
    GraphQLSchema,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    VariableNode,
    get_named_type,
    get_nullable_type,
    parse,
    validate,
    value_from_ast_untyped,
)
from graphql.language import Lexer, Source, TokenKind
from strawberry.extensions import SchemaExtension

from .pagination import DEFAULT_FIRST, MAX_FIRST

# The size assumed for a list that has no ``first`` (stacks, tags, overlaps...).
LIST_ESTIMATE = 100


@dataclass(frozen=True)
class Limits:
    """What one request may ask for. The defaults suit a public endpoint."""

    max_tokens: int = 10_000
    max_aliases: int = 100
    max_depth: int = 15
    max_cost: int = 100_000
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
    """Depth and cost of a selection, cost counted for one parent object."""

    depth: int = 0
    cost: int = 0


class _Measurer:
    """Measures a document against the schema, each fragment once."""

    def __init__(
        self, schema: GraphQLSchema, document: DocumentNode, variables: dict[str, Any]
    ) -> None:
        self.schema = schema
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
            total.depth = max(total.depth, part.depth)
            total.cost += part.cost
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
        if name.startswith("__"):
            # Introspection is bounded by graphql-core's MaxIntrospectionDepthRule.
            return Measure()
        if node.selection_set is None:
            return Measure(depth=1, cost=1)
        fields = getattr(parent, "fields", None)
        definition = fields.get(name) if fields else None
        child_type = get_named_type(definition.type) if definition else None
        inner = self.selection(node.selection_set, child_type)
        size = self.page_size(node, definition, parent)
        return Measure(depth=inner.depth + 1, cost=1 + size * inner.cost)

    def page_size(self, node: FieldNode, definition: Any, parent: Any) -> int:
        """How many objects this field may return for one parent."""
        if definition is None:
            return 1
        if "first" in definition.args:
            return self.first(node, definition.args["first"].default_value)
        if isinstance(get_nullable_type(definition.type), GraphQLList):
            # A connection's edges and nodes are its page, already counted.
            return 1 if parent is not None and parent.name.endswith("Connection") else LIST_ESTIMATE
        return 1

    def first(self, node: FieldNode, default: Any) -> int:
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


def scan_tokens(query: str, limits: Limits) -> None:
    """Refuse, before parsing, a query with too many tokens, aliases or nesting levels.

    The parser recurses once per nesting level, so a depth bomb must be stopped
    here; and an alias is a name and a colon outside parentheses (where names and
    colons are arguments), so counting them here spares parsing a thousand.

    >>> scan_tokens("{ a { b { c { d { e } } } } }", Limits(max_depth=1))
    Traceback (most recent call last):
    ...
    schema.limits.LimitExceeded: the query nests 5 levels deep (limit max_depth = 1)
    >>> scan_tokens('{ x: spec(hash: "a") { hash } y: stats { specCount } }', Limits(max_aliases=1))
    Traceback (most recent call last):
    ...
    schema.limits.LimitExceeded: the query uses 2 aliases (limit max_aliases = 1)
    """
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


def check_document(
    schema: GraphQLSchema,
    document: DocumentNode,
    variables: dict[str, Any] | None,
    limits: Limits,
    operation_name: str | None = None,
) -> int:
    """The cost of the operation that will run; LimitExceeded if it is too deep or costly.

    A variable the client did not send counts at its default in the query text, as
    the resolvers will get it: ``query($n: Int = 1000)`` costs what ``first: 1000`` does.
    """
    cost = 0
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
        measure = _Measurer(schema, document, {**defaults, **(variables or {})}).operation(op)
        if measure.depth > limits.max_depth:
            raise LimitExceeded(
                "max_depth", limits.max_depth, f"the query nests {measure.depth} fields deep"
            )
        if measure.cost > limits.max_cost:
            raise LimitExceeded(
                "max_cost",
                limits.max_cost,
                f"the query may return up to {measure.cost:,} fields: nested page sizes "
                "multiply; ask for smaller pages or fewer nested lists",
            )
        cost = max(cost, measure.cost)
    return cost


def parse_within(query: str, limits: Limits) -> DocumentNode:
    """The parsed document, refused before parsing when it has too many tokens."""
    scan_tokens(query, limits)
    return parse(query)


#: An operation that costs at most this many fields and names none of WALKING_FIELDS
#: is cheap enough to run on the event loop, sparing a thread hand-off.
INLINE_COST = 500
#: Fields whose first answer may walk every spec: a filtered count, a path search,
#: the packages of a stack, the sizes of a stack or mirror, facets, a search, and the
#: questions that walk DAGs (coverage, nearest, lookalikes, diffs, impact).
WALKING_FIELDS = frozenset(
    {
        "totalCount",
        "dependencyPath",
        "packages",
        "packageCount",
        "totalBytes",
        "facets",
        "search",
        "coverage",
        "nearest",
        "lookalikes",
        "specDiff",
        "impact",
        "tagDiff",
    }
)
#: Fields that walk a DAG when given ``transitive`` (a spec's direct ones are a lookup).
DAG_FIELDS = frozenset({"dependencies", "dependents", "dependencyCount", "dependentCount"})


def _walks(node: FieldNode) -> bool:
    name = node.name.value
    if name in DAG_FIELDS:
        return any(
            a.name.value == "transitive"
            and not (isinstance(a.value, BooleanValueNode) and not a.value.value)
            for a in node.arguments or ()
        )
    return name in WALKING_FIELDS


@dataclass
class Prepared:
    """A query text, parsed, with what its validation and measures found, kept across requests.

    Clients repeat the same few query texts with new variables: the document
    (graphql-core never changes one), its validation (which does not depend on
    variables) and its cost (which depends only on the variables given as
    ``first``) are worked out once.
    """

    document: DocumentNode
    #: variables used as some field's ``first``: the only ones the cost depends on
    first_variables: tuple[str, ...]
    #: whether the document names a field that may walk every spec
    walks: bool
    costs: dict[tuple, int] = field(default_factory=dict)
    validations: dict[tuple, list[GraphQLError]] = field(default_factory=dict)

    def cost_key(self, operation_name: str | None, variables: dict[str, Any] | None):
        """What the cost depends on; None when a variable's value cannot be a key."""
        key = (operation_name, *((variables or {}).get(n) for n in self.first_variables))
        try:
            hash(key)
        except TypeError:  # a list or an object given as `first`: measured each time
            return None
        return key


@functools.lru_cache(maxsize=1024)
def prepare(query: str, limits: Limits) -> Prepared:
    """The Prepared query; LimitExceeded or a syntax error is raised, and not kept."""
    document = parse_within(query, limits)
    walks = False
    firsts: set[str] = set()
    pending = [d.selection_set for d in document.definitions if hasattr(d, "selection_set")]
    while pending:
        for node in pending.pop().selections:
            if isinstance(node, FieldNode):
                walks = walks or _walks(node)
                firsts.update(
                    a.value.name.value
                    for a in node.arguments or ()
                    if a.name.value == "first" and isinstance(a.value, VariableNode)
                )
            if getattr(node, "selection_set", None) is not None:
                pending.append(node.selection_set)
    return Prepared(document, tuple(sorted(firsts)), walks)


@dataclass(frozen=True)
class Checked:
    """An operation measured and validated before, without errors."""

    cost: int
    walks: bool

    @property
    def inline(self) -> bool:
        """Whether it is cheap enough to run on the event loop."""
        return self.cost <= INLINE_COST and not self.walks


def checked(
    query: Any,
    operation_name: str | None,
    variables: dict[str, Any] | None,
    limits: Limits,
    schema: GraphQLSchema,
) -> Checked | None:
    """The operation if it was measured and validated against ``schema`` before; else None."""
    if not isinstance(query, str):
        return None
    try:
        prepared = prepare(query, limits)
    except GraphQLError:
        return None
    cost = prepared.costs.get(prepared.cost_key(operation_name, variables))
    valid = any(
        not errors for (schema_id, _), errors in prepared.validations.items()
        if schema_id == id(schema)
    )  # fmt: skip
    if cost is None or not valid:
        return None
    return Checked(cost, prepared.walks)


class QueryLimits(SchemaExtension):
    """Applies ``Limits`` to every operation before the standard validation, which it keeps."""

    def __init__(self, *, limits: Limits) -> None:
        self.limits = limits

    def on_parse(self) -> Iterator[None]:
        ctx = self.execution_context
        if ctx.graphql_document is None and ctx.query:
            ctx.graphql_document = prepare(ctx.query, self.limits).document
        yield

    def on_validate(self) -> Iterator[None]:
        ctx = self.execution_context
        if ctx.graphql_document is not None and ctx.query:
            prepared = prepare(ctx.query, self.limits)
            schema = ctx.schema._schema
            key = prepared.cost_key(ctx.operation_name, ctx.variables)
            if key is None or key not in prepared.costs:
                cost = check_document(
                    schema, ctx.graphql_document, ctx.variables, self.limits, ctx.operation_name
                )
                if key is not None:
                    if len(prepared.costs) > 256:
                        prepared.costs.clear()
                    prepared.costs[key] = cost
            rules = tuple(ctx.validation_rules)
            if ctx.pre_execution_errors is None and rules:
                found = prepared.validations.get((id(schema), rules))
                if found is None:
                    found = prepared.validations[id(schema), rules] = validate(
                        schema, ctx.graphql_document, rules
                    )
                ctx.pre_execution_errors = found
        yield
