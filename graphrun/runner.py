"""Running one task: the node, its writes, its edges. Shared by both drivers.

The in-process driver calls `run_task`/`arun_task` directly; on Temporal the
node activity calls the same functions. `interrupt()` raises inside the node;
the runner turns that into a `TaskResult` carrying the interrupts as data.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import dataclasses
import inspect
import json
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from graphrun.channels import MISSING, viewing
from graphrun.checkpoint import TaskCall, TaskResult, Write, interrupt_id
from graphrun.errors import (
    CallMismatchError,
    CallsPending,
    GraphInterrupt,
    InvalidUpdateError,
    NodeCancelledError,
    NodeError,
    NodeFailedError,
    NodeTimeoutError,
    ParentCommand,
    TargetReached,
    answer_errors,
    invalid_resume,
)
from graphrun.runtime import ExecutionInfo, Runtime, coerce_context, server_info_of
from graphrun.spec import GraphSpec, goto_writes
from graphrun.task import CURRENT
from graphrun.types import END, NS_SEP, PUSH, START, Command, Interrupt, Send, TimeoutPolicy


@dataclass
class TaskContext:
    """The task-scoped scratchpad `interrupt()` reads: answers by index, nested runs."""

    graph: GraphSpec
    call: TaskCall
    config: dict[str, Any]
    resume: list[Any]
    null_resume: Any
    resume_map: Mapping[str, Any]
    nested: dict[str, Any]
    counter: int = 0
    subgraph_counter: int = 0
    invalid_resume: str | None = None
    invalid_answer: dict[str, Any] | None = None  # why, as pydantic said (errors.answer_errors)
    custom: list[Any] = dataclasses.field(default_factory=list)
    sub_events: list[Any] = dataclasses.field(default_factory=list)
    messages: Any = None  # the 'messages' mode's callback handler, when it is streamed
    pushed: list[Write] = dataclasses.field(default_factory=list)  # push_message's writes
    progress_at: float = 0.0  # when the node last showed progress (idle timeouts)
    node_error: Any = None  # for an error handler: the NodeError it handles
    # stream(): where chunks written during the node go at once; else they wait in
    # `custom` and `sub_events` for the task's result.
    live: Callable[[tuple[Any, ...]], None] | None = None
    # @task calls (graphrun.calls): saved outcomes by call id, how many were made, those
    # that finished here, those awaited, and the call this run is for (Temporal).
    calls: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    call_counter: int = 0
    finished_calls: list[Any] = dataclasses.field(default_factory=list)
    awaiting: list[Any] = dataclasses.field(default_factory=list)
    target: list[str] = dataclasses.field(default_factory=list)
    inline_calls: bool = True
    parent: TaskContext | None = None  # the task a call was made in
    took_null_resume: bool = False
    # LangChain callbacks (graphrun.callbacks), in-process: the task's chain run, and how
    # the task ended for it (its output, or its error).
    run: Any = None
    output: Any = MISSING
    error: BaseException | None = None
    # LangGraph's long-term memory store (a BaseStore), or None: the graph's in-process,
    # the worker's on Temporal. Never part of a task's data: it stays in this process.
    store: Any = None

    def take_null_resume(self) -> Any:
        # A call's interrupt takes the run's single answer from its caller (LangGraph).
        v, self.null_resume = self.null_resume, MISSING
        if v is MISSING and self.parent is not None:
            v = self.parent.take_null_resume()
        if v is not MISSING:
            self.took_null_resume = True
        return v

    def progressed(self) -> None:
        """A sign of life: an idle timeout starts again from now."""
        self.progress_at = time.monotonic()

    def write_custom(self, chunk: Any) -> None:
        if self.live is not None:
            self.live(("custom", chunk))
        else:
            self.custom.append(chunk)
        self.progressed()

    def sub_event(self, event: tuple[Any, ...]) -> None:
        """A chunk of a subgraph this node runs, or of its chat models."""
        if self.live is not None:
            self.live(event)
        else:
            self.sub_events.append(event)

    def runtime(self) -> Runtime[Any]:
        context = coerce_context(self.graph.builder.context_schema, self.call.context)
        call, t = self.call, self.call.task
        configurable = self.config.get("configurable") or {}
        info = ExecutionInfo(
            checkpoint_id=call.checkpoint_id, checkpoint_ns=t.ns, task_id=t.id,
            thread_id=configurable.get("thread_id"),
            node_attempt=call.attempt, node_first_attempt_time=call.first_attempt_time)
        return Runtime(context=context, store=self.store, stream_writer=self.write_custom,
                       execution_info=info, server_info=server_info_of(configurable))

    def kwargs(self, names: tuple[str, ...]) -> dict[str, Any]:
        """The injected arguments a node or routing function asked for, by name."""
        return _injected(names, self.config, self.runtime() if names else Runtime[Any](),
                         self.node_error)


# False in the node activity on Temporal: @task calls there are activities of their own.
CALLS_INLINE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "graphrun_calls_inline", default=True)

# Set by the node activity on Temporal; in-process there is nobody to tell.
HEARTBEAT: contextvars.ContextVar[Callable[..., None] | None] = contextvars.ContextVar(
    "graphrun_heartbeat", default=None)


def heartbeat(*details: Any) -> None:
    """Tell Temporal a long node is alive (needs `add_node(..., heartbeat_timeout=...)`).

    Safe to call from sync and async nodes; does nothing in-process.
    """
    send = HEARTBEAT.get()
    if send is not None:
        send(*details)
    ctx = CURRENT.get()
    if ctx is not None:
        ctx.progressed()


def interrupt(value: Any, *, response_schema: Any = None,
              timeout: timedelta | float | None = None, default: Any = MISSING) -> Any:
    """Pause the graph and ask `value`; returns the answer once the thread is resumed.

    The node re-runs from its first line on resume, and each `interrupt()` call
    returns the answer for its position, so keep code before it idempotent.
    `value` must be JSON-serialisable. `response_schema` (a pydantic model,
    TypedDict or dataclass) is published as JSON Schema and validates the answer.
    `timeout` sets a deadline, kept by a durable timer on Temporal (the in-process
    driver has no clock to keep it): when it passes unanswered, the thread
    resumes with `default`, or is marked failed if no default was given.

    Example:
        >>> def approve(state):
        ...     ok = interrupt({"question": "Approve?", "amount": state["amount"]})
        ...     return {"status": "approved" if ok else "rejected"}
    """
    ctx = CURRENT.get()
    if ctx is None:
        raise RuntimeError("interrupt() was called outside a graph node. Call it inside a "
                           "node function while the graph runs.")
    adapter = None
    schema_json: dict[str, Any] | None = None
    if isinstance(response_schema, dict):
        schema_json = response_schema
    elif response_schema is not None:
        from pydantic import TypeAdapter

        adapter = TypeAdapter(response_schema)
        schema_json = adapter.json_schema()
    idx = ctx.counter
    ctx.counter += 1
    if idx < len(ctx.resume):
        return _validated(ctx, adapter, ctx.resume[idx])
    answer = ctx.take_null_resume()
    if answer is not MISSING:
        validated = _validated(ctx, adapter, answer)
        ctx.resume.append(answer)
        return validated
    check_json(value, ctx.call.task.name)
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else timeout
    if default is not MISSING:
        check_json(default, ctx.call.task.name)
    raise GraphInterrupt([Interrupt(value=value,
                                    id=interrupt_id(ctx.call.task.ns, len(ctx.resume)),
                                    response_schema=schema_json, timeout=seconds,
                                    default=None if default is MISSING else default,
                                    has_default=default is not MISSING)])


def _validated(ctx: TaskContext, adapter: Any, value: Any) -> Any:
    if adapter is None:
        return value
    try:
        return adapter.validate_python(value)
    except Exception as exc:
        refuse_answer(ctx, exc)
        raise invalid_resume(ctx.invalid_resume or "", ctx.invalid_answer) from exc


def refuse_answer(ctx: TaskContext, exc: Exception) -> None:
    """Note on the task that its answer failed the interrupt's response_schema."""
    context = f"the answer to node '{ctx.call.task.name}' does not match its response_schema"
    ctx.invalid_resume = f"{context}: {exc}"
    ctx.invalid_answer = answer_errors(exc, context)


