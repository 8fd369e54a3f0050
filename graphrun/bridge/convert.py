"""A LangGraph builder read into graphrun's: nodes, edges, branches, channels."""

from __future__ import annotations

import asyncio
import dataclasses
import typing
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, cast

from langgraph import channels as lg_channels
from langgraph import types as lg_types
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import message as lg_message
from langgraph.graph.state import CompiledStateGraph as LGCompiled
from langgraph.graph.state import StateGraph as LGStateGraph

from graphrun import channels as gr_channels
from graphrun.bridge import _langgraph as private
from graphrun.bridge import run
from graphrun.bridge.called import stateful_graph_called_by
from graphrun.bridge.errors import langgraph_errors
from graphrun.bridge.saver import LangGraphSaver, saved
from graphrun.errors import GraphValidationError
from graphrun.graph import StateGraph
from graphrun.local import CompiledStateGraph
from graphrun.spec import Branch, reducer_start
from graphrun.types import CachePolicy, RetryPolicy, StateUpdate, TracePolicy


def compiled(graph: Any, *, name: str | None, checkpointer: Any) -> Any:
    if isinstance(graph, LGStateGraph):
        builder, lg = graph, None
    elif isinstance(graph, LGCompiled):
        builder, lg = graph.builder, graph
    else:
        raise TypeError(f"from_langgraph() takes a LangGraph StateGraph or CompiledStateGraph, "
                        f"got {type(graph).__module__}.{type(graph).__qualname__}.")
    if checkpointer is None and lg is not None:
        checkpointer = lg.checkpointer
    checkpointer = _checkpointer(checkpointer)
    b = _builder(builder)
    if lg is not None:
        b.recursion_limit = int((lg.config or {}).get("recursion_limit", 25))
    own_name = getattr(lg, "name", None)
    g = b.compile(
        checkpointer, name=name or (own_name if own_name != "LangGraph" else None),
        interrupt_before=list(lg.interrupt_before_nodes) if lg else None,
        interrupt_after=list(lg.interrupt_after_nodes) if lg else None,
        strict_resume=False, transformers=getattr(lg, "stream_transformers", None))
    if isinstance(checkpointer, LangGraphSaver):
        checkpointer.spec = g.spec
    bridged = BridgedGraph(g.spec, checkpointer=g.checkpointer,
                           store=getattr(lg, "store", None),  # LangGraph's compile(store=...)
                           cache=getattr(lg, "cache", None))  # and compile(cache=...)
    bridged.stream_transformers = g.stream_transformers  # and compile(transformers=...)
    return bridged


