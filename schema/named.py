"""What a Package, Compiler, Target, Stack or Tag object is at run time: its kind and name.

Those GraphQL types are all a name; their fields are worked out from it. A
resolver of one type family returns another's objects (a Spec its Package, a
Package its Compiler, a Mirror its Stack) as ``Named`` values of this module, so
no module of ``schema/`` imports one that imports it back, and an answer of a
thousand specs makes no Package object per spec. Each type accepts them
(``accepts``); Spec takes the graph's records, Mirror the graph's MirrorInfo.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Named:
    """A Package, Compiler, Target, Stack or Tag: ``kind`` is the SpecQuery field it fixes.

    >>> Named("stack", "e4s")
    Named(kind='stack', name='e4s')
    """

    kind: str
    name: str


def accepts(kind: str) -> Any:
    """The ``is_type_of`` of the GraphQL type whose objects are ``Named`` of this kind.

    >>> class Stack:
    ...     is_type_of = accepts("stack")
    >>> Stack.is_type_of(Named("stack", "e4s"), None), Stack.is_type_of(Named("tag", "v1"), None)
    (True, False)
    """

    def is_type_of(cls: type, obj: object, info: object) -> bool:
        return (type(obj) is Named and obj.kind == kind) or isinstance(obj, cls)

    return classmethod(is_type_of)


def names(kind: str, values: Any) -> list[Named]:
    """``Named`` objects of one kind, in the order of ``values``.

    >>> names("tag", ["develop", "v1"])
    [Named(kind='tag', name='develop'), Named(kind='tag', name='v1')]
    """
    return [Named(kind, v) for v in values]
