"""Typed JSON for values that cross Temporal: state, writes, checkpoints, threads.

Plain JSON stays plain. Objects JSON cannot say are tagged with `"__gr"` so
they come back as the same type: pydantic models (LangChain messages among
them), dataclasses, tuples, sets, `Send`, `Interrupt`, `Command`, datetimes,
bytes. A value with none of these shapes is a clear `TypeError` naming it.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import math
import uuid
from datetime import date, datetime, timedelta
from typing import Any

from graphrun.channels import MISSING, Overwrite
from graphrun.checkpoint import Checkpoint, Task, Thread
from graphrun.declared import NO_TYPES, DeclaredTypes, is_model, is_namedtuple, type_path
from graphrun.errors import UndeclaredTypeError
from graphrun.types import Command, Interrupt, PendingTask, Send, StateUpdate, TimeoutPolicy

TAG = "__gr"
MAX_DECODE_DEPTH = 250  # above any input limit and what the SDK decodes; far from the stack limit
# graphrun's own plain-data classes that travel tagged (dataclasses, a NamedTuple).
# graphrun's own classes, also by the paths data stored before checkpoint.py held them.
_OWN_TYPES = DeclaredTypes([Checkpoint, Overwrite, StateUpdate, Task, Thread], aliases={
    f"graphrun.engine:{cls.__name__}": cls for cls in (Checkpoint, Task, Thread)})
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def dumps(v: Any, types: DeclaredTypes | None = None) -> Any:
    """Encode to JSON-able data.

    With `types`, a model, dataclass, enum or NamedTuple whose class is not in
    it is refused here, where it is written, rather than where it is read.
    """
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else {TAG: "float", "v": repr(v)}
    if isinstance(v, list):
        return [dumps(x, types) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v) and TAG not in v:
            return {k: dumps(x, types) for k, x in v.items()}
        return {TAG: "dict", "items": [[dumps(k, types), dumps(x, types)] for k, x in v.items()]}
    if v is MISSING:
        return {TAG: "missing"}
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return {TAG: "tuple", "v": [dumps(x, types) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {TAG: "set", "v": [dumps(x, types) for x in sorted(v, key=repr)]}
    if isinstance(v, Send):
        out = {TAG: "send", "node": v.node, "arg": dumps(v.arg, types)}
        if v.timeout is not None:
            out["timeout"] = v.timeout.to_data()
        return out
    if isinstance(v, Interrupt):
        return {TAG: "interrupt", **interrupt_to_json(v)}
    if isinstance(v, Command):
        return {TAG: "command", "graph": v.graph, "update": dumps(v.update, types),
                "resume": dumps(v.resume, types), "goto": dumps(v.goto, types)}
    if isinstance(v, PendingTask):
        return {TAG: "pending", **{f.name: dumps(getattr(v, f.name), types)
                                   for f in dataclasses.fields(v)}}
    if isinstance(v, datetime):
        return {TAG: "datetime", "v": v.isoformat()}
    if isinstance(v, date):
        return {TAG: "date", "v": v.isoformat()}
    if isinstance(v, timedelta):
        return {TAG: "timedelta", "v": v.total_seconds()}
    if isinstance(v, bytes):
        return {TAG: "bytes", "v": base64.b64encode(v).decode()}
    if isinstance(v, uuid.UUID):
        return {TAG: "uuid", "v": str(v)}
    cls = type(v)
    if types is not None and cls not in _OWN_TYPES and (isinstance(v, enum.Enum) or is_model(cls) or is_namedtuple(cls)
                              or dataclasses.is_dataclass(v)) and cls not in types:
        raise UndeclaredTypeError.naming(type_path(cls), "store")
    if isinstance(v, enum.Enum):
        return {TAG: "enum", "cls": type_path(cls), "v": dumps(v.value, types)}
    if is_model(cls):
        # Python mode keeps NaN, inf and nested types, which JSON mode turns into None or str.
        return {TAG: "model", "cls": type_path(cls), "v": dumps(v.model_dump(), types)}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {TAG: "dataclass", "cls": type_path(cls),
                "v": {f.name: dumps(getattr(v, f.name), types) for f in dataclasses.fields(v)
                      if f.init}}
    if is_namedtuple(cls):
        return {TAG: "namedtuple", "cls": type_path(cls), "v": [dumps(x, types) for x in v]}
    raise TypeError(
        f"cannot store a value of type {cls.__module__}.{cls.__qualname__} in graph "
        f"state: {v!r:.80}. Use JSON data, a pydantic model or a dataclass.")


def loads(v: Any, types: DeclaredTypes = NO_TYPES) -> Any:
    """Decode what `dumps` made, building only the classes in `types`.

    A tagged value naming any other class raises `UndeclaredTypeError`: the
    class path in the data is looked up in `types`, never imported or called.
    Malformed data raises `ValueError`.
    """
    try:
        return _loads(v, types, 0)
    except (UndeclaredTypeError, ValueError):
        raise
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed graph data: {type(exc).__name__}: {exc}") from None


def _loads(v: Any, types: DeclaredTypes, depth: int) -> Any:
    if depth > MAX_DECODE_DEPTH:
        raise ValueError(f"graph data is nested deeper than {MAX_DECODE_DEPTH} levels")
    d = depth + 1
    if isinstance(v, list):
        return [_loads(x, types, d) for x in v]
    if not isinstance(v, dict):
        return v
    tag = v.get(TAG)
    if tag is None:
        return {k: _loads(x, types, d) for k, x in v.items()}
    if tag == "float":
        if v.get("v") not in _NON_FINITE:
            raise ValueError(f"malformed float in graph data: {v.get('v')!r:.40}")
        return _NON_FINITE[v["v"]]
    if tag == "dict":
        return {_loads(k, types, d): _loads(x, types, d) for k, x in v["items"]}
    if tag == "missing":
        return MISSING
    if tag == "tuple":
        return tuple(_loads(x, types, d) for x in v["v"])
    if tag == "set":
        return {_loads(x, types, d) for x in v["v"]}
    if tag == "send":
        return Send(str(v["node"]), _loads(v["arg"], types, d),
                    timeout=TimeoutPolicy.from_data(v.get("timeout")))
    if tag == "interrupt":
        return _interrupt(v, types, d)
    if tag == "command":
        return Command(graph=v["graph"], update=_loads(v["update"], types, d),
                       resume=_loads(v["resume"], types, d), goto=_loads(v["goto"], types, d))
    if tag == "pending":
        fields = {f.name for f in dataclasses.fields(PendingTask)}
        return PendingTask(**{k: _loads(x, types, d) for k, x in v.items() if k in fields})
    if tag == "datetime":
        return datetime.fromisoformat(v["v"])
    if tag == "date":
        return date.fromisoformat(v["v"])
    if tag == "timedelta":
        return timedelta(seconds=float(v["v"]))
    if tag == "bytes":
        return base64.b64decode(v["v"])
    if tag == "uuid":
        return uuid.UUID(str(v["v"]))
    if tag in _CLASS_TAGS:
        return _build(tag, v, types, d)
    raise ValueError(f"unknown tag {tag!r:.40} in stored graph data")


def _build(tag: str, v: dict[str, Any], types: DeclaredTypes, depth: int) -> Any:
    path = v.get("cls")
    cls = (types.get(path) or _OWN_TYPES.get(path)) if isinstance(path, str) else None
    if cls is None or not _CLASS_TAGS[tag](cls):
        raise UndeclaredTypeError.naming(str(path)[:200])
    value = _loads(v["v"], types, depth)
    try:
        if tag == "enum":
            return cls(value)
        if tag == "model":
            return cls.model_validate(value)  # type: ignore[attr-defined]
        if tag == "dataclass":
            return cls(**value)
        return cls(*value)
    except Exception as exc:
        raise ValueError(f"stored {tag} {path} could not be rebuilt: {exc}"[:500]) from None


_CLASS_TAGS: dict[str, Any] = {
    "enum": lambda c: issubclass(c, enum.Enum),
    "model": is_model,
    "dataclass": dataclasses.is_dataclass,
    "namedtuple": is_namedtuple,
}


def depth_of(v: Any) -> int:
    """How deeply plain JSON data nests (a scalar is 0), without recursion."""
    deepest, stack = 0, [(v, 0)]
    while stack:
        x, level = stack.pop()
        if isinstance(x, dict):
            x = list(x.values())
        if isinstance(x, list):
            deepest = max(deepest, level + 1)
            stack.extend((y, level + 1) for y in x)
    return deepest


def size_of(v: Any) -> int:
    """Bytes of plain JSON data as it is written to history."""
    return len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode())


# -- checkpoints and threads ------------------------------------------------------
def task_to_wire(t: Task, triggers: tuple[str, ...]) -> dict[str, Any]:
    """A task for the node activity: what it cannot work out itself (its id, input,
    path and step); the namespace and triggers only when they are not the usual ones."""
    d: dict[str, Any] = {"id": t.id, "path": list(t.path), "step": t.step,
                         "input": dumps(t.input)}
    if t.ns != f"{t.name}:{t.id}":
        d["ns"] = t.ns
    if tuple(t.triggers) != triggers:
        d["triggers"] = list(t.triggers)
    if t.state is not None:
        d["state"] = dumps(t.state)
    if t.timeout:
        d["timeout"] = t.timeout
    return d


def task_from_wire(d: dict[str, Any], name: str, triggers: tuple[str, ...],
                   types: DeclaredTypes = NO_TYPES) -> Task:
    if TAG in d:  # a whole Task, as older workflows sent it
        task: Task = loads(d, types)
        return task
    return Task(id=str(d["id"]), name=name, path=tuple(d["path"]),
                triggers=tuple(d.get("triggers", triggers)), input=loads(d.get("input"), types),
                ns=str(d.get("ns", f"{name}:{d['id']}")), step=int(d["step"]),
                state=loads(d.get("state"), types), timeout=d.get("timeout"))


_REQUIRED = ("id", "step", "source", "channel_values", "channel_versions", "versions_seen",
             "parent_id", "created_at")


def checkpoint_to_json(c: Any) -> dict[str, Any]:
    """A checkpoint as typed JSON; optional fields that are empty are left out."""
    return {f.name: dumps(getattr(c, f.name)) for f in dataclasses.fields(c)
            if f.name in _REQUIRED or getattr(c, f.name)}


def checkpoint_from_json(d: dict[str, Any], types: DeclaredTypes = NO_TYPES) -> Any:


    fields = {f.name for f in dataclasses.fields(Checkpoint)}
    c = Checkpoint(**{k: loads(v, types) for k, v in d.items() if k in fields})
    c.null_writes = [(w[0], w[1]) for w in c.null_writes]
    for p in c.pending.values():
        p.writes = [(w[0], w[1]) for w in p.writes]
    return c


def thread_to_json(t: Any) -> dict[str, Any]:
    """A thread as typed JSON. A checkpoint whose parent comes before it holds only the
    channels that changed since (by version) and the names of those that emptied, so a
    thread's size grows with its writes, not with its state times its checkpoints."""
    out: list[dict[str, Any]] = []
    seen: dict[str, Any] = {}
    for c in t.checkpoints:
        base = seen.get(c.parent_id) if c.parent_id else None
        seen[c.id] = c
        if base is None:
            out.append(checkpoint_to_json(c))
            continue
        changed = {k: v for k, v in c.channel_values.items()
                   if k not in base.channel_values
                   or c.channel_versions.get(k) != base.channel_versions.get(k)}
        d = checkpoint_to_json(dataclasses.replace(c, channel_values=changed))
        d["delta"] = [k for k in base.channel_values if k not in c.channel_values]  # emptied
        out.append(d)
    life = {"life": t.life} if getattr(t, "life", "") else {}
    return {"thread_id": t.thread_id, "seq": t.seq, "max_history": t.max_history,
            **life, "checkpoints": out}


