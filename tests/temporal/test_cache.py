"""The node and task cache on Temporal: a LangGraph `BaseCache` the workers share.

`create_worker(..., cache=...)` (else the graph's `compile(cache=...)`) gives the node
activity a cache: a node or @task with a `CachePolicy` is looked up there before it
runs and stored after it finished, so a second thread with the same input gets the
writes without running the node. Nothing about the cache goes through history.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, TypedDict

import pytest
from langgraph.cache.memory import InMemoryCache

from graphrun import START, CachePolicy, Command, StateGraph, interrupt
from graphrun.client import GraphClient
from graphrun.func import entrypoint, task
from graphrun.worker import create_worker

pytestmark = pytest.mark.temporal

RUNS: list[str] = []  # the worker runs in this process: nodes note each run here


class State(TypedDict, total=False):
    text: str
    words: int
    answer: str


def count_words(state: State) -> dict:
    RUNS.append(state["text"])
    return {"words": len(state["text"].split())}


def ask(state: State) -> dict:
    RUNS.append("ask")
    return {"answer": interrupt(f"ok with {state['words']} words?")}


def _graph(name: str, policy: CachePolicy | None = None, cache: Any = None) -> Any:
    return (StateGraph(State)
            .add_node("count_words", count_words, cache_policy=policy or CachePolicy())
            .add_edge(START, "count_words").compile(name=name, cache=cache))


def _thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"cache-{uuid.uuid4().hex}"}}


def _entries(cache: InMemoryCache) -> list[Any]:
    """What an InMemoryCache keeps, decoded."""
    return [cache.serde.loads_typed((enc, val)) for ns in cache._cache.values()
            for enc, val, _ in ns.values()]


def _text() -> str:  # an input no other test used, so no entry exists for it yet
    return f"the quick brown fox {uuid.uuid4().hex}"


async def test_a_second_thread_hits_the_entry_of_the_first(temporal_client: Any,
                                                           task_queue: str) -> None:
    cache, name, text = InMemoryCache(), f"cache-{uuid.uuid4().hex[:8]}", _text()
    gc = GraphClient(temporal_client, task_queue=task_queue)
    remote = gc.graph(name)
    async with create_worker(temporal_client, {name: _graph(name)}, task_queue=task_queue,
                             cache=cache):
        assert (await remote.ainvoke({"text": text}, _thread()))["words"] == 5
        second = _thread()
        chunks = [c async for c in remote.astream({"text": text}, second,
                                                   stream_mode="updates")]
        assert chunks == [{"count_words": {"words": 5}, "__metadata__": {"cached": True}}]
        assert (await remote.aget_state(second)).values["words"] == 5
        assert RUNS.count(text) == 1  # the node ran for the first thread only
        await remote.ainvoke({"text": text + " jumps"}, _thread())  # another input
        assert RUNS.count(text + " jumps") == 1
    # The entries are typed JSON in the worker's cache; history holds neither them nor
    # the cache.
    entries = _entries(cache)
    assert len(entries) == 2 and all(set(e) == {"graphrun_json"} for e in entries)
    history = await gc.client.get_workflow_handle(
        gc.workflow_id(second["configurable"]["thread_id"])).fetch_history()
    assert "InMemoryCache" not in str(history) and "graphrun_json" not in str(history)


async def test_ttl_and_clear_cache(temporal_client: Any, task_queue: str) -> None:
    cache, name, text = InMemoryCache(), f"ttl-{uuid.uuid4().hex[:8]}", _text()
    graph = _graph(name, CachePolicy(ttl=1), cache)  # the compiled cache serves
    remote = GraphClient(temporal_client, task_queue=task_queue).graph(name)
    async with create_worker(temporal_client, {name: graph}, task_queue=task_queue):
        await remote.ainvoke({"text": text}, _thread())
        await remote.ainvoke({"text": text}, _thread())
        assert RUNS.count(text) == 1
        await asyncio.sleep(1.1)  # the entry expired
        await remote.ainvoke({"text": text}, _thread())
        assert RUNS.count(text) == 2
        graph.clear_cache()  # the same cache object the worker uses
        await remote.ainvoke({"text": text}, _thread())
        assert RUNS.count(text) == 3


async def test_the_workers_cache_stands_over_the_compiled_one(
        temporal_client: Any, task_queue: str) -> None:
    compiled, given = InMemoryCache(), InMemoryCache()
    name, text = f"override-{uuid.uuid4().hex[:8]}", _text()
    async with create_worker(temporal_client, {name: _graph(name, cache=compiled)},
                             task_queue=task_queue, cache=given):
        await GraphClient(temporal_client, task_queue=task_queue).graph(name).ainvoke(
            {"text": text}, _thread())
    assert given._cache and not compiled._cache


async def test_questions_are_asked_in_every_thread(temporal_client: Any,
                                                   task_queue: str) -> None:
    name, text = f"ask-{uuid.uuid4().hex[:8]}", _text()
    graph = (StateGraph(State)
             .add_node("count_words", count_words, cache_policy=CachePolicy())
             .add_node("ask", ask, cache_policy=CachePolicy())
             .add_edge(START, "count_words").add_edge("count_words", "ask")
             .compile(name=name))
    remote = GraphClient(temporal_client, task_queue=task_queue).graph(name)
    async with create_worker(temporal_client, {name: graph}, task_queue=task_queue,
                             cache=InMemoryCache()):
        first, second = _thread(), _thread()
        for thread in (first, second):  # an interrupt is never cached
            out = await remote.ainvoke({"text": text}, thread)
            assert out["__interrupt__"][0].value == "ok with 5 words?"
        assert RUNS.count("ask") == 2 and RUNS.count(text) == 1
        assert (await remote.ainvoke(Command(resume="yes"), first))["answer"] == "yes"


@task(cache_policy=CachePolicy())
def shout(word: str) -> str:
    RUNS.append(f"shout:{word}")
    return word.upper()


TASK_CACHE = InMemoryCache()


@entrypoint(name="cache-entrypoint", cache=TASK_CACHE)
def shout_all(words: list[str]) -> list[str]:
    return [shout(w).result() for w in words]


async def test_task_calls_hit_across_threads(temporal_client: Any, task_queue: str) -> None:
    word = uuid.uuid4().hex[:6]
    remote = GraphClient(temporal_client, task_queue=task_queue).graph("cache-entrypoint")
    async with create_worker(temporal_client, {"cache-entrypoint": shout_all},
                             task_queue=task_queue):
        assert await remote.ainvoke([word, word], _thread()) == [word.upper()] * 2
        assert RUNS.count(f"shout:{word}") == 1  # the second call hit the first's entry
        assert {"graphrun_json": [["__return__", word.upper()]]} in _entries(TASK_CACHE)
        chunks = [c async for c in remote.astream([word], _thread(), stream_mode="updates")]
        assert {"shout": word.upper(), "__metadata__": {"cached": True}} in chunks
        assert RUNS.count(f"shout:{word}") == 1
        shout.clear_cache(TASK_CACHE)
        await remote.ainvoke([word], _thread())
        assert RUNS.count(f"shout:{word}") == 2
