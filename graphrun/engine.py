"""The superstep, as plain functions over channels, and `Run`, the loop both drivers share.

A driver does three things: build a `Run`, execute the tasks it hands out
(in-process, or as Temporal activities), and give the results back:

    run = Run(graph, thread, input, clock=clock)
    while tasks := run.next_tasks():
        run.finish_step([execute(run.call_for(t)) for t in tasks])
    run.output()   # values, plus "__interrupt__" when paused

Everything here is deterministic: ids are xxhash digests of the thread id, the
checkpoint sequence number, the step and the task path; the only time is the
`clock` the driver passes in (workflow.now() on Temporal). No I/O.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from graphrun.channels import MISSING, Channel
from graphrun.checkpoint import (
    STATEFUL,
    Checkpoint,
    Task,
    TaskCall,
    TaskResult,
    Thread,
    Write,
    checkpoint_id,
    interrupt_id,
    is_interrupt_id,
    task_id,
)
from graphrun.errors import (
    EmptyInputError,
    GraphRecursionError,
    GraphValidationError,
    InvalidResumeError,
    InvalidUpdateError,
    NodeFailedError,
)
from graphrun.spec import GraphSpec, goto_writes
from graphrun.types import (
    INTERRUPT,
    NS_END,
    NS_SEP,
    PULL,
    PUSH,
    RETURN,
    START,
    TASKS,
    Command,
    Interrupt,
    PendingTask,
    TaskError,
)

# Re-exported: the drivers use them from here. Data stored when they lived here names
# `graphrun.engine:Task` etc.; serde decodes those paths as aliases (serde._OWN_TYPES).
__all__ = [
    "MISSING",
    "Checkpoint",
    "Run",
    "RunOptions",
    "Task",
    "TaskCall",
    "TaskResult",
    "Thread",
    "Write",
    "apply_writes",
    "checkpoint_id",
    "goto_writes",
    "interrupt_id",
    "is_interrupt_id",
    "is_paused",
    "pending_interrupts",
    "prepare_tasks",
    "read_values",
    "resolve_checkpoint",
    "restore_channels",
    "save_channels",
    "should_interrupt",
    "stream_chunks",
    "task_id",
    "task_result",
    "update_chunk",
    "validate_resume",
    "values_with_pending",
]

# -- the superstep as functions -----------------------------------------------
def restore_channels(graph: GraphSpec, ckpt: Checkpoint | None) -> dict[str, Channel]:
    saved = ckpt.channel_values if ckpt else {}
    return {k: ch.restore(saved.get(k, MISSING)) for k, ch in graph.channels.items()}


def resolve_checkpoint(graph: GraphSpec, ckpt: Checkpoint) -> tuple[Checkpoint, dict[str, Channel]]:
    """The checkpoint and channels as its next step sees them.

    A resume Command's update/goto waits on the checkpoint as `null_writes`; they
    are applied to a copy, so reading a thread (a query, say) never changes it.
    """
    channels = restore_channels(graph, ckpt)
    if ckpt.null_writes:
        ckpt = _working_copy(ckpt)
        apply_writes(graph, ckpt, channels, [(None, ckpt.null_writes)], ckpt.step)
    return ckpt, channels


def save_channels(channels: Mapping[str, Channel]) -> dict[str, Any]:
    out = {}
    for k, ch in channels.items():
        v = ch.save()
        if v is not MISSING:
            out[k] = v
    return out


def read_values(channels: Mapping[str, Channel], keys: Iterable[str]) -> dict[str, Any]:
    return {k: channels[k].get() for k in keys if channels[k].is_available()}


def values_with_pending(graph: GraphSpec, channels: Mapping[str, Channel],
                        ckpt: Checkpoint | None, keys: Iterable[str] | None = None
                        ) -> dict[str, Any]:
    """State values plus the writes of this step's finished tasks (what LangGraph shows):
    the output keys, or `keys`."""
    keys = graph.output_keys if keys is None else keys
    # `pending` is kept in task path order, the order writes are merged in.
    done = [p for p in (ckpt.pending if ckpt else {}).values() if p.status == "done"]
    if not done:
        return read_values(channels, keys)
    grouped: dict[str, list[Any]] = {}
    for p in done:
        for k, v in p.writes:
            if k in graph.state_keys:
                grouped.setdefault(k, []).append(v)
    view = dict(channels)
    for k, vs in grouped.items():  # a write the reducer refuses raises again, as in LangGraph
        ch = channels[k].restore(channels[k].save())
        ch.update(vs)
        view[k] = ch
    return read_values(view, keys)


def prepare_tasks(graph: GraphSpec, ckpt: Checkpoint, channels: Mapping[str, Channel],
                  parent_ns: str = "") -> list[Task]:
    """The tasks of the step after `ckpt`: Send packets first, then triggered nodes."""
    step = ckpt.step + 1
    tasks: list[Task] = []

    def make(name: str, kind: str, key: Any, triggers: tuple[str, ...], arg: Any,
             state: Any = None, timeout: list[Any] | None = None) -> Task:
        tid = task_id(ckpt.id, parent_ns, step, name, kind, key)
        ns = f"{parent_ns}{NS_SEP}{name}{NS_END}{tid}" if parent_ns else f"{name}{NS_END}{tid}"
        return Task(id=tid, name=name, path=(kind, key), triggers=triggers, input=arg,
                    ns=ns, step=step, state=state, timeout=timeout)

    sends = channels[TASKS].get() if channels[TASKS].is_available() else []
    state = None
    for i, packet in enumerate(sends):
        if packet.node not in graph.nodes or packet.node == START:
            continue
        if graph.nodes[packet.node].reads_state and state is None:
            state = read_values(channels, graph.read_keys)
        tasks.append(make(packet.node, PUSH, i, (PUSH,), packet.arg,
                          state if graph.nodes[packet.node].reads_state else None,
                          timeout=packet.timeout.to_data() if packet.timeout else None))
    for name, triggers in graph.triggers.items():
        seen = ckpt.versions_seen.get(name, {})
        if any(channels[c].is_available() and ckpt.channel_versions.get(c, 0) > seen.get(c, 0)
               for c in triggers):
            if name == START:
                current = (read_values(channels, graph.state_keys)
                           if START in graph.branches else None)
                tasks.append(make(name, PULL, name, triggers, channels[START].get(), current))
                continue
            if state is None:
                state = read_values(channels, graph.read_keys)
            tasks.append(make(name, PULL, name, triggers, state))
    return tasks


def apply_writes(graph: GraphSpec, ckpt: Checkpoint, channels: dict[str, Channel],
                 tasks: Sequence[tuple[Task | None, Sequence[Write]]], step: int) -> set[str]:
    """Merge a step's writes in canonical order (task path), bumping versions.

    Mutates `ckpt.channel_versions`, `ckpt.versions_seen` and `channels`.
    """
    ordered = sorted(tasks, key=lambda tw: _path_key(tw[0]))
    for task, _ in ordered:
        if task is not None:
            seen = ckpt.versions_seen.setdefault(task.name, {})
            for chan in task.triggers:
                if chan in ckpt.channel_versions:
                    seen[chan] = ckpt.channel_versions[chan]
    next_version = max(ckpt.channel_versions.values(), default=0) + 1
    updated: set[str] = set()
    for task, _ in ordered:
        for chan in task.triggers if task else ():
            if chan in channels and channels[chan].consume():
                ckpt.channel_versions[chan] = next_version
    grouped: dict[str, list[Any]] = {}
    writers: dict[str, list[str]] = {}
    for task, writes in ordered:
        for chan, value in writes:
            if chan in channels:
                grouped.setdefault(chan, []).append(value)
                writers.setdefault(chan, []).append(task.name if task else "input")
    for chan, values in grouped.items():
        if channels[chan].update(values, step=step, nodes=writers[chan]):
            ckpt.channel_versions[chan] = next_version
            updated.add(chan)
    if any(task is not None and task.triggers for task, _ in ordered):
        # Edge triggers and Send packets last one step: clear the ones not rewritten.
        for chan, ch in channels.items():
            if chan not in updated and ch.is_available() and ch.update([]):
                ckpt.channel_versions[chan] = next_version
                updated.add(chan)
        # Nothing left to trigger: the run would end, so deferred nodes may run now.
        if not any(channels[c].is_available() for c in updated & graph.trigger_channels):
            for chan, ch in channels.items():
                if ch.finish():
                    ckpt.channel_versions[chan] = next_version
                    if ch.is_available():
                        updated.add(chan)
    return updated


def _path_key(task: Task | None) -> tuple[Any, ...]:
    if task is None:
        return ("",)
    kind, key = task.path
    return (kind, str(key).zfill(10) if isinstance(key, int) else str(key))


def task_result(graph: GraphSpec, writes: Sequence[Write]) -> Any:
    """A task's writes to state keys as LangGraph shows a task's result: one value per
    key, several writes to one key as `{"$writes": [...]}`; None when it wrote none."""
    out: dict[str, Any] = {}
    for c, v in writes:
        if c not in graph.state_keys:
            continue
        if c in out:
            prev = out[c]
            many = prev["$writes"] if isinstance(prev, dict) and "$writes" in prev else [prev]
            out[c] = {"$writes": [*many, v]}
        else:
            out[c] = v
    return graph.present(out) if out else None


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


def should_interrupt(ckpt: Checkpoint, nodes: Sequence[str], tasks: Sequence[Task]) -> bool:
    """A static breakpoint fires once per change of state (LangGraph's rule)."""
    if not nodes:
        return False
    seen = ckpt.versions_seen.get(INTERRUPT, {})
    changed = any(v > seen.get(c, 0) for c, v in ckpt.channel_versions.items())
    return changed and any(t.name != START and ("*" in nodes or t.name in nodes)
                           for t in tasks)


def is_paused(graph: GraphSpec, thread: Thread) -> bool:
    """Whether the thread's last run stopped before its end (an interrupt, a breakpoint)."""
    head = thread.head
    if head is None:
        return False
    if any(p.status in ("interrupted", "failed") for p in head.pending.values()):
        return True
    ckpt, channels = resolve_checkpoint(graph, head)
    return bool(prepare_tasks(graph, ckpt, channels))


def pending_interrupts(ckpt: Checkpoint | None) -> dict[str, Interrupt]:
    """Unanswered interrupts of the thread's head, by id, in task order."""
    if ckpt is None:
        return {}
    return {i.id: i for p in ckpt.pending.values() if p.status == "interrupted"
            for i in p.interrupts}


# -- the loop -----------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RunOptions:
    """How one invocation runs; the defaults are those of `invoke()`."""

    checkpoint: str | None = None  # start from this checkpoint: time travel, a fork
    recursion_limit: int = 25
    interrupt_before: Sequence[str] | None = None  # this run's breakpoints; None: compiled
    interrupt_after: Sequence[str] | None = None
    context: Any = None  # invoke(..., context=...), handed to every task
    durability: str | None = None  # "exit": keep only the checkpoint the run stops at
    checkpointer: bool = True  # False: a graph without one cannot be resumed
    # A subgraph's run inside a task: its namespace and the answers it was given.
    ns: str = ""
    null_resume: Any = MISSING
    resume_map: Mapping[str, Any] | None = None
    # What a caller streams; the 'checkpoints' and 'debug' chunks are made only if asked.
    stream_modes: frozenset[str] = frozenset()
    messages_v2: bool = False  # 'messages' as content-block events (graphrun.run_stream)
    # A subgraph's own checkpoint to run from, by the subgraph's namespace (a config
    # naming a subgraph's checkpoint: time travel inside the subgraph).
    subgraph_checkpoints: Mapping[str, str] | None = None


class Run:
    """One invocation of a graph on a thread, as a plain state machine.

    It mutates `thread` as the run goes: new checkpoints are appended after each
    step, and on a pause the head checkpoint records what already ran. Errors in
    the input (a bad resume, say) are raised before anything changes.
    """

    def __init__(self, graph: GraphSpec, thread: Thread, input: Any, *,
                 clock: Callable[[], str], options: RunOptions | None = None) -> None:
        o = options or RunOptions()
        self.graph = graph
        self.options = o
        self.context = o.context
        self.control: Any = None  # the caller's RunControl (in-process): see local.py
        self._appended: list[Checkpoint] = []
        self._emitted: set[str] = set()  # checkpoints already streamed
        self._reported: set[str] = set()  # tasks of this step already streamed
        # Breakpoints given to invoke() replace the compiled ones for this run (LangGraph).
        self.interrupt_before = _breakpoints(graph, o.interrupt_before, graph.interrupt_before)
        self.interrupt_after = _breakpoints(graph, o.interrupt_after, graph.interrupt_after)
        self.thread = thread
        self.clock = clock
        self.ns = o.ns
        self.recursion_limit = o.recursion_limit
        self.steps = 0
        self.status = "running"
        self.interrupts: list[Interrupt] = []
        # (mode, chunk) of this run; (namespace, mode, chunk) of the subgraphs its tasks ran
        self.events: list[tuple[Any, ...]] = []
        self.failed: list[TaskResult] = []
        self.resume_map: dict[str, Any] = dict(o.resume_map or {})
        self.null_resume = o.null_resume
        self._tasks: list[Task] = []
        self._by_id: dict[str, Task] = {}  # this step's tasks, by id
        self._done: dict[str, TaskResult] = {}
        self._finished: dict[str, TaskResult] = {}  # this step's tasks that finished so far
        # @task calls (graphrun.calls) of this step: their outcomes; on Temporal also the
        # calls being run (id -> the call, the ids from its step task down to it, and
        # that task), who waits for which, results held meanwhile, and the next round.
        self._call_results: dict[str, PendingTask] = {}
        self._calls: dict[str, tuple[Task, tuple[str, ...], Task]] = {}
        self._waiting: dict[str, set[str]] = {}
        self._held: dict[str, TaskResult] = {}
        self._round: list[Task] = []
        self.subgraph_checkpoints = dict(o.subgraph_checkpoints or {})
        base = thread.get(o.checkpoint)
        if o.checkpoint is not None and base is not None and base is not thread.head:
            # A subgraph given its answer by its parent keeps the answers it has.
            resuming = ((isinstance(input, Command) and input.resume is not None)
                        or o.null_resume is not MISSING or bool(o.resume_map))
            base = self._fork(base, dropping_answers=not resuming)
        # Work on a copy of the head; it replaces the head only once the run commits or
        # pauses, so a refused input (a bad answer, say) leaves the thread untouched.
        self._base = base
        self.ckpt: Checkpoint | None = None
        if base is not None:
            self.ckpt, self.channels = resolve_checkpoint(graph, _working_copy(base))
        else:
            self.channels = restore_channels(graph, None)
        self._start(input, o.checkpointer)

    # -- starting -----------------------------------------------------------
    def _save_head(self) -> None:
        if self._base is not None and self.ckpt is not None and self._base is not self.ckpt:
            for i in range(len(self.thread.checkpoints) - 1, -1, -1):
                if self.thread.checkpoints[i] is self._base:
                    self.thread.checkpoints[i] = self.ckpt
                    break
        self._base = self.ckpt

    def _fork(self, base: Checkpoint, *, dropping_answers: bool) -> Checkpoint:
        pending = {} if dropping_answers else copy.deepcopy(base.pending)
        fork = self._append(lambda cid: dataclasses.replace(
            copy.deepcopy(base), id=cid, source="fork", parent_id=base.id,
            created_at=self.clock(), pending=pending, writes=None, finished={}))
        if self.subgraph_checkpoints:
            self._carry_subgraphs(base, fork, keep_threads=dropping_answers)
        return fork

    def _carry_subgraphs(self, base: Checkpoint, fork: Checkpoint, *, keep_threads: bool
                         ) -> None:
        """Running from a subgraph's checkpoint: the fork's tasks are the base's under
        new ids. The subgraph threads the base's tasks saved go with them (without their
        answers, as the fork's own are dropped), and the namespaces that name a
        subgraph's checkpoint follow the new task ids."""
        _, channels = resolve_checkpoint(self.graph, base)
        old = prepare_tasks(self.graph, base, channels, self.ns)
        new = prepare_tasks(self.graph, fork, channels, self.ns)
        for before, after in zip(old, new, strict=True):
            p = base.pending.get(before.id)
            if keep_threads and p is not None and p.nested:
                fork.pending[after.id] = PendingTask(status="interrupted",
                                                     nested=copy.deepcopy(p.nested))
            elif not keep_threads and before.id in fork.pending:
                fork.pending[after.id] = fork.pending.pop(before.id)
            self.subgraph_checkpoints = {
                (after.ns + k[len(before.ns):] if k == before.ns
                 or k.startswith(before.ns + NS_SEP) else k): v
                for k, v in self.subgraph_checkpoints.items()}

    def _start(self, input: Any, checkpointer: bool) -> None:
        g, ckpt = self.graph, self.ckpt
        if isinstance(input, Command):
            if input.graph == Command.PARENT:
                raise InvalidResumeError("Command(graph=PARENT) can only be returned by a node.")
            writes: list[Write] = []
            if input.resume is not None:
                if not checkpointer:
                    raise RuntimeError("Cannot use Command(resume=...) without checkpointer")
                self._check_resume(input.resume)
            if input.update is not None:
                writes += g.update_to_writes("input", input.update)
            writes += goto_writes(g, input.gotos())
            if input.resume is None and not writes:
                raise EmptyInputError("Received empty Command input")
            if ckpt is None:
                raise InvalidResumeError(
                    f"thread '{self.thread.thread_id}' has no checkpoint to apply a Command "
                    f"to. Invoke it with input first.")
            if writes:
                ckpt.null_writes = [*ckpt.null_writes, *writes]
                apply_writes(g, ckpt, self.channels, [(None, writes)], ckpt.step)
            self._resuming()
        elif input is None:
            if ckpt is None:
                raise EmptyInputError(
                    f"thread '{self.thread.thread_id}' has no checkpoint to continue, and the "
                    f"input is None. Invoke it with the graph's input.")
            self._resuming()
        else:
            if not (g.is_root or isinstance(input, dict) or hasattr(input, "model_fields")
                    or (dataclasses.is_dataclass(input) and not isinstance(input, type))):
                raise InvalidUpdateError(
                    f"the graph's input must be a dict of state keys (or a model of the state "
                    f"schema), got {type(input).__name__}: {input!r:.80}", nodes=[START])
            start_writes = [(START, input)]
            if ckpt is not None:
                # New input on a paused thread drops the unfinished tasks (LangGraph).
                stale = prepare_tasks(g, ckpt, self.channels, self.ns)
                ckpt = _working_copy(ckpt)  # the head stays as it was saved
                apply_writes(g, ckpt, self.channels,
                             [*((t, ()) for t in stale), (None, start_writes)], ckpt.step)
            else:
                empty = Checkpoint(id="", step=-2, source="input", channel_values={},
                                   channel_versions={}, versions_seen={}, parent_id=None,
                                   created_at="")
                apply_writes(g, empty, self.channels, [(None, start_writes)], -1)
                ckpt = empty
            self._commit(ckpt, source="input", step=ckpt.step + 1, writes=None)

    def _check_resume(self, resume: Any) -> None:
        self.resume_map, self.null_resume = validate_resume(
            self.graph, self.thread, resume, ckpt=self.ckpt, channels=self.channels)

    def _resuming(self) -> None:
        assert self.ckpt is not None
        self.ckpt.versions_seen[INTERRUPT] = dict(self.ckpt.channel_versions)
        self.events.append(("values", self.values()))

    # -- the step loop -----------------------------------------------------
    def next_tasks(self) -> list[Task]:
        """The tasks to execute now; empty when the run has finished or paused."""
        if self.status != "running":
            return []
        if self._round:  # the step goes on: calls to run, or their callers again
            tasks, self._round = self._round, []
            return tasks
        assert self.ckpt is not None
        ckpt = self.ckpt
        tasks = prepare_tasks(self.graph, ckpt, self.channels, self.ns)
        self._emit_checkpoint(ckpt, tasks)
        if not tasks:
            self.status = "done"
            self._save_head()
            return []
        if self.steps >= self.recursion_limit:
            raise GraphRecursionError(
                f"Recursion limit of {self.recursion_limit} reached without hitting a stop "
                f"condition. Raise it with config={{'recursion_limit': N}} or check the "
                f"graph for an endless loop.")
        if should_interrupt(ckpt, self.interrupt_before, tasks):
            ckpt.versions_seen[INTERRUPT] = dict(ckpt.channel_versions)
            self._save_head()
            self.status = "interrupted"
            self._emit_breakpoint()
            return []
        self._tasks = tasks
        self._by_id = {t.id: t for t in tasks}
        self._done = {}
        self._finished = {}
        self._call_results = {}
        for t in tasks:
            p = ckpt.pending.get(t.id)
            if p is not None and p.status == "done":
                self._done[t.id] = TaskResult(task_id=t.id, writes=list(p.writes),
                                              nested=dict(p.nested))
                if p.writes and t.name != START:  # what it wrote before, marked (LangGraph)
                    self.events.append(("updates", {t.name: update_chunk(self.graph, p.writes),
                                                    "__metadata__": {"cached": True}}))
        todo = [t for t in tasks if t.id not in self._done]
        for t in todo:
            if t.name != START:
                self._emit_task({"id": t.id, "name": t.name, "input": self.graph.shown_input(t),
                                 "triggers": t.triggers})
        return todo

    def task_finished(self, r: TaskResult) -> None:
        """Stream one task's chunks as it finishes (LangGraph's order: completion order).
        What was not reported by the time the step ends is streamed then, in path order."""
        t = self._by_id.get(r.task_id)
        if t is not None and not r.awaiting:
            self._finished[t.id] = r
        if (t is None or t.id in self._reported or t.id in self._done or t.name == START
                or r.awaiting):  # a task waiting for its calls is not finished
            return
        self._reported.add(t.id)
        self.events += r.sub_events  # a subgraph's chunks come before its node's
        self.events += [("custom", chunk) for chunk in r.custom]
        if r.interrupts:  # one chunk per task that paused (LangGraph)
            self.events.append(("updates", {INTERRUPT: tuple(r.interrupts)}))
        elif r.paused:
            self._emit_breakpoint()
        elif not r.error:
            self.events.append(("updates", {t.name: update_chunk(self.graph, r.writes),
                                            **_cached(r)}))
        if r.cached:  # a cache hit streams no task result (LangGraph)
            return
        self._emit_task({
            "id": t.id, "name": t.name,
            # The exception itself, as LangGraph's (in-process); its text where only that
            # came back (on Temporal).
            "error": (r.exception if r.exception is not None else
                      TaskError(r.error["type"], r.error["message"])) if r.error else None,
            "result": task_result(self.graph, r.writes) or {},
            "interrupts": [{"value": i.value, "id": i.id} for i in r.interrupts]})

    # -- the 'tasks', 'checkpoints' and 'debug' stream modes ----------------------------
    def _emit_breakpoint(self) -> None:
        # A breakpoint shows as an empty interrupt at the root only (LangGraph: a
        # nested loop's pause bubbles up to the root, which reports it).
        if not self.ns:
            self.events.append(("updates", {INTERRUPT: ()}))

    def _emit_task(self, payload: dict[str, Any]) -> None:
        self.events.append(("tasks", payload))
        if "debug" in self.options.stream_modes:
            self.events.append(("debug", {
                "step": self.ckpt.step + 1 if self.ckpt else 0, "timestamp": self.clock(),
                "type": "task_result" if "result" in payload else "task",
                "payload": payload}))

    def _emit_checkpoint(self, ckpt: Checkpoint, tasks: Sequence[Task]) -> None:
        """A checkpoint as the 'checkpoints' mode shows it, once, with its next tasks."""
        modes = self.options.stream_modes
        if not ({"checkpoints", "debug"} & modes) or ckpt.id in self._emitted:
            return
        self._emitted.add(ckpt.id)
        tid, ns = self.thread.thread_id, self.ns

        def config(cid: str) -> dict[str, Any]:
            return {"configurable": {"thread_id": tid, "checkpoint_ns": ns,
                                     "checkpoint_id": cid}}

        payload = {
            "config": config(ckpt.id),
            "parent_config": config(ckpt.parent_id) if ckpt.parent_id else None,
            "values": self.graph.present(read_values(self.channels, self.graph.state_keys)),
            "metadata": {"source": ckpt.source, "step": ckpt.step, "parents": {}},
            "next": [t.name for t in tasks],
            "tasks": [{"id": t.id, "name": t.name, "interrupts": (), "state": None}
                      for t in tasks]}
        if "checkpoints" in modes:
            self.events.append(("checkpoints", payload))
        if "debug" in modes:
            self.events.append(("debug", {"step": ckpt.step, "timestamp": ckpt.created_at,
                                          "type": "checkpoint", "payload": payload}))

    def call_for(self, task: Task) -> TaskCall:
        """The task plus its answers: stored ones, one from an id map, or the single value.
        For a call being run on its own: its step task's, run down to that call."""
        assert self.ckpt is not None
        if task.id in self._calls:
            _, path, owner = self._calls[task.id]
            return dataclasses.replace(self.call_for(owner), target=list(path))
        p = self.ckpt.pending.get(task.id)
        resume = list(p.resume) if p else []
        # Stateful subgraphs' threads, then what a paused task saved (its own subgraphs).
        own = f"{STATEFUL}{task.name}:"
        nested = {**{k: copy.deepcopy(v) for k, v in self.ckpt.subgraphs.items()
                     if k.startswith(own)},
                  **(copy.deepcopy(p.nested) if p else {})}
        if self.resume_map:
            nxt = interrupt_id(task.ns, len(resume))
            if nxt in self.resume_map:
                resume.append(self.resume_map[nxt])
        null = MISSING
        if self.null_resume is not MISSING and self._owner_of_null_resume() == task.id:
            null = self.null_resume
        # Outcomes of this step's @task calls: saved on the checkpoint, or from this run.
        calls = {k: v for k, v in self.ckpt.pending.items() if k not in self._by_id}
        calls.update(self._call_results)
        return TaskCall(task=task, resume=resume, null_resume=null, nested=nested,
                        context=self.context, messages="messages" in self.options.stream_modes,
                        messages_v2=self.options.messages_v2,
                        debug="debug" in self.options.stream_modes,
                        checkpoint_id=self.ckpt.id, durability=self.options.durability,
                        calls=calls, remaining_steps=self.recursion_limit - self.steps,
                        subgraph_checkpoints=dict(self.subgraph_checkpoints))

    def keep_finished(self) -> None:
        """The run stopped mid-step (cancelled): the step's tasks that finished keep their
        writes on the head as pending writes, so the thread does not run them again."""
        if self.ckpt is None or self.status != "running":
            return
        for r in self._finished.values():
            if not (r.error or r.interrupts or r.paused):
                self.ckpt.pending[r.task_id] = PendingTask(status="done", writes=list(r.writes))
        self._save_head()

    def _owner_of_null_resume(self) -> str | None:
        # The single pending interrupt's task; else (lenient mode) the first task.
        assert self.ckpt is not None
        for tid, p in self.ckpt.pending.items():
            if p.status == "interrupted" and tid in self._by_id:
                return tid
        return self._tasks[0].id if self._tasks else None

    def finish_step(self, results: Sequence[TaskResult]) -> None:
        """Take the step's results: commit a checkpoint, or pause keeping what ran."""
        assert self.ckpt is not None
        ckpt = self.ckpt
        for r in results:
            if r.invalid_resume:
                raise InvalidResumeError(r.invalid_resume)
        taken = self._take_calls(results)
        if taken is None:
            return  # calls to run first (Temporal)
        results = taken
        by_id = {**self._done, **{r.task_id: r for r in results}}
        self.resume_map.clear()
        self.null_resume = MISSING
        interrupted = [r for r in results if (r.interrupts or r.paused) and not r.error]
        failed = [r for r in results if r.error]
        ordered = [(t, by_id[t.id]) for t in sorted(self._tasks, key=_path_key) if t.id in by_id]
        for _, r in ordered:
            self.task_finished(r)  # those a driver did not report as they finished
        self._reported = set()
        if interrupted or failed:
            pending: dict[str, PendingTask] = {}
            for t, r in ordered:
                if r.error:
                    pending[t.id] = PendingTask(status="failed", error=r.error,
                                                resume=list(r.resume), nested=r.nested)
                elif r.interrupts or r.paused:  # paused: a subgraph stopped at a breakpoint
                    pending[t.id] = PendingTask(status="interrupted", interrupts=r.interrupts,
                                                resume=list(r.resume), nested=r.nested)
                else:
                    pending[t.id] = PendingTask(status="done", writes=list(r.writes),
                                                nested=_finished_threads(r.nested))
            # The step's calls' outcomes, after their callers (see _owner_of_null_resume).
            pending.update({k: v for k, v in ckpt.pending.items() if k not in self._by_id})
            pending.update(self._call_results)
            ckpt.pending = pending
            self._save_head()
            if failed:
                self.status = "failed"
                self.failed = failed
                return
            self.status = "interrupted"
            self.interrupts = [i for _, r in ordered for i in r.interrupts]
            values = self.output_values()
            if self.interrupts:
                self.events.append(("values", {**values, INTERRUPT: tuple(self.interrupts)}
                                    if isinstance(values, dict) else values))
            elif any(p.status == "done" and p.writes for p in pending.values()):
                # Only breakpoints inside subgraphs: the state with what finished (LangGraph).
                self.events.append(("values", values))
            return
        step = ckpt.step + 1
        # The step's versions go to the next checkpoint; this one stays as it was saved.
        work = _working_copy(ckpt)
        try:
            updated = apply_writes(self.graph, work, self.channels,
                                   [(t, r.writes) for t, r in ordered], step)
        except Exception:
            # Keep what ran as pending writes, and the checkpoint as it was.
            ckpt.pending = {t.id: PendingTask(status="done", writes=list(r.writes))
                            for t, r in ordered}
            self._save_head()
            raise
        self.steps += 1
        # By task id: two Sends to one node are two tasks with their own result.
        # __start__'s result is its input, which the checkpoint before already holds.
        metadata_writes = {t.id: task_result(self.graph, r.writes) for t, r in ordered
                           if t.name != START} or None
        # Each task gives back the stateful subgraphs of its own node only.
        work.subgraphs = {**work.subgraphs, **{k: v for t, r in ordered
                                               for k, v in r.nested.items()
                                               if k.startswith(f"{STATEFUL}{t.name}:")}}
        finished = {t.id: threads for t, r in ordered
                    if (threads := _finished_threads(r.nested))}
        self._commit(work, source="loop", step=step, writes=metadata_writes,
                     finished=finished)
        if updated & set(self.graph.output_keys):
            self.events.append(("values", self.values()))
        tasks = self._tasks
        if should_interrupt(self.ckpt, self.interrupt_after, tasks):
            self.ckpt.versions_seen[INTERRUPT] = dict(self.ckpt.channel_versions)
            self.status = "interrupted"
            self._emit_breakpoint()

    def _take_calls(self, results: Sequence[TaskResult]) -> list[TaskResult] | None:
        """Sort out @task calls: record their outcomes, and on Temporal plan the next
        round (calls awaited, callers whose calls are done). None while the step waits."""
        if not (self._calls or self._held or any(r.calls or r.awaiting for r in results)):
            return list(results)
        ready: list[str] = []
        for r in results:
            for call, cr in r.calls:  # finished inside their caller (in-process)
                self._call_results[call.id] = _pending_of(cr)
            entry = self._calls.get(r.task_id)
            if entry is not None:  # a call run on its own (Temporal)
                call, path, owner = entry
                if r.error and r.error.get("type") == "CallMismatchError":
                    self._drop_calls(owner)  # its caller changed: the caller fails
                    self._held[owner.id] = dataclasses.replace(r, task_id=owner.id)
                    continue
                if r.awaiting and not r.error:
                    self._await(r.awaiting, path, owner, r.task_id)
                    continue
                del self._calls[r.task_id]
                self._call_finished(call, r)
                caller = path[-2] if len(path) > 1 else owner.id
                waits = self._waiting.get(caller, set())
                waits.discard(r.task_id)
                if not waits:
                    self._waiting.pop(caller, None)
                    ready.append(caller)
            elif r.task_id not in self._by_id:
                continue  # a call of a caller that failed meanwhile
            elif r.awaiting and not r.error:
                self._await(r.awaiting, (), self._by_id[r.task_id], r.task_id)
            else:
                self._held[r.task_id] = r
        for caller in ready:  # runs again, now with its calls' outcomes
            self._round.append(self._caller(caller))
        if self._round:
            return None
        held, self._held = list(self._held.values()), {}
        return held

    def _await(self, calls: Sequence[Task], path: tuple[str, ...], owner: Task,
               caller: str) -> None:
        for call in calls:
            if call.id in self._calls or call.id in self._call_results:
                continue
            self._calls[call.id] = (call, (*path, call.id), owner)
            self._waiting.setdefault(caller, set()).add(call.id)
            self._round.append(call)
        if caller not in self._waiting:  # nothing new to wait for: run it again now
            self._round.append(self._caller(caller))

    def _caller(self, caller: str) -> Task:
        """The task that made calls: one of the step's, or a call that made its own."""
        return self._calls[caller][0] if caller in self._calls else self._by_id[caller]

    def _drop_calls(self, owner: Task) -> None:
        mine = {k for k, (_, _, o) in self._calls.items() if o.id == owner.id}
        for k in mine:
            del self._calls[k]
        for k in (*mine, owner.id):
            self._waiting.pop(k, None)
        self._round = [t for t in self._round if t.id not in mine and t.id != owner.id]

    def _call_finished(self, call: Task, r: TaskResult) -> None:
        """A call run on its own finished: keep its outcome and stream it."""
        self._call_results[call.id] = _pending_of(r)
        if r.took_null_resume:  # the run's single answer is used up (LangGraph)
            self.null_resume = MISSING
        self.events += [("custom", chunk) for chunk in r.custom]
        if not r.error and not r.interrupts:
            self.events.append(("updates", {call.name: dict(r.writes).get(RETURN),
                                            **_cached(r)}))

    def _commit(self, prev: Checkpoint, *, source: str, step: int,
                writes: dict[str, Any] | None, finished: dict[str, Any] | None = None
                ) -> None:
        self._save_head()
        values = save_channels(self.channels)
        parent = prev.id or None
        self.ckpt = self._append(lambda cid: Checkpoint(
            id=cid, step=step, source=source, channel_values=values,
            channel_versions=dict(prev.channel_versions),
            versions_seen={k: dict(v) for k, v in prev.versions_seen.items()},
            parent_id=parent, created_at=self.clock(), writes=writes,
            subgraphs=dict(prev.subgraphs), finished=finished or {}))
        self._base = self.ckpt

    def _append(self, make: Callable[[str], Checkpoint]) -> Checkpoint:
        ckpt = self.thread.append(make)
        self._appended.append(ckpt)
        return ckpt

    def close(self) -> None:
        """End of the run: with durability="exit", drop the steps between its first
        and last checkpoint, so the thread keeps only where the run stopped."""
        if self.options.durability != "exit" or len(self._appended) < 2:
            return
        first, last = self._appended[0], self.thread.head
        if last is None:
            return
        dropped = {id(c) for c in self._appended[:-1]} - {id(last)}
        # The subgraphs those steps ran to their end stay readable, from the one kept.
        last.finished = {**{k: v for c in self._appended[:-1] if id(c) in dropped
                            for k, v in c.finished.items()}, **last.finished}
        self.thread.checkpoints = [c for c in self.thread.checkpoints if id(c) not in dropped]
        last.parent_id = first.parent_id
        self._appended = [last]

    # -- results -------------------------------------------------------------
    def failure(self) -> NodeFailedError:
        """The first failed task of the step, as the error both drivers report."""
        r = self.failed[0]
        node = next((t.name for t in self._tasks if t.id == r.task_id), r.task_id)
        err = r.error or {}
        return NodeFailedError(node, err.get("type", "Exception"), err.get("message", ""))

    def values(self) -> Any:
        return self.graph.present(read_values(self.channels, self.graph.output_keys))

    def output_values(self) -> Any:
        return self.graph.present(values_with_pending(self.graph, self.channels, self.ckpt))

    def output(self) -> Any:
        out = self.output_values()
        if self.interrupts:
            # A state that is not a dict gives way to the interrupts (LangGraph).
            out = {**(out if isinstance(out, dict) else {}), INTERRUPT: list(self.interrupts)}
        return out


def _cached(r: TaskResult) -> dict[str, Any]:
    return {"__metadata__": {"cached": True}} if r.cached else {}


def _finished_threads(nested: Mapping[str, Any]) -> dict[str, Any]:
    """The threads of the subgraphs (not `checkpointer=True`) a task ran to their end."""
    return {k: v for k, v in nested.items()
            if not k.startswith(STATEFUL) and isinstance(v, Thread)}


def _pending_of(r: TaskResult) -> PendingTask:
    """What a @task call's result leaves on the checkpoint."""
    if r.error:
        return PendingTask(status="failed", error=r.error, resume=list(r.resume))
    if r.interrupts or r.paused:
        return PendingTask(status="interrupted", interrupts=list(r.interrupts),
                           resume=list(r.resume))
    return PendingTask(status="done", writes=list(r.writes))


def validate_resume(graph: GraphSpec, thread: Thread, resume: Any, *,
                    checkpoint: str | None = None, ckpt: Checkpoint | None = None,
                    channels: Mapping[str, Channel] | None = None
                    ) -> tuple[dict[str, Any], Any]:
    """Check a resume against what is pending; returns (id map, single value).

    Raises InvalidResumeError for an unknown id (strict), one value for several
    pending interrupts, or a resume on a thread with nothing to run (strict).
    """
    if ckpt is None:
        ckpt = thread.get(checkpoint)
    pending = pending_interrupts(ckpt)
    strict = graph.strict_resume
    if isinstance(resume, dict) and resume and all(is_interrupt_id(k) for k in resume):
        unknown = [k for k in resume if k not in pending]
        if strict and unknown:
            raise InvalidResumeError(
                f"interrupt id {unknown[0]!r} is not pending on thread '{thread.thread_id}'. "
                f"Pending: {sorted(pending) or 'none'}. A stale or duplicated answer is "
                f"refused so that it cannot answer a later question.",
                pending_ids=sorted(pending))
        return dict(resume), MISSING
    if len(pending) > 1:
        raise InvalidResumeError(
            "When there are multiple pending interrupts, you must specify the interrupt id "
            "when resuming: Command(resume={interrupt_id: value, ...}). Pending: "
            f"{sorted(pending)}", pending_ids=sorted(pending))
    if not pending and strict:
        if ckpt is not None and channels is None:
            ckpt, channels = resolve_checkpoint(graph, ckpt)
        if ckpt is None or not prepare_tasks(graph, ckpt, channels or {}):
            state = "has finished" if ckpt is not None else "was never started"
            raise InvalidResumeError(
                f"thread '{thread.thread_id}' has nothing to resume: it {state}. Invoke it "
                f"with new input instead (or compile with strict_resume=False to ignore "
                f"such resumes).")
    return {}, resume


def _breakpoints(graph: GraphSpec, given: Sequence[str] | None,
                 compiled: tuple[str, ...]) -> tuple[str, ...]:
    if given is None:
        return compiled
    names = (given,) if isinstance(given, str) else tuple(given)
    unknown = [n for n in names if n != "*" and n not in graph.nodes]
    if unknown:
        raise GraphValidationError(
            f"interrupt_before/interrupt_after names unknown node {unknown[0]!r}. Known nodes: "
            f"{[n for n in graph.nodes if n != START]}.")
    return names


def _working_copy(c: Checkpoint) -> Checkpoint:
    return dataclasses.replace(
        c, channel_versions=dict(c.channel_versions),
        versions_seen={k: dict(v) for k, v in c.versions_seen.items()},
        pending=dict(c.pending), null_writes=list(c.null_writes))


def stream_chunks(events: list[tuple[Any, ...]], stream_mode: str | Sequence[str],
            subgraphs: bool = False) -> Iterator[Any]:
    """Stream chunks in LangGraph's shapes: `chunk`, `(mode, chunk)` for several modes,
    and with `subgraphs=True` the namespace first: `(ns, chunk)` or `(ns, mode, chunk)`."""
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
    for event in events:
        ns, mode, payload = event if len(event) == 3 else ((), *event)
        if mode not in modes or (ns and not subgraphs):
            continue
        if not subgraphs:
            yield payload if len(modes) == 1 else (mode, payload)
        else:
            yield (tuple(ns), payload) if len(modes) == 1 else (tuple(ns), mode, payload)
