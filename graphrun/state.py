"""Reading and writing a thread outside a run: `get_state` snapshots and `update_state`."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from graphrun.checkpoint import STATEFUL, Checkpoint, Task, Thread, Write, checkpoint_config
from graphrun.engine import (
    apply_writes,
    prepare_tasks,
    read_values,
    resolve_checkpoint,
    restore_channels,
    save_channels,
    task_result,
    values_with_pending,
)
from graphrun.errors import InvalidUpdateError
from graphrun.spec import GraphSpec
from graphrun.types import (
    END,
    INTERRUPT,
    NS_END,
    NS_SEP,
    PUSH,
    START,
    PregelTask,
    StateSnapshot,
    TaskError,
)

COPY = "__copy__"  # update_state(config, None, as_node=COPY) forks a copy
INPUT = "__input__"  # update_state(config, values, as_node=INPUT) records an input


def _pregel_path(path: tuple[Any, ...]) -> tuple[Any, ...]:
    # LangGraph marks a Send task's path with "not from a functional call".
    return (*path, False) if path[0] == PUSH and len(path) == 2 else path


def snapshot(graph: GraphSpec, thread: Thread, ckpt: Checkpoint | None,
             ns: str = "", *, with_pending: bool = True, subgraphs: bool = False,
             thread_id: str | None = None, parents: Mapping[str, str] | None = None
             ) -> StateSnapshot:
    """The StateSnapshot of one checkpoint, as `get_state()` shows it.

    History entries (`with_pending=False`) show the checkpoint's own values, as
    LangGraph's do; the head also shows what finished tasks already wrote. A
    subgraph node's task points at the subgraph's state (`{"configurable":
    {"thread_id", "checkpoint_ns"}}`); with `subgraphs=True`, a subgraph paused in
    the task is shown as its own StateSnapshot. A subgraph's snapshot names the
    checkpoints of the graphs around it (`parents`, by namespace; "" is the root) in
    its metadata and its config's `checkpoint_map`, as LangGraph's do.
    """
    parents = dict(parents or {})
    tid = thread_id or thread.thread_id
    if ckpt is None:
        return StateSnapshot(values={}, next=(), config={"configurable": {"thread_id": tid}},
                             metadata=None, created_at=None, parent_config=None, tasks=())
    ckpt, channels = resolve_checkpoint(graph, ckpt)
    tasks = prepare_tasks(graph, ckpt, channels, ns)
    # What the tasks wrote, for a checkpoint the thread went on from (LangGraph's task.result).
    child = next((c for c in thread.checkpoints
                  if c.parent_id == ckpt.id and c.source in ("loop", "update")), None)
    pregel_tasks = []
    for t in tasks:
        p = ckpt.pending.get(t.id)
        error = None
        if p is not None and p.error:
            error = TaskError(p.error.get("type", "Exception"), p.error.get("message", ""))
        result = None
        if p is not None and p.status == "done":
            result = task_result(graph, p.writes)
        elif child is not None:  # engine.task_result of what it wrote, by task id (by
            # node name from update_state and older versions); __start__ wrote its input
            written = child.writes or {}
            result = written.get(t.id, written.get(t.name, t.input if t.name == START
                                                   else None))
        pregel_tasks.append(PregelTask(
            id=t.id, name=t.name, path=_pregel_path(t.path), error=error,
            interrupts=tuple(p.interrupts) if p and p.status == "interrupted" else (),
            state=_subgraph_state(graph, t, p, tid, subgraphs, {**parents, ns: ckpt.id},
                                  ckpt.subgraphs),
            result=result))

    def config(cid: str) -> dict[str, Any]:
        return checkpoint_config(tid, ns, cid, parents)

    return StateSnapshot(
        # All the state's channels, not only the output schema's (LangGraph's stream keys).
        values=graph.present(values_with_pending(graph, channels, ckpt, graph.state_keys)
                             if with_pending else read_values(channels, graph.state_keys)),
        next=tuple(t.name for t in tasks if not with_pending or not (
            ckpt.pending.get(t.id) and ckpt.pending[t.id].status == "done")),
        config=config(ckpt.id),
        metadata={"source": ckpt.source, "step": ckpt.step, "parents": parents},
        created_at=ckpt.created_at,
        parent_config=config(ckpt.parent_id) if ckpt.parent_id else None,
        tasks=tuple(pregel_tasks),
        # Those of its tasks, as the run reported them: an @task call's own interrupt is
        # shown by the task that waits on it (LangGraph's).
        interrupts=tuple(i for t in pregel_tasks for i in t.interrupts))


def subgraph_spec(graph: GraphSpec, node_name: str) -> GraphSpec | None:
    """The graph a node runs: a subgraph node's, or one its function calls."""
    node = graph.nodes.get(node_name)
    if node is None:
        return None
    found: GraphSpec | None = getattr(node.fn if node.is_subgraph else node.calls_graph,
                                      "spec", None)
    return found