def check_json(value: Any, node: str) -> None:
    """TypeError naming `node` when `value` (a question it asks) is not JSON data."""
    try:
        json.dumps(value, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"interrupt() in node '{node}' got a value that is not JSON-serialisable ({exc}). "
            f"Pass plain data (str, int, float, bool, None, lists and dicts of them, or a "
            f"pydantic model); put functions and objects in the state or code instead."
        ) from None


def _json_default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


# -- running a task ---------------------------------------------------------------
def task_config(call: TaskCall, config: Mapping[str, Any] | None) -> dict[str, Any]:
    t = call.task
    base = dict(config or {})
    configurable = {**base.get("configurable", {}), "checkpoint_ns": t.ns, "task_id": t.id}
    return {**base, "configurable": configurable,
            "metadata": {**base.get("metadata", {}), "langgraph_node": t.name,
                         "langgraph_step": t.step, "langgraph_path": t.path,
                         "langgraph_triggers": t.triggers}}


def _context(graph: GraphSpec, call: TaskCall, config: Mapping[str, Any] | None,
             resume_map: Mapping[str, Any], live: Callable[[tuple[Any, ...]], None] | None,
             trace: Any = None, store: Any = None) -> TaskContext:
    cfg = task_config(call, config)
    if trace is not None:  # the task's config as LangGraph's, under the graph's run
        node = graph.nodes.get(call.task.name)
        cfg = trace.task_config(cfg, call.task, node.metadata if node is not None else {})
    return TaskContext(graph=graph, call=call, config=cfg,
                       resume=list(call.resume), null_resume=call.null_resume,
                       resume_map=resume_map, nested=dict(call.nested), live=live,
                       calls=call.calls, target=list(call.target),
                       inline_calls=CALLS_INLINE.get(), store=store,
                       node_error=call.node_error)


