"""Thread search and count are exact at any count: Temporal's visibility filters, counts
and pages them (graphrun.visibility), never a window of recent threads.

The oracle is every matching thread listed from visibility and sorted here by the same
keys (the sort key, then the workflow id).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

import httpx
import pytest
from temporalio.client import Client

from graphrun import visibility
from tests.server.test_threads_api import PURCHASE

THREADS = int(os.environ.get("GRAPHRUN_SEARCH_THREADS", "1000"))
USERS = 10


@pytest.fixture(scope="module")
async def many(api_url: str, dev_server: Any) -> Any:
    """THREADS threads of one suite (metadata n, user), 5 of them paused at a question."""
    suite = f"search-{uuid.uuid4().hex[:8]}"
    gate = asyncio.Semaphore(32)
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        async def create(i: int) -> str:
            async with gate:
                r = await http.post("/threads", json={"metadata": {
                    "suite": suite, "n": i, "user": f"u{i % USERS}"}})
                assert r.status_code == 200, r.text
                return str(r.json()["thread_id"])

        tids = await asyncio.gather(*(create(i) for i in range(THREADS)))
        for tid in tids[-5:]:
            r = await http.post(f"/threads/{tid}/runs/wait",
                                json={"assistant_id": "purchase", "input": PURCHASE})
            assert r.json()["__interrupt__"], r.text
    temporal = await Client.connect(dev_server.address)
    query = visibility.where(metadata={"suite": suite})
    runs = visibility.where(metadata={"suite": suite}, base=(
        "WorkflowType = 'GraphWorkflow' AND CloseTime IS NULL"))
    for _ in range(300):
        # Visibility lags the starts, and the 5 records adopted by their runs (each
        # continued as new) are two open runs for a moment: wait until it has caught up.
        if (await visibility.count(temporal, query) == THREADS
                and await visibility.count(temporal, runs) == 5):
            break
        await asyncio.sleep(0.1)
    return suite, tids, temporal


async def _oracle(temporal: Client, suite: str, key: Any) -> list[str]:
    rows = [wf async for wf in temporal.list_workflows(
        visibility.where(metadata={"suite": suite}))]
    return [wf.id for wf in sorted(rows, key=lambda wf: (key(wf), wf.id))]


def _created(wf: Any) -> Any:
    return wf.typed_search_attributes.get(visibility.CREATED_AT)


async def _search(http: httpx.AsyncClient, **body: Any) -> list[dict[str, Any]]:
    r = await http.post("/threads/search", json=body)
    assert r.status_code == 200, r.text
    return list(r.json())


async def test_pages_are_exact_deep_in_the_list(api_url: str, many: Any) -> None:
    suite, _tids, temporal = many
    by_created = await _oracle(temporal, suite, _created)
    by_id = await _oracle(temporal, suite, lambda wf: "")
    assert len(by_created) == THREADS
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        for offset in (0, THREADS // 2, THREADS - 7):
            for order, want in (("asc", by_created), ("desc", by_created[::-1])):
                page = await _search(http, metadata={"suite": suite}, sort_by="created_at",
                                     sort_order=order, offset=offset, limit=10,
                                     select=["thread_id", "created_at"])
                assert [t["thread_id"] for t in page] == want[offset:offset + 10], \
                    (order, offset)
            page = await _search(http, metadata={"suite": suite}, sort_by="thread_id",
                                 sort_order="asc", offset=offset, limit=10,
                                 select=["thread_id"])
            assert [t["thread_id"] for t in page] == by_id[offset:offset + 10], offset


async def test_the_oldest_found_by_metadata_and_counts_exact(api_url: str, many: Any
                                                            ) -> None:
    suite, tids, _ = many
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        [first] = await _search(http, metadata={"suite": suite, "n": 0})
        assert first["thread_id"] == tids[0] and first["metadata"]["n"] == 0
        assert first["status"] == "idle"

        async def count(**body: Any) -> int:
            r = await http.post("/threads/count", json=body)
            assert r.status_code == 200, r.text
            return int(r.json())

        assert await count(metadata={"suite": suite}) == THREADS
        assert await count(metadata={"suite": suite, "user": "u3"}) == THREADS // USERS
        assert await count(metadata={"suite": suite}, status="interrupted") == 5
        assert await count(metadata={"suite": suite}, status="idle") == THREADS - 5
        assert await count(metadata={"suite": suite, "n": "0"}) == 0  # a string is not 0
        paused = await _search(http, metadata={"suite": suite}, status="interrupted",
                               limit=100)
        assert sorted(t["thread_id"] for t in paused) == sorted(tids[-5:])
        assert all(t["interrupts"] for t in paused)
        named = await _search(http, ids=[tids[1], tids[2], "no-such-thread"],
                              metadata={"suite": suite})
        assert sorted(t["thread_id"] for t in named) == sorted(tids[1:3])
        r = await http.post("/threads/search", json={"values": {"a": 1}})
        assert r.status_code == 422