def spec_at(graph: GraphSpec, ns: str) -> GraphSpec:
    """The graph of the subgraph at `ns`, found by its nodes' names."""
    for part in ns.split(NS_SEP):
        name = part.partition(NS_END)[0]
        sub = subgraph_spec(graph, name)
        if sub is None:
            raise InvalidUpdateError(f"no subgraph at checkpoint_ns {ns!r}: node {name!r} "
                                     f"runs none.")
        graph = sub
    return graph


def _finished(thread: Thread, task_id: str) -> tuple[tuple[str, Thread] | None, str | None]:
    """The thread of a subgraph the task `task_id` ran to its end, kept on the checkpoint
    that task's step made, and the checkpoint the task ran from (that one's parent)."""
    for c in reversed(thread.checkpoints):
        if task_id in c.finished:
            return next(iter(c.finished[task_id].items()), None), c.parent_id
    return None, None


def _owner(ckpt: Checkpoint, task_id: str, node_name: str) -> Any:
    """The pending task that holds a subgraph's thread: by its id, or for a
    `checkpointer=True` subgraph (its namespace has no task id) the one of its node."""
    if task_id:
        return ckpt.pending.get(task_id)
    return next((p for p in ckpt.pending.values() if any(
        k.startswith(f"{STATEFUL}{node_name}:") for k in p.nested)), None)


def _nested(pending: Any, stateful: Mapping[str, Any], node_name: str
            ) -> tuple[str, Thread] | None:
    """The thread of the subgraph a task ran, with its key: kept in the task while it is
    paused, or in the checkpoint for a `checkpointer=True` subgraph."""
    found = [(k, t) for k, t in (pending.nested.items() if pending else ())
             if isinstance(t, Thread)]
    found = found or [(k, t) for k, t in stateful.items()
                      if k.startswith(f"{STATEFUL}{node_name}:") and isinstance(t, Thread)]
    return found[0] if found else None


def _subgraph_state(graph: GraphSpec, task: Task, pending: Any, thread_id: str,
                    subgraphs: bool, parents: Mapping[str, str],
                    stateful: Mapping[str, Any]) -> Any:
    sub = subgraph_spec(graph, task.name)
    if sub is None:
        return None
    if subgraphs and (found := _nested(pending, stateful, task.name)):
        key, saved = found
        # A checkpointer=True subgraph runs under the node's name, without the task id.
        ns = task.ns.rsplit(NS_END, 1)[0] if key.startswith(STATEFUL) else task.ns
        return snapshot(sub, saved, saved.head, ns, subgraphs=True, thread_id=thread_id,
                        parents=parents)
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": task.ns}}


def run_from(config: Mapping[str, Any] | None) -> tuple[str | None, dict[str, str]]:
    """Where a run starts: the root checkpoint, and the subgraphs' own checkpoints by
    namespace when the config names a subgraph's (checkpoint_ns "node:<task id>|...").
    As in LangGraph, the root then runs from the checkpoint the subgraph's snapshot
    names for it (its `checkpoint_map`'s ""), else from its latest one."""
    c = (config or {}).get("configurable") or {}
    ns = c.get("checkpoint_ns") or ""
    if not ns:
        return c.get("checkpoint_id"), {}
    at = {**(c.get("checkpoint_map") or {}), **({ns: c["checkpoint_id"]}
                                                if c.get("checkpoint_id") else {})}
    root = at.pop("", None)
    return root, {k: str(v) for k, v in at.items() if v}


