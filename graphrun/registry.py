"""The graphs a worker serves, by their stable registered name.

The workflow looks graphs up here, never by a per-process id, so a thread
paused before a worker restart resumes on a new worker process.
"""

from __future__ import annotations

from typing import Any

from graphrun.errors import GraphNotFoundError
from graphrun.serde import InputLimits

_GRAPHS: dict[str, Any] = {}
_LIMITS: dict[str, InputLimits] = {}
_STORES: dict[str, Any] = {}
_CACHES: dict[str, Any] = {}


def register(name: str, graph: Any, limits: InputLimits | None = None,
             store: Any = None, cache: Any = None) -> None:
    _GRAPHS[name] = graph
    _LIMITS[name] = limits or InputLimits()
    # The worker's store and cache, else the graph's compile(store=..., cache=...): they
    # stay in this process (or wherever they keep their data), never in history.
    _STORES[name] = store if store is not None else getattr(graph, "store", None)
    _CACHES[name] = cache if cache is not None else getattr(graph, "cache", None)


def store(name: str) -> Any:
    """The store the nodes of graph `name` get on this worker (see `create_worker`)."""
    return _STORES.get(name)


def cache(name: str) -> Any:
    """The cache the cached nodes and tasks of graph `name` use on this worker."""
    return _CACHES.get(name)


def limits(name: str) -> InputLimits:
    """The input limits threads of graph `name` enforce (see `create_worker`)."""
    return _LIMITS.get(name) or InputLimits()


def lookup(name: str) -> Any:
    try:
        return _GRAPHS[name]
    except KeyError:
        raise GraphNotFoundError(
            f"Graph {name!r} not registered on this worker. Registered: {sorted(_GRAPHS)}. "
            f"Pass it to create_worker(graphs={{{name!r}: graph}}).") from None


def find(name: str) -> Any:
    """The graph registered as `name` in this process, or None."""
    return _GRAPHS.get(name)
