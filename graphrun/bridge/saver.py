"""A LangGraph checkpointer keeps a bridged graph's threads, in LangGraph's format.

`from_langgraph` wraps the `BaseCheckpointSaver` a LangGraph graph was compiled with
(`InMemorySaver`, `SqliteSaver`, `PostgresSaver`, ...) in `LangGraphSaver`. In-process,
each checkpoint of a thread is `put` there as it is made (with `durability="exit"`,
where the run stops), each task's writes are `put_writes` as it finishes (its error,
interrupts and answers as LangGraph's `__error__`, `__interrupt__` and `__resume__`
writes), the checkpoints of subgraphs go under their own `checkpoint_ns`
("node:<task id>"), and a thread is read back from there. So the saver holds the
user's threads, LangGraph's tools read them, and another process goes on from them.

Checkpoint ids are time-ordered (LangGraph's uuid6), since savers list and pick the
latest by id; channel versions are graphrun's numbers in the saver's own format
(`get_next_version`). Read back in another process, the results of `update_state`'s
checkpoints are not shown (LangGraph keeps no writes for them). The saver's
synchronous methods are used; under `ainvoke`/`astream` and the other async methods they
are called from a thread of their own (BridgedGraph._off_loop), so savers bound to the
event loop (AsyncPostgresSaver, AsyncSqliteSaver) serve them.
"""

from __future__ import annotations

import ast
import inspect
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph import types as lg_types
from langgraph.checkpoint.base import WRITES_IDX_MAP
from langgraph.checkpoint.base.id import uuid6

from graphrun.bridge._langgraph import NULL_TASK_ID
from graphrun.bridge.run import interrupt_from_langgraph, to_graphrun, to_langgraph
from graphrun.channels import UntrackedValue
from graphrun.checkpoint import Checkpoint, TaskCall, TaskResult, Thread
from graphrun.engine import task_result
from graphrun.errors import InvalidUpdateError
from graphrun.spec import GraphSpec
from graphrun.state import spec_at, subgraph_spec
from graphrun.types import (
    ERROR,
    INTERRUPT,
    NS_END,
    NS_SEP,
    RESUME,
    TASKS,
    PendingTask,
    TaskError,
)

INPUT = "__input__"  # LangGraph's versions_seen entry of the graph's input
NO_WRITES = "__no_writes__"  # LangGraph's write of a task that finished writing nothing
SPECIAL = frozenset(WRITES_IDX_MAP) | {NO_WRITES}
SUBGRAPH_KEY = "graphrun_subgraph"  # a subgraph checkpoint's metadata: its key in the task
_OWN_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")


class SavedThread(Thread):
    """A thread kept in a LangGraph saver: its checkpoint ids sort by time."""

    ledger: Ledger

    def next_id(self) -> str:
        return str(uuid6(clock_seq=self.seq))


class LangGraphSaver:
    """graphrun's checkpointer protocol (`thread`, `delete_thread`) over a LangGraph saver;
    `list`, `get_tuple` and the rest are the saver's own."""

    def __init__(self, saver: Any, spec: GraphSpec | None = None) -> None:
        self.saver = saver
        self.spec = spec  # the graph's, to read task results back
        self._threads: dict[str, SavedThread] = {}

    def thread(self, thread_id: str) -> SavedThread:
        """The thread as the saver has it: the one in memory while the saver's latest
        checkpoint is the last one put from here, else read back."""
        head = self.saver.get_tuple(_config(thread_id))
        head_id = head.config["configurable"]["checkpoint_id"] if head else None
        cached = self._threads.get(thread_id)
        if cached is not None and cached.ledger.head_id == head_id:
            return cached
        thread = (_read(self.saver, thread_id, self.spec) if head
                  else _new(self.saver, thread_id, self.spec))
        self._threads[thread_id] = thread
        return thread

    def cached(self, thread_id: str) -> SavedThread | None:
        """The thread as `thread` last gave it, without asking the saver."""
        return self._threads.get(thread_id)

    def delete_thread(self, thread_id: str) -> None:
        self.saver.delete_thread(thread_id)
        self._threads.pop(str(thread_id), None)

    def __getattr__(self, name: str) -> Any:  # list, get_tuple, alist, ...: the saver's
        if name.startswith("_") or name in ("saver", "spec"):
            raise AttributeError(name)
        return getattr(self.saver, name)


