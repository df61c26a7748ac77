"""A query text parsed once, with what its checks found, kept across requests.

Clients repeat the same few query texts with new variables: the document
(graphql-core never changes one), its validation (which does not depend on
variables), its cost (which depends only on the variables given as ``first``
or ``transitive``) and its compiled plans are worked out once per text.

Strawberry's standard execution reuses them through ``Prechecked``, a schema
extension that gives it the parsed document and, once Strawberry's validation
has run for this text, its result.

Why not Strawberry's ``ParserCache`` and ``ValidationCache``: they are
``functools.lru_cache``s bounded by entries, and a client who sends distinct
900 kB texts grows a count-bounded cache by megabytes a request (the attack this
replaced). The executor keeps Prepared entries in a cache bounded by bytes, with
their measures and plans, which those caches have no place for.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    GraphQLError,
    OperationDefinitionNode,
    VariableNode,
    parse,
)
from strawberry import Schema
from strawberry.extensions import SchemaExtension

from cachegraph.schema.context import Context

from . import compiled
from .limits import Costs, Limits, Measured, check_document, scan_tokens

#: Arguments whose variables change what an operation costs.
_COST_ARGUMENTS = frozenset({"first", "transitive"})
#: Measures kept per text: one per distinct value of its cost variables.
_MEASURES_KEPT = 256


@dataclass
class Prepared:
    query: str
    document: DocumentNode
    #: variables given as some field's ``first`` or ``transitive``: all the cost depends on
    cost_variables: tuple[str, ...]
    #: about how many bytes this holds (the text, its document and its plans)
    size: int
    #: the names of its operations (None for an anonymous one)
    names: frozenset[str | None] = frozenset()
    measures: dict[tuple, Measured] = field(default_factory=dict)
    #: Strawberry's validation errors, once it has validated this text
    errors: list[GraphQLError] | None = None
    plans: dict[str | None, compiled.Plan | None] = field(default_factory=dict)

    @classmethod
    def of(cls, query: str, limits: Limits) -> Prepared:
        """The text parsed; LimitExceeded or a syntax error when it cannot be."""
        tokens = scan_tokens(query, limits)
        document = parse(query)
        cost_variables: set[str] = set()
        pending = [d.selection_set for d in document.definitions if hasattr(d, "selection_set")]
        while pending:
            for node in pending.pop().selections:
                if isinstance(node, FieldNode):
                    cost_variables.update(
                        a.value.name.value
                        for a in node.arguments or ()
                        if a.name.value in _COST_ARGUMENTS and isinstance(a.value, VariableNode)
                    )
                if getattr(node, "selection_set", None) is not None:
                    pending.append(node.selection_set)
        operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
        names = frozenset(o.name.value if o.name else None for o in operations)
        if len(operations) == 1:
            names |= {None}  # the only operation runs without a name
        # Measured with tracemalloc: a document holds its text, a copy of its comments
        # and strings, and about 500 bytes a token; a plan about as much again.
        size = 2 * len(query) + 1_000 * tokens + 1_000
        return cls(query, document, tuple(sorted(cost_variables)), size, names)

    def known(self, name: str | None, variables: dict[str, Any] | None) -> Measured | None:
        """The operation's measure with these variables, if measured before."""
        try:
            return self.measures.get(self._key(name, variables))
        except TypeError:  # not worth keeping (see _key): never kept
            return None

    def _key(self, name: str | None, variables: dict[str, Any] | None) -> tuple:
        """What the cost depends on; TypeError when that is not worth keeping: a name no
        operation has, or a value that is no int or bool (a client may send megabytes)."""
        values = tuple((variables or {}).get(n) for n in self.cost_variables)
        if name not in self.names or not all(_small(v) for v in values):
            raise TypeError("not kept")
        return (name, *values)

    def measure(
        self, costs: Costs, limits: Limits, name: str | None, variables: dict[str, Any] | None
    ) -> Measured:
        """What the operation may cost with these variables; LimitExceeded if too much."""
        try:
            key = self._key(name, variables)
            return self.measures[key]
        except KeyError:
            pass
        except TypeError:  # not worth keeping: measured each time
            return check_document(costs, self.document, variables, limits, name)
        found = check_document(costs, self.document, variables, limits, name)
        if len(self.measures) >= _MEASURES_KEPT:
            self.measures.clear()
        self.measures[key] = found
        return found

    def plan(self, schema: Schema, name: str | None) -> compiled.Plan | None:
        """The operation's compiled plan, once Strawberry has found the text valid."""
        if self.errors != [] or name not in self.names:
            return None
        if name not in self.plans:
            self.plans[name] = compiled.plan(schema, self.document, name)
        return self.plans[name]


class Prechecked(SchemaExtension):
    """Gives Strawberry the request's Prepared document, and keeps its validation there.

    The executor puts the Prepared in the context's ``prepared``; without
    one (a schema executed directly), Strawberry parses and validates as usual.
    """

    def _prepared(self) -> Prepared | None:
        context = self.execution_context.context
        return context.prepared if isinstance(context, Context) else None

    def on_parse(self) -> Iterator[None]:
        prepared = self._prepared()
        if prepared is not None:
            self.execution_context.graphql_document = prepared.document
        yield

    def on_validate(self) -> Iterator[None]:
        prepared, ctx = self._prepared(), self.execution_context
        if prepared is not None and prepared.errors is not None:
            ctx.pre_execution_errors = prepared.errors
        yield
        if prepared is not None and prepared.errors is None:
            prepared.errors = list(ctx.pre_execution_errors or ())


def _small(value: Any) -> bool:
    return value is None or (isinstance(value, int) and abs(value) < 2**31)
