"""LangChain callbacks and tracing for in-process runs, in LangGraph's shape.

A graph invoked with `config["callbacks"]` (or with LangSmith tracing on, or inside a
LangChain Runnable that has callbacks) reports to them the run tree LangGraph reports:

    <graph>                chain run of the invocation (config `run_name`, else the graph's
    │                      name), inputs the input, outputs the state it ends with
    ├── <node>             graph:step:N   a chain run per task (per attempt), metadata
    │   │                  langgraph_node, langgraph_step, langgraph_triggers, langgraph_path,
    │   │                  langgraph_checkpoint_ns (and the config's, thread_id among them)
    │   ├── <chat model>   seq:step:1     what the node runs with its `config`, or without
    │   │                                 one (LangChain's context holds the node's config)
    │   ├── <subgraph>     seq:step:1     a graph the node runs: its own tree below
    │   └── <routing fn>   seq:step:3     each conditional edge after the node, in order
    └── __start__          graph:step:0   hidden (langsmith:hidden), only when START routes

A task that calls `interrupt()` ends its run with `on_chain_error(GraphInterrupt)`, as
does a subgraph that paused; the graph's run ends with its state. A failed node and a
failed graph end with their error. Under `astream` (`astream_events`, `astream_log`) a
task's run also streams its output, as LangGraph's do. A `GraphCallbackHandler` among the
callbacks is told when the run pauses for interrupts (`on_interrupt`) and when it resumes
from a checkpoint (`on_resume`), as LangGraph's `langgraph.callbacks` does (LangGraph's
own `GraphCallbackHandler` subclasses are told too).

A node's `TracePolicy` changes what tracers (LangChain `BaseTracer`s that do not stream)
record of the node's own run; its other handlers get the real input and output, as in
LangGraph (a `Relay`, on a worker, gets both and the caller sorts them out).

All of this needs langchain-core; without it a graph runs with no callbacks at all.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from uuid import UUID

from graphrun._passthrough import passed_through
from graphrun.task import current_task
from graphrun.types import PUSH, START, Interrupt

try:  # the `messages` extra (langchain-core)
    # Passed through a workflow sandbox that imports graphrun (see graphrun.runnable).
    with passed_through():
        # What LangChain imports on its first callback manager (~20 ms): here, so that a
        # process's first invoke is not the slow one.
        import langchain_core.tracers.context
        import langchain_core.tracers.langchain
        import langchain_core.tracers.stdout
        from langchain_core.callbacks import BaseCallbackHandler
        from langchain_core.callbacks.manager import ahandle_event, handle_event
        from langchain_core.runnables.config import (
            ensure_config,
            get_async_callback_manager_for_config,
            get_callback_manager_for_config,
            var_child_runnable_config,
        )
        from langchain_core.tracers.base import BaseTracer

    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised by the no-langchain test
    AVAILABLE = False
    BaseCallbackHandler = object  # type: ignore[assignment,misc]
if AVAILABLE:  # outside the try: a langchain-core outside graphrun's range fails loudly
    with passed_through():
        from graphrun._lc_private import StreamingCallbackHandler as _StreamingCallbackHandler
else:  # pragma: no cover
    _StreamingCallbackHandler = object  # type: ignore[assignment,misc]

__all__ = ["GraphCallbackHandler", "GraphInterruptEvent", "GraphLifecycleEvent",
           "GraphResumeEvent"]

HIDDEN = "langsmith:hidden"  # LangGraph's tag for its __start__ task
_log = logging.getLogger("graphrun")

GraphLifecycleStatus = Literal["input", "pending", "done", "interrupt_before",
                               "interrupt_after", "out_of_steps"]


@dataclass(frozen=True)
class GraphInterruptEvent:
    """The run paused for interrupts (or at a breakpoint): LangGraph's event."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]
    interrupts: tuple[Interrupt, ...]


