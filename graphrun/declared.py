"""The classes a graph's data may be decoded into: those the application declared.

Decoding stored or received data (`graphrun.serde.loads`) builds a class only
when it is in a graph's `DeclaredTypes`: the classes reachable from its state,
input and output schemas and its nodes' input annotations, the classes given
to `compile(types=[...])`, and LangChain's message classes. A class path named
by data is looked up here and nowhere else: nothing is imported and nothing is
called because data said so.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

# LangChain's message classes are plain data and the common currency of agent
# graphs, so they are always declared. Fixed names, imported lazily on first use.
LANGCHAIN_MESSAGES: dict[str, tuple[str, str]] = {
    f"langchain_core.messages.{module}:{name}": ("langchain_core.messages", name)
    for module, names in {
        "ai": ("AIMessage", "AIMessageChunk"),
        "human": ("HumanMessage", "HumanMessageChunk"),
        "system": ("SystemMessage", "SystemMessageChunk"),
        "tool": ("ToolMessage", "ToolMessageChunk"),
        "function": ("FunctionMessage", "FunctionMessageChunk"),
        "chat": ("ChatMessage", "ChatMessageChunk"),
        "modifier": ("RemoveMessage",),
    }.items() for name in names
}


def type_path(cls: type) -> str:
    """How stored data names a class: `module:qualname`."""
    return f"{cls.__module__}:{cls.__qualname__}"


def is_model(cls: Any) -> bool:
    return isinstance(cls, type) and hasattr(cls, "model_validate") and hasattr(
        cls, "model_fields")


def is_namedtuple(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


class DeclaredTypes:
    """An allow-list of classes, by the path stored data names them with."""

    def __init__(self, classes: Iterable[type] = (),
                 aliases: Mapping[str, type] | None = None) -> None:
        """`aliases`: other paths stored data may name a class by (where it used to live)."""
        self._by_path: dict[str, type] = {}
        for cls in classes:
            self._by_path[type_path(cls)] = cls
        self._aliases = dict(aliases or {})

    def __contains__(self, cls: object) -> bool:
        return isinstance(cls, type) and self.get(type_path(cls)) is cls

    def __iter__(self) -> Iterator[type]:
        return iter(self._by_path.values())

    def __or__(self, other: Iterable[type]) -> DeclaredTypes:
        return DeclaredTypes([*self, *other], self._aliases)

    def get(self, path: str) -> type | None:
        """The declared class named `path`, or None. Never imports what data names."""
        cls = self._by_path.get(path) or self._aliases.get(path)
        if cls is None and path in LANGCHAIN_MESSAGES:
            module, name = LANGCHAIN_MESSAGES[path]
            try:
                import langchain_core.messages as lc  # a fixed module, not one data names
            except ImportError:
                return None
            assert lc.__name__ == module
            cls = getattr(lc, name, None)
        return cls


NO_TYPES = DeclaredTypes()


def reachable(*annotations: Any) -> list[type]:
    """Every model, dataclass, enum and NamedTuple class reachable from `annotations`.

    Walks unions, containers, `Annotated`, `Literal` (for enum members), and the
    fields of TypedDicts, pydantic models, dataclasses and NamedTuples.
    """
    found: dict[int, type] = {}
    seen: set[int] = set()

    def walk(t: Any) -> None:
        if t is None or id(t) in seen:
            return
        seen.add(id(t))
        origin = typing.get_origin(t)
        if origin is typing.Literal:
            for v in typing.get_args(t):
                if isinstance(v, enum.Enum):
                    found[id(type(v))] = type(v)
            return
        if origin is not None:  # list[X], X | None, Annotated[X, ...], dict[K, V], ...
            args = typing.get_args(t)
            for a in args[:1] if origin is typing.Annotated else args:
                walk(a)
            if isinstance(origin, type):
                walk(origin)
            return
        if isinstance(t, types.UnionType):
            for a in t.__args__:
                walk(a)
            return
        if not isinstance(t, type):
            return
        if issubclass(t, enum.Enum):
            found[id(t)] = t
            return
        if is_model(t) or dataclasses.is_dataclass(t) or is_namedtuple(t):
            found[id(t)] = t
            _walk_fields(t, walk)
        elif typing.is_typeddict(t):
            _walk_fields(t, walk)

    for a in annotations:
        walk(a)
    return list(found.values())


def _walk_fields(cls: type, walk: Callable[[Any], None]) -> None:
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception:  # an unresolvable forward reference: use what pydantic resolved
        hints = {k: f.annotation for k, f in getattr(cls, "model_fields", {}).items()}
    for name, hint in hints.items():
        if not name.startswith("__"):
            walk(hint)


def input_annotation(fn: Callable[..., Any]) -> Any:
    """The annotation of a node function's first parameter (its input schema), if any."""
    # A callable object's hints are on its class's __call__.
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        params = list(inspect.signature(fn).parameters.values())
        hints = typing.get_type_hints(target, include_extras=True)
    except Exception:
        return None
    return hints.get(params[0].name) if params else None
