"""visibility.page and visibility.count against a real dev server: exact at every depth,
for every sort key and order, with ties on the key (one millisecond shared by many
rows), ids that are prefixes of others, rows without the time (last), and rows created
in start order (the newest page from the rows listed first).

The rows are workflows started with the search attributes and no worker: they stay
open, as threads do. The oracle lists them all and sorts them here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.service import RPCError

from graphrun import visibility

N = int(os.environ.get("GRAPHRUN_PAGE_ROWS", "400"))
BASE = datetime(2024, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
async def rows(dev_server: Any) -> Any:
    client = await Client.connect(dev_server.address)
    suite = visibility.entry("suite", uuid.uuid4().hex)
    rnd = random.Random(7)
    ids: set[str] = set()
    specs = []
    for i in range(N):
        ms = 5_000 if i < 150 else 7_000 + i % 3 if i < 170 else rnd.randrange(100_000)
        wid = f"t-{rnd.getrandbits(32):08x}"[:rnd.randrange(3, 11)]
        while wid in ids:
            wid += rnd.choice("0a")
        ids.add(wid)
        specs.append((wid, BASE + timedelta(milliseconds=ms),
                      BASE + timedelta(milliseconds=rnd.randrange(1000) * 7),
                      visibility.STATUS_ORDER[i % 4], visibility.entry("user", f"u{i % 10}")))
    gate = asyncio.Semaphore(50)

    async def start(wid: str, created: datetime, updated: datetime, status: str,
                    user: str) -> None:
        async with gate:
            await client.start_workflow(
                "VisibilityProbe", id=f"{suite}-{wid}", task_queue=f"none-{suite}",
                search_attributes=TypedSearchAttributes([
                    SearchAttributePair(visibility.CREATED_AT, created),
                    SearchAttributePair(visibility.UPDATED_AT, updated),
                    SearchAttributePair(visibility.GRAPH_STATUS, status),
                    SearchAttributePair(visibility.METADATA, [suite, user])]))

    await asyncio.gather(*(start(*s) for s in specs))
    query = f"WorkflowType = 'VisibilityProbe' AND GraphMetadata = {visibility.quote(suite)}"
    for _ in range(100):  # visibility lags the starts a little
        if await visibility.count(client, query) == N:
            break
        await asyncio.sleep(0.1)
    listed = [wf async for wf in client.list_workflows(query)]
    assert len(listed) == N
    yield client, query, listed
    for wf in listed:
        await client.get_workflow_handle(wf.id).terminate()


def _ms(t: datetime) -> int:
    return (t - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def _oracle(listed: list[Any], sort_by: str, order: str) -> list[str]:
    """(key, workflow id), ascending or its reverse; status: STATUS_ORDER, then created."""
    attrs = {"created_at": visibility.CREATED_AT, "updated_at": visibility.UPDATED_AT}

    def key(wf: Any) -> tuple[Any, ...]:
        sa = wf.typed_search_attributes
        if sort_by == "thread_id":
            return (wf.id,)
        if sort_by == "status":
            return (visibility.STATUS_ORDER.index(sa.get(visibility.GRAPH_STATUS)),
                    _ms(sa.get(visibility.CREATED_AT)), wf.id)
        return (_ms(sa.get(attrs[sort_by])), wf.id)

    return [wf.id for wf in sorted(listed, key=key, reverse=order == "desc")]


@pytest.mark.parametrize("sort_by", ["created_at", "updated_at", "thread_id", "status"])
async def test_every_page_is_exact(rows: Any, sort_by: str) -> None:
    client, query, listed = rows
    for order in ("asc", "desc"):
        want = _oracle(listed, sort_by, order)
        for offset, limit in ((0, 10), (5, 20), (140, 30), (160, 5), (N // 2, 10),
                              (N - 7, 10), (0, 300), (N + 3, 5)):
            got = await visibility.page(client, query, sort_by, order, offset, limit)
            assert [wf.id for wf in got] == want[offset:offset + limit], (order, offset)


async def test_counts_are_exact(rows: Any) -> None:
    client, query, _listed = rows
    user = visibility.quote(visibility.entry("user", "u3"))
    assert await visibility.count(client, f"{query} AND GraphMetadata = {user}") == N // 10
    for status in visibility.STATUS_ORDER:
        assert await visibility.count(client, f"{query} AND GraphStatus = "
                                              f"{visibility.quote(status)}") == N // 4


@pytest.fixture(scope="module")
async def ordered(dev_server: Any) -> Any:
    """60 rows whose GraphCreatedAt follows their start (as threads'), 5 without it."""
    client = await Client.connect(dev_server.address)
    suite = visibility.entry("suite", uuid.uuid4().hex)
    for i in range(65):  # one at a time: visibility lists the latest started first
        pairs = [SearchAttributePair(visibility.METADATA, [suite]),
                 SearchAttributePair(visibility.GRAPH_STATUS, "done")]
        if i < 60:
            pairs.append(SearchAttributePair(visibility.CREATED_AT,
                                             BASE + timedelta(milliseconds=3 * (i // 2))))
        await client.start_workflow("VisibilityProbe", id=f"{suite}-o{i:03d}",
                                    task_queue=f"none-{suite}",
                                    search_attributes=TypedSearchAttributes(pairs))
    query = f"WorkflowType = 'VisibilityProbe' AND GraphMetadata = {visibility.quote(suite)}"
    for _ in range(100):
        if await visibility.count(client, query) == 65:
            break
        await asyncio.sleep(0.1)
    listed = [wf async for wf in client.list_workflows(query)]
    yield client, query, listed, suite
    for wf in listed:
        with contextlib.suppress(RPCError):  # a test closed it already
            await client.get_workflow_handle(wf.id).terminate()


async def test_pages_in_start_order_and_without_the_time(ordered: Any) -> None:
    client, query, listed, _suite = ordered
    timed = [wf for wf in listed if wf.typed_search_attributes.get(visibility.CREATED_AT)]
    nulls = sorted(wf.id for wf in listed if wf not in timed)
    asc = _oracle(timed, "created_at", "asc")
    for order, want in (("asc", asc + nulls), ("desc", asc[::-1] + nulls)):
        for offset, limit in ((0, 1), (0, 10), (1, 10), (25, 10), (55, 10), (58, 4),
                              (60, 3), (62, 10), (0, 65), (70, 5)):
            got = await visibility.page(client, query, "created_at", order, offset, limit)
            assert [wf.id for wf in got] == want[offset:offset + limit], (order, offset)


async def test_an_id_prefix_is_a_range(ordered: Any) -> None:
    client, query, _listed, suite = ordered
    assert visibility.prefixed(f"{suite}-o0") == (
        f"WorkflowId >= {visibility.quote(suite + '-o0')} AND "
        f"WorkflowId < {visibility.quote(suite + '-o1')}")
    for prefix in (f"{suite}-o0", f"{suite}-o05", f"{suite}-o06", suite, "zz"):
        by_range = await visibility.count(client, f"{query} AND {visibility.prefixed(prefix)}")
        like = await visibility.count(
            client, f"{query} AND WorkflowId STARTS_WITH {visibility.quote(prefix)}")
        assert by_range == like, prefix
    assert await visibility.count(client, f"{query} AND "
                                          f"{visibility.prefixed(suite + '-o05')}") == 10
    for odd in ("", "a!", "a[", "a\\", 'a"b', "a\n", "\U0010ffff"):
        assert "STARTS_WITH" in visibility.prefixed(odd)


async def test_threads_are_the_open_runs(ordered: Any) -> None:
    """THREADS's `CloseTime IS NULL` is `ExecutionStatus = 'Running'`."""
    client, query, listed, _suite = ordered
    await client.get_workflow_handle(listed[0].id).terminate()
    want = len(listed) - 1
    for _ in range(100):
        if await visibility.count(client, f"{query} AND ExecutionStatus = 'Running'") == want:
            break
        await asyncio.sleep(0.1)
    assert await visibility.count(client, f"{query} AND CloseTime IS NULL") == want
