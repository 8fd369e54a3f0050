"""The superstep as plain functions over channels and checkpoints: plan a step's tasks,
merge their writes, read the values, check a resume. No state of their own, no I/O.

Ids are xxhash digests of the thread id, the checkpoint sequence number, the step and
the task path (graphrun.checkpoint), so planning a checkpoint twice gives the same tasks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from graphrun.channels import MISSING, Channel, viewing
from graphrun.checkpoint import Checkpoint, Task, Thread, Write, is_interrupt_id, task_id
from graphrun.errors import InvalidResumeError
from graphrun.spec import GraphSpec
from graphrun.types import INTERRUPT, NS_END, NS_SEP, PULL, PUSH, START, TASKS, Interrupt


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
        ckpt = working_copy(ckpt)
        with viewing():  # the Command's own run merged them for good
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
    with viewing():
        for k, vs in grouped.items():  # a write the reducer refuses raises again (LangGraph)
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
    ordered = sorted(tasks, key=lambda tw: path_key(tw[0]))
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


def path_key(task: Task | None) -> tuple[Any, ...]:
    """The order a step's writes merge in: the input's first, then by task path."""
    if task is None:
        return ("",)
    kind, key, *rest = task.path  # rest: an error handler's, after its failed task's
    return (kind, str(key).zfill(10) if isinstance(key, int) else str(key), *map(str, rest))


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


def working_copy(c: Checkpoint) -> Checkpoint:
    """A copy whose versions and pending writes may change; the saved one stays as it was."""
    return dataclasses.replace(
        c, channel_versions=dict(c.channel_versions),
        versions_seen={k: dict(v) for k, v in c.versions_seen.items()},
        pending=dict(c.pending), null_writes=list(c.null_writes))

