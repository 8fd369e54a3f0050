"""Threads as LangGraph's server has them, kept by Temporal alone: created with their
metadata, patched, searched, counted, copied and deleted through LangGraph's SDK."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import ConflictError, NotFoundError

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}

T = TypeVar("T")


async def eventually(read: Callable[[], Awaitable[T]], ok: Callable[[T], bool],
                     seconds: float = 5.0) -> T:
    """`read()` once `ok` holds of it: visibility (search, count) lags a little."""
    for _ in range(int(seconds / 0.1)):
        value = await read()
        if ok(value):
            return value
        await asyncio.sleep(0.1)
    return await read()


async def gone(get: Callable[[], Awaitable[Any]], seconds: float = 2.0) -> bool:
    """Whether `get()` turns 404 (Temporal deletes in the background)."""
    for _ in range(int(seconds / 0.1)):
        try:
            await get()
        except NotFoundError:
            return True
        await asyncio.sleep(0.1)
    return False


def ids(threads: list[dict[str, Any]]) -> list[str]:
    return [t["thread_id"] for t in threads]


async def test_a_created_thread_exists_with_its_metadata(api_url: str) -> None:
    client = get_client(url=api_url)
    metadata = {"owner": f"u-{uuid.uuid4()}", "graph_id": "purchase", "tags": ["a", "b"]}
    thread = await client.threads.create(metadata=metadata)
    assert thread["metadata"] == metadata
    assert thread["status"] == "idle"
    got = await client.threads.get(thread["thread_id"])
    assert got["metadata"] == metadata
    assert got["status"] == "idle"
    assert got["values"] is None and got["interrupts"] == {}
    assert got["created_at"] == thread["created_at"]
    assert got == thread  # the create's answer, built from what it wrote, is what a read shows
    state = await client.threads.get_state(thread["thread_id"])
    assert state["values"] == {} and state["next"] == []
    assert await client.threads.get_history(thread["thread_id"]) == []


async def test_if_exists(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = str(uuid.uuid4())
    await client.threads.create(thread_id=tid, metadata={"first": True})
    with pytest.raises(ConflictError):
        await client.threads.create(thread_id=tid, metadata={"second": True})
    same = await client.threads.create(thread_id=tid, metadata={"second": True},
                                       if_exists="do_nothing")
    assert same["thread_id"] == tid and same["metadata"] == {"first": True}


async def test_unknown_threads_are_404(api_url: str) -> None:
    client = get_client(url=api_url)
    missing = f"missing-{uuid.uuid4()}"
    for call in (client.threads.get(missing), client.threads.delete(missing),
                 client.threads.update(missing, metadata={"a": 1}),
                 client.threads.copy(missing), client.threads.get_state(missing)):
        with pytest.raises(NotFoundError):
            await call


async def test_patch_merges_metadata(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = (await client.threads.create(metadata={"a": 1, "b": 1}))["thread_id"]
    patched = await client.threads.update(tid, metadata={"b": 2, "c": 3})
    assert patched["metadata"] == {"a": 1, "b": 2, "c": 3}
    assert (await client.threads.get(tid))["metadata"] == {"a": 1, "b": 2, "c": 3}
    await client.threads.update(tid, metadata={"a": None})
    assert (await client.threads.get(tid))["metadata"] == {"a": None, "b": 2, "c": 3}


async def test_search_and_count_by_metadata_status_and_order(api_url: str) -> None:
    client = get_client(url=api_url)
    suite = f"s-{uuid.uuid4()}"
    made = [(await client.threads.create(
        metadata={"suite": suite, "n": n, "labels": {"team": "x", "n": n}}))["thread_id"]
        for n in range(3)]
    found = await eventually(lambda: client.threads.search(metadata={"suite": suite}),
                             lambda r: len(r) == 3)
    assert ids(found) == made[::-1]  # LangGraph's default: the newest first
    one = await client.threads.search(metadata={"suite": suite, "labels": {"n": 1}})
    assert ids(one) == [made[1]]  # containment, nested
    assert await client.threads.search(metadata={"suite": suite, "n": 9}) == []
    assert await client.threads.count(metadata={"suite": suite}) == 3
    assert await client.threads.count(metadata={"suite": suite}, status="idle") == 3
    assert await client.threads.count(metadata={"suite": suite}, status="busy") == 0
    asc = await client.threads.search(metadata={"suite": suite}, sort_by="thread_id",
                                      sort_order="asc")
    assert ids(asc) == sorted(made)
    page = await client.threads.search(metadata={"suite": suite}, limit=1, offset=1,
                                       sort_by="created_at", sort_order="asc")
    assert ids(page) == [made[1]]
    picked = await client.threads.search(ids=[made[0], made[2], "nope"], status="idle")
    assert sorted(ids(picked)) == sorted([made[0], made[2]])


async def test_copy_of_a_created_thread(api_url: str) -> None:
    client = get_client(url=api_url)
    source = await client.threads.create(metadata={"graph_id": "purchase", "k": "v"})
    copied = await client.threads.copy(source["thread_id"])
    assert copied["thread_id"] != source["thread_id"]
    assert copied["metadata"] == {"graph_id": "purchase", "k": "v"}
    assert (await client.threads.get(copied["thread_id"]))["status"] == "idle"


async def test_copy_keeps_state_history_and_metadata(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = (await client.threads.create(metadata={"k": "v"}))["thread_id"]
    asked = await client.runs.wait(tid, "purchase", input=PURCHASE)
    assert "__interrupt__" in asked
    source_history = await client.threads.get_history(tid, limit=50)

    copied = await client.threads.copy(tid)
    new = copied["thread_id"]
    assert copied["metadata"] == (await client.threads.get(tid))["metadata"]
    state = await client.threads.get_state(new)
    assert state["values"] == PURCHASE and state["next"] == ["request_approval"]
    assert state["checkpoint"]["thread_id"] == new  # the copy names itself
    history = await client.threads.get_history(new, limit=50)
    assert ([h["checkpoint"]["checkpoint_id"] for h in history]
            == [h["checkpoint"]["checkpoint_id"] for h in source_history])
    # The copy goes on by itself; the source still waits.
    done = await client.runs.wait(new, "purchase", command={"resume": True})
    assert done == {**PURCHASE, "status": "charged"}
    assert (await client.threads.get_state(tid))["next"] == ["request_approval"]


async def test_delete_a_created_thread_and_a_run_one(api_url: str) -> None:
    """The dev server deletes a closed run at once (devserver.DYNAMIC_CONFIG)."""
    client = get_client(url=api_url)
    suite = f"d-{uuid.uuid4()}"
    created = (await client.threads.create(metadata={"suite": suite}))["thread_id"]
    ran = (await client.threads.create(metadata={"suite": suite}))["thread_id"]
    await client.runs.wait(ran, "purchase", input=PURCHASE)
    await client.runs.wait(ran, "purchase", command={"resume": True})  # done: closed
    await eventually(lambda: client.threads.search(metadata={"suite": suite}),
                     lambda r: len(r) == 2)
    for tid in (created, ran):
        await client.threads.delete(tid)
        assert await gone(lambda t=tid: client.threads.get(t))
    # Neither the record nor an earlier run of a thread brings it back.
    left = await eventually(lambda: client.threads.search(metadata={"suite": suite}),
                            lambda r: r == [])
    assert left == []


# -- with RemoteGraph's memo and GraphWorkflow's set_metadata --------------------------
async def test_a_run_keeps_the_metadata_and_stamps_its_graph(api_url: str) -> None:
    client = get_client(url=api_url)
    owner = f"o-{uuid.uuid4()}"
    tid = (await client.threads.create(metadata={"owner": owner}))["thread_id"]
    await client.runs.wait(tid, "purchase", input=PURCHASE)
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    assert thread["metadata"]["owner"] == owner
    assert thread["metadata"]["graph_id"] == "purchase"
    waiting = await eventually(
        lambda: client.threads.search(status="interrupted", metadata={"owner": owner}),
        lambda r: len(r) == 1)
    assert ids(waiting) == [tid]


async def test_patch_a_running_then_a_finished_thread(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = (await client.threads.create(metadata={"a": 1}))["thread_id"]
    await client.runs.wait(tid, "purchase", input=PURCHASE)  # paused: its workflow runs
    patched = await client.threads.update(tid, metadata={"b": 2})
    assert patched["metadata"]["b"] == 2 and patched["status"] == "interrupted"
    got = await eventually(lambda: client.threads.get(tid),
                           lambda t: t["metadata"].get("b") == 2)
    assert {"a": 1, "b": 2}.items() <= got["metadata"].items()

    await client.runs.wait(tid, "purchase", command={"resume": True})  # done: closed
    history = await client.threads.get_history(tid, limit=50)
    await client.threads.update(tid, metadata={"c": 3})
    got = await client.threads.get(tid)
    assert {"a": 1, "b": 2, "c": 3}.items() <= got["metadata"].items()
    assert got["status"] == "idle" and got["values"]["status"] == "charged"
    assert len(await client.threads.get_history(tid, limit=50)) == len(history)


async def test_a_sealed_thread_whose_memo_this_api_cannot_decode_is_listed(
        api_url: str, dev_server: Any) -> None:
    """A thread written with encryption keys the API lacks: a search still answers."""
    import os

    from temporalio.client import Client

    from graphrun.client import data_converter

    keyed = await Client.connect(dev_server.address,
                                 data_converter=data_converter(encryption={"k1": os.urandom(32)}))
    tid = f"sealed-{uuid.uuid4()}"
    await keyed.start_workflow("ThreadRecord", id=tid, task_queue=f"none-{tid}",
                               memo={"metadata": {"secret": "x"}})
    client = get_client(url=api_url)
    # (started raw, on a queue no worker serves: it has no GraphCreatedAt, so it sorts
    # after every thread that has one; found by id)
    found = await eventually(lambda: client.threads.search(ids=[tid], limit=1000),
                             lambda rows: tid in [t["thread_id"] for t in rows])
    sealed = next(t for t in found if t["thread_id"] == tid)
    assert sealed["metadata"] == {}