def run_task(graph: GraphSpec, call: TaskCall, config: Mapping[str, Any] | None = None, *,
             resume_map: Mapping[str, Any] | None = None, raise_errors: bool = False,
             live: Callable[[tuple[Any, ...]], None] | None = None,
             trace: Any = None, store: Any = None) -> TaskResult:
    """Run a task synchronously; async nodes run on a private event loop.

    `trace`: the graph's run (graphrun.callbacks.GraphRun), when callbacks listen: the
    task gets a chain run of its own under it. `store`: what the node gets as `store`."""
    ctx = _context(graph, call, config, resume_map or {}, live, trace, store)
    token = CURRENT.set(ctx)
    undo = _nothing
    try:
        if _traced(graph, ctx, trace):
            from graphrun import callbacks as tracing

            ctx.run, ctx.config = tracing.start_run(ctx.config, _shown_input(ctx),
                                                    call.task.name, _policy(ctx))
        else:
            _process_untraced(ctx, "process_inputs")
        undo = _stream_handlers(ctx, config)
        node = graph.nodes[call.task.name]
        try:
            out = asyncio.run(_call_async(node.fn, ctx)) if node.is_async else _call(node, ctx)
        except ParentCommand as command:  # a subgraph this node ran speaks for it
            out = command.command
        return _finish(graph, ctx, out)
    except TargetReached as reached:
        result: TaskResult = reached.run()
        return result
    except CallsPending:
        return awaiting_calls(ctx)
    except asyncio.CancelledError as exc:  # no loop cancels a sync node: the node raised it
        return _failed(ctx, NodeCancelledError(call.task.name), raise_errors, cause=exc)
    except BaseException as exc:
        return _failed(ctx, exc, raise_errors)
    finally:
        CURRENT.reset(token)
        undo()
        if ctx.run is not None:
            from graphrun import callbacks as tracing

            if not _goes_on(ctx):
                tracing.end_run(ctx.run, ctx.error, ctx.output, _policy(ctx))
        elif ctx.output is not MISSING:
            _process_untraced(ctx, "process_outputs")


