"""What a run streams, in LangGraph's shapes: the chunks of each stream mode, made here
and kept by the run in `Run.events`, and `stream_chunks`, which hands them to a caller.

An event is `(mode, chunk)`, or `(namespace, mode, chunk)` for a subgraph's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from graphrun.channels import Channel
from graphrun.checkpoint import Checkpoint, Task, TaskResult, Write, checkpoint_config
from graphrun.spec import GraphSpec
from graphrun.types import INTERRUPT, RETURN, PendingTask, TaskError

from .planning import read_values, task_result

Event = tuple[Any, ...]

# A checkpoint as the v3 protocol's `checkpoints` channel shows it: its id, parent's id,
# step and source, without the state ('checkpoints' carries the state too).
CHECKPOINT_REFS = "checkpoint_refs"


class StreamEvents:
    """The events of one run; the checkpoints' ('checkpoints', CHECKPOINT_REFS, 'debug')
    only if asked for."""

    def __init__(self, graph: GraphSpec, *, thread_id: str, ns: str,
                 modes: frozenset[str], clock: Callable[[], str],
                 parents: Mapping[str, str] | None = None) -> None:
        self.graph = graph
        self.thread_id = thread_id
        self.ns = ns
        # A subgraph's: the checkpoints the graphs around it run from, by namespace.
        self.parents = dict(parents or {})
        self.modes = modes
        self.clock = clock
        self._emitted: set[str] = set()  # checkpoints already streamed
        # durability="exit": LangGraph shows each checkpoint of the run with the parent of
        # the one the run started from (it saves none in between).
        self.exiting = False
        self.exit_parent: str | None = None

    def breakpoint(self) -> list[Event]:
        # A breakpoint shows as an empty interrupt at the root only (LangGraph: a
        # nested loop's pause bubbles up to the root, which reports it).
        return [] if self.ns else [("updates", {INTERRUPT: ()})]

    def done_before(self, task: Task, writes: Sequence[Write]) -> list[Event]:
        """A task that finished before the run paused: what it wrote, marked (LangGraph)."""
        return [("updates", {task.name: update_chunk(self.graph, writes),
                             "__metadata__": {"cached": True}})]

    def task_started(self, task: Task, ckpt: Checkpoint | None) -> list[Event]:
        return self._task({"id": task.id, "name": task.name,
                           "input": self.graph.shown_input(task), "triggers": task.triggers},
                          ckpt)

    def task_finished(self, task: Task, r: TaskResult, ckpt: Checkpoint | None,
                      values: Any = None) -> list[Event]:
        """`values`: the state before the step, shown with a task's interrupts."""
        out: list[Event] = [*r.sub_events]  # a subgraph's chunks come before its node's
        out += [("custom", chunk) for chunk in r.custom]
        if r.interrupts:  # one chunk per task that paused, in both modes (LangGraph)
            out.append(("updates", {INTERRUPT: tuple(r.interrupts)}))
            out.append(("values", {**values, INTERRUPT: tuple(r.interrupts)}
                        if isinstance(values, dict) else {INTERRUPT: tuple(r.interrupts)}))
        elif r.paused:
            out += self.breakpoint()
        elif not r.error:
            out.append(("updates", {task.name: update_chunk(self.graph, r.writes),
                                    **_cached(r)}))
        if r.cached:  # a cache hit streams no task result (LangGraph)
            return out
        return out + self._task({
            "id": task.id, "name": task.name,
            # The exception itself, as LangGraph's (in-process); its text where only that
            # came back (on Temporal).
            "error": (r.exception if r.exception is not None else
                      TaskError(r.error["type"], r.error["message"])) if r.error else None,
            "result": _shown_result(self.graph, r.writes),
            "interrupts": [{"value": i.value, "id": i.id} for i in r.interrupts]}, ckpt)

    def call_finished(self, call: Task, r: TaskResult) -> list[Event]:
        """A @task call run on its own (Temporal): its custom chunks and its return value."""
        out: list[Event] = [("custom", chunk) for chunk in r.custom]
        if not r.error and not r.interrupts:
            out.append(("updates", {call.name: dict(r.writes).get(RETURN), **_cached(r)}))
        return out

    def _task(self, payload: dict[str, Any], ckpt: Checkpoint | None) -> list[Event]:
        out: list[Event] = [("tasks", payload)]
        if "debug" in self.modes:
            out.append(("debug", {
                "step": ckpt.step + 1 if ckpt else 0, "timestamp": self.clock(),
                "type": "task_result" if "result" in payload else "task",
                "payload": payload}))
        return out

    def checkpoint(self, ckpt: Checkpoint, channels: Mapping[str, Channel],
                   tasks: Sequence[Task]) -> list[Event]:
        """A checkpoint as the 'checkpoints' mode shows it, once, with its next tasks."""
        modes = self.modes
        if not ({"checkpoints", "debug", CHECKPOINT_REFS} & modes) or ckpt.id in self._emitted:
            return []
        self._emitted.add(ckpt.id)
        out: list[Event] = []
        if CHECKPOINT_REFS in modes:
            out.append((CHECKPOINT_REFS, {
                "id": ckpt.id, **({"parent_id": ckpt.parent_id} if ckpt.parent_id else {}),
                "step": ckpt.step, "source": ckpt.source}))
        if not {"checkpoints", "debug"} & modes:
            return out

        def config(cid: str) -> dict[str, Any]:
            return checkpoint_config(self.thread_id, self.ns, cid, self.parents)

        payload = {
            "config": config(ckpt.id),
            "parent_config": config(parent) if (parent := self._parent_of(ckpt)) else None,
            "values": self.graph.present(read_values(channels, self.graph.state_keys)),
            "metadata": {"source": ckpt.source, "step": ckpt.step,
                         "parents": dict(self.parents)},
            "next": [t.name for t in tasks],
            "tasks": [self._pending_task(t, ckpt.pending.get(t.id)) for t in tasks]}
        if "checkpoints" in modes:
            out.append(("checkpoints", payload))
        if "debug" in modes:
            out.append(("debug", {"step": ckpt.step, "timestamp": ckpt.created_at,
                                  "type": "checkpoint", "payload": payload}))
        return out


    def _parent_of(self, ckpt: Checkpoint) -> str | None:
        return self.exit_parent if self.exiting else ckpt.parent_id

    def _pending_task(self, t: Task, p: PendingTask | None) -> dict[str, Any]:
        """A checkpoint's next task as LangGraph shows it: with its error, its result or
        the interrupts it waits on (a run resumed from the checkpoint shows them)."""
        state = self._subgraph_state(t)
        if p is not None and p.status == "failed":
            err = p.error or {}
            return {"id": t.id, "name": t.name, "state": state,
                    "error": TaskError(err.get("type", "Exception"), err.get("message", ""))}
        result = task_result(self.graph, p.writes) if p and p.status == "done" else None
        interrupts = tuple({"id": i.id, "value": i.value} for i in p.interrupts) if (
            p and p.status == "interrupted") else ()
        return {"id": t.id, "name": t.name, **({"result": result} if result else {}),
                "interrupts": interrupts, "state": state}

    def _subgraph_state(self, t: Task) -> dict[str, Any] | None:
        """A subgraph's task names the subgraph's state by its namespace, as get_state's
        tasks do (a node that runs a graph, or calls one)."""
        node = self.graph.nodes.get(t.name)
        sub = None if node is None else node.fn if node.is_subgraph else node.calls_graph
        if getattr(sub, "spec", None) is None:
            return None
        return {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": t.ns}}


def _shown_result(graph: GraphSpec, writes: Sequence[Write]) -> Any:
    shown = graph.shown_result(writes)
    return shown if shown is not None else task_result(graph, writes) or {}


def _cached(r: TaskResult) -> dict[str, Any]:
    return {"__metadata__": {"cached": True}} if r.cached else {}


def update_chunk(graph: GraphSpec, writes: Sequence[Write]) -> Any:
    """A task's 'updates' stream value: its writes to state keys (LangGraph's shape)."""
    out = [(c, v) for c, v in writes if c in graph.state_keys]
    if not out:
        return None
    if graph.is_root:
        return out[-1][1] if len(out) == 1 else [v for _, v in out]
    if len({c for c, _ in out}) < len(out):  # a key written twice: one dict per write
        return [{c: v} for c, v in out]
    return dict(out)


def stream_chunks(events: list[tuple[Any, ...]], stream_mode: str | Sequence[str],
                  subgraphs: bool = False, own: tuple[str, ...] = ()) -> Iterator[Any]:
    """Stream chunks in LangGraph's shapes: `chunk` for one mode named alone,
    `(mode, chunk)` for a list of modes (of one too), and with `subgraphs=True` the
    namespace first: `(ns, chunk)` or `(ns, mode, chunk)`. `own`: the namespace of the
    graph's own chunks (a graph streamed inside a node: its task's, as LangGraph's); only
    those come without `subgraphs=True`."""
    named_alone = isinstance(stream_mode, str)
    modes = [stream_mode] if named_alone else list(stream_mode)
    for event in events:
        ns, mode, payload = own_or_sub(event, own)
        if mode not in modes or (ns != own and not subgraphs):
            continue
        if not subgraphs:
            yield payload if named_alone else (mode, payload)
        else:
            yield (ns, payload) if named_alone else (ns, mode, payload)


def own_or_sub(event: Event, own: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str, Any]:
    """An event as (namespace, mode, chunk): a run's own `(mode, chunk)` under `own`, the
    namespace its graph streams under (a graph run inside a node: its task's, as
    LangGraph's), a subgraph's `(namespace, mode, chunk)` under its own."""
    if len(event) == 3:
        return tuple(event[0]), event[1], event[2]
    return own, event[0], event[1]