def locate(graph: GraphSpec, thread: Thread, configurable: Mapping[str, Any]
           ) -> tuple[GraphSpec, Thread, Checkpoint | None, str, dict[str, str]]:
    """What a config names: the graph, thread and checkpoint at its `checkpoint_ns` (a
    subgraph's, "node:<task id>|..."), with the checkpoints of the graphs around it.

    `checkpoint_map` picks the checkpoint at each level; else the head, and for the
    last level `checkpoint_id`.
    """
    ns = configurable.get("checkpoint_ns") or ""
    cmap = configurable.get("checkpoint_map") or {}
    cid = configurable.get("checkpoint_id")
    if not ns:
        return graph, thread, thread.get(cid), "", {}
    parents: dict[str, str] = {}
    here, spec, current_ns = thread, graph, ""
    for part in ns.split(NS_SEP):
        ckpt = here.get(cmap.get(current_ns))
        name, _, task_id = part.partition(NS_END)
        sub = subgraph_spec(spec, name)
        found = _nested(_owner(ckpt, task_id, name), ckpt.subgraphs, name) if ckpt else None
        ran_from = None  # a paused subgraph's task runs from `ckpt`
        if found is None and task_id:  # a subgraph that ran to its end: its history
            found, ran_from = _finished(here, task_id)
        if sub is None or ckpt is None or found is None:
            raise InvalidUpdateError(
                f"thread '{thread.thread_id}' has no subgraph at checkpoint_ns {ns!r}: it "
                f"is gone once the subgraph finished (unless compiled with "
                f"checkpointer=True).")
        # The checkpoint the subgraph's task ran from names it, as in LangGraph.
        parents[current_ns] = ran_from or ckpt.id
        current_ns = part if not current_ns else f"{current_ns}{NS_SEP}{part}"
        here, spec = found[1], sub
    return spec, here, here.get(cmap.get(ns, cid)), ns, parents


def update_state(graph: GraphSpec, thread: Thread, values: Any, as_node: str | None, *,
                 clock: Callable[[], str], checkpoint: str | None,
                 node_writes: Callable[..., tuple[list[Write], Any]],
                 config: Mapping[str, Any] | None = None) -> Checkpoint:
    """Apply `values` as if `as_node` returned them, as a new 'update' checkpoint.

    `node_writes` (the runner's) turns the update into writes, edges and routing
    included; the Temporal workflow runs that part in an activity when the node
    has routing functions, so it uses the two halves below.
    """
    special = special_update(graph, thread, values, as_node, clock=clock, checkpoint=checkpoint)
    if special is not None:
        if as_node == COPY and isinstance(values, list) and values:
            # the copy, then the updates on top as one superstep: (values, as_node, ...)
            return _superstep(graph, thread, values, clock=clock, checkpoint=special.id,
                              node_writes=node_writes, config=config)
        return special
    node, values, current = resolve_update(graph, thread, values, as_node, checkpoint=checkpoint)
    writes, update = node_writes(graph, node, values, current, config)
    return apply_update(graph, thread, node, writes, update, clock=clock, checkpoint=checkpoint)


