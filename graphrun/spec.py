"""The compiled topology the engine plans over: `GraphSpec`, its nodes and branches.

`StateGraph.compile()` builds a GraphSpec; the engine, the runner and both
drivers read it. It holds no callables the engine calls itself (node functions
and routing functions are called by the runner) and imports nothing that runs.
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
from typing import TYPE_CHECKING, Any

from graphrun.channels import (
    AfterFinish,
    BinaryOperatorAggregate,
    Channel,
    EphemeralValue,
    LastValue,
    NamedBarrierValue,
    Topic,
    UntrackedValue,
)
from graphrun.declared import NO_TYPES, DeclaredTypes, reachable
from graphrun.errors import GraphValidationError, InvalidUpdateError
from graphrun.types import END, INTERRUPT, PUSH, START, TASKS, RetryPolicy, Send, TimeoutPolicy

if TYPE_CHECKING:
    from graphrun.checkpoint import Write
    from graphrun.graph import StateGraph

_log = logging.getLogger("graphrun")


@dataclass(frozen=True)
class NodeSpec:
    """One node: its function and how it runs."""

    name: str
    fn: Callable[..., Any] | None
    retry_policy: tuple[RetryPolicy, ...] = ()  # the first that matches an error applies
    metadata: dict[str, Any] = field(default_factory=dict)
    timeout: timedelta | None = None  # the activity's start-to-close timeout on Temporal
    heartbeat_timeout: timedelta | None = None
    timeout_policy: TimeoutPolicy | None = None  # enforced on each attempt (async nodes)
    # The node that handles its error once its retries are used up (LangGraph's
    # `__error_handler__<node>` or `__default_error_handler__`); a handler has none.
    error_handler_node: str | None = None
    is_error_handler: bool = False
    local: bool | None = None
    injects: tuple[str, ...] = ()  # config / runtime / writer / store, passed by name
    is_async: bool = False
    is_subgraph: bool = False
    defer: bool = False  # runs only once the run has nothing else to do
    # The graph a function node calls, found in its closure (LangGraph looks there too),
    # so get_state() can show that subgraph's state under the task.
    calls_graph: Any = None
    input_schema: Any = None  # what the node reads, if not the state schema
    input_keys: tuple[str, ...] | None = None
    # A Send's task also gets the state the node would read from an edge (`Task.state`):
    # LangGraph's ToolNode reads it for the tool calls it is sent.
    reads_state: bool = False
    # Run under an async driver instead of `fn` (LangGraph's nodes have both bodies).
    afn: Callable[..., Any] | None = None
    cache_policy: Any = None  # a CachePolicy (or LangGraph's): see graphrun.cache
    # Where its Commands may go, for drawing only: add_node(..., destinations=...) as
    # (node, edge label or None) pairs.
    destinations: tuple[tuple[str, str | None], ...] = ()
    trace_policy: Any = None  # a TracePolicy: what tracers record of the node's run


@dataclass(frozen=True)
class Branch:
    """A conditional edge: `path(state)` returns names, END or Sends."""

    path: Callable[..., Any]
    path_map: dict[Hashable, str] | None
    injects: tuple[str, ...] = ()
    input_schema: Any = None  # what the routing function reads, if not the state schema
    # Unannotated (or a plain dict): it also sees keys its node returned outside the
    # state, as LangGraph passes them on.
    sees_extra_keys: bool = False


@functools.cache
def schema_keys(schema: Any) -> tuple[str, ...]:
    return tuple(state_fields(schema))


def is_schema(hint: Any) -> bool:
    """A class whose fields are state keys: a TypedDict, pydantic model or dataclass."""
    if not isinstance(hint, type):
        return False
    try:
        return bool(typing.get_type_hints(hint))
    except Exception:
        return False


ROOT = "__root__"  # the one channel of a graph whose state is a single value


def state_fields(schema: Any) -> dict[str, Any]:
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
    # LangGraph's rule: a lone `__root__` key is a one-value state (its legacy spelling).
    return {k: v for k, v in hints.items() if k != "__slots__"}


def channel_for(key: str, annotation: Any) -> Channel:
    """LangGraph's rule: the last `Annotated` metadata, if callable, is the reducer, and it
    must take two positional parameters (defaults or not)."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        reducer = meta[-1] if meta else None
        if (channel := _channel_class(key, reducer)) is not None:
            return channel
        if callable(reducer):
            if _positional(reducer) != 2:
                raise GraphValidationError(
                    f"Invalid reducer signature for state key {key!r}. Expected (a, b) -> c, "
                    f"got {reducer!r}{_signature(reducer)}.")
            return BinaryOperatorAggregate(key, reducer, reducer_start(base))
    return LastValue(key)


def _channel_class(key: str, meta: Any) -> Channel | None:
    """`Annotated[T, UntrackedValue]`: a channel class, graphrun's or LangGraph's, in
    place of a reducer. LangGraph's other channel classes are refused by name."""
    if meta is UntrackedValue:
        return UntrackedValue(key)
    if isinstance(meta, type) and meta.__module__.startswith("langgraph.channels"):
        if meta.__name__ == "UntrackedValue":
            return UntrackedValue(key)
        raise GraphValidationError(
            f"State key {key!r}: LangGraph's channel class {meta.__name__} is not supported; "
            f"declare a reducer (Annotated[T, fn]) or graphrun.UntrackedValue.")
    return None


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


