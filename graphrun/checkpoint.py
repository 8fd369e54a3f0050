"""A thread's plain data: checkpoints, tasks and their results, and the ids that name them.

Ids are xxh3-128 digests of deterministic inputs (thread id, checkpoint
sequence number, step, task path), so they are the same when a workflow
replays and differ between threads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from xxhash import xxh3_128_hexdigest

from graphrun.channels import MISSING
from graphrun.errors import InvalidResumeError
from graphrun.types import NS_SEP, Interrupt, PendingTask

Write = tuple[str, Any]


# -- ids ---------------------------------------------------------------------
def checkpoint_id(thread_id: str, seq: int, life: str = "") -> str:
    """Unique per thread and per checkpoint ever made, and the same on replay. `life`
    tells apart a thread deleted and created again under the same id."""
    key = f"checkpoint:{thread_id}:{life}:{seq}" if life else f"checkpoint:{thread_id}:{seq}"
    return xxh3_128_hexdigest(key.encode())


def task_id(checkpoint: str, ns: str, step: int, name: str, kind: str, key: Any) -> str:
    return xxh3_128_hexdigest(f"{checkpoint}\x00{ns}\x00{step}\x00{name}\x00{kind}\x00{key}"
                              .encode())


def interrupt_id(task_ns: str, answered: int) -> str:
    """LangGraph's rule: the task namespace's hash, suffixed by the answers so far."""
    return xxh3_128_hexdigest((f"{task_ns}{NS_SEP}{answered}" if answered else task_ns).encode())


def checkpoint_config(thread_id: str, ns: str, checkpoint_id: str,
                      parents: Mapping[str, str]) -> dict[str, Any]:
    """The config of a checkpoint, as its snapshot and its stream chunks name it: a
    subgraph's (`parents`, the checkpoints around it by namespace) with its
    `checkpoint_map`."""
    c: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns,
                         "checkpoint_id": checkpoint_id}
    if parents:
        c["checkpoint_map"] = {**parents, ns: checkpoint_id}
    return {"configurable": c}


STATEFUL = "@"  # the key prefix of a stateful subgraph's thread in a task's nested threads


def is_interrupt_id(key: Any) -> bool:
    return isinstance(key, str) and len(key) == 32 and all(c in "0123456789abcdef" for c in key)


# -- plain data ----------------------------------------------------------------
@dataclass
class Checkpoint:
    """A thread's state between two supersteps, as plain data."""

    id: str
    step: int
    source: str  # input | loop | update | fork
    channel_values: dict[str, Any]
    channel_versions: dict[str, int]
    versions_seen: dict[str, dict[str, int]]
    parent_id: str | None
    created_at: str
    writes: dict[str, Any] | None = None  # what each task of the step wrote, by task id
    # Outcomes of the tasks of the next step that already ran (pending writes).
    pending: dict[str, PendingTask] = field(default_factory=dict)
    # A resume Command's update/goto, applied before the next step.
    null_writes: list[Write] = field(default_factory=list)
    # The threads of stateful subgraphs (compile(checkpointer=True)), as of this checkpoint.
    subgraphs: dict[str, Any] = field(default_factory=dict)
    # The threads of the other subgraphs the step before this checkpoint ran to their
    # end, by task id: their history stays readable (get_state_history of a subgraph).
    finished: dict[str, Any] = field(default_factory=dict)


@dataclass
class Thread:
    """All a thread is: its checkpoints (oldest first) and how many were ever made."""

    thread_id: str
    checkpoints: list[Checkpoint] = field(default_factory=list)
    seq: int = 0
    max_history: int | None = None
    # Which life of the thread id this is (empty for threads made before lives): a
    # thread deleted and created again asks with new checkpoint and interrupt ids.
    life: str = ""

    @property
    def head(self) -> Checkpoint | None:
        return self.checkpoints[-1] if self.checkpoints else None

    def get(self, checkpoint: str | None) -> Checkpoint | None:
        if checkpoint is None:
            return self.head
        for c in reversed(self.checkpoints):
            if c.id == checkpoint:
                return c
        raise InvalidResumeError(
            f"thread '{self.thread_id}' has no checkpoint {checkpoint!r}. Use an id from "
            f"get_state_history().")

    def next_id(self) -> str:
        """The id of the checkpoint `append` makes next."""
        return checkpoint_id(self.thread_id, self.seq, self.life)

    def append(self, make: Callable[[str], Checkpoint]) -> Checkpoint:
        ckpt = make(self.next_id())
        self.seq += 1
        self.checkpoints.append(ckpt)
        if self.max_history and len(self.checkpoints) > self.max_history:
            del self.checkpoints[: len(self.checkpoints) - self.max_history]
        return ckpt


