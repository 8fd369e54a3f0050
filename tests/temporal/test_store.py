"""LangGraph's long-term memory store on Temporal: it lives in the worker.

`create_worker(..., store=...)` gives node and task activities the store (as `store`,
`runtime.store` and `get_store()`); without one, a graph's `compile(store=...)` is used.
Memories outlive a thread: two threads of one user see each other's. Nothing about
the store travels through workflow history.
"""

from __future__ import annotations

import uuid
from typing import Any, TypedDict

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from graphrun import START, Runtime, StateGraph, get_store
from graphrun.client import GraphClient
from graphrun.func import entrypoint, task
from graphrun.worker import create_worker

pytestmark = pytest.mark.temporal


class State(TypedDict, total=False):
    user: str
    fact: str
    known: list[str]


def remember(state: State, store: BaseStore, runtime: Runtime) -> dict:
    assert runtime.store is store
    store.put(("memories", state["user"]), uuid.uuid4().hex, {"fact": state["fact"]})
    return {}


def recall(state: State) -> dict:  # get_store(): the same store, asked for by no parameter
    items = get_store().search(("memories", state["user"]))
    return {"known": sorted(i.value["fact"] for i in items)}


def _graph(name: str, store: Any = None) -> Any:
    return (StateGraph(State).add_node("remember", remember).add_node("recall", recall)
            .add_edge(START, "remember").add_edge("remember", "recall")
            .compile(name=name, store=store))


def _thread() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"store-{uuid.uuid4().hex}"}}


async def test_two_threads_share_the_workers_store(temporal_client: Any, task_queue: str
                                                    ) -> None:
    store, name = InMemoryStore(), f"memory-{uuid.uuid4().hex[:8]}"
    gc = GraphClient(temporal_client, task_queue=task_queue)
    remote = gc.graph(name)
    async with create_worker(temporal_client, {name: _graph(name)}, task_queue=task_queue,
                             store=store):
        first, second = _thread(), _thread()
        out = await remote.ainvoke({"user": "ann", "fact": "likes tea"}, first)
        assert out["known"] == ["likes tea"]
        out = await remote.ainvoke({"user": "ann", "fact": "plays chess"}, second)
        assert out["known"] == ["likes tea", "plays chess"]  # the first thread's memory
        out = await remote.ainvoke({"user": "bob", "fact": "hates rain"}, first)
        assert out["known"] == ["hates rain"]  # another user's namespace
    assert len(store.search(("memories", "ann"))) == 2  # the worker's store: this one
    # The store is the worker's: history holds the state, never the store or a reference.
    history = await gc.client.get_workflow_handle(
        gc.workflow_id(second["configurable"]["thread_id"])).fetch_history()
    assert "InMemoryStore" not in str(history)


async def test_a_compiled_store_serves_when_the_worker_has_none(
        temporal_client: Any, task_queue: str) -> None:
    store, name = InMemoryStore(), f"compiled-{uuid.uuid4().hex[:8]}"
    with pytest.warns(UserWarning, match="in-memory store"):  # one per worker process
        worker = create_worker(temporal_client, {name: _graph(name, store)},
                               task_queue=task_queue)
    async with worker:
        out = await GraphClient(temporal_client, task_queue=task_queue).graph(name).ainvoke(
            {"user": "ann", "fact": "likes tea"}, _thread())
    assert out["known"] == ["likes tea"]
    assert len(store.search(("memories", "ann"))) == 1


async def test_the_workers_store_stands_over_the_compiled_one(
        temporal_client: Any, task_queue: str) -> None:
    compiled_store, worker_store = InMemoryStore(), InMemoryStore()
    name = f"override-{uuid.uuid4().hex[:8]}"
    async with create_worker(temporal_client, {name: _graph(name, compiled_store)},
                             task_queue=task_queue, store=worker_store):
        await GraphClient(temporal_client, task_queue=task_queue).graph(name).ainvoke(
            {"user": "ann", "fact": "likes tea"}, _thread())
    assert len(worker_store.search(("memories", "ann"))) == 1
    assert compiled_store.search(("memories", "ann")) == []


@task
def save(user: str, fact: str) -> int:  # get_store() in a task, its own activity
    get_store().put(("memories", user), fact, {"fact": fact})
    return len(get_store().search(("memories", user)))


@task
def count(user: str, store: BaseStore) -> int:  # a task asking for `store` by name
    return len(store.search(("memories", user)))


@entrypoint(name="store-entrypoint")
def note(inputs: dict, store: BaseStore) -> dict:
    saved = save(inputs["user"], inputs["fact"]).result()
    assert get_store() is store
    return {"saved": saved, "counted": count(inputs["user"]).result()}


async def test_get_store_in_an_entrypoint_and_its_tasks(temporal_client: Any,
                                                        task_queue: str) -> None:
    store = InMemoryStore()
    async with create_worker(temporal_client, {"store-entrypoint": note},
                             task_queue=task_queue, store=store):
        remote = GraphClient(temporal_client, task_queue=task_queue).graph("store-entrypoint")
        assert await remote.ainvoke({"user": "ann", "fact": "a"}, _thread()) == {
            "saved": 1, "counted": 1}
        assert await remote.ainvoke({"user": "ann", "fact": "b"}, _thread()) == {
            "saved": 2, "counted": 2}
    assert {i.key for i in store.search(("memories", "ann"))} == {"a", "b"}


def _routed_graph(name: str, routed: list[Any]) -> Any:
    def by_store(state: State, store: BaseStore) -> str:
        routed.append(store)
        return "__end__"

    def by_runtime(state: State, runtime: Runtime) -> str:
        routed.append(runtime.store)
        return "__end__"

    return (StateGraph(State).add_node("note", lambda s: {}).add_edge(START, "note")
            .add_conditional_edges("note", by_store).add_conditional_edges("note", by_runtime)
            .compile(name=name))


async def test_update_state_routes_with_the_workers_store(temporal_client: Any,
                                                          task_queue: str) -> None:
    # update_state's routing functions run in the route_update activity: they get the
    # worker's store as the nodes do.
    store, name, routed = InMemoryStore(), f"routed-{uuid.uuid4().hex[:8]}", []
    remote = GraphClient(temporal_client, task_queue=task_queue).graph(name)
    async with create_worker(temporal_client, {name: _routed_graph(name, routed)},
                             task_queue=task_queue, store=store):
        config = _thread()
        await remote.ainvoke({"user": "ann"}, config)
        assert routed == [store, store]
        routed.clear()
        await remote.aupdate_state(config, {"fact": "likes tea"}, as_node="note")
        assert routed == [store, store]
