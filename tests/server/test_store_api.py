"""The store API (`client.store`): items put, read, searched, listed and deleted through
LangGraph's SDK, the same memories a node sees when the workers share the store, clear
errors without a store or with a bad namespace. And what a node of an API run knows of
it (`Runtime.server_info`, the configurable keys LangGraph's server sets)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain_core.runnables import RunnableConfig
from langgraph_sdk import get_client
from typing_extensions import TypedDict

from graphrun import START, StateGraph, get_store
from graphrun.runtime import Runtime
from tests.server.conftest import _ApiHost

InMemoryStore = pytest.importorskip("langgraph.store.memory").InMemoryStore


class _Ask(TypedDict, total=False):
    user: str
    remembered: str


def _recall(state: _Ask) -> dict[str, Any]:
    item = get_store().get(("users", state["user"]), "favourite")
    return {"remembered": item.value["colour"] if item else "nothing"}


recall = StateGraph(_Ask).add_node("recall", _recall).add_edge(START, "recall").compile(
    name="recall")


class _Who(TypedDict, total=False):
    seen: dict[str, Any]


def _who(state: _Who, runtime: Runtime, config: RunnableConfig) -> dict[str, Any]:
    info = runtime.server_info
    return {"seen": {"assistant_id": info.assistant_id, "graph_id": info.graph_id,
                     "run_id": config["configurable"]["run_id"]}}


who = StateGraph(_Who).add_node("who", _who).add_edge(START, "who").compile(name="who")


@pytest.fixture(scope="module")
def store_url(dev_server: Any) -> Iterator[str]:
    host = _ApiHost(dev_server.address, {"recall": recall, "who": who}, store=InMemoryStore())
    yield host.url
    host.close()


async def test_items_round_trip_and_reach_the_nodes(store_url: str) -> None:
    client = get_client(url=store_url)
    user = uuid.uuid4().hex[:8]
    ns = ["users", user]
    await client.store.put_item(ns, key="favourite", value={"colour": "teal"})
    await client.store.put_item(ns, key="other", value={"colour": "red"})
    got = await client.store.get_item(ns, key="favourite")
    assert got["value"] == {"colour": "teal"} and got["namespace"] == ns
    assert got["created_at"] and got["updated_at"]
    found = await client.store.search_items(ns, filter={"colour": "red"})
    assert [i["key"] for i in found["items"]] == ["other"]
    listed = await client.store.list_namespaces(prefix=["users"])
    assert ns in listed["namespaces"]
    # A node reads what the API wrote: the worker was given the same store.
    out = await client.runs.wait(None, "recall", input={"user": user})
    assert out["remembered"] == "teal"
    await client.store.delete_item(ns, key="favourite")
    assert await client.store.get_item(ns, key="favourite") is None
    out = await client.runs.wait(None, "recall", input={"user": user})
    assert out["remembered"] == "nothing"


async def test_bad_namespace_and_no_store(store_url: str, api_url: str) -> None:
    async with httpx.AsyncClient(base_url=store_url) as http:
        bad = await http.put("/store/items", json={"namespace": ["a", ""], "key": "k",
                                                   "value": {}})
        assert bad.status_code == 422
        not_object = await http.put("/store/items", json={"namespace": ["a"], "key": "k",
                                                          "value": [1, 2]})
        assert not_object.status_code == 422
    async with httpx.AsyncClient(base_url=api_url) as http:  # served without a store
        missing = await http.get("/store/items", params={"namespace": "a", "key": "k"})
        assert missing.status_code == 404
        assert "graphrun serve --store" in missing.text


async def test_a_node_knows_the_api_run(store_url: str) -> None:
    client = get_client(url=store_url)
    tid = (await client.threads.create())["thread_id"]
    run = await client.runs.create(tid, "who", input={})
    out = await client.runs.join(tid, run["run_id"])
    assert out["seen"]["graph_id"] == "who" and out["seen"]["run_id"] == run["run_id"]
    assert out["seen"]["assistant_id"] == run["assistant_id"]
