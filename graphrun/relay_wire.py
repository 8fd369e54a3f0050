"""How a node's callback events travel to the caller (graphrun.relay): batched per task
attempt, compact on the way, expanded for readers.

A node activity gathers the events of its task's runs and returns them with its result
(`NodeResult.runs`), once, in history; a failed attempt, which has no result, signals
them. The workflow keeps each batch with the task it ran (`Entry`) for the run's caller,
who reads them by query after the run (`ainvoke`), or live from the thread's stream
(`astream`). Queries and the stream's memory add nothing to history, so what a caller
with handlers costs is about what its events weigh, once.

Compact: a batch's events leave out what its entry says anyway. The task's own run is
`"t"` (its id is `task_run_id`, the same in every activity that runs the task: the rounds
of an @entrypoint and its @task calls, whose runs nest under it); a parent that is the
caller's graph run is left out; a run whose metadata holds the task's `langgraph_*` keys
says `"tm": 1` instead; None values are left out.

Plain data only: no langchain-core here (the workflow imports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import UUID, uuid5

from graphrun import serde
from graphrun.types import PUSH

# The caller's graph run, as the worker names it: the caller puts its own run in its place.
ROOT = UUID(int=0)
_ROOT = str(ROOT)
# Task runs' ids are uuid5 in this namespace; a caller makes them its own (relay.Replay).
RUNS = UUID("6f1d1c2e-4a57-5d0e-9a43-2b7c1f0a9e55")
TASK = "t"


def task_run_id(task_id: str, attempt: int = 1) -> UUID:
    """The id of a task's chain run: the same in each activity that runs the task for one
    attempt, so that its rounds and its @task calls' runs name one run."""
    return uuid5(RUNS, task_id if attempt <= 1 else f"{task_id}@{attempt}")


def task_metadata(name: str, step: int, path: Any, triggers: Any, ns: str) -> dict[str, Any]:
    """The `langgraph_*` metadata of a task's runs (graphrun.callbacks.GraphRun)."""
    path = tuple(path)
    if path and path[0] == PUSH and len(path) == 2:  # a Send's: LangGraph's third item
        path = (*path, False)
    return {"langgraph_node": name, "langgraph_step": step, "langgraph_path": path,
            "langgraph_triggers": tuple(triggers), "langgraph_checkpoint_ns": ns}


def task_of(task: Any) -> dict[str, Any]:
    """An engine Task as an entry names it: what its runs' metadata is made of."""
    return {"id": task.id, "name": task.name, "step": task.step, "path": list(task.path),
            "triggers": list(task.triggers), "ns": task.ns}


class Packer:
    """Makes a task attempt's events compact (see the module docstring)."""

    def __init__(self, task: Any = None, attempt: int = 1) -> None:
        self.run_id = task_run_id(task.id, attempt) if task is not None else None
        self.metadata = (task_metadata(task.name, task.step, task.path, task.triggers,
                                       task.ns) if task is not None else None)

    def ref(self, run_id: UUID | None) -> str | None:
        if run_id is None:
            return None
        return TASK if run_id == self.run_id else str(run_id)

    def pack(self, kind: str, run_id: UUID, parent_run_id: UUID | None,
             fields: Mapping[str, Any]) -> dict[str, Any]:
        event: dict[str, Any] = {"kind": kind, "run_id": self.ref(run_id)}
        if parent_run_id != ROOT or self.run_id is None:  # compact with a task only
            event["parent_run_id"] = self.ref(parent_run_id)
        event.update((k, v) for k, v in fields.items() if v is not None)
        metadata = event.get("metadata")
        if (self.metadata is not None and isinstance(metadata, dict) and _plain_dict(metadata)
                and all(k in metadata and metadata[k] == v for k, v in self.metadata.items())):
            event["metadata"] = {k: v for k, v in metadata.items() if k not in self.metadata}
            event["tm"] = 1
        return event


def batch(events: list[Any], attempt: int) -> dict[str, Any]:
    """A task attempt's events as they travel: `events` is their typed JSON."""
    return {"events": events, **({"attempt": attempt} if attempt > 1 else {})}


def entry(batch: Mapping[str, Any], task: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the workflow keeps of a batch: it, and the task it ran (none for the run's own
    events: its pauses and resumes)."""
    return {**batch, **({"task": dict(task)} if task is not None else {})}


def expand(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An entry's events as the Relay heard them, each with its run's id and parent and
    its whole metadata: still typed JSON (serde), which the caller decodes into the
    graph's types, and the workflow passes on as it is."""
    events = entry.get("events")
    if not isinstance(events, list):
        return []
    task = entry.get("task")
    own: str | None = None
    metadata: dict[str, Any] = {}
    if isinstance(task, dict):
        try:
            own = str(task_run_id(str(task["id"]), int(entry.get("attempt", 1))))
            metadata = serde.dumps(task_metadata(str(task["name"]), int(task["step"]),
                                                 task["path"], task["triggers"],
                                                 str(task["ns"])))
        except (KeyError, TypeError, ValueError):
            pass
    out = []
    for event in events:
        if not isinstance(event, dict) or serde.TAG in event:
            continue
        event = dict(event)
        for key in ("run_id", "parent_run_id"):
            if event.get(key) == TASK:
                event[key] = own
        event.setdefault("parent_run_id", _ROOT)
        if event.pop("tm", None) and _plain_dict(event.get("metadata")):
            event["metadata"] = {**metadata, **event["metadata"]}
        out.append(event)
    return out


def _plain_dict(v: Any) -> bool:
    """A dict that serde wrote as it is (its typed JSON has the same keys)."""
    return isinstance(v, dict) and serde.TAG not in v and all(isinstance(k, str) for k in v)
