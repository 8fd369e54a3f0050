"""Runs routes LangGraph's SDK calls beyond the basics: a resumable stream joined again
with Last-Event-ID, `/runs/batch`, `/runs/cancel` (by ids, by status), a thread's own
live stream, a cron read by id, and `runs.wait`'s Location."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from typing_extensions import TypedDict

from graphrun import START, StateGraph
from graphrun.config import get_stream_writer
from tests.server.conftest import _ApiHost


class Ticks(TypedDict, total=False):
    n: int
    pause: float
    done: int


async def tick(state: Ticks) -> Ticks:
    write = get_stream_writer()
    for i in range(1, state.get("n", 5) + 1):
        write({"tick": i})
        await asyncio.sleep(state.get("pause", 0.4))
    return {"done": state.get("n", 5)}


TICKER = StateGraph(Ticks).add_node("tick", tick).add_edge(START, "tick").compile()


@pytest.fixture(scope="module")
def ticker_api(dev_server: Any) -> Iterator[str]:
    host = _ApiHost(dev_server.address, {"ticker": TICKER}, api_keys=())
    yield host.url
    host.close()


def _frames(text: str) -> list[dict[str, Any]]:
    out = []
    for block in text.strip().split("\n\n"):
        frame: dict[str, Any] = {}
        for line in block.splitlines():
            key, _, value = line.partition(": ")
            frame[key] = json.loads(value) if key == "data" else value
        if frame:
            out.append(frame)
    return out


async def _read_until(response: httpx.Response, count: int, name: str = "custom"
                      ) -> list[dict[str, Any]]:
    """Frames until `count` of them are `name` events."""
    got: list[dict[str, Any]] = []
    buffer = ""
    async for text in response.aiter_text():
        buffer += text
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            got += _frames(block)
            if sum(f.get("event") == name for f in got) >= count:
                return got
    return got


async def test_a_resumable_stream_left_and_joined_again_goes_on_after_its_last_event(
        ticker_api: str) -> None:
    tid = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=ticker_api, timeout=30) as http:
        async with http.stream("POST", f"/threads/{tid}/runs/stream", json={
                "assistant_id": "ticker", "input": {"n": 5}, "stream_mode": "custom",
                "stream_resumable": True, "on_disconnect": "continue",
                "if_not_exists": "create"}) as first:
            where = first.headers["location"]
            seen = await _read_until(first, 2)
        ticks = [f for f in seen if f.get("event") == "custom"]
        assert [t["data"]["tick"] for t in ticks] == [1, 2]
        r = await http.get(where, headers={"Last-Event-ID": ticks[-1]["id"]})
        rest = [f["data"]["tick"] for f in _frames(r.text) if f.get("event") == "custom"]
        assert rest == [3, 4, 5]


async def test_wait_answers_where_to_join(ticker_api: str) -> None:
    tid = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=ticker_api, timeout=30) as http:
        r = await http.post(f"/threads/{tid}/runs/wait", json={
            "assistant_id": "ticker", "input": {"n": 1, "pause": 0},
            "if_not_exists": "create"})
        assert r.status_code == 200 and r.json()["done"] == 1
        assert r.headers["location"].endswith("/join")
        assert (await http.get(r.headers["location"])).json()["done"] == 1


async def test_a_batch_of_stateless_runs(ticker_api: str) -> None:
    client = get_client(url=ticker_api)
    runs = await client.runs.create_batch([
        {"assistant_id": "ticker", "input": {"n": 1, "pause": 0}},
        {"assistant_id": "ticker", "input": {"n": 2, "pause": 0}}])
    assert len(runs) == 2 and len({r["run_id"] for r in runs}) == 2
    assert len({r["thread_id"] for r in runs}) == 2
    async with httpx.AsyncClient(base_url=ticker_api) as http:
        bad = await http.post("/runs/batch", json=[{"assistant_id": "ticker",
                                                    "stream_mode": "nonsense"}])
        assert bad.status_code == 422


async def test_cancel_many_by_ids_and_by_status(ticker_api: str) -> None:
    client = get_client(url=ticker_api)
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    run_a = await client.runs.create(a, "ticker", input={"n": 50, "pause": 0.2},
                                     if_not_exists="create")
    run_b = await client.runs.create(b, "ticker", input={"n": 50, "pause": 0.2},
                                     if_not_exists="create")
    await client.runs.cancel_many(thread_id=a, run_ids=[run_a["run_id"]])
    await client.runs.join(a, run_a["run_id"])
    assert (await client.runs.get(a, run_a["run_id"]))["status"] == "interrupted"
    for _ in range(100):  # visibility shows b as busy within a moment
        if (await client.threads.get(b))["status"] == "busy":
            break
        await asyncio.sleep(0.1)
    await client.runs.cancel_many(status="running")
    await client.runs.join(b, run_b["run_id"])
    assert (await client.runs.get(b, run_b["run_id"]))["status"] == "interrupted"
    async with httpx.AsyncClient(base_url=ticker_api) as http:
        both = await http.post("/runs/cancel", json={"status": "all", "thread_id": a})
        assert both.status_code == 422
        unknown = await http.post("/runs/cancel", json={
            "thread_id": a, "run_ids": [str(uuid.uuid4())]})
        assert unknown.status_code == 404


async def test_a_threads_stream_carries_each_of_its_runs(ticker_api: str) -> None:
    client = get_client(url=ticker_api)
    tid = (await client.threads.create())["thread_id"]
    got: list[Any] = []

    async def listen() -> None:
        async for part in await client.threads.join_stream(tid, stream_mode="custom"):
            got.append(part)
            if sum(p.event == "custom" for p in got) >= 4:
                return

    listener = asyncio.ensure_future(listen())
    await asyncio.sleep(0.5)
    for n in (2, 2):
        run = await client.runs.create(tid, "ticker", input={"n": n, "pause": 0.1})
        await client.runs.join(tid, run["run_id"])
    await asyncio.wait_for(listener, 20)
    assert [p.data["tick"] for p in got if p.event == "custom"] == [1, 2, 1, 2]


async def test_a_cron_is_read_by_its_id(ticker_api: str) -> None:
    client = get_client(url=ticker_api)
    cron = await client.crons.create("ticker", schedule="0 0 1 1 *", input={"n": 1})
    async with httpx.AsyncClient(base_url=ticker_api) as http:
        got = await http.get(f"/runs/crons/{cron['cron_id']}")
        assert got.status_code == 200 and got.json()["cron_id"] == cron["cron_id"]
        assert got.json()["schedule"] == "0 0 1 1 *"
        await client.crons.delete(cron["cron_id"])
        assert (await http.get(f"/runs/crons/{cron['cron_id']}")).status_code == 404