def saved(thread: Any) -> Ledger | None:
    return thread.ledger if isinstance(thread, SavedThread) else None


class Ledger:
    """What of a thread is in the saver, and writes the rest."""

    def __init__(self, saver: Any, thread_id: str, spec: GraphSpec | None) -> None:
        self.saver = saver
        self.thread_id = thread_id
        self.spec = spec
        # Savers written before put_writes took `task_path` are called without it.
        self.paths = "task_path" in inspect.signature(saver.put_writes).parameters
        self.config: Mapping[str, Any] = {}  # the current call's: metadata, configurable
        self.head_id: str | None = None  # the latest root checkpoint put
        self.put: set[tuple[str, str]] = set()  # (ns, checkpoint id)
        self.blobs: set[tuple[str, str, Any]] = set()  # (ns, channel, saver version)
        self.written: dict[tuple[str, str, str], Any] = {}  # (ns, checkpoint, task): sig
        # graphrun's version number -> the saver's: as read back, by namespace and
        # channel (LangGraph's own differ by channel), and as made here (one per number).
        self.read_versions: dict[tuple[str, str, int], Any] = {}
        self.versions: dict[int, Any] = {}
        self.synced: str | None = None  # the root's last checkpoint at the last sync
        self.untracked: dict[str, frozenset[str]] = {}  # by namespace (_untracked)
        self.lock = threading.RLock()

    # -- writing ----------------------------------------------------------------
    def task_done(self, call: TaskCall, result: TaskResult) -> None:
        """A root task finished: its writes, as LangGraph puts them, at once."""
        if call.durability == "exit":
            return
        with self.lock:
            if ("", call.checkpoint_id) in self.put:
                self._write("", call.checkpoint_id, call.task.id, _result_writes(result),
                            _path(call.task.path))

    def sync(self, thread: Thread) -> None:
        """Put what the saver does not have yet: checkpoints, pending and null writes,
        and the subgraphs' threads under their namespaces."""
        with self.lock:
            # Only the last checkpoint synced and the ones after it can have changed.
            checkpoints = thread.checkpoints
            start = _index_from_end(checkpoints, self.synced)
            self._sync(thread, "", {}, None, set(), start or 0)
            self.synced = checkpoints[-1].id if checkpoints else None

    def _sync(self, thread: Thread, ns: str, parents: dict[str, str], key: str | None,
              seen: set[int], start: int = 0) -> None:
        """`seen`: the nested threads this sync went through already (a subgraph's thread
        is named by each checkpoint after the one that made it)."""
        recent = thread.checkpoints[start:]
        for c in recent:
            if (ns, c.id) not in self.put:
                at = _index_from_end(thread.checkpoints, c.parent_id)
                self._put(ns, c, None if at is None else thread.checkpoints[at], parents,
                          key)
        for c in recent:
            for task_id, p in c.pending.items():
                self._write(ns, c.id, task_id, _pending_writes(p))
            if c.null_writes:
                self._write(ns, c.id, NULL_TASK_ID, [(k, to_langgraph(v))
                                                     for k, v in c.null_writes])
        for c in recent:
            ran_from = {**parents, ns: c.parent_id or c.id}
            here = {**parents, ns: c.id}
            for threads in c.finished.values():
                self._nested(threads, ran_from, seen)
            for p in c.pending.values():
                self._nested(p.nested, here, seen)
            self._nested(c.subgraphs, here, seen)

    def _nested(self, threads: Mapping[str, Any], parents: dict[str, str],
                seen: set[int]) -> None:
        for key, t in threads.items():
            ns = _nested_ns(t, key) if isinstance(t, Thread) else None
            if ns is not None and id(t) not in seen:
                seen.add(id(t))
                self._sync(t, ns, parents, key, seen)

    def _put(self, ns: str, c: Checkpoint, parent: Checkpoint | None,
             parents: Mapping[str, str], key: str | None) -> None:
        versions = {ch: self._version(ns, ch, v) for ch, v in c.channel_versions.items()}
        untracked = self._untracked(ns)
        values = {ch: _tracked(to_langgraph(v), untracked) if ch == TASKS else to_langgraph(v)
                  for ch, v in c.channel_values.items()
                  if ch in versions and ch not in untracked}
        before = parent.channel_versions if parent is not None else {}
        checkpoint = {
            "v": 4, "id": c.id, "ts": c.created_at, "channel_values": values,
            "channel_versions": versions,
            "versions_seen": {INPUT: {}, **{
                n: {ch: self._version(ns, ch, v) for ch, v in seen.items()}
                for n, seen in c.versions_seen.items()}},
            # those written in the step (a consumed trigger has a new version, no value)
            "updated_channels": sorted(ch for ch, v in c.channel_versions.items()
                                       if ch in values and before.get(ch) != v),
        }
        metadata: dict[str, Any] = {"source": c.source, "step": c.step,
                                    "parents": {k: v for k, v in parents.items() if k != ns}}
        if key is not None:
            metadata[SUBGRAPH_KEY] = key
        new_versions = {ch: v for ch, v in versions.items() if (ns, ch, v) not in self.blobs}
        self.saver.put(self._target(ns, c.parent_id), checkpoint, metadata, new_versions)
        self.put.add((ns, c.id))
        self.blobs.update((ns, ch, v) for ch, v in new_versions.items())
        if not ns and (self.head_id is None or c.id > self.head_id):
            self.head_id = c.id

    def _write(self, ns: str, checkpoint_id: str, task_id: str, writes: list[tuple[str, Any]],
               path: str = "") -> None:
        """put_writes when the task's outcome changed: LangGraph's savers keep a task's
        first writes and replace its error, interrupts and answers."""
        sig = _signature(writes)
        if self.written.get((ns, checkpoint_id, task_id)) == sig or (
                ns, checkpoint_id) not in self.put:
            return
        untracked = self._untracked(ns)
        if untracked:  # LangGraph keeps no UntrackedValue, in a Send's argument neither
            writes = [(c, _tracked(v, untracked) if c == TASKS else v) for c, v in writes
                      if c not in untracked]
        target = self._target(ns, checkpoint_id)
        if self.paths:
            self.saver.put_writes(target, writes, task_id, path)
        else:
            self.saver.put_writes(target, writes, task_id)
        self.written[(ns, checkpoint_id, task_id)] = sig

    def _untracked(self, ns: str) -> frozenset[str]:
        """The UntrackedValue channels of the graph at `ns` (LangGraph saves none)."""
        if ns not in self.untracked:
            self.untracked[ns] = _untracked(_spec_at(self.spec, ns))
        return self.untracked[ns]

    def _target(self, ns: str, checkpoint_id: str | None) -> dict[str, Any]:
        """The config a put goes with: the call's own keys (LangGraph's savers copy them
        into the metadata), the thread, the namespace and the checkpoint."""
        own = {k: v for k, v in (self.config.get("configurable") or {}).items()
               if k not in _OWN_KEYS}
        target: dict[str, Any] = {"configurable": {
            **own, "thread_id": self.thread_id, "checkpoint_ns": ns,
            **({"checkpoint_id": checkpoint_id} if checkpoint_id else {})}}
        if self.config.get("metadata"):
            target["metadata"] = self.config["metadata"]
        return target

    def _version(self, ns: str, channel: str, v: int) -> Any:
        """graphrun's version number in the saver's format (its next after v - 1)."""
        if (ns, channel, v) in self.read_versions:
            return self.read_versions[(ns, channel, v)]
        if v not in self.versions:
            self.versions[v] = self.saver.get_next_version(v - 1 if v > 1 else None, None)
        return self.versions[v]


