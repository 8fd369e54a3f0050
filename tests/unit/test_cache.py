"""The node and task cache in-process: CachePolicy + any LangGraph BaseCache (graphrun.cache)."""

from __future__ import annotations

import asyncio
import operator
import time
from typing import Annotated, Any

import pytest
from langgraph.cache.memory import InMemoryCache
from typing_extensions import TypedDict

from graphrun import START, CachePolicy, Command, InMemorySaver, StateGraph, interrupt
from graphrun.func import entrypoint, task


class State(TypedDict, total=False):
    x: int
    tag: str
    log: Annotated[list[str], operator.add]


def _graph(policy: CachePolicy | None, cache: Any, calls: list[str], **compile: Any) -> Any:
    def double(state: State) -> State:
        calls.append("double")
        return {"x": state["x"] * 2, "log": ["double"]}

    def plain(state: State) -> State:
        calls.append("plain")
        return {"log": ["plain"]}

    builder = StateGraph(State)
    builder.add_node("double", double, cache_policy=policy)
    builder.add_node("plain", plain)
    builder.add_edge(START, "double")
    builder.add_edge("double", "plain")
    return builder.compile(cache=cache, **compile)


class RecordingCache(InMemoryCache):
    """An InMemoryCache that remembers what it was asked to keep."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list[Any] = []

    def set(self, pairs: Any) -> None:
        self.kept.extend(pairs.items())
        super().set(pairs)


def test_hit_skips_the_node_and_is_marked_in_the_stream() -> None:
    calls: list[str] = []
    graph = _graph(CachePolicy(), InMemoryCache(), calls)
    assert graph.invoke({"x": 3}) == {"x": 6, "log": ["double", "plain"]}
    chunks = list(graph.stream({"x": 3}, stream_mode=["updates", "tasks"]))
    assert calls == ["double", "plain", "plain"]  # only the uncached node ran again
    assert ("updates", {"double": {"x": 6, "log": ["double"]},
                        "__metadata__": {"cached": True}}) in chunks
    # LangGraph's shape: the task's start is streamed, its result is not.
    double = [c for m, c in chunks if m == "tasks" and c["name"] == "double"]
    assert [sorted(c) for c in double] == [["id", "input", "name", "triggers"]]
    assert ("updates", {"plain": {"log": ["plain"]}}) in chunks


def test_threads_share_entries_only_when_asked() -> None:
    calls: list[str] = []
    cache = InMemoryCache()
    graph = _graph(CachePolicy(), cache, calls, checkpointer=InMemorySaver())
    for thread in ("t1", "t2"):
        out = graph.invoke({"x": 5}, {"configurable": {"thread_id": thread}})
        assert out["x"] == 10
    assert calls.count("double") == 1
    # The same graph without a policy (or without a cache) runs every node each time.
    for policy, given in ((None, cache), (CachePolicy(), None)):
        calls.clear()
        graph = _graph(policy, given, calls)
        graph.invoke({"x": 5})
        graph.invoke({"x": 5})
        assert calls.count("double") == 2


def test_key_is_the_node_input_and_namespace_as_langgraph() -> None:
    calls: list[str] = []
    cache = RecordingCache()
    graph = _graph(CachePolicy(ttl=30), cache, calls)
    graph.invoke({"x": 1})
    graph.invoke({"x": 2})  # another input: another entry
    assert calls.count("double") == 2
    (ns1, _), (ns2, _) = (k for k, _ in cache.kept)
    assert ns1 == ns2 == ("__pregel_ns_writes", f"{__name__}._graph.<locals>.double",
                          "double")
    assert [ttl for _, (_, ttl) in cache.kept] == [30, 30]


def test_key_func() -> None:
    calls: list[str] = []
    # Keyed by x alone: a different tag still hits.
    graph = _graph(CachePolicy(key_func=lambda s: str(s["x"])), InMemoryCache(), calls)
    graph.invoke({"x": 4, "tag": "a"})
    graph.invoke({"x": 4, "tag": "b"})
    assert calls.count("double") == 1


def test_ttl_expires() -> None:
    calls: list[str] = []
    graph = _graph(CachePolicy(ttl=1), InMemoryCache(), calls)
    graph.invoke({"x": 1})
    graph.invoke({"x": 1})
    assert calls.count("double") == 1
    time.sleep(1.1)
    graph.invoke({"x": 1})
    assert calls.count("double") == 2


def test_clear_cache() -> None:
    calls: list[str] = []
    graph = _graph(CachePolicy(), InMemoryCache(), calls)
    graph.invoke({"x": 1})
    graph.clear_cache(["plain"])  # not the cached node's entries
    graph.invoke({"x": 1})
    assert calls.count("double") == 1
    graph.clear_cache(["double"])
    graph.invoke({"x": 1})
    assert calls.count("double") == 2
    graph.clear_cache()
    graph.invoke({"x": 1})
    assert calls.count("double") == 3
    with pytest.raises(ValueError, match="No cache is set"):
        _graph(CachePolicy(), None, calls).clear_cache()


async def test_async_nodes_and_aclear_cache() -> None:
    calls: list[str] = []

    async def slow(state: State) -> State:
        calls.append("slow")
        await asyncio.sleep(0)
        return {"x": state["x"] + 1}

    builder = StateGraph(State)
    builder.add_node("slow", slow, cache_policy=CachePolicy())
    builder.add_edge(START, "slow")
    graph = builder.compile(cache=InMemoryCache())
    assert await graph.ainvoke({"x": 1}) == {"x": 2, "log": []}
    chunks = [c async for c in graph.astream({"x": 1})]
    assert chunks == [{"slow": {"x": 2}, "__metadata__": {"cached": True}}]
    await graph.aclear_cache()
    await graph.ainvoke({"x": 1})
    assert calls == ["slow", "slow"]


def test_set_node_defaults() -> None:
    calls: list[str] = []

    def one(state: State) -> State:
        calls.append("one")
        return {"x": state["x"] + 1}

    builder = StateGraph(State).set_node_defaults(cache_policy=CachePolicy())
    builder.add_node("one", one)
    builder.add_edge(START, "one")
    graph = builder.compile(cache=InMemoryCache())
    graph.invoke({"x": 1})
    graph.invoke({"x": 1})
    assert calls == ["one"]


def test_interrupts_and_errors_are_not_cached() -> None:
    calls: list[str] = []
    fail = [True]

    def ask(state: State) -> State:
        calls.append("ask")
        return {"tag": interrupt("name?")}

    def flaky(state: State) -> State:
        calls.append("flaky")
        if fail[0]:
            raise RuntimeError("down")
        return {"x": 1}

    builder = StateGraph(State)
    builder.add_node("ask", ask, cache_policy=CachePolicy())
    builder.add_edge(START, "ask")
    cache = InMemoryCache()
    graph = builder.compile(cache=cache, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "1"}}
    assert "__interrupt__" in graph.invoke({"x": 1}, config)
    assert "__interrupt__" in graph.invoke({"x": 1}, {"configurable": {"thread_id": "2"}})
    assert calls == ["ask", "ask"]  # the question was asked in each thread
    assert graph.invoke(Command(resume="ann"), config)["tag"] == "ann"
    # Once answered, the node's writes are cached (LangGraph's): a third thread gets them.
    assert graph.invoke({"x": 1}, {"configurable": {"thread_id": "3"}})["tag"] == "ann"
    assert calls == ["ask", "ask", "ask"]

    builder = StateGraph(State)
    builder.add_node("flaky", flaky, cache_policy=CachePolicy())
    builder.add_edge(START, "flaky")
    graph = builder.compile(cache=cache)
    with pytest.raises(RuntimeError):
        graph.invoke({"x": 1})
    fail[0] = False
    graph.invoke({"x": 1})
    graph.invoke({"x": 1})
    assert calls.count("flaky") == 2


def test_subgraph_uses_its_callers_cache() -> None:
    calls: list[str] = []

    def inner(state: State) -> State:
        calls.append("inner")
        return {"x": state["x"] * 10}

    sub = StateGraph(State)
    sub.add_node("inner", inner, cache_policy=CachePolicy())
    sub.add_edge(START, "inner")
    builder = StateGraph(State)
    builder.add_node("sub", sub.compile())  # no cache of its own
    builder.add_edge(START, "sub")
    graph = builder.compile(cache=InMemoryCache())
    assert graph.invoke({"x": 2})["x"] == 20
    assert graph.invoke({"x": 2})["x"] == 20
    assert calls == ["inner"]


def test_tasks_and_entrypoint_policy() -> None:
    calls: list[int] = []

    @task(cache_policy=CachePolicy())
    def square(n: int) -> int:
        calls.append(n)
        return n * n

    @task
    def cube(n: int) -> int:
        calls.append(-n)
        return n ** 3

    cache = InMemoryCache()

    @entrypoint(cache=cache)
    def squares(ns: list[int]) -> list[int]:
        return [square(n).result() for n in ns]

    assert squares.invoke([2, 3, 2]) == [4, 9, 4]
    assert calls == [2, 3]  # the second square(2) was a hit
    chunks = list(squares.stream([3], stream_mode="updates"))
    assert chunks[0] == {"square": 9, "__metadata__": {"cached": True}}
    square.clear_cache(cache)
    squares.invoke([3])
    assert calls == [2, 3, 3]

    # The entrypoint's policy covers its tasks that have none.
    @entrypoint(cache=InMemoryCache(), cache_policy=CachePolicy())
    def cubes(ns: list[int]) -> list[int]:
        return [cube(n).result() for n in ns]

    calls.clear()
    assert cubes.invoke([2, 2]) == [8, 8]
    assert calls == [-2]


async def test_async_tasks() -> None:
    calls: list[int] = []

    @task(cache_policy=CachePolicy())
    async def half(n: int) -> float:
        calls.append(n)
        return n / 2

    cache = InMemoryCache()

    @entrypoint(cache=cache)
    async def halves(ns: list[int]) -> list[float]:
        return [await half(n) for n in ns]

    assert await halves.ainvoke([4, 4, 6]) == [2, 2, 3]
    assert calls == [4, 6]
    await half.aclear_cache(cache)
    await halves.ainvoke([4])
    assert calls == [4, 6, 4]


def test_entries_written_on_temporal_are_read_in_process() -> None:
    # The node activity keeps typed JSON; in-process the same entry decodes to the writes.
    calls: list[str] = []
    cache = RecordingCache()
    graph = _graph(CachePolicy(), cache, calls)
    graph.invoke({"x": 7})
    ((key, (writes, _)),) = cache.kept  # the node's writes, its edge's included
    json_writes = [[c, 70 if c == "x" else ["json"] if c == "log" else v] for c, v in writes]
    cache.set({key: ({"graphrun_json": json_writes}, None)})
    assert graph.invoke({"x": 7}) == {"x": 70, "log": ["json", "plain"]}
    assert calls == ["double", "plain", "plain"]


CACHE = InMemoryCache()  # what `graphrun worker --cache tests.unit.test_cache:CACHE` loads


def test_cli_loads_a_cache() -> None:
    from graphrun.cli import CLIError, load_cache

    assert load_cache("tests.unit.test_cache:CACHE") is CACHE
    with pytest.raises(CLIError, match="not a LangGraph cache"):
        load_cache("tests.unit.test_cache:State")
    with pytest.raises(CLIError, match="expected MODULE:ATTR"):
        load_cache("tests.unit.test_cache")
