"""StateGraph: the LangGraph-compatible builder, and the compiled topology it makes.

Reducers declared with `Annotated[T, reducer]` run inside the Temporal workflow
when the graph runs there, so they must be pure functions `(old, new) -> value`:
no I/O, no clock, no randomness. Node functions and the routing functions of
conditional edges may do anything; they run in activities.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import logging
import typing
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from graphrun.channels import (
    BinaryOperatorAggregate,
    Channel,
    EphemeralValue,
    LastValue,
    NamedBarrierValue,
    Topic,
)
from graphrun.declared import NO_TYPES, DeclaredTypes, input_annotation, reachable
from graphrun.errors import GraphValidationError, InvalidUpdateError
from graphrun.runtime import injected
from graphrun.types import END, START, TASKS, RetryPolicy

Reducer = Callable[[Any, Any], Any]
_log = logging.getLogger("graphrun")


@dataclass(frozen=True)
class NodeSpec:
    """One node: its function and how it runs."""

    name: str
    fn: Callable[..., Any] | None
    retry_policy: tuple[RetryPolicy, ...] = ()  # the first that matches an error applies
    metadata: dict[str, Any] = field(default_factory=dict)
    timeout: timedelta | None = None
    heartbeat_timeout: timedelta | None = None
    local: bool | None = None
    injects: tuple[str, ...] = ()  # config / runtime / writer / store, passed by name
    is_async: bool = False
    is_subgraph: bool = False
    input_schema: Any = None  # what the node reads, if not the state schema
    input_keys: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Branch:
    """A conditional edge: `path(state)` returns names, END or Sends."""

    path: Callable[..., Any]
    path_map: dict[Hashable, str] | None
    injects: tuple[str, ...] = ()
    input_schema: Any = None  # what the routing function reads, if not the state schema


@functools.cache
def _schema_keys(schema: Any) -> tuple[str, ...]:
    return tuple(_state_fields(schema))


def _is_schema(hint: Any) -> bool:
    """A class whose fields are state keys: a TypedDict, pydantic model or dataclass."""
    if not isinstance(hint, type):
        return False
    try:
        return bool(typing.get_type_hints(hint))
    except Exception:
        return False


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None))  # noqa: B004 - an object with async __call__


ROOT = "__root__"  # the one channel of a graph whose state is a single value


def _state_fields(schema: Any) -> dict[str, Any]:
    """The state keys and their (Annotated) types, in declaration order.

    A schema with no fields (`Annotated[list, operator.add]`, `int`) is one value: the
    graph's state is that value itself, as in LangGraph.
    """
    if not hasattr(schema, "__annotations__") and (  # LangGraph's rule, for types only
            isinstance(schema, type) or typing.get_origin(schema) is not None):
        return {ROOT: schema}
    try:
        hints = typing.get_type_hints(schema, include_extras=True)
    except Exception as exc:
        raise GraphValidationError(
            f"cannot read the fields of state schema {schema!r}: {exc}. Use a TypedDict, "
            f"a pydantic model or a dataclass.") from exc
    if hasattr(schema, "model_fields"):  # pydantic: keep declared fields only
        return {k: hints.get(k, Any) for k in schema.model_fields}
    return {k: v for k, v in hints.items() if not k.startswith("__")}


def _channel_for(key: str, annotation: Any) -> Channel:
    """LangGraph's rule: the last `Annotated` metadata, if callable, is the reducer, and it
    must take two positional parameters (defaults or not)."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        reducer = meta[-1] if meta else None
        if callable(reducer):
            if _positional(reducer) != 2:
                raise GraphValidationError(
                    f"Invalid reducer signature for state key {key!r}. Expected (a, b) -> c, "
                    f"got {reducer!r}{_signature(reducer)}.")
            return BinaryOperatorAggregate(key, reducer, _zero(base))
    return LastValue(key)


