"""Crons through LangGraph's SDK: each a Temporal Schedule whose firing is an ordinary
graphrun run. Tests fire a schedule at once (its trigger) instead of waiting for it."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError, UnprocessableEntityError
from temporalio.client import Client

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
DEFAULT_PURCHASE = str(uuid.uuid5(uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"),
                                  "purchase"))
DAILY = "0 9 * * *"


async def eventually(read: Callable[[], Awaitable[Any]], ok: Callable[[Any], bool],
                     seconds: float = 15) -> Any:
    for _ in range(int(seconds / 0.1)):
        try:
            value = await read()
        except NotFoundError as exc:  # not there yet (or already gone)
            value = exc
        if ok(value):
            return value
        await asyncio.sleep(0.1)
    raise AssertionError(f"never satisfied; last: {value!r}")


@pytest.fixture
async def crons(api_url: str) -> AsyncIterator[list[str]]:
    """Cron ids a test made; deleted after it, so none fires later in the session."""
    made: list[str] = []
    yield made
    client = get_client(url=api_url)
    for cron_id in made:
        with contextlib.suppress(NotFoundError):  # the test deleted it itself
            await client.crons.delete(cron_id)


async def fire(temporal: Client, cron_id: str) -> dict[str, Any]:
    """Trigger the cron's schedule now; the firing's result (its thread and outcome)."""
    handle = temporal.get_schedule_handle(f"graphrun-cron-{cron_id}")
    await handle.trigger()
    desc = await eventually(handle.describe, lambda d: bool(d.info.recent_actions))
    started = desc.info.recent_actions[-1].action
    result: dict[str, Any] = await temporal.get_workflow_handle(
        started.workflow_id, run_id=started.first_execution_run_id).result()
    return result


async def test_info_says_crons(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        assert (await http.get("/info")).json()["flags"]["crons"] is True


async def test_a_thread_cron_runs_on_its_thread(api_url: str, temporal_client: Client,
                                               crons: list[str]) -> None:
    client = get_client(url=api_url)
    tid = (await client.threads.create())["thread_id"]
    cron: Any = await client.crons.create_for_thread(
        tid, "purchase", schedule=DAILY, input=PURCHASE, metadata={"owner": "ops"})
    crons.append(cron["cron_id"])
    assert (cron["thread_id"], cron["assistant_id"]) == (tid, DEFAULT_PURCHASE)
    assert (cron["schedule"], cron["enabled"], cron["metadata"]) == (DAILY, True,
                                                                     {"owner": "ops"})
    assert cron["on_run_completed"] is None and cron["end_time"] is None
    assert cron["next_run_date"].endswith("09:00:00+00:00")
    assert cron["payload"]["input"] == PURCHASE

    result = await fire(temporal_client, cron["cron_id"])
    assert result == {"thread_id": tid, "status": "success", "interrupted": True}
    thread = await client.threads.get(tid)
    assert thread["status"] == "interrupted"
    state = await client.threads.get_state(tid)
    assert state["values"] == PURCHASE and state["next"] == ["request_approval"]


async def test_a_stateless_cron_runs_on_new_threads(api_url: str, temporal_client: Client,
                                                   crons: list[str]) -> None:
    client = get_client(url=api_url)
    kept: Any = await client.crons.create("purchase", schedule=DAILY, input=PURCHASE,
                                          on_run_completed="keep")
    dropped: Any = await client.crons.create("purchase", schedule=DAILY, input=PURCHASE)
    crons.extend([kept["cron_id"], dropped["cron_id"]])
    assert kept["thread_id"] is None and kept["on_run_completed"] == "keep"
    assert dropped["on_run_completed"] == "delete"  # LangGraph's default

    result = await fire(temporal_client, kept["cron_id"])
    assert result["status"] == "success" and result["interrupted"]
    state = await client.threads.get_state(result["thread_id"])
    assert state["values"] == PURCHASE and state["next"] == ["request_approval"]

    result = await fire(temporal_client, dropped["cron_id"])
    assert result["status"] == "success"
    with pytest.raises(NotFoundError):  # the run's thread was deleted after it
        await client.threads.get(result["thread_id"])


async def test_a_cron_runs_with_its_assistants_config(api_url: str, temporal_client: Client,
                                                     crons: list[str]) -> None:
    """A user assistant's config applies at each firing: a recursion limit of 1 stops
    the purchase graph, which otherwise pauses for approval."""
    client = get_client(url=api_url)
    strict = await client.assistants.create("purchase", config={"recursion_limit": 1})
    try:
        tid = (await client.threads.create())["thread_id"]
        cron: Any = await client.crons.create_for_thread(
            tid, strict["assistant_id"], schedule=DAILY, input=PURCHASE)
        crons.append(cron["cron_id"])
        assert cron["assistant_id"] == strict["assistant_id"]
        result = await fire(temporal_client, cron["cron_id"])
        assert result["status"] == "error" and "GraphRecursionError" in result["error"]
        assert (await client.threads.get(tid))["status"] == "error"
    finally:
        await client.assistants.delete(strict["assistant_id"])


async def test_search_count_patch_and_delete(api_url: str, crons: list[str]) -> None:
    client = get_client(url=api_url)
    tag = str(uuid.uuid4())
    tid = (await client.threads.create())["thread_id"]
    on_thread: Any = await client.crons.create_for_thread(
        tid, "purchase", schedule=DAILY, input=PURCHASE, metadata={"tag": tag})
    stateless: Any = await client.crons.create(
        "agent", schedule="*/5 * * * *", input={"messages": []}, metadata={"tag": tag},
        timezone="Europe/Paris")
    crons.extend([on_thread["cron_id"], stateless["cron_id"]])
    mine = {on_thread["cron_id"], stateless["cron_id"]}

    def cron_ids(found: list[Any]) -> set[str]:
        return {c["cron_id"] for c in found}

    found = await eventually(lambda: client.crons.search(metadata={"tag": tag}),
                             lambda f: cron_ids(f) == mine)
    assert {c["timezone"] for c in found} == {None, "Europe/Paris"}
    assert cron_ids(await client.crons.search(thread_id=tid)) == {on_thread["cron_id"]}
    assert cron_ids(await client.crons.search(assistant_id="agent", metadata={"tag": tag})
                    ) == {stateless["cron_id"]}
    assert await client.crons.count(metadata={"tag": tag}) == 2
    assert await client.crons.count(thread_id=tid) == 1
    picked = await client.crons.search(metadata={"tag": tag}, sort_by="cron_id",
                                       sort_order="asc", select=["cron_id", "enabled"])
    assert picked == [{"cron_id": c, "enabled": True} for c in sorted(mine)]

    patched = await client.crons.update(on_thread["cron_id"], schedule="30 10 * * *",
                                        enabled=False, metadata={"more": 1})
    assert (patched["schedule"], patched["enabled"]) == ("30 10 * * *", False)
    assert patched["metadata"] == {"tag": tag, "more": 1}
    assert patched["next_run_date"] is None and patched["payload"]["input"] == PURCHASE
    assert patched["created_at"] == on_thread["created_at"]
    assert cron_ids(await client.crons.search(metadata={"tag": tag}, enabled=False)
                    ) == {on_thread["cron_id"]}
    enabled = await client.crons.update(on_thread["cron_id"], enabled=True)
    assert enabled["enabled"] and enabled["next_run_date"].endswith("10:30:00+00:00")

    await client.crons.delete(stateless["cron_id"])
    with pytest.raises(NotFoundError):
        await client.crons.delete(stateless["cron_id"])
    await eventually(lambda: client.crons.search(metadata={"tag": tag}),
                     lambda f: cron_ids(f) == {on_thread["cron_id"]})


async def test_end_time_set_and_cleared(api_url: str, temporal_client: Client,
                                        crons: list[str]) -> None:
    client = get_client(url=api_url)
    end = datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC)
    cron: Any = await client.crons.create("purchase", schedule=DAILY, end_time=end)
    crons.append(cron["cron_id"])
    assert datetime.fromisoformat(cron["end_time"]) == end
    schedule = temporal_client.get_schedule_handle(f"graphrun-cron-{cron['cron_id']}")
    assert (await schedule.describe()).schedule.spec.end_at == end  # the schedule stops then
    moved = await client.crons.update(cron["cron_id"], end_time=end + timedelta(days=1))
    assert datetime.fromisoformat(moved["end_time"]) == end + timedelta(days=1)
    kept = await client.crons.update(cron["cron_id"], schedule="0 8 * * *")
    assert kept["end_time"] == moved["end_time"]  # left out: unchanged
    cleared = await client.crons.update(cron["cron_id"], end_time=None)
    assert cleared["end_time"] is None and cleared["schedule"] == "0 8 * * *"
    assert (await schedule.describe()).schedule.spec.end_at is None


async def test_refusals(api_url: str, crons: list[str]) -> None:
    client = get_client(url=api_url)
    with pytest.raises(NotFoundError):
        await client.crons.create(str(uuid.uuid4()), schedule=DAILY)
    with pytest.raises(UnprocessableEntityError):
        await client.crons.create("nope", schedule=DAILY)
    with pytest.raises(UnprocessableEntityError):
        await client.crons.create("purchase", schedule="every day at nine")
    with pytest.raises(UnprocessableEntityError):
        await client.crons.create("purchase", schedule=DAILY, timezone="Mars/Olympus")
    with pytest.raises(UnprocessableEntityError):
        await client.crons.create("purchase", schedule=DAILY, webhook="http://x.invalid")
    with pytest.raises(NotFoundError):
        await client.crons.create_for_thread(str(uuid.uuid4()), "purchase", schedule=DAILY)
    with pytest.raises(NotFoundError):
        await client.crons.delete(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        await client.crons.update(str(uuid.uuid4()), enabled=False)
    cron: Any = await client.crons.create("purchase", schedule=DAILY)
    crons.append(cron["cron_id"])
    with pytest.raises(UnprocessableEntityError):
        await client.crons.update(cron["cron_id"], schedule="not a cron")