async def arun_task(graph: GraphSpec, call: TaskCall, config: Mapping[str, Any] | None = None,
                    *, resume_map: Mapping[str, Any] | None = None,
                    raise_errors: bool = False,
                    live: Callable[[tuple[Any, ...]], None] | None = None,
                    trace: Any = None, store: Any = None) -> TaskResult:
    """Run a task in the running event loop (sync nodes are called directly)."""
    ctx = _context(graph, call, config, resume_map or {}, live, trace, store)
    token = CURRENT.set(ctx)
    undo = _nothing
    try:
        if _traced(graph, ctx, trace):
            from graphrun import callbacks as tracing

            ctx.run, ctx.config = await tracing.astart_run(ctx.config, _shown_input(ctx),
                                                           call.task.name, _policy(ctx))
        else:
            _process_untraced(ctx, "process_inputs")
        undo = _stream_handlers(ctx, config)
        node = graph.nodes[call.task.name]
        try:
            if node.is_async or node.afn is not None:
                out = await _call_async(node.afn or node.fn, ctx)
            elif node.is_subgraph:
                out = await node.fn.ainvoke(ctx.call.task.input, ctx.config)  # type: ignore[union-attr]
            else:  # a sync node in a worker thread, as LangGraph's: the loop goes on
                out = await asyncio.to_thread(_call, node, ctx)
        except ParentCommand as command:  # a subgraph this node ran speaks for it
            out = command.command
        return _finish(graph, ctx, out)
    except TargetReached as reached:
        result: TaskResult = await reached.arun()
        return result
    except CallsPending:
        return awaiting_calls(ctx)
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if task is not None and task.cancelling() == 0:  # raised by the node, not asked for
            return _failed(ctx, NodeCancelledError(call.task.name), raise_errors, cause=exc)
        ctx.error = exc
        raise
    except BaseException as exc:
        return _failed(ctx, exc, raise_errors)
    finally:
        CURRENT.reset(token)
        undo()
        if ctx.run is not None:
            from graphrun import callbacks as tracing

            if not _goes_on(ctx):
                await tracing.aend_run(ctx.run, ctx.error, ctx.output,
                                       stream=tracing.streams(trace), policy=_policy(ctx))
        elif ctx.output is not MISSING:
            _process_untraced(ctx, "process_outputs")


def _nothing() -> None:
    pass


def _goes_on(ctx: TaskContext) -> bool:
    """Whether the task's run goes on in another activity (Temporal): it stopped for @task
    calls, and runs again once they have; or it ran only down to one call. Its run ends
    where the task does."""
    return bool(ctx.awaiting or ctx.target)


def _traced(graph: GraphSpec, ctx: TaskContext, trace: Any) -> bool:
    """Whether the task gets a chain run: every node's, START's only when it routes
    (LangGraph runs START's writes untraced)."""
    return trace is not None and (ctx.call.task.name != START or START in graph.branches)


def _policy(ctx: TaskContext) -> Any:
    node = ctx.graph.nodes.get(ctx.call.task.name)
    return None if node is None else node.trace_policy


def _process_untraced(ctx: TaskContext, which: str) -> None:
    """A TracePolicy's processor runs even when nothing traces, as LangGraph's does (so a
    processor that fails shows in the log without tracing on)."""
    process = getattr(_policy(ctx), which, None)
    if process is not None:
        from graphrun import callbacks as tracing

        tracing.recorded(_shown_input(ctx) if which == "process_inputs" else ctx.output,
                         process)


def _shown_input(ctx: TaskContext) -> Any:
    """A task's input as its run shows it: what the node reads."""
    traced_input = getattr(ctx.graph, "traced_input", None)  # an @entrypoint's
    if traced_input is not None:
        return traced_input(ctx.call.task)
    try:
        return ctx.call.task.input if ctx.graph.nodes[ctx.call.task.name].is_subgraph or (
            ctx.call.task.name == START) else _node_input(ctx)
    except Exception:
        return ctx.call.task.input


def _node_input(ctx: TaskContext) -> Any:
    t = ctx.call.task
    return t.input if t.path[0] == PUSH else ctx.graph.make_input(t.input, t.name)


def _call(node: Any, ctx: TaskContext) -> Any:
    if node.name == START:
        return ctx.call.task.input
    if node.is_subgraph:  # its thread is kept in this task (see CompiledStateGraph.invoke)
        return node.fn.invoke(ctx.call.task.input, ctx.config)
    return node.fn(_node_input(ctx), **ctx.kwargs(node.injects))


async def _call_async(fn: Callable[..., Awaitable[Any]] | None, ctx: TaskContext) -> Any:
    assert fn is not None
    node = ctx.graph.nodes[ctx.call.task.name]
    call = fn(_node_input(ctx), **ctx.kwargs(node.injects))
    # A Send's own limits stand instead of the node's (LangGraph).
    policy = TimeoutPolicy.from_data(ctx.call.task.timeout) or node.timeout_policy
    if policy is None:
        return await call
    return await run_within(call, policy, node.name, ctx)