# -- what is written -------------------------------------------------------------
def _result_writes(r: TaskResult) -> list[tuple[str, Any]]:
    return _outcome(r.writes, r.error, r.interrupts if (r.interrupts or r.paused) else None,
                    r.resume)


def _pending_writes(p: PendingTask) -> list[tuple[str, Any]]:
    return _outcome(p.writes if p.status == "done" else [],
                    p.error if p.status == "failed" else None,
                    p.interrupts if p.status == "interrupted" else None, p.resume)


def _outcome(writes: Iterable[tuple[str, Any]], error: Mapping[str, str] | None,
             interrupts: list[Any] | None, resume: list[Any]) -> list[tuple[str, Any]]:
    out = [(c, to_langgraph(v)) for c, v in writes]
    if error:
        out.append((ERROR, str(TaskError(error.get("type", "Exception"),
                                         error.get("message", "")))))
    elif interrupts is not None:
        out.append((INTERRUPT, [to_langgraph(i) for i in interrupts]))
    elif not out:
        out.append((NO_WRITES, None))
    if resume:
        out.append((RESUME, list(resume)))
    return out


def _signature(writes: list[tuple[str, Any]]) -> tuple[Any, ...]:
    """What tells two outcomes of one task apart without comparing the values."""
    return tuple((c, v if c == ERROR else tuple(i.id for i in v) if c == INTERRUPT
                  else len(v) if c == RESUME else None) for c, v in writes)