def _positional(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2  # builtins such as operator.add
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _signature(fn: Callable[..., Any]) -> str:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return ""


def _zero(base: Any) -> Callable[[], Any] | None:
    """The reducer's starting value: the annotated type called with no arguments."""
    origin = typing.get_origin(base) or base
    if origin in (collections.abc.Sequence, collections.abc.MutableSequence):
        return list
    if origin in (collections.abc.Set, collections.abc.MutableSet):
        return set
    if origin in (collections.abc.Mapping, collections.abc.MutableMapping):
        return dict
    return origin if isinstance(origin, type) else None


def _declared(schemas: Sequence[Any], extra: Iterable[type]) -> DeclaredTypes:
    classes: list[type] = []
    for s in schemas:
        classes += list(s) if isinstance(s, DeclaredTypes) else reachable(s)
    for t in extra:
        if not isinstance(t, type):
            raise GraphValidationError(f"compile(types=...) takes classes, got {t!r:.80}.")
        classes += [t, *reachable(t)]
    return DeclaredTypes(classes)


class StateGraph:
    """A graph whose nodes read and update a shared state.

    The state schema is a TypedDict, a pydantic model or a dataclass; a key
    declared `Annotated[T, reducer]` merges writes with the reducer, every other
    key keeps the last value written. Reducers must be pure (they run inside
    the Temporal workflow).

    Example:
        >>> import operator
        >>> from typing import Annotated, TypedDict
        >>> class State(TypedDict):
        ...     log: Annotated[list, operator.add]
        >>> builder = StateGraph(State)
        >>> builder.add_node("hello", lambda s: {"log": ["hello"]})  # doctest: +ELLIPSIS
        <graphrun.graph.StateGraph object at ...>
        >>> builder.add_edge(START, "hello")  # doctest: +ELLIPSIS
        <graphrun.graph.StateGraph object at ...>
        >>> builder.compile().invoke({"log": []})
        {'log': ['hello']}
    """

    def __init__(self, state_schema: Any, context_schema: Any = None, *,
                 input_schema: Any = None, output_schema: Any = None) -> None:
        self.state_schema = state_schema
        self.context_schema = context_schema
        self.schemas = [state_schema, input_schema, output_schema,  # for declared types
                        context_schema]
        self.fields = _state_fields(state_schema)
        # Every schema's keys are channels (LangGraph): input-only, output-only and the
        # private keys of nodes' input schemas too. The first annotation of a key wins.
        self.channel_types: dict[str, Any] = {}
        for schema in (state_schema, input_schema, output_schema):
            self._add_schema(schema)
        self.input_keys = list(_state_fields(input_schema)) if input_schema else list(self.fields)
        self.output_keys = (list(_state_fields(output_schema)) if output_schema
                            else list(self.fields))
        self.nodes: dict[str, NodeSpec] = {}
        self.edges: list[tuple[str, str]] = []
        self.joins: list[tuple[tuple[str, ...], str]] = []
        self.branches: dict[str, list[Branch]] = {}

    def _add_schema(self, schema: Any) -> None:
        if schema is None:
            return
        for k, annotation in _state_fields(schema).items():
            if k not in self.channel_types:
                _channel_for(k, annotation)  # a bad reducer is an error here, as in LangGraph
                self.channel_types[k] = annotation

    # -- nodes -------------------------------------------------------------
    def add_node(self, node: str | Callable[..., Any], action: Callable[..., Any] | None = None,
                 *, retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                 metadata: dict[str, Any] | None = None, timeout: timedelta | None = None,
                 heartbeat_timeout: timedelta | None = None, local: bool | None = None,
                 **kwargs: Any) -> StateGraph:
        """Add a node. `add_node(fn)` names it after the function.

        graphrun extras: `timeout` (the activity's start-to-close timeout),
        `heartbeat_timeout`, and `local=True` to run the node as a Temporal local
        activity (for short nodes). Unknown LangGraph options are ignored with
        the exception of `defer`, which is not supported.
        """
        if not isinstance(node, str):
            action = node
            inferred = (getattr(node, "name", None) or getattr(node, "__name__", None)
                        or type(node).__name__)
            if not isinstance(inferred, str):
                raise GraphValidationError(
                    "cannot name this node; call add_node('name', fn) instead.")
            node = inferred
        if action is None:
            raise GraphValidationError(f"node '{node}' has no function. Pass add_node('{node}', fn).")
        if kwargs.get("defer"):
            raise GraphValidationError(f"node '{node}': defer=True is not supported by graphrun.")
        if node in self.nodes:
            raise GraphValidationError(f"node '{node}' is already present. Node names are unique.")
        if node in (START, END) or any(c in node for c in "|:"):
            raise GraphValidationError(
                f"node name {node!r} is reserved or contains '|' or ':'. Pick another name.")
        policies = ((retry_policy,) if isinstance(retry_policy, RetryPolicy)
                    else tuple(retry_policy or ()))
        from graphrun.local import CompiledStateGraph  # the compiled graph lives there

        is_sub = isinstance(action, CompiledStateGraph)
        input_schema = None
        if not is_sub:
            hint = kwargs.get("input_schema") or input_annotation(action)
            if _is_schema(hint) and hint is not self.state_schema:
                input_schema = hint
                self._add_schema(hint)
        self.schemas.append(action.spec.types if isinstance(action, CompiledStateGraph) else
                            input_schema)
        self.nodes[node] = NodeSpec(
            name=node, fn=action, retry_policy=policies, metadata=dict(metadata or {}),
            input_schema=input_schema,
            input_keys=tuple(_state_fields(input_schema)) if input_schema else None,
            timeout=timeout, heartbeat_timeout=heartbeat_timeout, local=local,
            injects=() if is_sub else injected(action),
            is_async=False if is_sub else _is_async(action), is_subgraph=is_sub)
        return self

    def add_sequence(self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]
                     ) -> StateGraph:
        """Add nodes and chain them with edges, in order."""
        if not nodes:
            raise GraphValidationError("add_sequence() needs at least one node.")
        previous: str | None = None
        for item in nodes:
            name, fn = item if isinstance(item, tuple) else (None, item)
            before = set(self.nodes)
            self.add_node(name, fn) if name else self.add_node(fn)
            (current,) = set(self.nodes) - before
            if previous is not None:
                self.add_edge(previous, current)
            previous = current
        return self

    # -- edges -------------------------------------------------------------
    def add_edge(self, start_key: str | Sequence[str], end_key: str) -> StateGraph:
        """Add `a -> b`; `add_edge([a, b], c)` runs c once both a and b have run."""
        if isinstance(start_key, str):
            if start_key == END:
                raise GraphValidationError("END cannot be the start of an edge. Remove this edge.")
            if end_key == START:
                raise GraphValidationError("START cannot be the end of an edge. Remove this edge.")
            self.edges.append((start_key, end_key))
            return self
        starts = tuple(start_key)
        for s in starts:
            if s == END:
                raise GraphValidationError("END cannot be the start of an edge. Remove this edge.")
        if end_key == START:
            raise GraphValidationError("START cannot be the end of an edge. Remove this edge.")
        self.joins.append((starts, end_key))
        return self

    def add_conditional_edges(self, source: str, path: Callable[..., Any],
                              path_map: dict[Hashable, str] | list[str] | None = None
                              ) -> StateGraph:
        """After `source`, go where `path(state)` says: a name, a list, END or Sends."""
        if source == END:
            raise GraphValidationError("END cannot have outgoing edges. Remove this edge.")
        if isinstance(path_map, list):
            path_map = {name: name for name in path_map}
        hint = input_annotation(path)
        schema = hint if _is_schema(hint) and hint is not self.state_schema else None
        self._add_schema(schema)
        self.branches.setdefault(source, []).append(
            Branch(path=path, path_map=dict(path_map) if path_map else None,
                   injects=injected(path), input_schema=schema))
        return self

    def set_entry_point(self, key: str) -> StateGraph:
        return self.add_edge(START, key)

    def set_conditional_entry_point(self, path: Callable[..., Any],
                                    path_map: dict[Hashable, str] | list[str] | None = None
                                    ) -> StateGraph:
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph:
        return self.add_edge(key, END)

    # -- compile -----------------------------------------------------------
    def validate(self, interrupt: Sequence[str] = ()) -> None:
        known = set(self.nodes)
        for a, b in self.edges:
            for n, end in ((a, "starting"), (b, "ending")):
                if n not in known and n not in (START, END):
                    raise GraphValidationError(
                        f"Found edge {end} at unknown node '{n}' (edge {a!r} -> {b!r}). "
                        f"Known nodes: {sorted(known)}. Add the node first or fix the name.")
        for starts, end in self.joins:
            for n in (*starts, end):
                if n not in known and n not in (START, END):
                    raise GraphValidationError(
                        f"join edge {list(starts)} -> {end!r} names unknown node {n!r}. "
                        f"Known nodes: {sorted(known)}.")
        for source, branches in self.branches.items():
            if source not in known and source != START:
                raise GraphValidationError(
                    f"conditional edge from unknown node {source!r}. Known nodes: {sorted(known)}.")
            for br in branches:
                for target in (br.path_map or {}).values():
                    if target not in known and target != END:
                        raise GraphValidationError(
                            f"conditional edge from {source!r} maps to unknown node {target!r}."
                            f" Known nodes: {sorted(known)}.")
        has_entry = (any(a == START for a, _ in self.edges) or START in self.branches
                     or any(START in s for s, _ in self.joins))
        if not has_entry:
            raise GraphValidationError(
                "graph has no entry point. Add an edge from START, e.g. "
                "builder.add_edge(START, 'first_node').")
        for n in interrupt:
            if n != "*" and n not in known:
                raise GraphValidationError(
                    f"interrupt_before/interrupt_after names unknown node {n!r}. "
                    f"Known nodes: {sorted(known)}.")

    def compile(self, checkpointer: Any = None, *, name: str | None = None,
                interrupt_before: Sequence[str] | str | None = None,
                interrupt_after: Sequence[str] | str | None = None,
                strict_resume: bool = True, local_activities: bool = False,
                types: Iterable[type] = (), debug: bool = False, **_: Any) -> Any:
        """Validate the graph and return a runnable `CompiledStateGraph`.

        Args:
            checkpointer: where threads are saved (e.g. `InMemorySaver()`); required
                for interrupts. On Temporal the workflow is the checkpointer.
            name: the name a Temporal worker registers the graph under.
            interrupt_before / interrupt_after: static breakpoints (resume with None).
            strict_resume: reject resumes that answer nothing (LangGraph ignores
                them); pass False to keep LangGraph's leniency.
            local_activities: on Temporal, run every node as a local activity (for
                graphs of short nodes); `add_node(..., local=...)` overrides it per node.
            types: classes the graph's data may hold beyond those its schemas declare
                (e.g. a model stored in an `Any` field, or sent as an answer). On
                Temporal, data is decoded into declared classes only.
        """
        before = [interrupt_before] if isinstance(interrupt_before, str) else list(
            interrupt_before or [])
        after = [interrupt_after] if isinstance(interrupt_after, str) else list(
            interrupt_after or [])
        if checkpointer not in (None, True, False) and not callable(
                getattr(checkpointer, "thread", None)):
            raise TypeError(
                f"Invalid checkpointer provided: it must be graphrun's InMemorySaver (or None, "
                f"True, False), got "
                f"{type(checkpointer).__module__}.{type(checkpointer).__qualname__}. On Temporal "
                f"the workflow keeps the thread: compile without one.")
        self.validate([*before, *after])
        spec = GraphSpec.build(self, name=name or "LangGraph", interrupt_before=before,
                               interrupt_after=after, strict_resume=strict_resume,
                               local_activities=local_activities, types=types)
        from graphrun.local import CompiledStateGraph

        return CompiledStateGraph(spec, checkpointer=checkpointer)