def reducer_start(base: Any) -> Callable[[], Any] | None:
    """The reducer's starting value: the annotated type called with no arguments."""
    origin = typing.get_origin(base) or base
    if origin in (collections.abc.Sequence, collections.abc.MutableSequence):
        return list
    if origin in (collections.abc.Set, collections.abc.MutableSet):
        return set
    if origin in (collections.abc.Mapping, collections.abc.MutableMapping):
        return dict
    return origin if isinstance(origin, type) else None


def declared_types(schemas: Sequence[Any], extra: Iterable[type]) -> DeclaredTypes:
    classes: list[type] = []
    for s in schemas:
        classes += list(s) if isinstance(s, DeclaredTypes) else reachable(s)
    for t in extra:
        if not isinstance(t, type):
            raise GraphValidationError(f"compile(types=...) takes classes, got {t!r:.80}.")
        classes += [t, *reachable(t)]
    return DeclaredTypes(classes)



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
    trigger_channels: frozenset[str] = frozenset()  # the channels that start a node
    # Nodes read how many steps the run has left (LangGraph's managed RemainingSteps).
    counts_steps: bool = False
    recursion_limit: int = 25  # the default of a run's `recursion_limit`

    @classmethod
    def build(cls, b: StateGraph, *, name: str, interrupt_before: Sequence[str],
              interrupt_after: Sequence[str], strict_resume: bool,
              local_activities: bool = False, types: Iterable[type] = ()) -> GraphSpec:
        declared = b.declared_channels or {}
        channels: dict[str, Channel] = {
            k: declared[k] if k in declared else channel_for(k, t)
            for k, t in b.channel_types.items()}
        channels[START] = EphemeralValue(START)
        channels[TASKS] = Topic(TASKS)
        nodes = {START: NodeSpec(name=START, fn=None), **b.nodes_with_defaults()}
        for n in b.branches:  # a Send's task routes on the state, as in LangGraph
            if n in nodes and n != START and not nodes[n].is_subgraph:
                nodes[n] = dataclasses.replace(nodes[n], reads_state=True)
        triggers: dict[str, list[str]] = {START: [START]}
        for n, node in nodes.items():
            if n == START:
                continue
            chan = f"branch:to:{n}"
            channels[chan] = (AfterFinish(chan, EphemeralValue(chan)) if node.defer
                              else EphemeralValue(chan))
            triggers[n] = [chan]
        joins: dict[str, list[str]] = {}
        for starts, end in b.joins:
            if end == END:  # waiting to end is ending: nothing to trigger
                continue
            chan = f"join:{'+'.join(starts)}:{end}"
            barrier = NamedBarrierValue(chan, starts)
            channels[chan] = AfterFinish(chan, barrier) if nodes[end].defer else barrier
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
            types=declared_types(b.schemas, types),
            counts_steps=b.counts_steps, recursion_limit=b.recursion_limit,
            trigger_channels=frozenset(c for ts in triggers.values() for c in ts))

    @property
    def input_type(self) -> Any:
        return self.builder.schemas[1] or self.builder.state_schema

    @property
    def output_type(self) -> Any:
        return self.builder.schemas[2] or self.builder.state_schema

    def shown_input(self, task: Any) -> Any:
        """A task's input as the 'tasks' stream shows it."""
        return task.input

    def shown_result(self, writes: Sequence[tuple[str, Any]]) -> dict[str, Any] | None:
        """A task's result as the 'tasks' stream shows it, for a graph that shows it its
        own way; None: its writes to state keys (engine.task_result)."""
        return None

    @property
    def read_keys(self) -> tuple[str, ...]:
        """The channels a node's task reads (an @entrypoint's reads its input)."""
        return self.state_keys

    @property
    def is_root(self) -> bool:
        """The state is one value (a root channel), not a dict of keys."""
        return self.state_keys == (ROOT,)

    @property
    def root_model_schema(self) -> bool:
        """Its input/output JSON Schema is LangGraph's root model of a one-value state
        (a StateGraph's; an @entrypoint's is its annotation's own)."""
        return self.is_root

    def usual_triggers(self, name: str, kind: str) -> tuple[str, ...]:
        """The triggers a task of node `name` has: its channels, or a Send's packet."""
        return (PUSH,) if kind == PUSH else self.triggers.get(name, ())

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
        if isinstance(update, dict) and INTERRUPT in update and INTERRUPT not in self.state_keys:
            raise InvalidUpdateError(
                f"node '{node}' returned a value with '{INTERRUPT}': a graph it ran paused "
                f"for a question, and a node's return value cannot carry that question. "
                f"Add that graph as a node (builder.add_node('{node}', graph)); a LangGraph "
                f"graph converted first with graphrun.from_langgraph(graph).", nodes=[node])
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
        keys: Iterable[str] = schema_keys(schema) if schema is not None else self.builder.fields
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


def goto_writes(graph: GraphSpec, gotos: Sequence[str | Send]) -> list[Write]:
    """Channel writes that make the named nodes (or Send packets) run next."""
    writes: list[Write] = []
    for g in gotos:
        if isinstance(g, Send):
            if g.node not in graph.nodes or g.node == START:
                raise InvalidUpdateError(f"Send to unknown node {g.node!r}. Known nodes: "
                                         f"{[n for n in graph.nodes if n != START]}.")
            writes.append((TASKS, g))
        elif g == END:
            continue
        elif g in graph.nodes and g != START:
            writes.append((f"branch:to:{g}", None))
        else:
            raise InvalidUpdateError(f"goto names unknown node {g!r}. Known nodes: "
                                     f"{[n for n in graph.nodes if n != START]}.")
    return writes
