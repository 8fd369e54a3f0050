"""StateGraph: the LangGraph-compatible builder. `compile()` makes a `GraphSpec`
(graphrun.spec) and returns the in-process `CompiledStateGraph` around it.

Reducers declared with `Annotated[T, reducer]` run inside the Temporal workflow
when the graph runs there, so they must be pure functions `(old, new) -> value`:
no I/O, no clock, no randomness. Node functions and the routing functions of
conditional edges may do anything; they run in activities.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from graphrun.channels import Channel
from graphrun.declared import input_annotation
from graphrun.errors import GraphValidationError
from graphrun.local import CompiledStateGraph
from graphrun.runtime import injected
from graphrun.spec import (
    Branch,
    GraphSpec,
    NodeSpec,
    channel_for,
    is_schema,
    state_fields,
)
from graphrun.types import END, START, RetryPolicy, TimeoutPolicy

Reducer = Callable[[Any, Any], Any]

# The nodes error handlers become (LangGraph's names).
ERROR_HANDLER_PREFIX = "__error_handler__"
DEFAULT_ERROR_HANDLER = "__default_error_handler__"


def activity_timeout_of(timeout: Any) -> timedelta | None:
    """On Temporal: the start-to-close timeout (a timedelta is only that, as before)."""
    if isinstance(timeout, TimeoutPolicy):
        run = timeout.seconds()[0]
        return timedelta(seconds=run) if run else None
    if isinstance(timeout, (int, float)):
        return timedelta(seconds=timeout)
    return timeout  # type: ignore[no-any-return]


def _policy(timeout: Any) -> TimeoutPolicy | None:
    """LangGraph's per-attempt limits: a TimeoutPolicy, or a number of seconds."""
    if isinstance(timeout, TimeoutPolicy):
        return timeout
    if isinstance(timeout, (int, float)):
        return TimeoutPolicy(run_timeout=timeout)
    return None