def thread_from_json(d: dict[str, Any], types: DeclaredTypes = NO_TYPES) -> Any:
    """A thread from stored data; raises UndeclaredTypeError or ValueError, never builds
    a class that `types` does not hold."""


    try:
        checkpoints: list[Any] = []
        seen: dict[str, Any] = {}
        for item in d["checkpoints"]:
            c = checkpoint_from_json(item, types)
            if "delta" in item:  # only what changed since its parent (see thread_to_json)
                base = seen[c.parent_id]
                dropped = set(item["delta"])
                c.channel_values = {**{k: v for k, v in base.channel_values.items()
                                       if k not in dropped}, **c.channel_values}
            seen[c.id] = c
            checkpoints.append(c)
        return Thread(thread_id=str(d["thread_id"]), seq=int(d["seq"]),
                      max_history=d.get("max_history"), checkpoints=checkpoints,
                      life=str(d.get("life") or ""))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed thread data: {type(exc).__name__}: {exc}") from None


# -- snapshots ------------------------------------------------------------------
def interrupt_to_json(i: Interrupt) -> dict[str, Any]:
    out = {"id": i.id, "value": dumps(i.value), "response_schema": i.response_schema}
    if i.timeout is not None:
        out.update(timeout=i.timeout, default=dumps(i.default), has_default=i.has_default)
    return out


