"""LangGraph's node code on graphrun's engine: the config it reads, and translation of
what it raises and returns, both ways.

A LangGraph node reads its runtime from its config: `interrupt()` the task's
scratchpad, `ToolNode` the runtime and the state, `get_stream_writer()` the writer.
`lg_config` builds that config from graphrun's task (`graphrun.runner.TaskContext`),
so `interrupt()` answers by index from the same list graphrun keeps, and questions
get graphrun's ids. `to_graphrun` turns LangGraph's `Command`, `Send` and `Overwrite`
into graphrun's, so the engine sees only its own types.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from langchain_core.runnables.config import var_child_runnable_config
from langgraph import errors as lg_errors
from langgraph import runtime as lg_runtime
from langgraph import types as lg_types

from graphrun import stream_tools
from graphrun.bridge import _langgraph as private
from graphrun.channels import MISSING, Overwrite
from graphrun.checkpoint import interrupt_id
from graphrun.errors import GraphInterrupt, ParentCommand, invalid_resume
from graphrun.runner import TaskContext, check_json, refuse_answer
from graphrun.task import current_task
from graphrun.types import NS_SEP, PUSH, Command, Interrupt, Send, TimeoutPolicy

# A ToolNode's tools run here: their `ToolRuntime` finds the output writer the 'tools'
# stream mode sets, and a tool unwound by LangGraph's interrupt() paused, it did not fail.
stream_tools.register_tool_runtime(private.tool_call_writer,
                                   (lg_errors.GraphInterrupt, lg_errors.GraphDrained))


def to_graphrun(value: Any) -> Any:
    """LangGraph's Command / Send / Overwrite (also inside lists and update dicts) as
    graphrun's; anything else as it is."""
    if isinstance(value, lg_types.Command):
        return Command(graph=value.graph, update=to_graphrun(value.update),
                       resume=value.resume, goto=to_graphrun(value.goto))
    if isinstance(value, lg_types.Send):
        return Send(value.node, value.arg, timeout=timeout_policy(getattr(value, "timeout", None)))
    if isinstance(value, lg_types.Overwrite):
        return Overwrite(value.value)
    if isinstance(value, (list, tuple)) and any(_is_lg(v) for v in value):
        return type(value)(to_graphrun(v) for v in value)
    if isinstance(value, dict) and any(_is_lg(v) for v in value.values()):
        return {k: to_graphrun(v) for k, v in value.items()}
    return value


def _is_lg(v: Any) -> bool:
    return isinstance(v, (lg_types.Command, lg_types.Send, lg_types.Overwrite, list, tuple))


def to_langgraph(value: Any) -> Any:
    """graphrun's Command / Send / Overwrite / Interrupt (also inside lists and dicts) as
    LangGraph's, for what LangGraph's code or a LangGraph saver reads; else as it is."""
    if isinstance(value, Command):
        return lg_types.Command(graph=value.graph, update=to_langgraph(value.update),
                                resume=value.resume, goto=to_langgraph(value.goto))
    if isinstance(value, Send):
        return lg_types.Send(value.node, value.arg)
    if isinstance(value, Overwrite):
        return lg_types.Overwrite(value.value)
    if isinstance(value, Interrupt):
        return lg_types.Interrupt(value=value.value, id=value.id,
                                  response_schema=value.response_schema)
    if type(value) in (list, tuple) and any(_is_graphrun(v) for v in value):
        return type(value)(to_langgraph(v) for v in value)  # (a NamedTuple stays as it is)
    if isinstance(value, dict) and any(_is_graphrun(v) for v in value.values()):
        return {k: to_langgraph(v) for k, v in value.items()}
    return value


def _is_graphrun(v: Any) -> bool:
    return isinstance(v, (Command, Send, Overwrite, Interrupt, list, tuple))


def interrupt_from_langgraph(i: Any) -> Interrupt:
    """LangGraph's Interrupt (read back from a LangGraph saver) as graphrun's."""
    return Interrupt(value=i.value, id=i.id, response_schema=getattr(i, "response_schema", None))