@dataclass(frozen=True)
class GraphResumeEvent:
    """The run resumed from a saved checkpoint: LangGraph's event."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str
    checkpoint_ns: tuple[str, ...]


GraphLifecycleEvent = GraphInterruptEvent | GraphResumeEvent


class GraphCallbackHandler(BaseCallbackHandler):
    """Pass one in `config["callbacks"]` to hear when a run pauses and resumes.

    As LangGraph's `langgraph.callbacks.GraphCallbackHandler` (whose subclasses graphrun
    calls too). Only handlers of this class get these events; the methods may be async.
    Needs langchain-core.
    """

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The run paused for one or more interrupts."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """The run resumed from a checkpoint."""


# LangGraph's private config callback, called with each task's name as it finishes.
NODE_FINISHED = "__pregel_node_finished"


class _NodeFinished(BaseCallbackHandler):
    """`config["configurable"]["__pregel_node_finished"]`, told by the tasks' own runs:
    so it is called on Temporal too, where the callback cannot go to a worker (the
    runs' events come back to the caller)."""

    run_inline = True  # in the order the tasks finish

    def __init__(self, finished: Callable[[str], Any]) -> None:
        self.finished = finished
        self.tasks: dict[UUID, str] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID,
                       tags: list[str] | None = None, name: str | None = None,
                       **kwargs: Any) -> None:
        if name and any(t.startswith("graph:step:") for t in tags or ()) and (
                "langsmith:hidden" not in (tags or ())):
            self.tasks[run_id] = name

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if (name := self.tasks.pop(run_id, None)) is not None:
            self.finished(name)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.tasks.pop(run_id, None)


def _with_node_finished(config: dict[str, Any]) -> dict[str, Any]:
    """`config` with LangGraph's node-finished callback moved from its configurable to
    its callbacks (`_NodeFinished`)."""
    configurable = config.get("configurable") or {}
    finished = configurable.get(NODE_FINISHED)
    if not callable(finished):
        return config
    configurable = {k: v for k, v in configurable.items() if k != NODE_FINISHED}
    callbacks = config.get("callbacks")
    if any(isinstance(h, _NodeFinished) and h.finished == finished
           for h in handlers_of(callbacks)):
        return {**config, "configurable": configurable}  # a subgraph's: told already
    return {**config, "callbacks": with_handlers(callbacks, [_NodeFinished(finished)]),
            "configurable": configurable}


def handlers_of(callbacks: Any) -> list[Any]:
    """The handlers of a config's `callbacks`: a list of them, or a callback manager."""
    handlers = callbacks if isinstance(callbacks, list) else getattr(callbacks, "handlers", [])
    return list(handlers or [])


def with_handlers(callbacks: Any, add: Sequence[Any], drop: Sequence[Any] = ()) -> Any:
    """A config's `callbacks` (a list, a manager or None) with `add` and without `drop`,
    leaving the given one as it was."""
    if callbacks is None or isinstance(callbacks, list):
        return [*(h for h in callbacks or [] if h not in drop), *add]
    manager = callbacks.copy()
    for h in drop:
        manager.remove_handler(h)
    for h in add:
        manager.add_handler(h, inherit=True)
    return manager


def _is_graph_handler(handler: Any) -> bool:
    return any(c.__name__ == "GraphCallbackHandler" and c.__module__ in (
        __name__, "langgraph.callbacks") for c in type(handler).__mro__)


