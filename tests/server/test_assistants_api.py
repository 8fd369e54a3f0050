"""User assistants through LangGraph's SDK: each is a workflow on Temporal, its versions
kept there; defaults per graph still listed."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import ConflictError, NotFoundError, UnprocessableEntityError

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
NAMESPACE_GRAPH = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")


async def eventually(read: Callable[[], Awaitable[Any]], ok: Callable[[Any], bool],
                     seconds: float = 10) -> Any:
    """`read()` once it satisfies `ok`: searches go through Temporal's visibility, which
    follows a change within moments."""
    for _ in range(int(seconds / 0.1)):
        value = await read()
        if ok(value):
            return value
        await asyncio.sleep(0.1)
    raise AssertionError(f"never satisfied; last: {value!r}")


def ids(found: list[dict[str, Any]]) -> list[str]:
    return [a["assistant_id"] for a in found]


async def test_lifecycle_create_patch_versions_latest_delete(api_url: str) -> None:
    client = get_client(url=api_url)
    before = await client.assistants.count(graph_id="agent")
    a = await client.assistants.create(
        "agent", config={"configurable": {"tone": "dry"}}, context={"user": "ana"},
        metadata={"team": "ops", "tier": 1}, name="Ops agent", description="pays invoices")
    aid = a["assistant_id"]
    assert uuid.UUID(aid) and a["version"] == 1 and a["graph_id"] == "agent"
    assert (a["config"], a["context"], a["metadata"]) == (
        {"configurable": {"tone": "dry"}}, {"user": "ana"}, {"team": "ops", "tier": 1})
    assert (a["name"], a["description"]) == ("Ops agent", "pays invoices")
    assert await client.assistants.get(aid) == a

    b = await client.assistants.update(aid, config={"configurable": {"tone": "warm"}},
                                       metadata={"tier": 2}, name="Ops agent 2")
    assert b["version"] == 2 and b["name"] == "Ops agent 2"
    assert b["metadata"] == {"team": "ops", "tier": 2}  # merged, as LangGraph's server
    assert b["context"] == {"user": "ana"} and b["description"] == "pays invoices"  # kept
    assert b["created_at"] == a["created_at"] and b["updated_at"] > a["updated_at"]
    assert (await client.assistants.get(aid))["version"] == 2

    versions = await client.assistants.get_versions(aid)
    assert [v["version"] for v in versions] == [2, 1]
    assert versions[1]["config"] == {"configurable": {"tone": "dry"}}
    assert [v["version"] for v in await client.assistants.get_versions(
        aid, metadata={"tier": 1})] == [1]

    back = await client.assistants.set_latest(aid, 1)
    assert (back["version"], back["name"], back["metadata"]["tier"]) == (1, "Ops agent", 1)
    assert (await client.assistants.get(aid))["config"] == {"configurable": {"tone": "dry"}}
    with pytest.raises(NotFoundError):
        await client.assistants.set_latest(aid, 7)

    found = await eventually(lambda: client.assistants.search(
        graph_id="agent", metadata={"team": "ops"}), lambda f: aid in ids(f))
    assert found[0]["version"] in (1, 2)
    assert aid in ids(await client.assistants.search(name="ops AGENT"))  # substring, any case
    assert await client.assistants.count(graph_id="agent") == before + 1
    assert await client.assistants.count(graph_id="agent", metadata={"team": "nobody"}) == 0

    await client.assistants.delete(aid)
    with pytest.raises(NotFoundError):
        await client.assistants.get(aid)
    with pytest.raises(NotFoundError):
        await client.assistants.update(aid, name="again")
    await eventually(lambda: client.assistants.search(graph_id="agent"),
                     lambda f: aid not in ids(f))
    again = await client.assistants.create("agent", assistant_id=aid, name="Reborn")
    assert again["version"] == 1 and again["name"] == "Reborn"  # a deleted id may return
    await client.assistants.delete(aid)


async def test_if_exists(api_url: str) -> None:
    client = get_client(url=api_url)
    aid = str(uuid.uuid4())
    first = await client.assistants.create("broken", assistant_id=aid, name="First")
    try:
        with pytest.raises(ConflictError):
            await client.assistants.create("broken", assistant_id=aid, name="Second")
        same = await client.assistants.create("broken", assistant_id=aid, name="Second",
                                              if_exists="do_nothing")
        assert same == first
    finally:
        await client.assistants.delete(aid)


async def test_search_sorts_selects_and_pages(api_url: str) -> None:
    client = get_client(url=api_url)
    tag = {"suite": str(uuid.uuid4())}
    made = [await client.assistants.create("broken", name=n, metadata=tag)
            for n in ("b-second", "a-first", "c-third")]
    try:
        found = await eventually(lambda: client.assistants.search(
            metadata=tag, sort_by="name", sort_order="asc"), lambda f: len(f) == 3)
        assert [a["name"] for a in found] == ["a-first", "b-second", "c-third"]
        page = await client.assistants.search(metadata=tag, sort_by="name", limit=2,
                                              select=["assistant_id", "name"],
                                              response_format="object")
        assert [set(a) for a in page["assistants"]] == [{"assistant_id", "name"}] * 2
        assert [a["name"] for a in page["assistants"]] == ["c-third", "b-second"]  # desc
        assert page["next"] == "2"
        last = await client.assistants.search(metadata=tag, sort_by="name", offset=2)
        assert [a["name"] for a in last] == ["a-first"]
    finally:
        for a in made:
            await client.assistants.delete(a["assistant_id"])


async def test_defaults_and_graph_routes(api_url: str) -> None:
    client = get_client(url=api_url)
    default_id = str(uuid.uuid5(NAMESPACE_GRAPH, "purchase"))
    defaults = await client.assistants.search(graph_id="purchase",
                                              metadata={"created_by": "system"})
    assert ids(defaults) == [default_id]
    assert [v["version"] for v in await client.assistants.get_versions(default_id)] == [1]
    mine = await client.assistants.create("purchase", name="Buyer")
    try:
        for aid in (default_id, mine["assistant_id"]):
            drawn = await client.assistants.get_graph(aid)
            assert {n["id"] for n in drawn["nodes"]} == {"__start__", "request_approval",
                                                         "charge_card", "__end__"}
            assert {"source": "request_approval", "target": "charge_card"} in drawn["edges"]
            schemas = await client.assistants.get_schemas(aid)
            assert schemas["graph_id"] == "purchase"
            assert "amount" in schemas["input_schema"]["properties"]
            assert await client.assistants.get_subgraphs(aid) == {}
    finally:
        await client.assistants.delete(mine["assistant_id"])


async def test_refusals(api_url: str) -> None:
    client = get_client(url=api_url)
    default_id = str(uuid.uuid5(NAMESPACE_GRAPH, "purchase"))
    with pytest.raises(UnprocessableEntityError):
        await client.assistants.create("no-such-graph")
    with pytest.raises(UnprocessableEntityError):
        await client.assistants.create("purchase", assistant_id="not-a-uuid")
    with pytest.raises(NotFoundError):
        await client.assistants.get(str(uuid.uuid4()))
    with pytest.raises(UnprocessableEntityError):  # neither an assistant UUID nor a graph
        await client.assistants.get("nope")
    with pytest.raises(NotFoundError):
        await client.assistants.update(str(uuid.uuid4()), name="x")
    with pytest.raises(NotFoundError):
        await client.assistants.delete(str(uuid.uuid4()))
    with pytest.raises(ConflictError):  # a default assistant is not stored: it cannot change
        await client.assistants.update(default_id, name="x")
    with pytest.raises(ConflictError):
        await client.assistants.delete("purchase")
    with pytest.raises(ConflictError):  # the default's id is taken
        await client.assistants.create("purchase", assistant_id=default_id)
    mine = await client.assistants.create("purchase")
    try:
        with pytest.raises(UnprocessableEntityError):
            await client.assistants.update(mine["assistant_id"], graph_id="no-such-graph")
    finally:
        await client.assistants.delete(mine["assistant_id"])
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post("/assistants/search", json={"select": ["password"]})
        assert r.status_code == 422


async def test_a_run_gets_its_assistants_config(api_url: str) -> None:
    """An assistant's config applies to its runs: a recursion limit of 1 stops the
    purchase graph, which with the default assistant pauses for approval."""
    client = get_client(url=api_url)
    strict = await client.assistants.create("purchase", config={"recursion_limit": 1})
    try:
        tid = (await client.threads.create())["thread_id"]
        with contextlib.suppress(Exception):  # how the failed run is answered is runs' own
            await client.runs.wait(tid, strict["assistant_id"], input=PURCHASE,
                                   raise_error=False)
        assert (await client.threads.get(tid))["status"] == "error"
    finally:
        await client.assistants.delete(strict["assistant_id"])