def timeout_policy(t: Any) -> TimeoutPolicy | None:
    """LangGraph's TimeoutPolicy (or seconds, a timedelta) as graphrun's."""
    if t is None:
        return None
    if isinstance(t, lg_types.TimeoutPolicy):
        return TimeoutPolicy(run_timeout=t.run_timeout, idle_timeout=t.idle_timeout,
                             refresh_on=t.refresh_on)
    return TimeoutPolicy(run_timeout=t)  # seconds or a timedelta


def lg_config(ctx: TaskContext, config: Mapping[str, Any],
              managed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The config LangGraph's code expects in a task: graphrun's, plus the private keys
    LangGraph reads (scratchpad, send, runtime, task id, state read)."""
    t = ctx.call.task
    remaining = ctx.call.remaining_steps
    configurable = dict(config.get(private.CONF) or {})
    configurable.update({
        private.CONFIG_KEY_SCRATCHPAD: _scratchpad(ctx, t.step, t.step + remaining),
        private.CONFIG_KEY_SEND: lambda writes: _send(ctx, writes),
        private.CONFIG_KEY_RUNTIME: _runtime(ctx),
        private.CONFIG_KEY_TASK_ID: t.id,
        private.CONFIG_KEY_READ_STATE: lambda: _state(ctx, managed),
        # A LangGraph graph the node invokes (a subagent in a tool, say) streams its
        # chunks here under its namespace, as into LangGraph's own parent stream. Chat
        # models' messages reach the task's own handler (callbacks), custom chunks the
        # runtime's writer below.
        private.CONFIG_KEY_STREAM: private.StreamProtocol(ctx.sub_event, NESTED_MODES),
    })
    if ctx.node_error is not None:
        configurable[private.CONFIG_KEY_NODE_ERROR] = lg_errors.NodeError(
            node=ctx.node_error.node, error=ctx.node_error.error)
    return {**config, private.CONF: configurable}


def _scratchpad(ctx: TaskContext, step: int, stop: int) -> Any:
    calls, subgraphs = itertools.count(), itertools.count()

    def interrupt_counter() -> int:
        ctx.counter += 1
        return ctx.counter - 1

    def get_null_resume(consume: bool = False) -> Any:
        if not consume:
            v = ctx.null_resume if ctx.null_resume is not MISSING or ctx.parent is None \
                else ctx.parent.null_resume
            return None if v is MISSING else v
        v = ctx.take_null_resume()
        return None if v is MISSING else v

    # LangGraph's interrupt() appends answers to this very list, as graphrun's does.
    return private.PregelScratchpad(
        step=step, stop=stop, call_counter=lambda: next(calls),
        interrupt_counter=interrupt_counter, get_null_resume=get_null_resume,
        resume=ctx.resume, subgraph_counter=lambda: next(subgraphs))


def _send(ctx: TaskContext, writes: Any) -> None:
    """Writes LangGraph's code sends itself: `push_message` to a state key is kept;
    interrupt()'s record of its answers is graphrun's own list already."""
    for channel, value in writes:
        if channel == private.RESUME:
            continue
        if channel in ctx.graph.state_keys:
            ctx.pushed.append((channel, to_graphrun(value)))
        else:
            raise NotImplementedError(
                f"node '{ctx.call.task.name}' wrote to LangGraph channel {channel!r}, "
                f"which graphrun does not have.")


NESTED_MODES: set[Any] = {"values", "updates", "tasks"}  # StreamProtocol's modes


def _writer(ctx: TaskContext) -> Callable[[Any], None]:
    """The 'custom' writer: the node's own chunks are the task's; those of a LangGraph
    graph it invokes go under that graph's namespace (LangGraph's writer reads it from
    the config of the node that writes, as this does)."""
    depth = ctx.call.task.ns.count(NS_SEP)  # the task's own graph's namespace length

    def write(chunk: Any) -> None:
        cfg = var_child_runnable_config.get() or {}
        ns = str((cfg.get(private.CONF) or {}).get("checkpoint_ns") or "").split(NS_SEP)[:-1]
        if len(ns) <= depth:
            ctx.write_custom(chunk)
        else:
            ctx.sub_event((tuple(ns), "custom", chunk))

    return write


def _runtime(ctx: TaskContext) -> Any:
    rt = ctx.runtime()
    i = rt.execution_info
    return lg_runtime.Runtime(
        context=rt.context, store=rt.store, stream_writer=_writer(ctx),
        previous=rt.previous, execution_info=lg_runtime.ExecutionInfo(
            checkpoint_id=i.checkpoint_id, checkpoint_ns=i.checkpoint_ns, task_id=i.task_id,
            thread_id=i.thread_id, run_id=i.run_id, node_attempt=i.node_attempt,
            node_first_attempt_time=i.node_first_attempt_time))


def _state(ctx: TaskContext, managed: Mapping[str, Any] | None) -> Any:
    """The state this node would get from an edge (ToolNode reads it for a `Send`). A
    Send's task carries it only for a node that uses it (`NodeSpec.reads_state`)."""
    t = ctx.call.task
    if t.path[0] == PUSH and t.state is None:
        return {}
    values = t.state if t.state is not None else t.input
    return with_managed(ctx, ctx.graph.make_input(values, t.name), managed)