# -- a graph's run ---------------------------------------------------------------------
class GraphRun:
    """The chain run of one graph invocation; the driver hands it to each task."""

    def __init__(self, manager: Any, config: Mapping[str, Any], *, is_async: bool) -> None:
        self.manager = manager  # CallbackManagerForChainRun or its async twin
        self.config = config  # the invocation's config, ensured (tags, metadata)
        self.is_async = is_async
        self.status: GraphLifecycleStatus | None = None  # set at an interrupt_after pause
        # A task's run id (a worker's stand-in run: graphrun.relay), else a new one each.
        self.task_run_id: Callable[[Any], UUID] | None = None

    @property
    def run_id(self) -> UUID:
        run_id: UUID = self.manager.run_id
        return run_id

    def task_config(self, base: dict[str, Any], task: Any, metadata: Mapping[str, Any]
                    ) -> dict[str, Any]:
        """A task's config as LangGraph builds it: the invocation's tags and metadata, the
        task's `langgraph_*` metadata and the node's own, and this run's child callbacks."""
        tags = list(self.config.get("tags") or ())
        if task.name == START:
            tags.append(HIDDEN)
        extra: dict[str, Any] = {"langgraph_checkpoint_ns": task.ns}
        if task.path[0] == PUSH and len(task.path) == 2:  # a Send's: LangGraph's third item
            extra["langgraph_path"] = (*task.path, False)
        config = {**base, "tags": tags,
                  "metadata": {**(self.config.get("metadata") or {}),
                               **base.get("metadata", {}), **extra, **metadata},
                  "callbacks": self.manager.get_child(f"graph:step:{task.step}"),
                  "run_name": task.name}
        config.pop("run_id", None)  # the graph's own
        if self.task_run_id is not None:
            config["run_id"] = self.task_run_id(task)
        return config

    def end(self, output: Any) -> None:
        self.manager.on_chain_end(output)

    def error(self, exc: BaseException) -> None:
        self.manager.on_chain_error(exc)

    async def aend(self, output: Any) -> None:
        await self.manager.on_chain_end(output)

    async def aerror(self, exc: BaseException) -> None:
        await self.manager.on_chain_error(exc)

    # -- GraphCallbackHandler's events (the root run only, as LangGraph) --------------------
    def _graph_handlers(self) -> list[Any]:
        return [h for h in self.manager.handlers if _is_graph_handler(h)]

    def resumed(self, checkpoint_id: str) -> None:
        if handlers := self._graph_handlers():
            handle_event(handlers, "on_resume", None, GraphResumeEvent(
                run_id=self.run_id, status="pending", checkpoint_id=checkpoint_id,
                checkpoint_ns=()))

    def interrupted(self, status: GraphLifecycleStatus, checkpoint_id: str,
                    interrupts: tuple[Interrupt, ...]) -> None:
        if handlers := self._graph_handlers():
            handle_event(handlers, "on_interrupt", None, GraphInterruptEvent(
                run_id=self.run_id, status=status, checkpoint_id=checkpoint_id,
                checkpoint_ns=(), interrupts=interrupts))

    async def aresumed(self, checkpoint_id: str) -> None:
        if handlers := self._graph_handlers():
            await ahandle_event(handlers, "on_resume", None, GraphResumeEvent(
                run_id=self.run_id, status="pending", checkpoint_id=checkpoint_id,
                checkpoint_ns=()))

    async def ainterrupted(self, status: GraphLifecycleStatus, checkpoint_id: str,
                           interrupts: tuple[Interrupt, ...]) -> None:
        if handlers := self._graph_handlers():
            await ahandle_event(handlers, "on_interrupt", None, GraphInterruptEvent(
                run_id=self.run_id, status=status, checkpoint_id=checkpoint_id,
                checkpoint_ns=(), interrupts=interrupts))