class BridgedGraph(CompiledStateGraph):
    """A LangGraph graph on graphrun: takes LangGraph's Command as input too, and raises
    errors that are LangGraph's classes as well as graphrun's (graphrun.bridge.errors)."""

    def _run(self, input: Any, config: Any, options: Any) -> Any:
        return super()._run(run.to_graphrun(input), config, options)

    # An async entry point calls the saver from a thread of its own: LangGraph's async
    # savers (AsyncPostgresSaver, AsyncSqliteSaver) are bound to the event loop and refuse
    # a synchronous call made on it, but serve one made elsewhere while the loop is free.
    async def _off_loop(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not isinstance(self.checkpointer, LangGraphSaver):
            return fn(*args, **kwargs)
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def _arun(self, input: Any, config: Any, options: Any) -> Any:
        return await self._off_loop(self._run, input, config, options)

    # A LangGraph saver (graphrun.bridge.saver) is given each checkpoint as it is made and
    # each task's writes as it finishes; the config's own keys go into their metadata.
    def _thread(self, config: Any, *, required: bool = False) -> Any:
        thread = super()._thread(config, required=required)
        if (ledger := saved(thread)) is not None:
            ledger.config = config or {}
        return thread

    def _execute(self, call: Any, run: Any, config: Any, *args: Any, **kwargs: Any) -> Any:
        result = super()._execute(call, run, config, *args, **kwargs)
        self._task_done(call, run, result)
        return result

    async def _aexecute(self, call: Any, run: Any, config: Any, *args: Any, **kwargs: Any
                        ) -> Any:
        result = await super()._aexecute(call, run, config, *args, **kwargs)
        await self._off_loop(self._task_done, call, run, result)
        return result

    @staticmethod
    def _task_done(call: Any, run: Any, result: Any) -> None:
        if (ledger := saved(run.thread)) is not None:
            ledger.task_done(call, result)

    def _steps(self, run: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        ledger = saved(run.thread)
        try:
            for events in super()._steps(run, *args, **kwargs):
                if ledger is not None and _saves_steps(run):
                    ledger.sync(run.thread)
                yield events
        finally:
            if ledger is not None:
                ledger.sync(run.thread)

    async def _asteps(self, run: Any, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        ledger = saved(run.thread)
        try:
            async for events in super()._asteps(run, *args, **kwargs):
                if ledger is not None and _saves_steps(run):
                    await self._off_loop(ledger.sync, run.thread)
                yield events
        finally:
            if ledger is not None:
                await self._off_loop(ledger.sync, run.thread)

    def _update(self, config: Any, apply: Any) -> Any:
        out = super()._update(config, apply)
        # The thread the update was applied to (read once, by super()._update).
        thread = (self.checkpointer.cached(str(config["configurable"]["thread_id"]))
                  if isinstance(self.checkpointer, LangGraphSaver) else None)
        if thread is not None:
            thread.ledger.sync(thread)
        return out

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        with langgraph_errors():
            return super().invoke(*args, **kwargs)

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
        with langgraph_errors():
            return await super().ainvoke(*args, **kwargs)

    def stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
        with langgraph_errors():
            yield from super().stream(*args, **kwargs)

    async def astream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        with langgraph_errors():
            async for chunk in super().astream(*args, **kwargs):
                yield chunk

    def update_state(self, config: Any, values: Any, as_node: str | None = None) -> Any:
        with langgraph_errors():
            return super().update_state(config, run.to_graphrun(values), as_node)

    async def aupdate_state(self, config: Any, values: Any, as_node: str | None = None) -> Any:
        return await self._off_loop(self.update_state, config, values, as_node)

    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> Any:
        return await self._off_loop(self.get_state, config, subgraphs=subgraphs)

    async def aget_state_history(self, config: Any, **kw: Any) -> AsyncIterator[Any]:
        for snapshot in await self._off_loop(lambda: list(self.get_state_history(config,
                                                                                  **kw))):
            yield snapshot

    def bulk_update_state(self, config: Any, supersteps: Any) -> Any:
        with langgraph_errors():
            return super().bulk_update_state(config, [
                [StateUpdate(run.to_graphrun(u[0]), *u[1:]) for u in step]
                for step in supersteps])

    async def abulk_update_state(self, config: Any, supersteps: Any) -> Any:
        return await self._off_loop(self.bulk_update_state, config, supersteps)


def _saves_steps(run: Any) -> bool:
    """Whether what a step made goes to the saver between steps (with durability="exit",
    at the run's end only)."""
    return bool(run.options.durability != "exit")


def _checkpointer(saver: Any) -> Any:
    """LangGraph's saver keeps the threads (graphrun.bridge.saver); graphrun's as given."""
    if isinstance(saver, BaseCheckpointSaver):
        return LangGraphSaver(saver)
    return saver


def _builder(lg: Any) -> StateGraph:
    managed = dict(lg.managed)
    b = StateGraph(lg.state_schema, lg.context_schema,
                   input_schema=_or_none(lg.input_schema, lg.state_schema),
                   output_schema=_or_none(lg.output_schema, lg.state_schema),
                   channels={k: _channel(k, c) for k, c in lg.channels.items()})
    b.counts_steps = bool(managed)
    handlers = {n for n, s in lg.nodes.items() if getattr(s, "is_error_handler", False)}
    for n, spec in lg.nodes.items():
        if n in handlers:
            continue
        _add_node(b, lg, n, spec, managed)
    for start, end in sorted(lg.edges):
        b.add_edge(start, end)
    for starts, end in sorted(lg.waiting_edges):
        b.add_edge(list(starts), end)
    for source, branches in lg.branches.items():
        for branch in branches.values():
            b.branches.setdefault(source, []).append(Branch(
                path=run.path_caller(branch.path, managed),
                path_map=dict(branch.ends) if branch.ends else None, injects=("config",),
                input_schema=_or_none(branch.input_schema, lg.state_schema)))
    return b


def _or_none(schema: Any, state_schema: Any) -> Any:
    return None if schema is None or schema is state_schema else schema


def _add_node(b: StateGraph, lg: Any, name: str, spec: Any, managed: Mapping[str, Any]) -> None:
    runnable = spec.runnable
    if isinstance(runnable, (LGCompiled, CompiledStateGraph)):  # a subgraph: bridged too
        sub: Any = (runnable if isinstance(runnable, CompiledStateGraph)
                    else compiled(runnable, name=name, checkpointer=None))
        b.add_node(name, sub, metadata=spec.metadata, cache_policy=_cache(spec.cache_policy),
                   defer=spec.defer, trace_policy=_trace(spec))
        return
    input_schema = _or_none(spec.input_schema, lg.state_schema)
    node = node_function(runnable, managed, name)
    handler = None
    if handler_name := getattr(spec, "error_handler_node", None):
        # LangGraph's handler reads the error from its config (graphrun's task has it).
        handler = _sync_node(lg.nodes[handler_name].runnable, managed)
    b.add_node(name, node, retry_policy=_retry(spec.retry_policy), metadata=spec.metadata,
               timeout=run.timeout_policy(getattr(spec, "timeout", None)), defer=spec.defer,
               input_schema=input_schema, error_handler=handler,
               cache_policy=_cache(spec.cache_policy), trace_policy=_trace(spec))
    body = getattr(runnable, "func", None) or getattr(runnable, "afunc", None)
    if body is not None and (sub := stateful_graph_called_by(body)) is not None:
        b.nodes[name] = dataclasses.replace(b.nodes[name], calls_graph=sub)


def node_function(runnable: Any, managed: Mapping[str, Any], name: str) -> Any:
    """LangGraph node code (a RunnableCallable, a ToolNode) as a graphrun node function.

    Its attributes tell `StateGraph.add_node` what LangGraph's runner would do: `afn` is
    the body an async driver runs (`ainvoke` runs LangGraph's async body), `reads_state`
    that a Send's task needs the state (ToolNode's state read)."""
    from langgraph.prebuilt import ToolNode

    is_async = getattr(runnable, "func", True) is None  # a node with only an async body
    node = _async_node(runnable, managed) if is_async else _sync_node(runnable, managed)
    node.__name__ = name
    # The cache namespace names the node's function, as LangGraph's does: the wrapped
    # one's, so two graphs' nodes of one name do not share entries.
    wrapped = getattr(runnable, "func", None) or getattr(runnable, "afunc", None)
    node.__qualname__ = getattr(wrapped, "__qualname__", None) or node.__qualname__
    node.afn = None if is_async else _async_node(runnable, managed)
    node.reads_state = isinstance(runnable, ToolNode) and private.tool_node_reads_state(runnable)
    return node


def _sync_node(runnable: Any, managed: Mapping[str, Any]) -> Any:
    def node(state: Any, config: Any) -> Any:
        return run.call_node(runnable, state, config, managed)

    return node


def _async_node(runnable: Any, managed: Mapping[str, Any]) -> Any:
    async def node(state: Any, config: Any) -> Any:
        return await run.acall_node(runnable, state, config, managed)

    return node


def _retry(policy: Any) -> tuple[RetryPolicy, ...]:
    policies = [policy] if isinstance(policy, lg_types.RetryPolicy) else list(policy or ())
    return tuple(RetryPolicy(initial_interval=p.initial_interval,
                             backoff_factor=p.backoff_factor, max_interval=p.max_interval,
                             max_attempts=p.max_attempts, jitter=p.jitter,
                             retry_on=cast(Any, p.retry_on)) for p in policies)


def _cache(policy: Any) -> CachePolicy | None:
    """LangGraph's CachePolicy as graphrun's (its key function kept: the same keys)."""
    if policy is None:
        return None
    return CachePolicy(key_func=policy.key_func, ttl=policy.ttl)


def _trace(spec: Any) -> TracePolicy | None:
    """A LangGraph node's TracePolicy as graphrun's (its processors kept)."""
    policy = getattr(spec, "trace_policy", None)
    if policy is None:
        return None
    return TracePolicy(process_inputs=policy.process_inputs,
                       process_outputs=policy.process_outputs)


def _channel(key: str, c: Any) -> gr_channels.Channel:
    if isinstance(c, lg_channels.BinaryOperatorAggregate):
        op = c.operator
        if op is lg_message.add_messages or getattr(op, "__wrapped__", None) is (
                lg_message.add_messages):
            from graphrun.messages import add_messages

            op = add_messages  # message ids from the thread, not uuid4: replay-safe
        typ = c.typ
        if typing.get_origin(typ) is typing.Annotated:
            typ = typing.get_args(typ)[0]
        return gr_channels.BinaryOperatorAggregate(key, op, reducer_start(typ))
    if type(c).__name__ == "DeltaChannel":  # a reducer over batches of writes
        batch = c.reducer
        return gr_channels.BinaryOperatorAggregate(key, _Batched(batch), reducer_start(c.typ))
    if isinstance(c, lg_channels.EphemeralValue):
        return gr_channels.EphemeralValue(key)
    if isinstance(c, lg_channels.UntrackedValue):
        return gr_channels.UntrackedValue(key)
    if type(c) is lg_channels.LastValue:
        return gr_channels.LastValue(key)
    raise GraphValidationError(
        f"from_langgraph(): state key {key!r} uses LangGraph's {type(c).__name__} channel, "
        f"which graphrun does not support. Use a reducer (Annotated[T, fn]) or LastValue.")


class _Batched:
    """A DeltaChannel's reducer `(state, [writes]) -> state`, one write at a time: LangGraph
    requires it to give the same state however the writes are batched."""

    def __init__(self, reducer: Any) -> None:
        self.reducer = reducer

    def __call__(self, state: Any, write: Any) -> Any:
        return self.reducer(state, [write])
