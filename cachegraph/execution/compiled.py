"""Direct execution of checked queries whose types are all plain objects.

graphql-core and Strawberry spend about 10 µs on every field: an info object,
argument conversion, the resolver wrapper, completion checks. That is most of the
time of a large page. ``plan`` compiles an operation once into a generated
function per selected object, which calls the same resolvers directly (well
under a microsecond a plain field), and ``Plan.answer`` runs them.

It is an optimization with a fallback, never a second semantics: an operation
outside the plain shape (abstract types, directives, introspection, field
extensions, async resolvers, a ``... on`` another type) gets no plan, and any
fault while answering -- a resolver raising, a null in a non-null field,
variables that do not coerce, a resolver asking ``info`` for more than
``context`` -- gives no answer. The caller then runs the operation the standard
way, which reports the fault as it always did. Queries only read, so running
one again is safe.
"""

from __future__ import annotations

import asyncio
import functools
import keyword
import math
import time
from collections.abc import Callable
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLBoolean,
    GraphQLField,
    GraphQLFloat,
    GraphQLID,
    GraphQLInt,
    GraphQLLeafType,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLString,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    get_nullable_type,
    is_leaf_type,
    is_list_type,
    is_non_null_type,
    is_object_type,
)
from graphql.execution.values import VariableValues
from strawberry import Schema
from strawberry.types.arguments import convert_arguments

from cachegraph.graph.errors import OverBudget, TimedOut

from .arguments import holds_variables, reader
from .inputs import arguments_converter, identity
from .variables import coercer

#: (value, run) -> the value as JSON
Complete = Callable[[Any, "Run"], Any]


class Unplannable(Exception):
    """The operation is outside the shape ``plan`` compiles."""


class NoAnswer(Exception):
    """Answering stopped; the standard execution will say why."""


class Run:
    """One answer's state. Resolvers get it as their ``info``: it has the ``context``."""

    __slots__ = ("context", "variables")

    def __init__(self, context: Any, variables: VariableValues | None) -> None:
        self.context, self.variables = context, variables


class Plan:
    """An operation compiled for one schema."""

    def __init__(
        self, schema: GraphQLSchema, operation: OperationDefinitionNode, complete: Complete
    ) -> None:
        self.schema, self.operation, self._complete = schema, operation, complete
        definitions = operation.variable_definitions
        self._variables = coercer(schema, definitions) if definitions else None
        #: how long the latest answer took to compute, in seconds: on the event loop by the
        #: wall clock, in a worker thread by that thread's processor time. There the wall
        #: clock also counts the waits for the interpreter lock that the event loop's own
        #: work causes: under 16 clients a 0.1 ms point query measured over INLINE_SECONDS
        #: once and then stayed in threads for good, each answer paying a hand-off and the
        #: lock's ping-pong (issue 40 item 3). On the loop the wall clock is the processor
        #: time the loop was held, and reading it is no system call (a thread's processor
        #: time is one: 0.5-2.8 µs here).
        self.latest = math.inf

    def answer(
        self, variables: dict[str, Any] | None, context: Any, root: Any = None
    ) -> dict[str, Any] | None:
        """The operation's ``data``; None when the standard execution must answer."""
        values = None
        if self._variables is not None:
            values = self._variables(variables or {})
            if isinstance(values, list):  # errors, which the standard way reports
                return None
        clock = time.perf_counter if asyncio._get_running_loop() else time.thread_time
        started = clock()
        try:
            return self._complete(root, Run(context, values))
        except (TimedOut, OverBudget):
            raise  # not a fault: the operation must stop
        except Exception:  # any fault: the standard way reports it
            return None
        finally:
            self.latest = clock() - started


def plan(schema: Schema, document: DocumentNode, operation_name: str | None) -> Plan | None:
    """The Plan of a query operation of a valid document; None when it has none.

    Only for a document already validated against ``schema``: this does not validate.
    """
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is not None:
        operations = [o for o in operations if o.name and o.name.value == operation_name]
    if len(operations) != 1 or operations[0].operation != OperationType.QUERY:
        return None
    operation = operations[0]
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    compiler = _Compiler(schema, fragments)
    root = schema._schema.query_type
    try:
        complete = compiler.object(root, [operation.selection_set], root=True)
    except Unplannable:
        return None
    return Plan(schema._schema, operation, complete)


