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
import importlib
from datetime import date, datetime, timedelta
from typing import Any

from graphrun.channels import MISSING
from graphrun.types import Command, Interrupt, PendingTask, Send

TAG = "__gr"


def _path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _load(path: str) -> Any:
    module, _, qual = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def dumps(v: Any) -> Any:
    """Encode to JSON-able data."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, list):
        return [dumps(x) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) for k in v) and TAG not in v:
            return {k: dumps(x) for k, x in v.items()}
        return {TAG: "dict", "items": [[dumps(k), dumps(x)] for k, x in v.items()]}
    if v is MISSING:
        return {TAG: "missing"}
    if isinstance(v, tuple) and not hasattr(v, "_fields"):
        return {TAG: "tuple", "v": [dumps(x) for x in v]}
    if isinstance(v, (set, frozenset)):
        return {TAG: "set", "v": [dumps(x) for x in sorted(v, key=repr)]}
    if isinstance(v, Send):
        return {TAG: "send", "node": v.node, "arg": dumps(v.arg)}
    if isinstance(v, Interrupt):
        return {TAG: "interrupt", **interrupt_to_json(v)}
    if isinstance(v, Command):
        return {TAG: "command", "graph": v.graph, "update": dumps(v.update),
                "resume": dumps(v.resume), "goto": dumps(v.goto)}
    if isinstance(v, PendingTask):
        return {TAG: "pending", **{f.name: dumps(getattr(v, f.name))
                                   for f in dataclasses.fields(v)}}
    if isinstance(v, datetime):
        return {TAG: "datetime", "v": v.isoformat()}
    if isinstance(v, date):
        return {TAG: "date", "v": v.isoformat()}
    if isinstance(v, timedelta):
        return {TAG: "timedelta", "v": v.total_seconds()}
    if isinstance(v, bytes):
        return {TAG: "bytes", "v": base64.b64encode(v).decode()}
    if isinstance(v, enum.Enum):
        return {TAG: "enum", "cls": _path(type(v)), "v": dumps(v.value)}
    if hasattr(v, "model_dump") and hasattr(type(v), "model_validate"):
        return {TAG: "model", "cls": _path(type(v)), "v": v.model_dump(mode="json")}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {TAG: "dataclass", "cls": _path(type(v)),
                "v": {f.name: dumps(getattr(v, f.name)) for f in dataclasses.fields(v)
                      if f.init}}
    if hasattr(v, "_fields"):  # NamedTuple
        return {TAG: "namedtuple", "cls": _path(type(v)), "v": [dumps(x) for x in v]}
    raise TypeError(
        f"cannot store a value of type {type(v).__module__}.{type(v).__qualname__} in graph "
        f"state: {v!r:.80}. Use JSON data, a pydantic model or a dataclass.")


def loads(v: Any) -> Any:
    """Decode what `dumps` made."""
    if isinstance(v, list):
        return [loads(x) for x in v]
    if not isinstance(v, dict):
        return v
    tag = v.get(TAG)
    if tag is None:
        return {k: loads(x) for k, x in v.items()}
    if tag == "dict":
        return {loads(k): loads(x) for k, x in v["items"]}
    if tag == "missing":
        return MISSING
    if tag == "tuple":
        return tuple(loads(x) for x in v["v"])
    if tag == "set":
        return {loads(x) for x in v["v"]}
    if tag == "send":
        return Send(v["node"], loads(v["arg"]))
    if tag == "interrupt":
        return interrupt_from_json(v)
    if tag == "command":
        return Command(graph=v["graph"], update=loads(v["update"]), resume=loads(v["resume"]),
                       goto=loads(v["goto"]))
    if tag == "pending":
        return PendingTask(**{k: loads(x) for k, x in v.items() if k != TAG})
    if tag == "datetime":
        return datetime.fromisoformat(v["v"])
    if tag == "date":
        return date.fromisoformat(v["v"])
    if tag == "timedelta":
        return timedelta(seconds=v["v"])
    if tag == "bytes":
        return base64.b64decode(v["v"])
    if tag == "enum":
        return _load(v["cls"])(loads(v["v"]))
    if tag == "model":
        return _load(v["cls"]).model_validate(v["v"])
    if tag == "dataclass":
        return _load(v["cls"])(**{k: loads(x) for k, x in v["v"].items()})
    if tag == "namedtuple":
        return _load(v["cls"])(*(loads(x) for x in v["v"]))
    raise ValueError(f"unknown tag {tag!r} in stored graph data")


# -- checkpoints and threads ------------------------------------------------------
def checkpoint_to_json(c: Any) -> dict[str, Any]:
    return {f.name: dumps(getattr(c, f.name)) for f in dataclasses.fields(c)}


def checkpoint_from_json(d: dict[str, Any]) -> Any:
    from graphrun.checkpoint import Checkpoint

    c = Checkpoint(**{k: loads(v) for k, v in d.items()})
    c.null_writes = [(w[0], w[1]) for w in c.null_writes]
    for p in c.pending.values():
        p.writes = [(w[0], w[1]) for w in p.writes]
    return c


def thread_to_json(t: Any) -> dict[str, Any]:
    return {"thread_id": t.thread_id, "seq": t.seq, "max_history": t.max_history,
            "checkpoints": [checkpoint_to_json(c) for c in t.checkpoints]}


def thread_from_json(d: dict[str, Any]) -> Any:
    from graphrun.checkpoint import Thread

    return Thread(thread_id=d["thread_id"], seq=d["seq"], max_history=d.get("max_history"),
                  checkpoints=[checkpoint_from_json(c) for c in d["checkpoints"]])


# -- snapshots ------------------------------------------------------------------
def interrupt_to_json(i: Interrupt) -> dict[str, Any]:
    out = {"id": i.id, "value": dumps(i.value), "response_schema": i.response_schema}
    if i.timeout is not None:
        out.update(timeout=i.timeout, default=dumps(i.default), has_default=i.has_default)
    return out


def interrupt_from_json(d: dict[str, Any]) -> Interrupt:
    return Interrupt(value=loads(d["value"]), id=d["id"],
                     response_schema=d.get("response_schema"), timeout=d.get("timeout"),
                     default=loads(d.get("default")), has_default=d.get("has_default", False))


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
                   "result": dumps(t.result)} for t in s.tasks],
        "interrupts": [interrupt_to_json(i) for i in s.interrupts],
    }


def snapshot_from_json(d: dict[str, Any]) -> Any:
    from graphrun.errors import NodeFailedError
    from graphrun.types import PregelTask, StateSnapshot

    tasks = tuple(PregelTask(
        id=t["id"], name=t["name"], path=tuple(t["path"]),
        error=NodeFailedError(t["name"], t["error"]["type"], t["error"]["message"])
        if t.get("error") else None,
        interrupts=tuple(interrupt_from_json(i) for i in t["interrupts"]),
        result=loads(t.get("result"))) for t in d["tasks"])
    return StateSnapshot(values=loads(d["values"]), next=tuple(d["next"]), config=d["config"],
                         metadata=loads(d["metadata"]), created_at=d["created_at"],
                         parent_config=d["parent_config"], tasks=tasks,
                         interrupts=tuple(interrupt_from_json(i) for i in d["interrupts"]))