def interrupt_from_json(d: dict[str, Any], types: DeclaredTypes = NO_TYPES) -> Interrupt:
    return loads({**d, TAG: "interrupt"}, types)  # type: ignore[no-any-return]


def _interrupt(d: dict[str, Any], types: DeclaredTypes, depth: int) -> Interrupt:
    return Interrupt(value=_loads(d["value"], types, depth), id=str(d["id"]),
                     response_schema=d.get("response_schema"), timeout=d.get("timeout"),
                     default=_loads(d.get("default"), types, depth),
                     has_default=bool(d.get("has_default", False)))


def snapshot_to_json(s: Any) -> dict[str, Any]:
    """A StateSnapshot as JSON a person can read in the Temporal UI."""
    return {
        "values": dumps(s.values), "next": list(s.next), "config": s.config,
        "metadata": dumps(s.metadata), "created_at": s.created_at,
        "parent_config": s.parent_config,
        "tasks": [{"id": t.id, "name": t.name, "path": list(t.path),
                   "error": ({"type": getattr(t.error, "error_type", type(t.error).__name__),
                              "message": getattr(t.error, "error_message", str(t.error))}
                             if t.error else None),
                   "interrupts": [interrupt_to_json(i) for i in t.interrupts],
                   "state": _task_state_to_json(t.state),
                   "result": dumps(t.result)} for t in s.tasks],
        "interrupts": [interrupt_to_json(i) for i in s.interrupts],
    }