class _Compiler:
    def __init__(self, schema: Schema, fragments: dict[str, FragmentDefinitionNode]) -> None:
        self.schema, self.fragments = schema, fragments
        converter = schema.schema_converter
        self.convert = functools.partial(
            convert_arguments, scalar_registry=converter.scalar_registry, config=schema.config
        )

    def object(
        self,
        type_: GraphQLObjectType,
        selections: list[SelectionSetNode],
        nullable: bool = True,
        root: bool = False,
    ) -> Complete:
        """A function building the dict of one object, generated: one expression a field.

        Generated rather than looped over, because the loop's calls per field
        cost more than the fields themselves.
        """
        # Only checked names reach the source: response keys are GraphQL names (the
        # parser allows nothing else), attributes are identifiers, the rest is repr().
        names: dict[str, Any] = {
            "null": _null,
            "nullable": nullable,
            "isfinite": math.isfinite,
        }
        entries = [
            f"{key!r}: {self.field(type_, nodes, i, names)}"
            for i, (key, nodes) in enumerate(self.collect(type_, selections))
        ]
        source = [
            "def complete(value, run):",
            "    if value is None: return null(nullable)" if not root else "",
            f"    return {{{', '.join(entries)}}}",
        ]
        exec("\n".join(source), names)
        return names["complete"]

    def collect(
        self, type_: GraphQLObjectType, selections: list[SelectionSetNode]
    ) -> list[tuple[str, list[FieldNode]]]:
        """The fields selected on ``type_`` by response key, in order, fragments merged."""
        fields: dict[str, list[FieldNode]] = {}
        spread: set[str] = set()

        def add(selection_set: SelectionSetNode) -> None:
            for node in selection_set.selections:
                if node.directives:  # @skip, @include: decided per request
                    raise Unplannable("directives")
                if isinstance(node, FieldNode):
                    key = node.alias.value if node.alias else node.name.value
                    fields.setdefault(key, []).append(node)
                    continue
                if isinstance(node, FragmentSpreadNode):
                    if node.name.value in spread:
                        continue
                    spread.add(node.name.value)
                    node = self.fragments[node.name.value]
                condition = node.type_condition
                if condition is not None and condition.name.value != type_.name:
                    raise Unplannable("a fragment on another type")
                add(node.selection_set)  # in place, as graphql-core orders fields

        for selection_set in selections:
            add(selection_set)
        return list(fields.items())

    def field(
        self, type_: GraphQLObjectType, nodes: list[FieldNode], i: int, names: dict[str, Any]
    ) -> str:
        """The expression of one field's JSON value; what it calls is put in ``names``."""
        name = nodes[0].name.value
        if name == "__typename":
            return repr(type_.name)
        definition = type_.fields.get(name)
        field = self.schema.get_field_for_type(name, type_.name)
        if definition is None or field is None or field.extensions or field.is_async:
            raise Unplannable(name)  # introspection, or what only Strawberry's wrapper does
        if field.base_resolver is not None:
            names[f"resolve_{i}"], value = self.resolver(field, definition, nodes[0], i)
        elif field.default_resolver is getattr and _plain_name(field.python_name):
            value = f"value.{field.python_name}"
        else:
            raise Unplannable(name)
        selections = [node.selection_set for node in nodes if node.selection_set is not None]
        names[f"complete_{i}"] = self.completer(definition.type, selections)
        # The common cases inline: a value already of its JSON type, a list of objects.
        type_ = get_nullable_type(definition.type)
        check = _NATIVE_CHECKS.get(getattr(type_, "name", None))
        if check is not None:
            test = check.format(set=f"(x_{i} := {value})", x=f"x_{i}")
            return f"(x_{i} if {test} else complete_{i}(x_{i}, run))"
        item = type_.of_type if is_list_type(type_) else None
        if is_non_null_type(item) and is_object_type(item.of_type):
            names[f"item_{i}"] = self.completer(item, selections)
            names[f"rows_{i}"] = self.rows(item.of_type, selections)
            # A list given as columns (see ``rows``) is built from them when they hold every
            # field asked; any other list, or columns lacking one, object by object.
            return (
                f"(complete_{i}(x_{i}, run) if (x_{i} := {value}) is None "
                f"else r_{i} if (c_{i} := getattr(x_{i}, 'graphql_columns', None)) is not None "
                f"and (r_{i} := rows_{i}(c_{i})) is not None "
                f"else [item_{i}(v, run) for v in x_{i}])"
            )
        return f"complete_{i}({value}, run)"

    def rows(
        self, type_: GraphQLObjectType, selections: list[SelectionSetNode]
    ) -> Callable[[dict], list | None]:
        """A function building the JSON of a list of ``type_`` objects from columns, or
        None when the columns lack a field the selection asks.

        A resolver may return, for a list of objects, a sequence with ``graphql_columns``:
        field path (GraphQL names, ``("package", "name")``) -> the values of every row, each
        already of its JSON type (a string, a 32-bit int...). Its rows are then built in one
        comprehension, no object made or resolver called per row: 50,000 rows of an
        impact's packages took 0.6 µs each object by object. The selection may hold fields
        without arguments, of a native scalar type or an object type whose selection is
        alike, and ``__typename``; else (or with a column missing) each row is completed
        as its object, which the sequence gives.
        """
        paths: list[tuple[str, ...]] = []
        try:
            row = self.row(type_, selections, (), paths)
        except Unplannable:
            return lambda _columns: None
        if not paths:  # nothing says how many rows there are
            return lambda _columns: None
        values = ", ".join(f"c{j}" for j in range(len(paths)))
        source = [
            "def rows(columns):",
            f"    if not columns.keys() >= {set(paths)!r}: return None",
            f"    return [{row} for ({values},) in zip("
            + ", ".join(f"columns[{p!r}]" for p in paths)
            + ", strict=True)]",
        ]
        names: dict[str, Any] = {}
        exec("\n".join(source), names)
        return names["rows"]

    def row(
        self,
        type_: GraphQLObjectType,
        selections: list[SelectionSetNode],
        prefix: tuple[str, ...],
        paths: list[tuple[str, ...]],
    ) -> str:
        """The expression of one row's dict, its values named ``c0``, ``c1``... after the
        column paths it appends to ``paths``."""
        entries = []
        for key, nodes in self.collect(type_, selections):
            name = nodes[0].name.value
            if name == "__typename":
                entries.append(f"{key!r}: {type_.name!r}")
                continue
            definition = type_.fields.get(name)
            if definition is None or definition.args:
                raise Unplannable(name)
            kind = get_nullable_type(definition.type)
            if is_leaf_type(kind) and kind.name in _NATIVE_CHECKS:
                paths.append((*prefix, name))
                entries.append(f"{key!r}: c{len(paths) - 1}")
            elif is_object_type(kind):
                inner = [node.selection_set for node in nodes if node.selection_set is not None]
                entries.append(f"{key!r}: {self.row(kind, inner, (*prefix, name), paths)}")
            else:
                raise Unplannable(name)
        return "{" + ", ".join(entries) + "}"

    def resolver(
        self, field: Any, definition: GraphQLField, node: FieldNode, i: int
    ) -> tuple[Callable, str]:
        """The function to call for a field, and the expression calling it on ``value``."""
        function, resolver = field.base_resolver.wrapped_func, field.base_resolver
        takes_self = resolver.self_parameter is not None
        info = resolver.info_parameter.name if resolver.info_parameter else None
        sources = [p.name for p in (resolver.root_parameter, resolver.parent_parameter) if p]
        if not (definition.args or info or sources):  # nothing to pass: call it as it is
            return function, f"resolve_{i}(value)" if takes_self else f"resolve_{i}()"
        arguments = self.arguments(field, definition, node)

        def resolve(source: Any, run: Run) -> Any:
            kwargs = arguments(run)
            if info:
                kwargs[info] = run
            for parameter in sources:
                kwargs[parameter] = source
            return function(source, **kwargs) if takes_self else function(**kwargs)

        return resolve, f"resolve_{i}(value, run)"

    def arguments(
        self, field: Any, definition: GraphQLField, node: FieldNode
    ) -> Callable[[Run], dict[str, Any]]:
        """The resolver's keyword arguments, converted once when they hold no variable."""
        if not definition.args:
            return lambda _run: {}

        names = arguments_converter(field.arguments, self.schema.config.name_converter)
        read = reader(definition, node)
        if names is not None and all(c is identity for _, _, c in names):
            # Strawberry's conversion would hand each value on unchanged (its name look-ups
            # and type checks took 4-5% of a point query's time)

            def convert(variables: VariableValues | None) -> dict[str, Any]:
                given = read(variables)
                return {python: given[name] for name, python, _ in names if name in given}

        elif names is not None:  # as Strawberry's, by functions made once per type (inputs)

            def convert(variables: VariableValues | None) -> dict[str, Any]:
                given = read(variables)
                return {python: c(given[name]) for name, python, c in names if name in given}

        else:

            def convert(variables: VariableValues | None) -> dict[str, Any]:
                return self.convert(read(variables), field.arguments)

        if not any(holds_variables(a.value) for a in node.arguments or ()):
            # Shared by every answer: resolvers never change their arguments.
            converted = convert(None)
            return lambda _run: dict(converted)
        return lambda run: convert(run.variables)

    def completer(self, type_: GraphQLOutputType, selections: list[SelectionSetNode]) -> Complete:
        nullable = not is_non_null_type(type_)
        if not nullable:
            type_ = type_.of_type
        if is_list_type(type_):
            item = self.completer(type_.of_type, selections)

            def complete(value: Any, run: Run) -> Any:
                return _null(nullable) if value is None else [item(v, run) for v in value]

            return complete
        if is_leaf_type(type_):
            return _leaf(type_, nullable)
        if is_object_type(type_):
            return self.object(type_, selections, nullable)
        raise Unplannable(f"abstract type {type_}")