@dataclass(frozen=True)
class Task:
    """One node run planned for a step: plain data, no callables."""

    id: str
    name: str
    path: tuple[Any, ...]
    triggers: tuple[str, ...]
    input: Any
    ns: str
    step: int
    # START's conditional edges see the thread's state with the input applied (LangGraph).
    state: Any = None
    # A Send's own limits, [run s, idle s, refresh_on], instead of the node's.
    timeout: list[Any] | None = None


@dataclass
class TaskCall:
    """What the runner needs to run a task: the task and its answers so far."""

    task: Task
    resume: list[Any] = field(default_factory=list)
    null_resume: Any = MISSING
    nested: dict[str, Any] = field(default_factory=dict)
    context: Any = None  # the run's runtime context (invoke(..., context=...))
    messages: bool = False  # the caller streams 'messages': stream chat models' tokens
    messages_v2: bool = False  # ... as content-block events (stream_events(version="v3"))
    tools: bool = False  # the caller streams 'tools': its tool calls' lifecycle events
    debug: bool = False  # ... 'debug': its @task calls' and subgraphs' 'debug' chunks too
    checkpoints: bool = False  # ... 'checkpoints': its subgraphs' checkpoints are streamed
    checkpoint_id: str = ""  # the checkpoint the task runs from
    # The checkpoints the graphs around the task's graph run from, by namespace ("" the
    # root's): a subgraph's checkpoints name them (LangGraph's checkpoint_map).
    parents: dict[str, str] = field(default_factory=dict)
    attempt: int = 1  # which try this is (retries), and when the first one started
    first_attempt_time: float | None = None
    durability: str | None = None  # the run's; a subgraph the task runs keeps it too
    # Outcomes of the @task calls the step's tasks made so far, by call id (graphrun.calls).
    calls: dict[str, PendingTask] = field(default_factory=dict)
    # Those of `calls` this run made. The others come from the checkpoint, where a call
    # that was interrupted or failed runs again (LangGraph). None: an older workflow's.
    fresh_calls: list[str] | None = None
    # Run only this call: the call ids from the task down to it (Temporal runs each call
    # as its own activity, by running its caller again down to it).
    target: list[str] = field(default_factory=list)
    remaining_steps: int = 25  # supersteps the run may still take, this one included
    # The checkpoints its subgraphs run from, by namespace (engine.RunOptions).
    subgraph_checkpoints: dict[str, str] = field(default_factory=dict)
    # An error handler's task: the NodeError it handles (its `error` parameter).
    node_error: Any = None


@dataclass
class TaskResult:
    """A task's outcome. Interrupts are data here, never exceptions."""

    task_id: str
    writes: list[Write] = field(default_factory=list)
    update: Any = None  # what the node returned (for 'updates' streams and metadata)
    interrupts: list[Interrupt] = field(default_factory=list)
    resume: list[Any] = field(default_factory=list)
    nested: dict[str, Any] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    exception: BaseException | None = field(default=None, compare=False)
    invalid_resume: str | None = None
    invalid_answer: dict[str, Any] | None = None  # why, as pydantic said (errors.answer_errors)
    custom: list[Any] = field(default_factory=list)  # chunks for the 'custom' stream mode
    paused: bool = False  # stopped inside: an interrupt, or a subgraph's static breakpoint
    # Stream chunks of subgraphs the task ran: (namespace, mode, chunk), for subgraphs=True.
    sub_events: list[Any] = field(default_factory=list)
    # @task calls: those that finished inside this task (in-process), with their tasks,
    # and those it waits for (on Temporal, where each call is an activity of its own).
    calls: list[tuple[Task, TaskResult]] = field(default_factory=list)
    awaiting: list[Task] = field(default_factory=list)
    took_null_resume: bool = False  # a call answered its interrupt with the run's resume
    cached: bool = False  # its writes came from the cache (graphrun.cache): the node did not run
