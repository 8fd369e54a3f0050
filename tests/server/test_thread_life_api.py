"""How long a thread lives, through LangGraph's SDK: until deleted, pruned or its TTL
ends, whatever the namespace's retention."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError
from temporalio.client import Client

from graphrun.server.config import ConfigError, thread_ttl
from tests.server.test_threads_api import PURCHASE
from tests.temporal.test_thread_life import _delete_closed_executions
from tests.temporal.test_thread_life import _gone as gone_from_temporal


async def _gone(client: Any, tid: str, seconds: float = 20.0) -> None:
    for _ in range(int(seconds / 0.1)):
        try:
            await client.threads.get(tid)
        except NotFoundError:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"thread {tid} is still there")


async def test_threads_outlive_retention(api_url: str, dev_server: Any) -> None:
    client = get_client(url=api_url)
    created = (await client.threads.create(metadata={"team": "ops"}))["thread_id"]
    finished = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(finished, "purchase", input=PURCHASE)
    await client.runs.wait(finished, "purchase", command={"resume": True})
    assert out["__interrupt__"]
    # Stateless background runs: one whose thread is kept, one whose thread goes with it.
    kept = await client.runs.create(None, "purchase", input=PURCHASE,
                                    on_completion="keep", metadata={"team": "ops"})
    await client.runs.join(kept["thread_id"], kept["run_id"])
    dropped = await client.runs.create(None, "purchase", input=PURCHASE)
    await _gone(client, dropped["thread_id"])

    await _delete_closed_executions(await Client.connect(dev_server.address))
    with pytest.raises(NotFoundError):  # a deleted thread stays deleted
        await client.threads.get(dropped["thread_id"])
    paused = await client.threads.search(ids=[kept["thread_id"]], status="interrupted")
    assert [t["thread_id"] for t in paused] == [kept["thread_id"]]
    resumed = await client.runs.wait(kept["thread_id"], "purchase",
                                     command={"resume": True})
    assert resumed["status"] == "charged"
    # Searched and counted as before: both are open threads in visibility.
    found = await client.threads.search(metadata={"team": "ops"}, limit=100)
    assert created in [t["thread_id"] for t in found]
    assert await client.threads.count(metadata={"team": "ops"}) >= 1
    done_ids = [t["thread_id"] for t in await client.threads.search(
        ids=[finished], status="idle")]
    assert done_ids == [finished]
    thread = await client.threads.get(created)
    assert thread["metadata"] == {"team": "ops"} and thread["status"] == "idle"
    done = await client.threads.get(finished)
    assert done["status"] == "idle" and done["values"]["status"] == "charged"
    # Both go on: the created one runs for the first time, the finished one again.
    out = await client.runs.wait(created, "purchase", input=PURCHASE)
    assert out["__interrupt__"]
    assert (await client.threads.get(created))["metadata"]["team"] == "ops"
    again = await client.runs.wait(finished, "purchase", input=PURCHASE)
    assert again["__interrupt__"][0]["id"] != out["__interrupt__"][0]["id"]


async def test_ttl_on_create_and_patch(api_url: str, dev_server: Any) -> None:
    client = get_client(url=api_url)
    temporal = await Client.connect(dev_server.address)
    short = (await client.threads.create(ttl={"strategy": "delete", "ttl": 0.03}))["thread_id"]
    kept = (await client.threads.create())["thread_id"]
    await client.threads.update(kept, metadata={"a": 1}, ttl={"strategy": "delete",
                                                               "ttl": 0.03})
    # Reads start the TTL again (refresh on read, LangGraph's default): 3 s of reads
    # outlive a 1.8 s TTL.
    for _ in range(10):
        assert (await client.threads.get(short))["thread_id"] == short
        await asyncio.sleep(0.3)
    # Left alone, both go (watched from Temporal, which refreshes nothing).
    await gone_from_temporal(temporal, short)
    await gone_from_temporal(temporal, kept)
    with pytest.raises(NotFoundError):
        await client.threads.get(short)
    with pytest.raises(Exception, match=r"422|strategy"):
        await client.threads.create(ttl={"strategy": "archive", "ttl": 5})


async def test_prune_delete_and_keep_latest(api_url: str) -> None:
    client = get_client(url=api_url)
    tids = []
    for _ in range(2):
        tid = (await client.threads.create())["thread_id"]
        await client.runs.wait(tid, "purchase", input=PURCHASE)
        await client.runs.wait(tid, "purchase", command={"resume": True})
        tids.append(tid)
    before = await client.threads.get_history(tids[0], limit=100)
    assert len(before) > 1
    answer = await client.threads.prune(tids[:1], strategy="keep_latest")
    assert answer == {"pruned_count": 1}
    after = await client.threads.get_history(tids[0], limit=100)
    assert len(after) == 1 and after[0]["values"] == before[0]["values"]
    missing = f"no-such-{uuid.uuid4()}"
    assert await client.threads.prune([tids[1], missing]) == {"pruned_count": 1}
    await _gone(client, tids[1])


def test_langgraph_json_ttl(tmp_path: Path) -> None:
    path = tmp_path / "langgraph.json"
    path.write_text(json.dumps({"graphs": {}, "checkpointer": {"ttl": {
        "strategy": "delete", "default_ttl": 60, "refresh_on_read": False}}}))
    ttl, refresh = thread_ttl(path)
    assert ttl is not None and ttl.ttl == 60 and refresh is False
    path.write_text(json.dumps({"graphs": {}}))
    assert thread_ttl(path) == (None, True)
    path.write_text(json.dumps({"graphs": {}, "checkpointer": {"ttl": {
        "default_ttl": 5, "sweep_interval_minutes": 10}}}))
    with pytest.warns(UserWarning, match="sweep_interval_minutes"):
        assert thread_ttl(path)[0].ttl == 5
    path.write_text(json.dumps({"graphs": {}, "checkpointer": {"ttl": {
        "strategy": "keep", "default_ttl": 5}}}))
    with pytest.raises(ConfigError, match="strategy"):
        thread_ttl(path)