def _path(path: Any) -> str:
    """A task path as LangGraph writes it for its savers (`~__pregel_pull, node`)."""
    if isinstance(path, (tuple, list)):
        return f"~{', '.join(_path(p) for p in path)}"
    return f"{path:010d}" if isinstance(path, int) else str(path)


def _nested_ns(thread: Thread, key: str) -> str | None:
    """A subgraph's namespace, from its thread's id ("<thread>|<namespace>|<key>")."""
    tid, suffix = thread.thread_id, f"{NS_SEP}{key}"
    first = tid.find(NS_SEP)
    if first < 0 or not tid.endswith(suffix):
        return None
    return tid[first + 1:-len(suffix)] or None


# -- reading back -----------------------------------------------------------------
def _new(saver: Any, thread_id: str, spec: GraphSpec | None) -> SavedThread:
    thread = SavedThread(thread_id=thread_id)
    thread.ledger = Ledger(saver, thread_id, spec)
    return thread


def _read(saver: Any, thread_id: str, spec: GraphSpec | None) -> SavedThread:
    """A thread from the saver's checkpoints and writes, subgraphs included."""
    thread = _new(saver, thread_id, spec)
    ledger = thread.ledger
    by_ns: dict[str, list[Any]] = {}
    for t in saver.list({"configurable": {"thread_id": thread_id}}):
        by_ns.setdefault(t.config["configurable"].get("checkpoint_ns", ""), []).append(t)
    threads: dict[str, Thread] = {}
    for ns in sorted(by_ns, key=lambda n: len(_levels(n))):  # a subgraph after its parent
        tuples = sorted(by_ns[ns], key=lambda t: (t.checkpoint["ts"], t.metadata.get("step", 0)))
        levels = _levels(ns)
        key = tuples[0].metadata.get(SUBGRAPH_KEY)
        parent_ns = NS_SEP.join(levels[:-1])
        if ns and key is None:  # written by LangGraph: its key from the subgraph's name
            key = _key(spec, levels[-1])
        target: Thread = thread if not ns else Thread(
            thread_id=f"{thread_id}{NS_SEP}{ns}{NS_SEP}{key}")
        target.checkpoints = [_checkpoint(t, ledger, ns) for t in tuples]
        target.seq = len(target.checkpoints)
        _link(target, tuples, _spec_at(spec, ns), ledger, ns)
        if ns:
            parent = threads.get(parent_ns)
            parent_id = tuples[0].metadata.get("parents", {}).get(parent_ns)
            if parent is None or parent_id is None or key is None:
                continue
            _attach(parent, parent_id, levels[-1], key, target)
        threads[ns] = target
    if thread.checkpoints:
        ledger.head_id = max(c.id for c in thread.checkpoints)
    return thread


