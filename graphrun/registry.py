"""The graphs a worker serves, by their stable registered name.

The workflow looks graphs up here, never by a per-process id, so a thread
paused before a worker restart resumes on a new worker process.
"""

from __future__ import annotations

import contextlib
from typing import Any

from temporalio import activity, workflow

from graphrun.errors import GraphNotFoundError
from graphrun.serde import InputLimits

# By (task queue, name): two workers of one process may serve different graphs under
# one name on their own task queues. (None, name) is the latest registered, for callers
# outside a workflow or activity (a client in the worker's process).
Key = tuple[str | None, str]
_GRAPHS: dict[Key, Any] = {}
_LIMITS: dict[Key, InputLimits] = {}
_STORES: dict[Key, Any] = {}
_CACHES: dict[Key, Any] = {}
_EXECUTORS: dict[Key, Any] = {}


def register(name: str, graph: Any, limits: InputLimits | None = None,
             store: Any = None, cache: Any = None, task_queue: str | None = None,
             executor: Any = None) -> None:
    for key in {(task_queue, name), (None, name)}:
        _EXECUTORS[key] = executor
        _GRAPHS[key] = graph
        _LIMITS[key] = limits or InputLimits()
        # The worker's store and cache, else the graph's compile(store=..., cache=...):
        # they stay in this process (or wherever they keep their data), never in history.
        _STORES[key] = store if store is not None else getattr(graph, "store", None)
        _CACHES[key] = cache if cache is not None else getattr(graph, "cache", None)


def _key(name: str) -> Key:
    """The graph `name` of the task queue whose workflow or activity runs now."""
    queue: str | None = None
    with contextlib.suppress(Exception):  # not in a workflow
        queue = workflow.info().task_queue
    if queue is None:
        with contextlib.suppress(Exception):  # not in an activity either
            queue = activity.info().task_queue
    return (queue, name) if (queue, name) in _GRAPHS else (None, name)


def store(name: str) -> Any:
    """The store the nodes of graph `name` get on this worker (see `create_worker`)."""
    return _STORES.get(_key(name))


def cache(name: str) -> Any:
    """The cache the cached nodes and tasks of graph `name` use on this worker."""
    return _CACHES.get(_key(name))


def executor(name: str) -> Any:
    """The threads sync nodes of graph `name` run on (None: the event loop's default)."""
    return _EXECUTORS.get(_key(name))


def limits(name: str) -> InputLimits:
    """The input limits threads of graph `name` enforce (see `create_worker`)."""
    return _LIMITS.get(_key(name)) or InputLimits()


def lookup(name: str) -> Any:
    try:
        return _GRAPHS[_key(name)]
    except KeyError:
        raise GraphNotFoundError(
            f"Graph {name!r} not registered on this worker. Registered: "
            f"{sorted({n for _, n in _GRAPHS})}. "
            f"Pass it to create_worker(graphs={{{name!r}: graph}}).") from None


def find(name: str) -> Any:
    """The graph registered as `name` in this process (on this task queue, in a workflow
    or activity), or None."""
    return _GRAPHS.get(_key(name))