def snapshot_from_json(d: dict[str, Any], types: DeclaredTypes = NO_TYPES) -> Any:
    from graphrun.types import PregelTask, StateSnapshot, TaskError

    tasks = tuple(PregelTask(
        id=t["id"], name=t["name"], path=tuple(t["path"]),
        error=TaskError(t["error"]["type"], t["error"]["message"]) if t.get("error") else None,
        interrupts=tuple(interrupt_from_json(i, types) for i in t["interrupts"]),
        state=_task_state_from_json(t.get("state"), types),
        result=loads(t.get("result"), types)) for t in d["tasks"])
    return StateSnapshot(values=loads(d["values"], types), next=tuple(d["next"]),
                         config=d["config"], metadata=loads(d["metadata"], types),
                         created_at=d["created_at"], parent_config=d["parent_config"],
                         tasks=tasks,
                         interrupts=tuple(interrupt_from_json(i, types)
                                          for i in d["interrupts"]))


# -- limits on what enters history ------------------------------------------------
@dataclasses.dataclass(frozen=True)
class InputLimits:
    """The largest input, answer or update a thread takes, as typed JSON.

    Checked by the client before it sends and by the workflow before it keeps
    anything (an update's validator, the resume signal's handler).
    """

    max_bytes: int = 1_000_000
    max_depth: int = 64
    # What the workflow sends in one payload (a node's input, a run's result, the thread
    # carried over by continue-as-new). Temporal refuses more than 2 MiB; past this, the
    # node or the result fails cleanly instead. None: no check (external payload storage
    # takes large payloads out of history).
    max_payload_bytes: int | None = 2_000_000

    def check(self, data: Any, what: str) -> None:
        from graphrun.errors import InputLimitError

        depth = depth_of(data)
        if depth > self.max_depth:
            raise InputLimitError(
                f"{what} is nested {depth} levels deep; the limit is {self.max_depth}. "
                f"Flatten it, or raise the limit (GraphClient(limits=...) and "
                f"create_worker(limits=...)).")
        size = size_of(data)
        if size > self.max_bytes:
            raise InputLimitError(
                f"{what} is {size:,} bytes as JSON; the limit is {self.max_bytes:,}. Send a "
                f"reference (a URL or an id) instead, or raise the limit (GraphClient("
                f"limits=...) and create_worker(limits=...)).")


def _task_state_to_json(state: Any) -> Any:
    """A subgraph task's state: its snapshot, or a config pointing at it."""
    if state is None:
        return None
    if hasattr(state, "_fields"):  # a StateSnapshot
        return {"snapshot": snapshot_to_json(state)}
    return {"config": state}


def _task_state_from_json(d: Any, types: DeclaredTypes) -> Any:
    if not isinstance(d, dict):
        return None
    if "snapshot" in d:
        return snapshot_from_json(d["snapshot"], types)
    return d.get("config")