def special_update(graph: GraphSpec, thread: Thread, values: Any, as_node: str | None, *,
                   clock: Callable[[], str], checkpoint: str | None) -> Checkpoint | None:
    """LangGraph's updates that run no node: `as_node="__copy__"` forks a copy of
    the checkpoint (a sibling of it), `as_node="__input__"` records `values` as the
    graph's input (an 'input' checkpoint whose next task is __start__, as invoke()
    makes), and `(None, as_node=END)` ends the pending tasks, keeping the writes of
    those that already ran."""
    if as_node == COPY:
        found = thread.get(checkpoint)
        if found is None:
            raise InvalidUpdateError("Cannot copy a non-existent checkpoint")
        base = found
        return thread.append(lambda cid: dataclasses.replace(
            base, id=cid, step=base.step + 1, source="fork", parent_id=base.parent_id,
            created_at=clock(), pending={}, null_writes=[], writes=None, finished={},
            channel_versions=dict(base.channel_versions),
            versions_seen={k: dict(v) for k, v in base.versions_seen.items()}))
    if as_node == INPUT:
        given = thread.get(checkpoint)
        work, channels = (resolve_checkpoint(graph, given) if given is not None else (
            Checkpoint(id="", step=-2, source="input", channel_values={}, channel_versions={},
                       versions_seen={}, parent_id=None, created_at=""),
            restore_channels(graph, None)))
        versions = dict(work.channel_versions)
        seen = {k: dict(v) for k, v in work.versions_seen.items()}
        scratch = dataclasses.replace(work, channel_versions=versions, versions_seen=seen)
        apply_writes(graph, scratch, channels, [(None, [(START, values)])], work.step + 1)
        saved = save_channels(channels)
        return thread.append(lambda cid: Checkpoint(
            id=cid, step=work.step + 1, source="input", channel_values=saved,
            channel_versions=versions, versions_seen=seen, parent_id=work.id or None,
            created_at=clock(), writes={START: values}, subgraphs=dict(work.subgraphs)))
    if as_node == END and values is None:
        head = thread.get(checkpoint)
        if head is None:
            channels = restore_channels(graph, None)
            work = Checkpoint(id="", step=-2, source="update", channel_values={},
                              channel_versions={}, versions_seen={}, parent_id=None,
                              created_at="")
        else:
            work, channels = resolve_checkpoint(graph, head)
            work = dataclasses.replace(
                work, channel_versions=dict(work.channel_versions),
                versions_seen={k: dict(v) for k, v in work.versions_seen.items()})
            tasks = prepare_tasks(graph, work, channels)
            done = {t.id: p.writes for t in tasks if (p := work.pending.get(t.id))
                    and p.status == "done"}
            apply_writes(graph, work, channels, [(t, done.get(t.id, ())) for t in tasks],
                         work.step + 1)
        saved = save_channels(channels)
        return thread.append(lambda cid: Checkpoint(
            id=cid, step=work.step + 1, source="update", channel_values=saved,
            channel_versions=dict(work.channel_versions),
            versions_seen={k: dict(v) for k, v in work.versions_seen.items()},
            parent_id=work.id or None, created_at=clock()))
    return None


def resolve_update(graph: GraphSpec, thread: Thread, values: Any, as_node: str | None, *,
                   checkpoint: str | None) -> tuple[str, Any, dict[str, Any]]:
    """The node an update is written as, the values, and the state they apply to."""
    base = thread.get(checkpoint)
    if as_node is None:
        as_node = _last_writer(graph, base)
    if as_node not in graph.nodes:
        raise InvalidUpdateError(f"update_state(as_node={as_node!r}) names an unknown node. "
                                 f"Known nodes: {[n for n in graph.nodes if n != START]}.")
    if as_node == START and not isinstance(values, dict):
        values = values or {}
    channels = resolve_checkpoint(graph, base)[1] if base else restore_channels(graph, None)
    return as_node, values, read_values(channels, graph.state_keys)


def apply_update(graph: GraphSpec, thread: Thread, as_node: str, writes: list[Write],
                 update: Any, *, clock: Callable[[], str], checkpoint: str | None
                 ) -> Checkpoint:
    """Append the 'update' checkpoint made of `as_node`'s writes."""
    return apply_updates(graph, thread, [(as_node, writes, update)], clock=clock,
                         checkpoint=checkpoint)


