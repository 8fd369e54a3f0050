"""graphrun's objects in the JSON shapes of LangGraph's server (langgraph-sdk's schema)."""

from __future__ import annotations

import dataclasses
import re
import uuid
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from graphrun.types import Interrupt, StateSnapshot


class RequestBody(BaseModel):
    """A request's JSON body. A field this server does not serve is a 422 naming it,
    never dropped: a client asking for what is not done hears so."""

    model_config = ConfigDict(extra="forbid")

# LangGraph's server names a graph's default assistant uuid5(NAMESPACE_GRAPH, graph_id).
NAMESPACE_GRAPH = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

# graphrun's GraphStatus -> LangGraph's thread status.
THREAD_STATUS = {"running": "busy", "interrupted": "interrupted", "failed": "error",
                 "done": "idle", None: "idle"}
GRAPH_STATUS = {v: k for k, v in THREAD_STATUS.items() if k is not None}


def assistant_id(graph_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE_GRAPH, graph_id))


def jsonable(value: Any) -> Any:
    """State values as JSON: LangChain messages and pydantic models by `model_dump`."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Interrupt):
        return interrupt(value)
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump(mode="json"))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, datetime):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def interrupt(i: Interrupt) -> dict[str, Any]:
    out: dict[str, Any] = {"id": i.id, "value": jsonable(i.value)}
    if i.response_schema is not None:
        out["response_schema"] = i.response_schema
    return out


def assistant(graph_id: str, created_at: str) -> dict[str, Any]:
    return {"assistant_id": assistant_id(graph_id), "graph_id": graph_id, "name": graph_id,
            "description": None, "config": {}, "context": {}, "version": 1,
            "metadata": {"created_by": "system"}, "created_at": created_at,
            "updated_at": created_at}


def checkpoint(config: Any) -> dict[str, Any] | None:
    conf = (config or {}).get("configurable") or {}
    if not conf.get("checkpoint_id"):
        return None
    return {"thread_id": conf.get("thread_id"), "checkpoint_ns": conf.get("checkpoint_ns", ""),
            "checkpoint_id": conf["checkpoint_id"],
            "checkpoint_map": conf.get("checkpoint_map") or None}


def _task_checkpoint(state: Any) -> dict[str, Any] | None:
    """A subgraph task's checkpoint: where its own state is read (`checkpoint_ns`)."""
    config = getattr(state, "config", state)
    conf = (config or {}).get("configurable") if isinstance(config, dict) else None
    if not conf or not conf.get("checkpoint_ns"):
        return None
    return {"thread_id": conf.get("thread_id"), "checkpoint_ns": conf["checkpoint_ns"],
            "checkpoint_id": conf.get("checkpoint_id"),
            "checkpoint_map": conf.get("checkpoint_map") or None}


def state(snap: StateSnapshot) -> dict[str, Any]:
    return {
        "values": jsonable(snap.values), "next": list(snap.next),
        "checkpoint": checkpoint(snap.config), "metadata": jsonable(snap.metadata or {}),
        "created_at": snap.created_at, "parent_checkpoint": checkpoint(snap.parent_config),
        "tasks": [{"id": t.id, "name": t.name, "path": jsonable(t.path),
                   "error": jsonable(t.error) if t.error else None,
                   "interrupts": [interrupt(i) for i in t.interrupts],
                   "checkpoint": _task_checkpoint(t.state),
                   # get_state(subgraphs=True): a subgraph's own state
                   "state": state(t.state) if isinstance(t.state, StateSnapshot) else None,
                   "result": None}
                  for t in snap.tasks],
        "interrupts": [interrupt(i) for i in snap.interrupts]}


def thread(thread_id: str, *, graph_id: str | None, status: str | None,
           created_at: datetime | None, updated_at: datetime | None,
           snap: StateSnapshot | None) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat()
    metadata = ({"graph_id": graph_id, "assistant_id": assistant_id(graph_id)}
                if graph_id else {})
    interrupts: dict[str, list[dict[str, Any]]] = {}
    for t in snap.tasks if snap else ():
        if t.interrupts:
            interrupts[t.id] = [interrupt(i) for i in t.interrupts]
    error = next((t.error for t in (snap.tasks if snap else ()) if t.error), None)
    return {"thread_id": thread_id,
            "created_at": created_at.isoformat() if created_at else now,
            "updated_at": updated_at.isoformat() if updated_at else now,
            "metadata": metadata, "status": THREAD_STATUS.get(status, "idle"),
            "values": jsonable(snap.values) if snap else None, "interrupts": interrupts,
            "config": {}, "error": jsonable(error) if error else None}


def run(record: dict[str, Any], thread_id: str) -> dict[str, Any]:
    """A run record the thread's workflow keeps, as LangGraph's `Run`."""
    return {"run_id": record["run_id"], "thread_id": thread_id,
            "assistant_id": record.get("assistant_id"),
            "created_at": record.get("created_at"), "updated_at": record.get("updated_at"),
            "status": record.get("status", "pending"), "metadata": record.get("metadata") or {},
            "multitask_strategy": record.get("multitask_strategy", "enqueue"), "kwargs": {}}


def select_state(shown: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    """A state (`state`) with only the fields asked for, as LangGraph's `select`:
    `values.<key>` keeps that key of the values alone."""
    if not fields:
        return shown
    keys = [f[len("values."):] for f in fields if f.startswith("values.")]
    out = {k: v for k, v in shown.items() if k in fields}
    if keys and "values" not in fields:
        values = shown.get("values")
        out["values"] = ({k: values[k] for k in keys if k in values}
                         if isinstance(values, dict) else values)
    return out


EXTRACT_PATHS = 10  # LangGraph's server takes at most 10 paths a search
_STEP = re.compile(r"([^.\[\]]+)|\[(-?\d+)\]")


def extract_path(path: str) -> list[str | int]:
    """`values.messages[-1].content` as its steps (keys and list indexes)."""
    steps: list[str | int] = []
    at = 0
    for m in _STEP.finditer(path):
        if path[at:m.start()] not in (("", ".") if steps else ("",)):
            break
        steps.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        at = m.end()
    if not steps or at != len(path):
        raise ValueError(f"extract: {path!r:.80} is not a path such as "
                         f"'values.messages[-1]' (keys by dots, list indexes in brackets)")
    return steps


def extract(thread: dict[str, Any], paths: dict[str, list[str | int]]) -> dict[str, Any]:
    """Each alias's value at its path in the thread; None where the path leads nowhere."""
    out: dict[str, Any] = {}
    for alias, steps in paths.items():
        node: Any = thread
        for step in steps:
            in_list = isinstance(step, int) and isinstance(node, list) and (
                -len(node) <= step < len(node))
            in_dict = isinstance(step, str) and isinstance(node, dict) and step in node
            if not (in_list or in_dict):
                node = None
                break
            node = node[step]
        out[alias] = node
    return out