async def run_within(call: Awaitable[Any], policy: TimeoutPolicy, node: str,
                     ctx: TaskContext) -> Any:
    """Await a node under its TimeoutPolicy; past a limit it is cancelled and fails."""
    run, idle = policy.seconds()
    task = asyncio.ensure_future(call)
    start = time.monotonic()
    ctx.progress_at = start
    while True:
        ends = [e for e in (start + run if run else None,
                            ctx.progress_at + idle if idle else None) if e is not None]
        done, _ = await asyncio.wait({task}, timeout=max(min(ends) - time.monotonic(), 0))
        if done:
            return task.result()
        now = time.monotonic()
        kind = ("run" if run and now >= start + run else
                "idle" if idle and now >= ctx.progress_at + idle else None)
        if kind is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            raise NodeTimeoutError(node, now - start, kind=kind, idle_timeout=idle,
                                   run_timeout=run)


def _failed(ctx: TaskContext, exc: BaseException, raise_errors: bool, *,
            cause: BaseException | None = None) -> TaskResult:
    t = ctx.call.task
    if cause is not None:
        exc.__cause__ = cause
    ctx.error = exc
    if (ctx.awaiting or ctx.target) and isinstance(exc, Exception):
        return awaiting_calls(ctx)  # calls to run first (then it runs again), or none reached
    if isinstance(exc, GraphInterrupt):
        return TaskResult(task_id=t.id, interrupts=list(exc.interrupts), paused=True,
                          resume=list(ctx.resume), nested=ctx.nested, custom=list(ctx.custom),
                          sub_events=list(ctx.sub_events), calls=list(ctx.finished_calls),
                          took_null_resume=ctx.took_null_resume)
    if ctx.invalid_resume:
        return TaskResult(task_id=t.id, invalid_resume=ctx.invalid_resume,
                          invalid_answer=ctx.invalid_answer)
    if isinstance(exc, ParentCommand) or raise_errors or not isinstance(exc, Exception):
        raise exc
    # A failed @task call's error, not caught (on Temporal it arrives as NodeFailedError):
    # the task fails with the call's own error, as the exception itself does in-process.
    error = ({"type": exc.error_type, "message": exc.error_message}
             if isinstance(exc, NodeFailedError) else
             {"type": type(exc).__name__, "message": str(exc)})
    return TaskResult(task_id=t.id, error=error,
                      exception=exc, resume=list(ctx.resume), nested=ctx.nested,
                      custom=list(ctx.custom), calls=list(ctx.finished_calls))


def awaiting_calls(ctx: TaskContext) -> TaskResult:
    """The task stopped for @task calls that have not run (Temporal): it runs again once
    they have. Or it ran to the end without reaching the call it ran for."""
    t = ctx.call.task
    if ctx.target:
        exc = CallMismatchError(
            f"node '{t.name}' ran again and did not make the @task call it made before at "
            f"that point (call {ctx.target[0]}). The calls a node makes may depend only on "
            f"its input, its answers to interrupt() and the results of its earlier calls.")
        return TaskResult(task_id=ctx.target[0], exception=exc,
                          error={"type": type(exc).__name__, "message": str(exc)})
    return TaskResult(task_id=t.id, awaiting=list(ctx.awaiting), resume=list(ctx.resume),
                      nested=ctx.nested, took_null_resume=ctx.took_null_resume)


def _finish(graph: GraphSpec, ctx: TaskContext, out: Any) -> TaskResult:
    t = ctx.call.task
    if ctx.invalid_resume:
        return TaskResult(task_id=t.id, invalid_resume=ctx.invalid_resume,
                          invalid_answer=ctx.invalid_answer)
    if ctx.awaiting or ctx.target:
        return awaiting_calls(ctx)
    if ctx.messages is not None:
        ctx.messages.node_returned(out)
    ctx.output = out
    # A Send's task routes on the state when it was given it (NodeSpec.reads_state), as
    # LangGraph's does; otherwise on its own writes alone.
    pushed = t.path[0] == PUSH
    writes, update = node_writes(graph, t.name, out,
                                 t.state if t.name == START or pushed else t.input, ctx.config,
                                 state_input=not pushed or t.state is not None,
                                 task_id=None if t.name == START else t.id)
    writes = [w for w in ctx.pushed if w[0] in graph.state_keys] + writes
    return TaskResult(task_id=t.id, writes=writes, update=update, resume=list(ctx.resume),
                      custom=list(ctx.custom), sub_events=list(ctx.sub_events),
                      # Its stateful subgraphs, and those it ran to their end (history).
                      nested=dict(ctx.nested),
                      calls=list(ctx.finished_calls), took_null_resume=ctx.took_null_resume)