def _ensured(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The invocation's config as LangChain sees it (merged with the caller's, from
    LangChain's context), or None without langchain-core."""
    if not AVAILABLE:
        return None
    cfg: dict[str, Any] = _with_node_finished(dict(ensure_config(config)))  # type: ignore[arg-type]
    if cfg.get("configurable") and isinstance(cfg.get("metadata"), dict):
        cfg["metadata"] = {**propagated(cfg), **cfg["metadata"]}
    return cfg


def propagated(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """What LangGraph's `ensure_config` copies from the invocation's configurable into
    its metadata (thread_id and the like) that the metadata does not hold yet."""
    configurable = (config or {}).get("configurable") or {}
    metadata = (config or {}).get("metadata") or {}
    own = _own_task_id()
    return {k: v for k in PROPAGATED if k not in metadata and (v := configurable.get(k))
            and not (k == "task_id" and v == own)}


def _own_task_id() -> str | None:
    """The id of the task running here: graphrun puts it in its config's configurable
    (LangGraph keeps it under a private key), so it is no caller's `task_id` to copy."""
    ctx = current_task()
    return None if ctx is None else ctx.call.task.id


# The configurable keys LangGraph copies into a run's metadata.
PROPAGATED = ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id",
              "assistant_id", "graph_id")


def start_graph(name: str, input: Any, config: Mapping[str, Any] | None) -> GraphRun | None:
    """Start the chain run of a graph invocation (sync), or None with no callbacks."""
    cfg = _ensured(config)
    if cfg is None:
        return None
    cm = get_callback_manager_for_config(cfg)  # type: ignore[arg-type]
    if not cm.handlers:
        return None
    if "ls_integration" not in cm.metadata:
        cm.add_metadata({"ls_integration": "langgraph"})
    rm = cm.on_chain_start(None, input, name=cfg.get("run_name") or name,
                           run_id=cfg.get("run_id"))
    return GraphRun(rm, cfg, is_async=False)


async def astart_graph(name: str, input: Any, config: Mapping[str, Any] | None, *,
                       langsmith: bool = True) -> GraphRun | None:
    """Start the chain run of a graph invocation (async), or None with no callbacks.
    `langsmith=False` leaves LangChain's LangSmith tracer out (the caller traces already)."""
    cfg = _ensured(config)
    if cfg is None:
        return None
    cm = get_async_callback_manager_for_config(cfg)  # type: ignore[arg-type]
    if not langsmith:
        tracer = langchain_core.tracers.langchain.LangChainTracer
        cm.handlers = [h for h in cm.handlers if not isinstance(h, tracer)]
        cm.inheritable_handlers = [h for h in cm.inheritable_handlers
                                   if not isinstance(h, tracer)]
    if not cm.handlers:
        return None
    if "ls_integration" not in cm.metadata:
        cm.add_metadata({"ls_integration": "langgraph"})
    rm = await cm.on_chain_start(None, input, name=cfg.get("run_name") or name,
                                 run_id=cfg.get("run_id"))
    return GraphRun(rm, cfg, is_async=True)


# -- a task's run (a node, a routing function, a @task call) ---------------------------------
def _child_config(config: dict[str, Any], callbacks: Any) -> dict[str, Any]:
    """`config` for what a run calls: its child callbacks, without the run's own name/id."""
    child = {**config, "callbacks": callbacks}
    child.pop("run_name", None)
    child.pop("run_id", None)
    return child


def recorded(value: Any, process: Callable[[Any], Any] | None) -> Any:
    """What tracers record for `value` under a TracePolicy processor: `value` itself when
    there is none, or when it raises (logged: it never fails the node)."""
    if process is None:
        return value
    try:
        return process(value)
    except Exception:
        _log.exception("a TracePolicy processor raised; recording the untransformed payload")
        return value


def is_tracer(handler: Any) -> bool:
    """A handler that records runs (a TracePolicy's audience): a BaseTracer that does not
    stream to the caller (astream_events' and astream_log's do; they get real values)."""
    return isinstance(handler, BaseTracer) and _StreamingCallbackHandler not in type(
        handler).__mro__


def _groups(manager: Any) -> tuple[Any, Any, Any]:
    """`manager` split three ways: the real handlers, the relays (which send both values
    on, see graphrun.relay), the tracers."""
    def only(keep: Callable[[Any], bool]) -> Any:
        part = copy.copy(manager)
        part.handlers = [h for h in manager.handlers if keep(h)]
        return part

    return (only(lambda h: not is_tracer(h) and not getattr(h, "relays_traced", False)),
            only(lambda h: getattr(h, "relays_traced", False)), only(is_tracer))


def start_run(config: dict[str, Any], input: Any, name: str, policy: Any = None
              ) -> tuple[Any, dict[str, Any]]:
    """Start a chain run under `config`'s callbacks; returns it and its child config.
    `policy`: the node's TracePolicy, if any."""
    cm = get_callback_manager_for_config(config)  # type: ignore[arg-type]
    name, run_id = config.get("run_name") or name, config.get("run_id")
    shown = recorded(input, getattr(policy, "process_inputs", None))
    if shown is input:
        rm = cm.on_chain_start(None, input, name=name, run_id=run_id)
    else:
        real, relays, tracers = _groups(cm)
        rm = real.on_chain_start(None, input, name=name, run_id=run_id)
        relays.on_chain_start(None, input, name=name, run_id=rm.run_id, traced_inputs=shown)
        tracers.on_chain_start(None, shown, name=name, run_id=rm.run_id)
        rm.handlers = cm.handlers
    return rm, _child_config(config, rm.get_child("seq:step:1"))


async def astart_run(config: dict[str, Any], input: Any, name: str, policy: Any = None
                     ) -> tuple[Any, dict[str, Any]]:
    cm = get_async_callback_manager_for_config(config)  # type: ignore[arg-type]
    name, run_id = config.get("run_name") or name, config.get("run_id")
    shown = recorded(input, getattr(policy, "process_inputs", None))
    if shown is input:
        rm = await cm.on_chain_start(None, input, name=name, run_id=run_id)
    else:
        real, relays, tracers = _groups(cm)
        # Tracers start last: a cancellation before then leaves no tracer run open.
        rm = await real.on_chain_start(None, input, name=name, run_id=run_id)
        await relays.on_chain_start(None, input, name=name, run_id=rm.run_id,
                                    traced_inputs=shown)
        await tracers.on_chain_start(None, shown, name=name, run_id=rm.run_id)
        rm.handlers = cm.handlers
    return rm, _child_config(config, rm.get_child("seq:step:1"))


def end_run(rm: Any, error: BaseException | None, output: Any, policy: Any = None) -> None:
    if error is not None:
        rm.on_chain_error(error)
        return
    shown = recorded(output, getattr(policy, "process_outputs", None))
    if shown is output:
        rm.on_chain_end(output)
        return
    real, relays, tracers = _groups(rm)
    tracers.on_chain_end(shown)
    relays.on_chain_end(output, traced_outputs=shown)
    real.on_chain_end(output)


async def aend_run(rm: Any, error: BaseException | None, output: Any, *,
                   stream: bool = False, policy: Any = None) -> None:
    """End a run; under `astream` (a streaming handler listens), it streams its output
    first, as LangGraph's tasks do."""
    if error is not None:
        await rm.on_chain_error(error)
        return
    if stream:
        await tap_output(rm, output)
    shown = recorded(output, getattr(policy, "process_outputs", None))
    if shown is output:
        await rm.on_chain_end(output)
        return
    real, relays, tracers = _groups(rm)
    # Tracers end first: a cancellation can then skip only the others' end.
    await tracers.on_chain_end(shown)
    await relays.on_chain_end(output, traced_outputs=shown)
    await real.on_chain_end(output)


async def tap_output(rm: Any, output: Any) -> None:
    """Give a run's `output` to the streaming handlers (astream_events, astream_log)
    among `rm`'s, as LangChain's streaming runnables do."""
    taps = [h for h in rm.handlers if isinstance(h, _StreamingCallbackHandler)]
    if not taps:
        return

    async def one() -> Any:
        yield output

    stream: Any = one()
    for h in taps:
        stream = h.tap_output_aiter(rm.run_id, stream)
    async for _ in stream:
        pass


def route(config: dict[str, Any], run: Any, index: int, is_start: bool, name: str,
          arg: Any, call: Callable[[dict[str, Any]], Any]) -> Any:
    """A routing function's run: after its node's run starts, under seq:step:3 (the node
    function is step 1, its writes step 2) and on for each more edge; under START's run,
    from seq:step:2. `call` gets the config to give the function."""
    cfg = {**config, "callbacks": run.get_child(f"seq:step:{index + (2 if is_start else 3)}")}
    rm, child = start_run(cfg, arg, name)
    try:
        with entered(child):
            result = call(child)
    except BaseException as exc:
        rm.on_chain_error(exc)
        raise
    rm.on_chain_end(result)
    return result


@contextlib.contextmanager
def entered(config: dict[str, Any]) -> Iterator[None]:
    """Make `config` LangChain's current one (a model called without `config` finds it),
    and its run LangSmith's parent (a `@traceable` function nests under it)."""
    from graphrun import _lc_private

    token, previous = _lc_private.set_config_context(config)
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)
        if previous is not None:
            _lc_private.restore_tracing_context(previous)


def streams(run: GraphRun | None) -> bool:
    """Whether a streaming handler (astream_events, astream_log) listens to the run."""
    return run is not None and streams_to(run.manager)


def streams_to(manager: Any) -> bool:
    return any(isinstance(h, _StreamingCallbackHandler)
               and type(h).__name__ != "StreamMessages" for h in manager.handlers)