def apply_updates(graph: GraphSpec, thread: Thread,
                  updates: Sequence[tuple[str, list[Write], Any]], *,
                  clock: Callable[[], str], checkpoint: str | None) -> Checkpoint:
    """Append one 'update' checkpoint made of several nodes' writes, as one step."""
    base = thread.get(checkpoint)
    if base is not None:
        work, channels = resolve_checkpoint(graph, base)
    else:
        channels = restore_channels(graph, None)
        work = Checkpoint(id="", step=-2, source="update", channel_values={},
                          channel_versions={}, versions_seen={}, parent_id=None, created_at="")
    versions = dict(work.channel_versions)
    seen = {k: dict(v) for k, v in work.versions_seen.items()}
    scratch = dataclasses.replace(work, channel_versions=versions, versions_seen=seen)
    tasks = [(Task(id="", name=node, path=("__update", f"{i:04d}:{node}"), triggers=(INTERRUPT,),
                   input=None, ns="", step=work.step + 1), writes)
             for i, (node, writes, _) in enumerate(updates)]
    apply_writes(graph, scratch, channels, tasks, work.step + 1)
    saved = save_channels(channels)
    return thread.append(lambda cid: Checkpoint(
        id=cid, step=work.step + 1, source="update", channel_values=saved,
        channel_versions=versions, versions_seen=seen, parent_id=work.id or None,
        created_at=clock(), writes={node: task_result(graph, writes)
                                    for node, writes, _ in updates},
        subgraphs=dict(work.subgraphs)))


def bulk_update_state(graph: GraphSpec, thread: Thread, supersteps: Sequence[Sequence[Any]], *,
                      clock: Callable[[], str], checkpoint: str | None,
                      node_writes: Callable[..., tuple[list[Write], Any]],
                      config: Mapping[str, Any] | None = None) -> Checkpoint:
    """Apply `StateUpdate`s, one checkpoint per superstep (LangGraph's bulk_update_state)."""
    check_supersteps(supersteps)
    ckpt: Checkpoint | None = None
    for step in supersteps:
        ckpt = _superstep(graph, thread, step, clock=clock, checkpoint=checkpoint,
                          node_writes=node_writes, config=config)
        checkpoint = ckpt.id
    assert ckpt is not None
    return ckpt


def check_supersteps(supersteps: Sequence[Sequence[Any]]) -> None:
    """LangGraph's refusals of an empty bulk update."""
    if not supersteps:
        raise ValueError("No supersteps provided")
    if any(len(step) == 0 for step in supersteps):
        raise ValueError("No updates provided")


def _superstep(graph: GraphSpec, thread: Thread, step: Sequence[Any], *,
               clock: Callable[[], str], checkpoint: str | None,
               node_writes: Callable[..., tuple[list[Write], Any]],
               config: Mapping[str, Any] | None) -> Checkpoint:
    """One checkpoint made of `(values, as_node, ...)` updates, as if those nodes ran."""
    if len(step) == 1:
        values, as_node = step[0][0], step[0][1]
        return update_state(graph, thread, values, as_node, clock=clock,
                            checkpoint=checkpoint, node_writes=node_writes, config=config)
    updates = []
    for values, as_node, *_ in step:
        check_one_of_many(as_node)
        node, values, current = resolve_update(graph, thread, values, as_node,
                                               checkpoint=checkpoint)
        updates.append((node, node_writes(graph, node, values, current, config)[0], values))
    return apply_updates(graph, thread, updates, clock=clock, checkpoint=checkpoint)


def check_one_of_many(as_node: str | None) -> None:
    """One of several updates applied as one step names a node that runs."""
    if as_node is None or as_node in (END, COPY, INPUT):
        raise InvalidUpdateError(
            "as_node is required when applying multiple updates, and it cannot "
            "be END, __copy__ or __input__")


def _last_writer(graph: GraphSpec, ckpt: Checkpoint | None) -> str:
    """LangGraph's rule: the node that most recently saw a new version; ties are ambiguous.
    A graph of one node (an @entrypoint) has no other writer."""
    if len(graph.nodes) == 1:
        return next(iter(graph.nodes))
    if ckpt is None or not any(v for seen in ckpt.versions_seen.values() for v in seen.values()):
        return START
    last = sorted((v, n) for n, seen in ckpt.versions_seen.items() if n in graph.nodes
                  for v in seen.values())
    if len(last) == 1 or (last and last[-1][0] != last[-2][0]):
        return last[-1][1]
    raise InvalidUpdateError("Ambiguous update, specify as_node: several nodes wrote the "
                             "checkpoint's state at once.")