def node_writes(graph: GraphSpec, name: str, out: Any, state: Any,
                config: Mapping[str, Any] | None, *, state_input: bool = True,
                store: Any = None, task_id: str | None = None) -> tuple[list[Write], Any]:
    """The channel writes for a node's return value, including its edges and routing.

    `store`: what routing functions get as `store` outside a task (`update_state`).
    `task_id`: the task's, whose messages get their ids before routing sees them."""
    if name == START:
        if not graph.is_root and not isinstance(out, dict) and not hasattr(
                out, "model_fields") and not dataclasses.is_dataclass(out):
            raise InvalidUpdateError(
                f"the graph's input must be a dict of state keys, got {type(out).__name__}.")
        writes = [(k, v) for k, v in graph.update_to_writes(START, out)
                  if k in graph.input_keys]
        update: Any = out
    else:
        writes, update = _output_writes(graph, name, out)
    if task_id is not None:
        stamp_message_ids(graph, writes, task_id)
    writes += edge_writes(graph, name, writes, state if state_input else {}, config,
                          store=store, output=out)
    return writes, update


def _command_writes(graph: GraphSpec, name: str, update: Any) -> list[Write]:
    """A Command's update: values, or a list of (key, value) writes applied in order."""
    if update is None:
        return []
    if (isinstance(update, (list, tuple)) and update and not graph.is_root
            and all(isinstance(w, tuple) and len(w) == 2 and isinstance(w[0], str)
                    for w in update)):
        return [(k, v) for k, v in update if k in graph.state_keys]
    return graph.update_to_writes(name, update)


def _output_writes(graph: GraphSpec, name: str, out: Any) -> tuple[list[Write], Any]:
    """A node's return value as writes: an update, a Command, or a list mixing both."""
    if isinstance(out, Command):
        if out.graph == Command.PARENT:
            raise ParentCommand(dataclasses.replace(out, graph=None))
        writes = _command_writes(graph, name, out.update)
        return writes + goto_writes(graph, out.gotos()), out.update
    if isinstance(out, (list, tuple)) and any(isinstance(c, Command) for c in out):
        writes, updates = [], []
        for item in out:
            w, u = _output_writes(graph, name, item)
            writes += w
            if u is not None:
                updates.append(u)
        return writes, updates or None
    return graph.update_to_writes(name, out), out


def edge_writes(graph: GraphSpec, name: str, writes: list[Write], state: Any,
                config: Mapping[str, Any] | None, *, store: Any = None,
                output: Any = None) -> list[Write]:
    out: list[Write] = []
    for dest in graph.edges.get(name, ()):
        if dest != END:
            out.append((f"branch:to:{dest}", None))
    for chan in graph.joins.get(name, ()):
        out.append((chan, name))
    branches = graph.branches.get(name, ())
    if branches:
        fresh = _fresh_state(graph, state, writes)
        for i, br in enumerate(branches):
            arg = graph.make_input(fresh, schema=br.input_schema)
            if br.sees_extra_keys and isinstance(arg, dict) and isinstance(output, dict):
                arg = {**output, **arg}
            result = _route(br, arg, config, i, name == START, store)
            items = result if isinstance(result, (list, tuple)) else [result]
            targets: list[str | Send] = []
            for item in items:
                if isinstance(item, Send):
                    targets.append(item)
                    continue
                if br.path_map is not None:
                    if item not in br.path_map:
                        raise InvalidUpdateError(
                            f"conditional edge from '{name}' returned {item!r}, which is not "
                            f"in its path_map {list(br.path_map)}.", nodes=[name])
                    item = br.path_map[item]
                targets.append(item)
            out += goto_writes(graph, targets)
    return out


def stamp_message_ids(graph: GraphSpec, writes: list[Write], task_id: str) -> None:
    """A task's messages get their ids now, on the node's own objects (graphrun.messages):
    every later view of them (routing, 'updates', a pause, the state) shows the same id."""
    messages = sys.modules.get("graphrun.messages")  # not loaded: no channel uses it
    if messages is not None:
        messages.stamp_writes(graph.channels, writes, task_id)


