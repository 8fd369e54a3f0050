"""`Run`: one invocation of a graph on a thread, the loop both drivers share.

It starts (new input, a resume, a fork from an earlier checkpoint), hands out each
step's tasks, takes their results and commits a checkpoint per step. The planning is
in .planning, the @task calls' rounds in .task_calls, the streamed events in .events.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from graphrun.channels import MISSING
from graphrun.checkpoint import (
    STATEFUL,
    Checkpoint,
    Task,
    TaskCall,
    TaskResult,
    Thread,
    Write,
    interrupt_id,
    task_id,
)
from graphrun.errors import (
    EmptyInputError,
    GraphRecursionError,
    GraphValidationError,
    InvalidResumeError,
    InvalidUpdateError,
    NodeError,
    NodeFailedError,
    ReportedError,
    invalid_resume,
)
from graphrun.spec import GraphSpec, goto_writes
from graphrun.types import (
    INTERRUPT,
    NS_END,
    NS_SEP,
    PUSH,
    START,
    Command,
    Interrupt,
    PendingTask,
)

from .events import StreamEvents
from .planning import (
    apply_writes,
    path_key,
    prepare_tasks,
    read_values,
    resolve_checkpoint,
    restore_channels,
    save_channels,
    should_interrupt,
    task_result,
    validate_resume,
    values_with_pending,
    working_copy,
)
from .task_calls import TaskCalls


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
    # The checkpoints the graphs around it run from, by namespace (TaskCall.parents), and
    # the thread its checkpoints are named by: the root's (its own thread is internal).
    parents: Mapping[str, str] | None = None
    root_thread_id: str | None = None
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
        # Error handlers of this step: the error each handler's task handles, by its id,
        # and the failed tasks they stand for (their failure does not fail the run).
        self._handling: dict[str, NodeError] = {}
        self._handled: set[str] = set()
        self._calls = TaskCalls()
        self.parents = dict(o.parents or {})
        self._stream = StreamEvents(graph, thread_id=o.root_thread_id or thread.thread_id,
                                    ns=o.ns, modes=o.stream_modes, clock=clock,
                                    parents=self.parents)
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
        if o.durability == "exit":
            self._stream.exiting = True
            self._stream.exit_parent = base.parent_id if base is not None else None
        self.ckpt: Checkpoint | None = None
        if base is not None:
            self.ckpt, self.channels = resolve_checkpoint(graph, working_copy(base))
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
                ckpt = working_copy(ckpt)  # the head stays as it was saved
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
        if calls := self._calls.next_round():  # the step goes on: calls, or their callers
            return calls
        assert self.ckpt is not None
        ckpt = self.ckpt
        tasks = prepare_tasks(self.graph, ckpt, self.channels, self.ns)
        if self.options.checkpointer:  # none saved, none streamed (LangGraph's)
            self.events += self._stream.checkpoint(ckpt, self.channels, tasks)
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
            self.events += self._stream.breakpoint()
            return []
        self._tasks = list(tasks)
        self._by_id = {t.id: t for t in tasks}
        self._done = {}
        self._finished = {}
        self._handling, self._handled = {}, set()
        self._calls.new_step(self._by_id)
        for t in tasks:
            p = ckpt.pending.get(t.id)
            if p is not None and p.status == "done":
                self._done[t.id] = TaskResult(task_id=t.id, writes=list(p.writes),
                                              nested=dict(p.nested))
                if p.writes and t.name != START:
                    self.events += self._stream.done_before(t, p.writes)
            elif p is not None and p.status == "failed" and p.error and (
                    handler := self.error_handler(t, TaskResult(task_id=t.id, error=p.error))):
                # Its error handler failed (or never finished): that runs again, not the
                # node (LangGraph's).
                self._done[t.id] = TaskResult(task_id=t.id, error=p.error)
                hp = ckpt.pending.get(handler.id)
                if hp is not None and hp.status == "done":
                    self._done[handler.id] = TaskResult(task_id=handler.id,
                                                        writes=list(hp.writes))
        todo = [t for t in self._tasks if t.id not in self._done]
        for t in todo:
            if t.name != START:
                self.events += self._stream.task_started(t, self.ckpt)
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
        self.events += self._stream.task_finished(
            t, r, self.ckpt, self.values() if r.interrupts else None)

    def error_handler(self, task: Task, r: TaskResult) -> Task | None:
        """The task of the error handler of `task`'s node, when `r` is its failure (retries
        used up) and the node has one (LangGraph's): the driver runs it at once, in this
        step, and what it returns stands for the node. None otherwise."""
        node = self.graph.nodes.get(task.name)
        if (not r.error or r.interrupts or r.paused or node is None
                or node.error_handler_node is None or task.id not in self._by_id):
            return None
        assert self.ckpt is not None
        name = node.error_handler_node
        tid = task_id(self.ckpt.id, self.ns, task.step, name, "node_error_handler", task.id)
        handler = Task(id=tid, name=name, path=(*task.path, "node_error_handler", False),
                       triggers=(PUSH,), input=task.input,
                       ns=f"{self.ns}{NS_SEP}{name}{NS_END}{tid}" if self.ns
                       else f"{name}{NS_END}{tid}", step=task.step, state=task.state)
        error = r.exception if isinstance(r.exception, Exception) else ReportedError(
            r.error.get("type", "Exception"), r.error.get("message", ""))
        self._handling[tid] = NodeError(task.name, error)
        self._handled.add(task.id)
        self._tasks.append(handler)
        self._by_id[tid] = handler
        return handler

    def fails(self, r: TaskResult) -> bool:
        """Whether `r` fails the run: an error its node's error handler does not take."""
        return bool(r.error) and r.task_id not in self._handled

    def call_for(self, task: Task) -> TaskCall:
        """The task plus its answers: stored ones, one from an id map, or the single value.
        For a call being run on its own: its step task's, run down to that call."""
        assert self.ckpt is not None
        if (on_its_own := self._calls.path_of(task.id)) is not None:
            path, owner = on_its_own
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
        calls.update(self._calls.results)
        return TaskCall(task=task, resume=resume, null_resume=null, nested=nested,
                        context=self.context, messages="messages" in self.options.stream_modes,
                        messages_v2=self.options.messages_v2,
                        tools="tools" in self.options.stream_modes,
                        debug="debug" in self.options.stream_modes,
                        checkpoints="checkpoints" in self.options.stream_modes,
                        checkpoint_id=self.ckpt.id, parents=dict(self.parents),
                        durability=self.options.durability,
                        calls=calls, fresh_calls=list(self._calls.results),
                        remaining_steps=self.recursion_limit - self.steps,
                        subgraph_checkpoints=dict(self.subgraph_checkpoints),
                        node_error=self._handling.get(task.id))

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
                raise invalid_resume(r.invalid_resume, r.invalid_answer)
        taken = self._calls.take(results, self._call_finished)
        if taken is None:
            return  # calls to run first (Temporal)
        results = taken
        by_id = {**self._done, **{r.task_id: r for r in results}}
        self.resume_map.clear()
        self.null_resume = MISSING
        interrupted = [r for r in results if (r.interrupts or r.paused) and not r.error]
        failed = [r for r in results if self.fails(r)]
        ordered = [(t, by_id[t.id]) for t in sorted(self._tasks, key=path_key) if t.id in by_id]
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
            pending.update(self._calls.results)
            ckpt.pending = pending
            self._save_head()
            if failed:
                self.status = "failed"
                self.failed = failed
                return
            self.status = "interrupted"
            self.interrupts = [i for _, r in ordered for i in r.interrupts]
            # Each interrupt was streamed with the state before the step; then, at the
            # root, the state with what finished (LangGraph's last 'values' chunk).
            outputs = set(self.graph.output_keys)
            if not self.ns and any(c in outputs for p in pending.values()
                                   if p.status == "done" for c, _ in p.writes):
                self.events.append(("values", self.output_values()))
            return
        step = ckpt.step + 1
        # The step's versions go to the next checkpoint; this one stays as it was saved.
        work = working_copy(ckpt)
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
            self.events += self._stream.breakpoint()

    def _call_finished(self, call: Task, r: TaskResult) -> None:
        """A call run on its own finished (Temporal): stream it."""
        if r.took_null_resume:  # the run's single answer is used up (LangGraph)
            self.null_resume = MISSING
        self.events += self._stream.call_finished(call, r)

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


def _finished_threads(nested: Mapping[str, Any]) -> dict[str, Any]:
    """The threads of the subgraphs (not `checkpointer=True`) a task ran to their end."""
    return {k: v for k, v in nested.items()
            if not k.startswith(STATEFUL) and isinstance(v, Thread)}


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