def coerce_timeout(timeout: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
    """`@task`/`@entrypoint(timeout=...)`: seconds or a timedelta cap a run, as LangGraph's."""
    if timeout is None or isinstance(timeout, TimeoutPolicy):
        return timeout
    return TimeoutPolicy(run_timeout=timeout)


def heartbeat_timeout_of(timeout: Any) -> timedelta | None:
    """On Temporal: the heartbeat timeout a TimeoutPolicy's idle limit asks for."""
    idle = timeout.seconds()[1] if isinstance(timeout, TimeoutPolicy) else None
    return timedelta(seconds=idle) if idle else None


def _runnable_node(runnable: Any) -> Callable[..., Any]:
    """A LangChain Runnable (a chat model, `prompt | llm`) as a node: it is called
    with the node's input and the task's config, as LangGraph calls it."""

    def node(state: Any, config: Any) -> Any:
        return runnable.invoke(state, config)

    node.__name__ = getattr(runnable, "name", None) or type(runnable).__name__
    return node


def _handler_spec(name: str, handler: Any, input_schema: Any) -> NodeSpec:
    """An error handler's node: it reads what the failed node read, and gets the failure
    as its `error: NodeError` parameter."""
    fn = (_runnable_node(handler) if not callable(handler)
          and callable(getattr(handler, "invoke", None)) else handler)
    return NodeSpec(name=name, fn=fn, input_schema=input_schema,
                    input_keys=tuple(state_fields(input_schema)) if input_schema else None,
                    injects=injected(fn), is_async=is_async_callable(fn),
                    is_error_handler=True)


def _graph_in_closure(fn: Any) -> Any:
    """A compiled graph the function refers to (a closure cell or a global), if any."""
    try:
        refs = inspect.getclosurevars(fn)
    except (TypeError, ValueError):
        return None
    return next((v for v in (*refs.nonlocals.values(), *refs.globals.values())
                 if isinstance(v, CompiledStateGraph)), None)


def _destinations(given: Any) -> tuple[tuple[str, str | None], ...]:
    """add_node(..., destinations=...): node names, or a dict of node name to edge label."""
    if isinstance(given, Mapping):
        return tuple((str(k), None if v is None else str(v)) for k, v in given.items())
    return tuple((str(d), None) for d in given or ())


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """A coroutine function, or an object whose `__call__` is one."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None))  # noqa: B004 - an object with async __call__


# Nodes another library built, made graphrun's: each adapter takes (name, node) and gives
# graphrun's node, or None when the node is not its kind. graphrun.bridge registers
# LangGraph's (its graphs as subgraphs, its node code with LangGraph's config), so this
# module never imports it.
NODE_ADAPTERS: list[Callable[[str, Any], Any]] = []


def register_node_adapter(adapter: Callable[[str, Any], Any]) -> None:
    """Adapt nodes of another library's kind in `add_node` (see NODE_ADAPTERS)."""
    if adapter not in NODE_ADAPTERS:
        NODE_ADAPTERS.append(adapter)


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
                 input_schema: Any = None, output_schema: Any = None,
                 channels: dict[str, Channel] | None = None) -> None:
        """`channels` (key -> Channel) declares the state's channels outright instead of
        reading them from the schemas' annotations: for graphs built by another
        library's builder (graphrun.bridge), whose annotations name its own classes."""
        self.state_schema = state_schema
        self.declared_channels = channels
        self.context_schema = context_schema
        self.schemas = [state_schema, input_schema, output_schema,  # for declared types
                        context_schema]
        self.fields = state_fields(state_schema)
        # Every schema's keys are channels (LangGraph): input-only, output-only and the
        # private keys of nodes' input schemas too. The first annotation of a key wins.
        self.channel_types: dict[str, Any] = dict.fromkeys(channels or (), Any)
        for schema in (state_schema, input_schema, output_schema):
            self._add_schema(schema)
        self.input_keys = self._keys(input_schema)
        self.output_keys = self._keys(output_schema)
        self.nodes: dict[str, NodeSpec] = {}
        self.edges: list[tuple[str, str]] = []
        self.joins: list[tuple[tuple[str, ...], str]] = []
        self.branches: dict[str, list[Branch]] = {}
        self.node_defaults: dict[str, Any] = {}  # set_node_defaults()
        self.counts_steps = False  # see GraphSpec.counts_steps
        self.recursion_limit = 25

    def _keys(self, schema: Any) -> list[str]:
        keys = list(state_fields(schema)) if schema else list(self.fields)
        return keys if self.declared_channels is None else [
            k for k in keys if k in self.declared_channels]

    def _add_schema(self, schema: Any) -> None:
        if schema is None or self.declared_channels is not None:
            return
        for k, annotation in state_fields(schema).items():
            if k not in self.channel_types:
                channel_for(k, annotation)  # a bad reducer is an error here, as in LangGraph
                self.channel_types[k] = annotation

    # -- nodes -------------------------------------------------------------
    def add_node(self, node: str | Callable[..., Any], action: Callable[..., Any] | None = None,
                 *, retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                 metadata: dict[str, Any] | None = None,
                 timeout: timedelta | float | TimeoutPolicy | None = None,
                 heartbeat_timeout: timedelta | None = None, local: bool | None = None,
                 **kwargs: Any) -> StateGraph:
        """Add a node. `add_node(fn)` names it after the function.

        graphrun extras: `timeout` (the activity's start-to-close timeout),
        `heartbeat_timeout`, and `local=True` to run the node as a Temporal local
        activity (for short nodes). `defer=True` runs the node only once the run has
        nothing else to do (LangGraph's). `cache_policy=CachePolicy(...)` caches the
        node's writes by its input in the graph's `compile(cache=...)` (see
        graphrun.cache). `trace_policy=TracePolicy(...)` changes what tracers record
        of the node's run (LangGraph's). `error_handler=fn` adds a node
        `__error_handler__<node>` that runs `fn` (given the failure as an `error:
        NodeError` parameter) when the node fails once its retries are used up, in the
        same step, and what it returns stands for the node's output (LangGraph's).
        Unknown LangGraph options are ignored.
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
        given: Any = action  # typed as a function, but a Runnable or anything may come
        for adapt in NODE_ADAPTERS:  # another library's graph or node code (the bridge)
            adapted = adapt(node, given)
            if adapted is not None:
                action = given = adapted
                break
        if not callable(given) and callable(getattr(given, "invoke", None)) and not isinstance(
                given, CompiledStateGraph):
            action = _runnable_node(given)
        elif not callable(given) and not isinstance(given, CompiledStateGraph):
            raise GraphValidationError(
                f"node '{node}': {type(action).__name__} is not a function, a graph or a "
                f"Runnable.")
        if node in self.nodes:
            raise GraphValidationError(f"node '{node}' is already present. Node names are unique.")
        if node in (START, END) or any(c in node for c in "|:"):
            raise GraphValidationError(
                f"node name {node!r} is reserved or contains '|' or ':'. Pick another name.")
        policies = ((retry_policy,) if isinstance(retry_policy, RetryPolicy)
                    else tuple(retry_policy or ()))
        is_sub = isinstance(action, CompiledStateGraph)
        input_schema = None
        if not is_sub:
            hint = kwargs.get("input_schema") or input_annotation(action)
            if is_schema(hint) and hint is not self.state_schema:
                input_schema = hint
                self._add_schema(hint)
        self.schemas.append(action.spec.types if isinstance(action, CompiledStateGraph) else
                            input_schema)
        handler_node = None
        if (handler := kwargs.get("error_handler")) is not None:
            # A node of its own, as LangGraph's: it runs in the failed task's step.
            handler_node = f"{ERROR_HANDLER_PREFIX}{node}"
            if handler_node in self.nodes:
                raise GraphValidationError(
                    f"Auto-generated error handler node {handler_node!r} already exists. "
                    f"Rename that node.")
            self.nodes[handler_node] = _handler_spec(handler_node, handler, input_schema)
        self.nodes[node] = NodeSpec(
            name=node, fn=action, retry_policy=policies, metadata=dict(metadata or {}),
            input_schema=input_schema,
            input_keys=tuple(state_fields(input_schema)) if input_schema else None,
            timeout=activity_timeout_of(timeout), local=local,
            heartbeat_timeout=heartbeat_timeout or heartbeat_timeout_of(timeout),
            timeout_policy=_policy(timeout), error_handler_node=handler_node,
            injects=() if is_sub else injected(action),
            is_async=False if is_sub else is_async_callable(action), is_subgraph=is_sub,
            defer=bool(kwargs.get("defer")), reads_state=getattr(action, "reads_state", False),
            afn=getattr(action, "afn", None), cache_policy=kwargs.get("cache_policy"),
            destinations=_destinations(kwargs.get("destinations")),
            trace_policy=kwargs.get("trace_policy"),
            calls_graph=None if is_sub else _graph_in_closure(action))
        return self

    def set_node_defaults(self, *, retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                          error_handler: Callable[..., Any] | None = None,
                          timeout: float | timedelta | TimeoutPolicy | None = None,
                          cache_policy: Any = None, **_: Any) -> StateGraph:
        """Policies for every node that has none of its own, applied at compile()
        (LangGraph's). Not inherited by subgraphs."""
        if retry_policy is not None:
            self.node_defaults["retry_policy"] = (
                (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy))
        if error_handler is not None:
            self.node_defaults["error_handler"] = error_handler
        if timeout is not None:
            self.node_defaults["timeout"] = timeout
        if cache_policy is not None:
            self.node_defaults["cache_policy"] = cache_policy
        return self

    def nodes_with_defaults(self) -> dict[str, NodeSpec]:
        """The nodes as compiled: `set_node_defaults` fills what a node left unset (as
        LangGraph: retries and timeouts for every node, handlers included; the default
        error handler, a node `__default_error_handler__`, and the cache for the others)."""
        d = self.node_defaults
        nodes = dict(self.nodes)
        default = None
        if "error_handler" in d:
            default = DEFAULT_ERROR_HANDLER
            if default in nodes:
                raise GraphValidationError(
                    f"Node name {default!r} is reserved for the default error handler "
                    f"(set_node_defaults(error_handler=...)); rename the node.")
            nodes[default] = _handler_spec(default, d["error_handler"], None)
        out = {}
        for name, spec in nodes.items():
            changes: dict[str, Any] = {}
            if "retry_policy" in d and not spec.retry_policy:
                changes["retry_policy"] = d["retry_policy"]
            if default and not spec.is_error_handler and spec.error_handler_node is None:
                changes["error_handler_node"] = default
            if "cache_policy" in d and spec.cache_policy is None and not spec.is_error_handler:
                changes["cache_policy"] = d["cache_policy"]
            if "timeout" in d and spec.timeout_policy is None and spec.timeout is None:
                t = d["timeout"]
                changes.update(timeout=activity_timeout_of(t), timeout_policy=_policy(t),
                               heartbeat_timeout=spec.heartbeat_timeout or heartbeat_timeout_of(t))
            out[name] = dataclasses.replace(spec, **changes) if changes else spec
        return out

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
        schema = hint if is_schema(hint) and hint is not self.state_schema else None
        self._add_schema(schema)
        self.branches.setdefault(source, []).append(
            Branch(path=path, path_map=dict(path_map) if path_map else None,
                   injects=injected(path), input_schema=schema,
                   sees_extra_keys=not is_schema(hint)))
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
        for spec in self.nodes.values():
            if spec.timeout_policy is not None and not spec.is_async:
                raise GraphValidationError(
                    f"node '{spec.name}': timeouts are only supported for async nodes (a "
                    f"sync node cannot be cancelled). Make it async, or on Temporal pass "
                    f"add_node(..., timeout=timedelta(...)) for the activity's timeout.")
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
                types: Iterable[type] = (), debug: bool = False,
                stream_transformers: Sequence[Any] = (), store: Any = None,
                cache: Any = None, transformers: Sequence[Any] | None = None) -> Any:
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
            stream_transformers: LangGraph stream transformers (classes or
                `scope -> transformer` factories) every `stream_events(version="v3")`
                of the graph runs (graphrun.run_stream). `transformers` is LangGraph's
                name for them; both may be given.
            store: LangGraph's long-term memory store (e.g. `InMemoryStore()`, or any
                `BaseStore`): nodes get it as `store`, `runtime.store`, `get_store()`.
                On Temporal a worker uses it unless `create_worker(store=...)` is given.
            cache: LangGraph's cache (e.g. `InMemoryCache()`, or any `BaseCache`) for
                the nodes and tasks that have a `CachePolicy`; nothing else is cached.
                On Temporal a worker uses it unless `create_worker(cache=...)` is given.
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
        compiled = CompiledStateGraph(spec, checkpointer=checkpointer, store=store,
                                      cache=cache)
        compiled.stream_transformers = (*stream_transformers, *(transformers or ()))
        return compiled