def with_managed(ctx: TaskContext, state: Any, managed: Mapping[str, Any] | None) -> Any:
    """The node's input with LangGraph's managed values (RemainingSteps, IsLastStep)."""
    if not managed or not isinstance(state, dict):
        return state
    t = ctx.call.task
    pad = _scratchpad(ctx, t.step, t.step + ctx.call.remaining_steps)
    return {**state, **{k: m.get(pad) for k, m in managed.items()}}


def call_node(runnable: Any, state: Any, config: Mapping[str, Any],
              managed: Mapping[str, Any] | None) -> Any:
    with _in_task(config, managed) as (ctx, cfg):
        return to_graphrun(runnable.invoke(with_managed(ctx, state, managed), cfg))


async def acall_node(runnable: Any, state: Any, config: Mapping[str, Any],
                     managed: Mapping[str, Any] | None) -> Any:
    with _in_task(config, managed) as (ctx, cfg):
        return to_graphrun(await runnable.ainvoke(with_managed(ctx, state, managed), cfg))


@contextlib.contextmanager
def _in_task(config: Mapping[str, Any], managed: Mapping[str, Any] | None
             ) -> Iterator[tuple[TaskContext, dict[str, Any]]]:
    """Run LangGraph code in the current task: its config where LangGraph's `get_config()`
    finds it (as LangGraph's runner sets it), and what it raises as graphrun's (a
    question, a command for the parent graph, an answer `response_schema` refused)."""
    ctx = current_task()
    if ctx is None:
        raise RuntimeError("a LangGraph node ran outside a graphrun task.")
    cfg = lg_config(ctx, config, managed)
    token = var_child_runnable_config.set(cfg)  # type: ignore[arg-type]
    try:
        yield ctx, cfg
    except lg_errors.GraphInterrupt as exc:
        if isinstance(exc, GraphInterrupt):
            raise
        raise GraphInterrupt([_interrupt(ctx, i) for i in _interrupts(exc)]) from None
    except lg_errors.ParentCommand as exc:
        raise ParentCommand(to_graphrun(exc.args[0])) from None
    except Exception as exc:
        if not lg_errors.is_invalid_resume(exc):
            raise
        refuse_answer(ctx, exc)
        raise invalid_resume(ctx.invalid_resume or "", ctx.invalid_answer) from exc
    finally:
        var_child_runnable_config.reset(token)


def _interrupt(ctx: TaskContext, i: Any) -> Interrupt:
    check_json(i.value, ctx.call.task.name)
    return Interrupt(value=i.value, id=interrupt_id(ctx.call.task.ns, len(ctx.resume)),
                     response_schema=getattr(i, "response_schema", None))


def _interrupts(exc: BaseException) -> list[Any]:
    found = exc.args[0] if exc.args else ()
    return list(found) if isinstance(found, (list, tuple)) else []


def path_caller(path: Any, managed: Mapping[str, Any] | None = None) -> Callable[..., Any]:
    """A LangGraph routing Runnable as graphrun's routing function."""

    def route(state: Any, config: Mapping[str, Any]) -> Any:
        if current_task() is None:  # update_state(as_node=...) routes outside any task
            return to_graphrun(path.invoke(state, dict(config or {})))
        with _in_task(config, managed) as (ctx, cfg):
            return to_graphrun(path.invoke(with_managed(ctx, state, managed), cfg))

    route.__name__ = getattr(path, "name", None) or "route"
    return route