def _fresh_state(graph: GraphSpec, state: Any, writes: list[Write]) -> dict[str, Any]:
    values = dict(state) if isinstance(state, dict) else {}
    grouped: dict[str, list[Any]] = {}
    for k, v in writes:
        if k in graph.state_keys:
            grouped.setdefault(k, []).append(v)
    with viewing():  # what routing sees; the step's merge is the one the thread keeps
        for k, vs in grouped.items():
            ch = graph.channels[k].restore(values.get(k, MISSING))
            ch.update(vs)
            if ch.is_available():
                values[k] = ch.get()
    return values


def _route(br: Any, arg: Any, config: Mapping[str, Any] | None, index: int,
           is_start: bool, store: Any = None) -> Any:
    """Call a routing function; in a traced task, as a chain run of its own (LangGraph's),
    and in a node activity that graphrun.tracing traces, as a run (span) of that trace."""
    ctx = CURRENT.get()
    if ctx is None or ctx.run is None:
        scope = ROUTE_SCOPE.get()
        if ctx is None or scope is None:
            return _settled(br.path(arg, **_branch_kwargs(br.injects, config, store)))
        with scope(_route_name(br.path), arg,
                   [f"seq:step:{index + (2 if is_start else 3)}"]) as finish:
            result = _settled(br.path(arg, **_branch_kwargs(br.injects, config, store)))
            finish(result)
        return result
    from graphrun import callbacks as tracing

    def call(cfg: dict[str, Any]) -> Any:
        kwargs = ctx.kwargs(br.injects)
        if "config" in kwargs:
            kwargs["config"] = cfg
        return _settled(br.path(arg, **kwargs))

    if (getattr(br.path, "__module__", None) or "").startswith("graphrun.bridge"):
        # LangGraph's routing Runnable (a bridged graph's) starts its own run: give it the
        # callbacks it would have had under LangGraph
        step = index + (2 if is_start else 3)
        return call({**ctx.config, "callbacks": ctx.run.get_child(f"seq:step:{step}")})
    return tracing.route(ctx.config, ctx.run, index, is_start, _route_name(br.path), arg,
                         call)


def _route_name(path: Any) -> str:
    return str(getattr(path, "__name__", None) or getattr(path, "name", None)
               or type(path).__name__)


# Set by graphrun.tracing's activity interceptor: opens a routing function's run in the
# node activity's trace (name, inputs, tags) -> a context manager giving `finish(outputs)`.
ROUTE_SCOPE: contextvars.ContextVar[Callable[..., Any] | None] = contextvars.ContextVar(
    "graphrun_route_scope", default=None)


def _branch_kwargs(names: tuple[str, ...], config: Mapping[str, Any] | None,
                   store: Any = None) -> dict[str, Any]:
    ctx = CURRENT.get()
    if ctx is not None:
        return ctx.kwargs(names)
    # update_state: no run, but the graph's store (the worker's on Temporal)
    return _injected(names, dict(config or {}), Runtime[Any](store=store))


def _injected(names: tuple[str, ...], config: dict[str, Any], runtime: Runtime[Any],
              error: Any = None) -> dict[str, Any]:
    values = {"config": config, "runtime": runtime, "store": runtime.store,
              "writer": runtime.stream_writer, "error": error}
    return {n: values[n] for n in names}


def _settled(result: Any) -> Any:
    """An async routing function's result, awaited (on its own loop: this code is sync)."""
    if not inspect.isawaitable(result):
        return result
    ctx = contextvars.copy_context()

    async def wait() -> Any:
        return await result

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(ctx.run, asyncio.run, wait()).result()


def _stream_handlers(ctx: TaskContext, config: Mapping[str, Any] | None
                     ) -> Callable[[], None]:
    """For the 'messages' and 'tools' modes: LangChain callback handlers in the node's
    config and in LangChain's context (a model or tool called without `config` finds
    them there); for a traced task, its config in LangChain's context. Returns the undo."""
    handlers = [*_messages_handler(ctx, config), *_tools_handler(ctx)]
    if handlers:
        _install(ctx, handlers)
    if ctx.run is not None:
        from graphrun import callbacks as tracing

        return _entered(tracing.entered(ctx.config))
    if not handlers:
        return _nothing
    from langchain_core.runnables.config import var_child_runnable_config

    token = var_child_runnable_config.set(ctx.config)  # type: ignore[arg-type]
    return lambda: var_child_runnable_config.reset(token)