def _checkpoint(t: Any, ledger: Ledger, ns: str) -> Checkpoint:
    cp, parent = t.checkpoint, t.parent_config
    ledger.put.add((ns, cp["id"]))
    for ch, v in cp["channel_versions"].items():
        ledger.blobs.add((ns, ch, v))
        ledger.read_versions[(ns, ch, _number(v))] = v
    for seen in cp.get("versions_seen", {}).values():
        for ch, v in seen.items():
            ledger.read_versions.setdefault((ns, ch, _number(v)), v)
    return Checkpoint(
        id=cp["id"], step=t.metadata.get("step", -1), source=t.metadata.get("source", "loop"),
        channel_values=to_graphrun(dict(cp.get("channel_values") or {})),
        channel_versions={ch: _number(v) for ch, v in cp["channel_versions"].items()},
        versions_seen={n: {ch: _number(v) for ch, v in seen.items()}
                       for n, seen in cp.get("versions_seen", {}).items() if n != INPUT},
        parent_id=parent["configurable"]["checkpoint_id"] if parent else None,
        created_at=cp["ts"])


def _link(thread: Thread, tuples: list[Any], spec: GraphSpec | None, ledger: Ledger,
          ns: str) -> None:
    """A checkpoint's writes: the results of the step it went on to, or (none made yet)
    the outcomes of the tasks that ran, its pending writes."""
    by_id = {c.id: c for c in thread.checkpoints}
    went_on = {c.parent_id: c for c in thread.checkpoints if c.source == "loop"}
    for t in tuples:
        c = by_id[t.checkpoint["id"]]
        tasks: dict[str, list[tuple[str, Any]]] = {}
        for task_id, ch, v in t.pending_writes or ():
            tasks.setdefault(task_id, []).append((ch, v))
        for task_id, ws in tasks.items():
            ledger.written[(ns, c.id, task_id)] = _signature(ws)
        null = tasks.pop(NULL_TASK_ID, [])
        child = went_on.get(c.id)
        if child is not None:
            if c.source != "input":  # __start__'s result is the input the checkpoint holds
                child.writes = {task_id: _result(spec, ws) for task_id, ws in tasks.items()
                                if any(ch not in SPECIAL for ch, _ in ws)} or None
            continue
        c.pending = {task_id: _pending(ws) for task_id, ws in tasks.items()}
        c.null_writes = [(ch, to_graphrun(v)) for ch, v in null]


def _result(spec: GraphSpec | None, writes: list[tuple[str, Any]]) -> Any:
    regular = [(ch, to_graphrun(v)) for ch, v in writes if ch not in SPECIAL]
    return task_result(spec, regular) if spec is not None else dict(regular)


def _pending(writes: list[tuple[str, Any]]) -> PendingTask:
    found = dict(writes)
    resume = list(found.get(RESUME) or [])
    if any(ch not in WRITES_IDX_MAP for ch, _ in writes):  # it finished (and was kept)
        return PendingTask(status="done", resume=resume, writes=[
            (ch, to_graphrun(v)) for ch, v in writes if ch not in SPECIAL])
    if INTERRUPT in found or ERROR not in found:
        return PendingTask(status="interrupted", resume=resume, interrupts=[
            interrupt_from_langgraph(i) for i in found.get(INTERRUPT) or ()])
    return PendingTask(status="failed", resume=resume, error=_error(str(found[ERROR])))


