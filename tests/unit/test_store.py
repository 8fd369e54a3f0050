"""LangGraph's long-term memory store in-process: `compile(store=...)`,
`entrypoint(store=...)`, given as `store`, `runtime.store` and `get_store()`."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from graphrun import START, Runtime, StateGraph, get_runtime, get_store
from graphrun.config import get_store as config_get_store
from graphrun.func import entrypoint, task


class State(TypedDict, total=False):
    seen: list[str]


def _probe(label: str) -> Any:
    def node(state: State, store: Any, runtime: Runtime) -> dict:
        assert store is runtime.store is get_store() is get_runtime().store
        return {"seen": [*state.get("seen", []), f"{label}:{id(store)}"]}
    return node


def test_nodes_and_routing_get_the_compiled_store() -> None:
    store = InMemoryStore()
    routed: list[Any] = []

    def route(state: State, store: Any) -> str:
        routed.append(store)
        return "b"

    g = (StateGraph(State).add_node("a", _probe("a")).add_node("b", _probe("b"))
         .add_edge(START, "a").add_conditional_edges("a", route, ["b"]).compile(store=store))
    assert g.invoke({})["seen"] == [f"a:{id(store)}", f"b:{id(store)}"]
    assert routed == [store]
    assert g.store is store


def test_update_state_routes_with_the_store() -> None:
    # update_state runs the node's routing functions outside any task: they get the
    # graph's store all the same (`store` or `runtime.store`), sync or async.
    from graphrun import END, InMemorySaver, StateUpdate

    store, routed = InMemoryStore(), []

    def by_store(state: State, store: Any) -> str:
        routed.append(store)
        return END

    def by_runtime(state: State, runtime: Runtime) -> str:
        routed.append(runtime.store)
        return END

    g = (StateGraph(State).add_node("a", lambda s: {}).add_edge(START, "a")
         .add_conditional_edges("a", by_store).add_conditional_edges("a", by_runtime)
         .compile(checkpointer=InMemorySaver(), store=store))
    config = {"configurable": {"thread_id": "1"}}
    g.invoke({}, config)
    routed.clear()
    g.update_state(config, {"seen": ["x"]}, as_node="a")
    asyncio.run(g.aupdate_state(config, {"seen": ["y"]}, as_node="a"))
    g.bulk_update_state(config, [[StateUpdate({"seen": ["z"]}, "a")]])
    assert routed == [store] * 6


def test_no_store_gives_none() -> None:
    def node(state: State, store: Any, runtime: Runtime) -> dict:
        assert store is None and runtime.store is None and config_get_store() is None
        return {"seen": ["ok"]}

    g = StateGraph(State).add_node("n", node).add_edge(START, "n").compile()
    assert g.invoke({}) == {"seen": ["ok"]}


def test_get_store_outside_a_node_raises() -> None:
    with pytest.raises(RuntimeError, match="outside a graph node"):
        get_store()


def test_a_subgraph_gets_its_parents_store() -> None:
    parent_store, own_store = InMemoryStore(), InMemoryStore()
    sub = StateGraph(State).add_node("s", _probe("s")).add_edge(START, "s")
    plain = sub.compile()
    with_own = sub.compile(store=own_store)
    for child in (plain, with_own):  # as in LangGraph, the parent's store stands
        g = (StateGraph(State).add_node("child", child).add_edge(START, "child")
             .compile(store=parent_store))
        assert g.invoke({})["seen"] == [f"s:{id(parent_store)}"]
    # Run by itself, a subgraph compiled with a store uses its own.
    assert with_own.invoke({})["seen"] == [f"s:{id(own_store)}"]
    # Called inside a parent without a store, it keeps its own.
    g = StateGraph(State).add_node("child", with_own).add_edge(START, "child").compile()
    assert g.invoke({})["seen"] == [f"s:{id(own_store)}"]


def test_an_error_handler_gets_the_store() -> None:
    store = InMemoryStore()

    def fails(state: State) -> dict:
        raise ValueError("no")

    def handler(state: State, error: Any, store: Any) -> dict:
        return {"seen": [f"handled:{store is get_store() is not None}"]}

    g = (StateGraph(State).add_node("n", fails, error_handler=handler)
         .add_edge(START, "n").compile(store=store))
    assert g.invoke({}) == {"seen": ["handled:True"]}


def test_tasks_get_the_entrypoints_store_by_name_unless_given() -> None:
    store = InMemoryStore()

    @task
    def keep(key: str, store: Any = None, config: Any = None) -> bool:
        store.put(("ns",), key, {"v": key})
        return store is get_store() and config is not None

    @task
    def given(store: Any) -> Any:
        return store

    @entrypoint(store=store)
    def main(inputs: list[str]) -> list[Any]:
        return [*(keep(k).result() for k in inputs), given("explicit").result(),
                given(store="kw").result()]

    assert main.invoke(["a", "b"]) == [True, True, "explicit", "kw"]
    assert {i.key for i in store.search(("ns",))} == {"a", "b"}


def test_async_nodes_and_tasks_get_the_store() -> None:
    store = InMemoryStore()

    @task
    async def keep(key: str, store: Any) -> int:
        await store.aput(("ns",), key, {"v": key})
        return len(await get_store().asearch(("ns",)))

    @entrypoint(store=store)
    async def main(keys: list[str], store: Any) -> list[int]:
        assert store is get_store()
        return [await keep(k) for k in keys]

    assert asyncio.run(main.ainvoke(["a", "b"])) == [1, 2]


def test_a_bridged_langgraph_graph_keeps_its_store() -> None:
    from langgraph.graph import StateGraph as LGStateGraph

    from graphrun import from_langgraph

    store = InMemoryStore()

    def node(state: State, store: BaseStore) -> dict:  # LangGraph injects by annotation
        store.put(("ns",), "k", {"v": 1})
        return {"seen": ["bridged"]}

    lg = LGStateGraph(State).add_node("n", node).add_edge(START, "n").compile(store=store)
    g = from_langgraph(lg)
    assert g.store is store
    assert g.invoke({}) == {"seen": ["bridged"]}
    assert store.get(("ns",), "k").value == {"v": 1}


STORE = InMemoryStore()  # what `graphrun worker --store tests.unit.test_store:STORE` loads


def test_the_worker_cli_loads_a_store() -> None:
    from graphrun.cli import CLIError, load_store

    assert load_store("tests.unit.test_store:STORE") is STORE
    with pytest.raises(CLIError, match="not a LangGraph store"):
        load_store("tests.unit.test_store:State")
    with pytest.raises(CLIError, match="expected MODULE:ATTR"):
        load_store("nocolon")