@dataclass(frozen=True)
class GraphSpec:
    """The compiled, immutable topology that the engine plans over."""

    name: str
    builder: StateGraph
    nodes: dict[str, NodeSpec]  # includes START, in declaration order
    channels: dict[str, Channel]
    triggers: dict[str, tuple[str, ...]]
    edges: dict[str, tuple[str, ...]]  # node -> static successors
    joins: dict[str, tuple[str, ...]]  # node -> join channels it writes its name to
    branches: dict[str, tuple[Branch, ...]]
    interrupt_before: tuple[str, ...]
    interrupt_after: tuple[str, ...]
    strict_resume: bool
    local_activities: bool
    state_keys: tuple[str, ...]
    input_keys: tuple[str, ...]
    output_keys: tuple[str, ...]
    types: DeclaredTypes = NO_TYPES  # the classes its data may be decoded into

    @classmethod
    def build(cls, b: StateGraph, *, name: str, interrupt_before: Sequence[str],
              interrupt_after: Sequence[str], strict_resume: bool,
              local_activities: bool = False, types: Iterable[type] = ()) -> GraphSpec:
        channels: dict[str, Channel] = {k: _channel_for(k, t)
                                        for k, t in b.channel_types.items()}
        channels[START] = EphemeralValue(START)
        channels[TASKS] = Topic(TASKS)
        nodes = {START: NodeSpec(name=START, fn=None), **b.nodes}
        triggers: dict[str, list[str]] = {START: [START]}
        for n in b.nodes:
            channels[f"branch:to:{n}"] = EphemeralValue(f"branch:to:{n}")
            triggers[n] = [f"branch:to:{n}"]
        joins: dict[str, list[str]] = {}
        for starts, end in b.joins:
            if end == END:  # waiting to end is ending: nothing to trigger
                continue
            chan = f"join:{'+'.join(starts)}:{end}"
            channels[chan] = NamedBarrierValue(chan, starts)
            triggers[end].append(chan)
            for s in starts:
                joins.setdefault(s, []).append(chan)
        edges: dict[str, list[str]] = {}
        for a, z in b.edges:
            edges.setdefault(a, []).append(z)
        return cls(
            name=name, builder=b, nodes=nodes, channels=channels,
            triggers={k: tuple(v) for k, v in triggers.items()},
            edges={k: tuple(v) for k, v in edges.items()},
            joins={k: tuple(v) for k, v in joins.items()},
            branches={k: tuple(v) for k, v in b.branches.items()},
            interrupt_before=tuple(interrupt_before), interrupt_after=tuple(interrupt_after),
            strict_resume=strict_resume, local_activities=local_activities,
            state_keys=tuple(b.channel_types),
            input_keys=tuple(b.input_keys), output_keys=tuple(b.output_keys),
            types=_declared(b.schemas, types))

    @property
    def is_root(self) -> bool:
        """The state is one value (a root channel), not a dict of keys."""
        return self.state_keys == (ROOT,)

    def present(self, values: dict[str, Any]) -> Any:
        """State values as users see them: the value itself for a one-value state."""
        return values.get(ROOT) if self.is_root else values

    # -- reading and writing state ------------------------------------------
    def update_to_writes(self, node: str, update: Any) -> list[tuple[str, Any]]:
        """Turn a node's return value (dict, model, dataclass) into channel writes."""
        if update is None:
            return []
        if self.is_root:
            return [(ROOT, update)]
        items: Iterable[tuple[str, Any]]
        if isinstance(update, dict):
            items = update.items()
        elif hasattr(update, "model_fields_set") and hasattr(update, "model_fields"):
            # LangGraph's rule: a field left None by default, and not set, is not written.
            fields = type(update).model_fields
            items = ((k, getattr(update, k)) for k in fields
                     if getattr(update, k) is not None or fields[k].default is not None
                     or k in update.model_fields_set)
        elif dataclasses.is_dataclass(update) and not isinstance(update, type):
            items = ((f.name, getattr(update, f.name)) for f in dataclasses.fields(update))
        else:
            raise InvalidUpdateError(
                f"node '{node}' returned {type(update).__name__} {update!r}; expected a dict "
                f"of state updates, None, or a Command.", nodes=[node])
        items = list(items)
        writes = [(k, v) for k, v in items if k in self.channels and k in self.state_keys]
        unknown = [k for k, _ in items if k not in self.state_keys]
        if unknown and node not in (START, "input"):  # LangGraph ignores them too
            _log.warning("node %r returned keys %s that are not in the state schema %s; "
                         "they are ignored", node, unknown, list(self.state_keys))
        return writes

    def make_input(self, values: dict[str, Any], node: str | None = None,
                   schema: Any = None) -> Any:
        """Build the value a node (or routing function) receives: its input schema's
        keys, as that schema; the state schema's by default."""
        if self.is_root:
            return values.get(ROOT)
        spec = self.nodes.get(node) if node else None
        if schema is None and spec is not None:
            schema = spec.input_schema
        keys: Iterable[str] = _schema_keys(schema) if schema is not None else self.builder.fields
        schema = schema or self.builder.state_schema
        values = {k: values[k] for k in keys if k in values}
        if hasattr(schema, "model_validate"):
            return schema.model_validate(values) if values else schema.model_construct()
        if dataclasses.is_dataclass(schema) and isinstance(schema, type):
            try:
                return schema(**values)
            except TypeError:
                return values
        return dict(values)