def _error(text: str) -> dict[str, str]:
    """LangGraph's `Type('message')` as graphrun's error record."""
    m = re.fullmatch(r"([\w.]+)\((.*)\)", text, re.S)
    if m is None:
        return {"type": "Exception", "message": text}
    try:
        message = ast.literal_eval(m.group(2)) if m.group(2) else ""
    except (ValueError, SyntaxError):
        message = m.group(2)
    return {"type": m.group(1), "message": str(message)}


def _attach(parent: Thread, checkpoint_id: str, level: str, key: str, sub: Thread) -> None:
    """Put a subgraph's thread where graphrun keeps it: with the task that ran it to its
    end, with the paused task, or (checkpointer=True) on the checkpoints from then on."""
    by_id = {c.id: c for c in parent.checkpoints}
    at = by_id.get(checkpoint_id)
    if at is None:
        return
    if key.startswith("@"):
        for c in parent.checkpoints:
            if c.created_at >= at.created_at:
                c.subgraphs[key] = sub
        return
    task_id = level.split(NS_SEP)[0].partition(NS_END)[2]
    child = next((c for c in parent.checkpoints
                  if c.parent_id == at.id and c.source == "loop"), None)
    if child is not None:
        child.finished.setdefault(task_id, {})[key] = sub
    else:
        at.pending.setdefault(task_id, PendingTask(status="interrupted")).nested[key] = sub


def _levels(ns: str) -> list[str]:
    """A namespace's graphs, outermost first ("a:1|b:2|1" -> ["a:1", "b:2|1"]: a number is
    a task's second subgraph call and on)."""
    levels: list[str] = []
    for part in ns.split(NS_SEP) if ns else ():
        if part.isdigit() and levels:
            levels[-1] += NS_SEP + part
        else:
            levels.append(part)
    return levels


def _key(spec: GraphSpec | None, level: str) -> str | None:
    node, _, rest = level.partition(NS_END)
    count = rest.split(NS_SEP)[1] if NS_SEP in rest else "0"
    sub = subgraph_spec(spec, node) if spec is not None else None
    return f"{sub.name}:{count}" if sub is not None else None


def _spec_at(spec: GraphSpec | None, ns: str) -> GraphSpec | None:
    if spec is None or not ns:
        return spec
    try:
        return spec_at(spec, ns)
    except InvalidUpdateError:  # a graph a node's code called: not in the spec
        return None


def _untracked(spec: GraphSpec | None) -> frozenset[str]:
    if spec is None:
        return frozenset()
    return frozenset(k for k, ch in spec.channels.items() if isinstance(ch, UntrackedValue))


def _tracked(value: Any, untracked: frozenset[str]) -> Any:
    """Sends (one, or a list of them) without the untracked keys of their argument."""
    if isinstance(value, list):
        return [_tracked(v, untracked) for v in value]
    if isinstance(value, lg_types.Send) and isinstance(value.arg, dict) and untracked:
        return lg_types.Send(value.node, {k: v for k, v in value.arg.items()
                                          if k not in untracked})
    return value


def _number(v: Any) -> int:
    """A saver's version as graphrun's number ("00..02.0.37" -> 2)."""
    return int(v.split(".")[0]) if isinstance(v, str) else int(v)


def _index_from_end(checkpoints: list[Checkpoint], checkpoint_id: str | None) -> int | None:
    """Where checkpoint `checkpoint_id` is, looked for from the newest (a parent, or the
    last one synced, is almost always among the last few)."""
    for i in range(len(checkpoints) - 1, -1, -1):
        if checkpoints[i].id == checkpoint_id:
            return i
    return None


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


__all__ = ["LangGraphSaver", "Ledger", "SavedThread", "saved"]