def _plain_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name)


# The common scalars pass through as they are when already of their JSON type.
_NATIVE = {GraphQLString.name: str, GraphQLID.name: str, GraphQLBoolean.name: bool}
# The same tests in generated code, on the expression ``set`` that names its value ``x``.
# ``type(x) is T`` and a chained comparison, not ``x.__class__`` and ``x in range(...)``:
# CPython specializes both, and the checks were a fifth of a 50,000-row list's time.
_INT_MIN, _INT_END = -(2**31), 2**31  # GraphQL's Int: 32 bits, signed
_NATIVE_CHECKS = {
    **{name: f"type({{set}}) is {native.__name__}" for name, native in _NATIVE.items()},
    GraphQLInt.name: f"(type({{set}}) is int and {_INT_MIN} <= {{x}} < {_INT_END})",
    GraphQLFloat.name: "(type({set}) is float and isfinite({x}))",
}


def _leaf(type_: GraphQLLeafType, nullable: bool) -> Complete:
    serialize, native = type_.serialize, _NATIVE.get(type_.name)

    def serialized(value: Any) -> Any:
        return _null(nullable) if value is None else serialize(value)

    if type_.name == GraphQLInt.name:
        return lambda v, _run: v if type(v) is int and _INT_MIN <= v < _INT_END else serialized(v)
    if type_.name == GraphQLFloat.name:
        return lambda v, _run: v if type(v) is float and math.isfinite(v) else serialized(v)
    if native is not None:
        return lambda v, _run: v if type(v) is native else serialized(v)
    return lambda v, _run: serialized(v)


def _null(nullable: bool) -> None:
    if not nullable:
        raise NoAnswer("null in a non-null field")