def _messages_handler(ctx: TaskContext, config: Mapping[str, Any] | None) -> list[Any]:
    """The 'messages' mode's handler of the task, when it is streamed.

    The metadata sent with each message is LangGraph's: the run's metadata with the
    keys LangGraph copies from the invocation's configurable (thread_id and the like,
    graphrun.callbacks.PROPAGATED), the task's `langgraph_*` keys, and for a chat
    model what LangChain adds for it (among them `checkpoint_ns`, the task's)."""
    if not ctx.call.messages:
        return []
    from graphrun.callbacks import propagated
    from graphrun.stream_messages import StreamMessages, StreamMessagesV2

    t = ctx.call.task
    # LangGraph marks its graph's run "ls_integration": "langgraph" (a chat model's own
    # metadata says otherwise for its messages).
    metadata = {"ls_integration": "langgraph", **propagated(config),
                **ctx.config.get("metadata", {}), "langgraph_checkpoint_ns": t.ns}
    handler = StreamMessagesV2 if ctx.call.messages_v2 else StreamMessages
    ctx.messages = handler(ctx.sub_event, metadata, seen=t.input)
    # A subgraph's task shares what was seen with its calling task's handler, so the
    # caller does not send again the messages the subgraph streamed.
    for h in _inherited(ctx):
        if isinstance(h, StreamMessages):
            h.seen.update(ctx.messages.seen)
            ctx.messages.seen = h.seen
    return [ctx.messages]


def _tools_handler(ctx: TaskContext) -> list[Any]:
    """The 'tools' mode's handler of the task, when it is streamed."""
    if not ctx.call.tools:
        return []
    from graphrun.stream_tools import StreamTools

    return [StreamTools(ctx.sub_event, depth=ctx.call.task.ns.count(NS_SEP))]


def _inherited(ctx: TaskContext) -> list[Any]:
    """The callback handlers the task's config came with."""
    from graphrun.callbacks import handlers_of

    return handlers_of(ctx.config.get("callbacks"))


def _install(ctx: TaskContext, handlers: list[Any]) -> None:
    """Put the task's stream handlers in its config. A subgraph's task inherits its
    calling task's: they give way to its own (so what its nodes stream goes under the
    subgraph's namespace, once)."""
    from graphrun.stream_messages import StreamMessages

    kinds = tuple(StreamMessages if isinstance(h, StreamMessages) else type(h)
                  for h in handlers)
    from graphrun.callbacks import with_handlers

    outer = [h for h in _inherited(ctx) if isinstance(h, kinds)]
    ctx.config["callbacks"] = with_handlers(ctx.config.get("callbacks"), handlers, outer)


def _entered(manager: contextlib.AbstractContextManager[Any]) -> Callable[[], None]:
    """Enter a context manager now; returns what exits it."""
    manager.__enter__()

    def undo() -> None:
        manager.__exit__(None, None, None)

    return undo


# -- error handlers ------------------------------------------------------------------
def handle_error(graph: GraphSpec, call: TaskCall, config: Mapping[str, Any] | None,
                 failed: TaskResult, store: Any = None) -> TaskResult:
    """The result of a node's error handler run in the failed task, as workflows made
    before error handlers were nodes of their own still ask the node activity to: what
    it returns (an update, a Command) replaces the node's output."""
    node = graph.nodes[call.task.name]
    assert node.error_handler_node is not None
    ctx = _context(graph, call, config, {}, None, store=store)
    ctx.node_error = NodeError(node.name, failed.exception or RuntimeError(
        f"{(failed.error or {}).get('type')}: {(failed.error or {}).get('message')}"))
    token = CURRENT.set(ctx)
    try:
        handler = graph.nodes[node.error_handler_node]
        assert handler.fn is not None
        out = handler.fn(_node_input(ctx), **ctx.kwargs(handler.injects))
        if inspect.isawaitable(out):
            out = _settled(out)
        writes, update = _output_writes(graph, node.name, out)
        stamp_message_ids(graph, writes, call.task.id)
        return TaskResult(task_id=call.task.id, writes=writes, update=update,
                          custom=list(ctx.custom))
    except Exception as exc:  # the handler failed too: the run fails with its error
        return TaskResult(task_id=call.task.id, exception=exc,
                          error={"type": type(exc).__name__, "message": str(exc)})
    finally:
        CURRENT.reset(token)
