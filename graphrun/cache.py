"""LangGraph's node and task cache: `CachePolicy` plus a `BaseCache`, on both drivers.

    builder.add_node("embed", embed, cache_policy=CachePolicy(ttl=3600))
    graph = builder.compile(cache=InMemoryCache())     # any LangGraph BaseCache

A node (or @task) with a policy, run with a cache, first looks its key up: the
namespace `("__pregel_ns_writes", "<module>.<qualname>", "<node>")` (a task's has no
node name) and the xxh3-128 digest of `key_func(input)`, as LangGraph makes them. A hit
stands for the node's writes and the node does not run; a node that finishes (no
error, no interrupt) stores its writes. Nothing is cached without both a policy and a
cache: threads stay isolated by default.

In-process an entry holds the writes themselves, as LangGraph's does. On Temporal the
activity that runs the node (or the @task call) looks up and stores, so the workflow
sees a result like any other, and an entry holds the writes as typed JSON: reading one
back builds only the graph's declared classes. Either driver reads the other's entries.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from xxhash import xxh3_128_hexdigest

from graphrun.checkpoint import Task, TaskResult, Write
from graphrun.spec import GraphSpec
from graphrun.types import PUSH, RETURN

CACHE_NS_WRITES = "__pregel_ns_writes"  # LangGraph's namespace for cached writes
_JSON = "graphrun_json"  # an entry written on Temporal: {_JSON: [[channel, typed JSON]]}

# The cache of the task running now: its @task calls and the graphs it runs use it
# (a graph run inside a node uses its caller's cache, as in LangGraph).
_ACTIVE: contextvars.ContextVar[Any] = contextvars.ContextVar("graphrun_cache", default=None)


class CacheKey(NamedTuple):
    ns: tuple[str, ...]
    key: str
    ttl: int | None


def active() -> Any:
    return _ACTIVE.get()


def enter(cache: Any) -> contextvars.Token[Any]:
    return _ACTIVE.set(cache)


def leave(token: contextvars.Token[Any]) -> None:
    _ACTIVE.reset(token)


def identifier(obj: Any) -> str:
    """`module.qualname` of a node's or a task's function (LangGraph's `identifier`)."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    module = getattr(obj, "__module__", None)
    return f"{module}.{name}" if isinstance(name, str) and module else "__dynamic__"


def _key(policy: Any, ns: tuple[str, ...], *args: Any, **kwargs: Any) -> CacheKey:
    raw = policy.key_func(*args, **kwargs)
    return CacheKey(ns, xxh3_128_hexdigest(raw.encode() if isinstance(raw, str) else raw),
                    policy.ttl)


def node_namespace(graph: GraphSpec, name: str) -> tuple[str, ...]:
    return (CACHE_NS_WRITES, identifier(graph.nodes[name].fn), name)


def node_key(graph: GraphSpec, task: Task) -> CacheKey | None:
    """The key of a node's task, or None when the node has no cache policy."""
    node = graph.nodes.get(task.name)
    if node is None or node.cache_policy is None:
        return None
    return _key(node.cache_policy, node_namespace(graph, task.name), _input(graph, task))


def call_key(policy: Any, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> CacheKey | None:
    """The key of a @task call, or None without a policy."""
    if policy is None:
        return None
    return _key(policy, (CACHE_NS_WRITES, identifier(fn)), *args, **kwargs)


def _input(graph: GraphSpec, task: Task) -> Any:
    """What the node reads, as LangGraph hands it to `key_func`."""
    traced = getattr(graph, "traced_input", None)  # an @entrypoint's: its input
    if traced is not None:
        return traced(task)
    if task.path[0] == PUSH or graph.nodes[task.name].is_subgraph:
        return task.input
    return graph.make_input(task.input, task.name)


def cacheable(result: TaskResult) -> bool:
    """Only a task that finished goes to the cache: a hit skips the node, so a cached
    error or question would be skipped without being raised or asked."""
    return not (result.error or result.interrupts or result.paused or result.awaiting
                or result.invalid_resume or result.cached)


def namespaces(graph: GraphSpec, nodes: Iterable[str] | None) -> list[tuple[str, ...]]:
    """The namespaces `clear_cache(nodes)` clears (every node's when None)."""
    names = list(nodes) if nodes else [n for n in graph.nodes if n != "__start__"]
    return [node_namespace(graph, n) for n in names if n in graph.nodes]


def hit(task_id: str, writes: list[Write]) -> TaskResult:
    update = dict(writes).get(RETURN) if writes and writes[0][0] == RETURN else None
    return TaskResult(task_id=task_id, writes=writes, update=update, cached=True)


# -- the writes, for the in-process driver and for @task calls ----------------------------
def get(cache: Any, key: CacheKey | None, types: Any) -> list[Write] | None:
    if cache is None or key is None:
        return None
    return _writes(cache.get([(key.ns, key.key)]).get((key.ns, key.key)), types)


async def aget(cache: Any, key: CacheKey | None, types: Any) -> list[Write] | None:
    if cache is None or key is None:
        return None
    return _writes((await cache.aget([(key.ns, key.key)])).get((key.ns, key.key)), types)


def put(cache: Any, key: CacheKey | None, result: TaskResult, json_types: Any = None) -> None:
    """Keep a finished task's writes; as typed JSON when `json_types` (on Temporal)."""
    if cache is None or key is None or not cacheable(result):
        return
    if (entry := _entry(result.writes, json_types)) is not None:
        cache.set({(key.ns, key.key): (entry, key.ttl)})


async def aput(cache: Any, key: CacheKey | None, result: TaskResult,
               json_types: Any = None) -> None:
    if cache is None or key is None or not cacheable(result):
        return
    if (entry := _entry(result.writes, json_types)) is not None:
        await cache.aset({(key.ns, key.key): (entry, key.ttl)})


def _entry(writes: list[Write], json_types: Any) -> Any:
    if json_types is None:
        return list(writes)
    from graphrun import serde

    try:
        return {_JSON: [[c, serde.dumps(v, json_types)] for c, v in writes]}
    except (TypeError, ValueError):  # the activity refuses such a result anyway
        return None


def _writes(entry: Any, types: Any) -> list[Write] | None:
    if entry is None:
        return None
    try:
        if isinstance(entry, dict) and _JSON in entry:
            from graphrun import serde  # only for entries written on Temporal

            return [(str(c), serde.loads(v, types)) for c, v in entry[_JSON]]
        return [(str(c), v) for c, v in entry]
    except (TypeError, ValueError):  # not an entry of ours: run the node
        return None


# -- the node activity: typed JSON in, typed JSON out ---------------------------------------
async def aget_json(cache: Any, key: CacheKey | None, types: Any) -> list[list[Any]] | None:
    """A hit's writes as `NodeResult.writes` carries them, or None."""
    if cache is None or key is None:
        return None
    entry = (await cache.aget([(key.ns, key.key)])).get((key.ns, key.key))
    if entry is None:
        return None
    from graphrun import serde

    try:
        if isinstance(entry, dict) and _JSON in entry:
            return [[str(c), v] for c, v in entry[_JSON]]
        return [[str(c), serde.dumps(v, types)] for c, v in entry]
    except (TypeError, ValueError):  # an in-process entry it cannot carry: run the node
        return None


async def aput_json(cache: Any, key: CacheKey | None, result: TaskResult,
                    writes: list[list[Any]]) -> None:
    if cache is not None and key is not None and cacheable(result):
        await cache.aset({(key.ns, key.key): ({_JSON: writes}, key.ttl)})
