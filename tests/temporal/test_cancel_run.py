"""Cancelling a caller cancels its run on Temporal: the node's activity is asked to stop
(through its heartbeats), the thread stays at its last checkpoint, `ainvoke(None)`
goes on from there."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any

from typing_extensions import TypedDict

from graphrun import START, StateGraph, registry
from graphrun.client import GraphClient
from graphrun.worker import create_worker


def _add(a: list[str], b: list[str]) -> list[str]:
    return a + b


class S(TypedDict):
    done: Annotated[list[str], _add]


def _graph(started: asyncio.Event, seen: list[str]) -> Any:
    async def slow(state: S) -> dict[str, Any]:
        seen.append("slow started")
        if len(seen) == 1:  # the first attempt waits until it is cancelled
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                seen.append("slow cancelled")
                raise
        return {"done": ["slow"]}

    return (StateGraph(S).add_node("first", lambda s: {"done": ["first"]})
            .add_node("slow", slow)
            .add_edge(START, "first").add_edge("first", "slow").compile())


async def _served(temporal_client: Any, task_queue: str, graph: Any) -> tuple[Any, Any]:
    name = f"cancel-{uuid.uuid4().hex[:8]}"
    registry.register(name, graph)
    worker = create_worker(temporal_client, {name: graph}, task_queue=task_queue)
    return worker, GraphClient(temporal_client, task_queue=task_queue, tracing=None).graph(name)


# Temporal delivers an activity's cancellation with a heartbeat, which the SDK sends at
# most every 0.8 x the heartbeat timeout (graphrun's liveness timeout: 20 s).
async def _until(check: Any, timeout: float = 45.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while not (found := await check()) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    return found


async def test_cancelled_ainvoke_cancels_the_node(temporal_client: Any, task_queue: str
                                                  ) -> None:
    started, seen = asyncio.Event(), []
    worker, remote = await _served(temporal_client, task_queue, _graph(started, seen))
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async with worker:
        call = asyncio.ensure_future(remote.ainvoke({"done": []}, config))
        await asyncio.wait_for(started.wait(), 20)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        assert await _until(lambda: asyncio.sleep(0, "slow cancelled" in seen))
        state = await _until(lambda: _paused(remote, config))
        assert state.values == {"done": ["first"]} and state.next == ("slow",)
        out = await remote.ainvoke(None, config)
    assert out == {"done": ["first", "slow"]}
    assert seen == ["slow started", "slow cancelled", "slow started"]


async def test_astream_left_early_cancels_the_run(temporal_client: Any, task_queue: str
                                                  ) -> None:
    started, seen = asyncio.Event(), []
    worker, remote = await _served(temporal_client, task_queue, _graph(started, seen))
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async with worker:
        chunks = remote.astream({"done": []}, config, stream_mode="updates")
        first = await anext(chunks)
        assert first == {"first": {"done": ["first"]}}
        await asyncio.wait_for(started.wait(), 20)
        await chunks.aclose()  # the caller stops reading: the run stops too
        assert await _until(lambda: asyncio.sleep(0, "slow cancelled" in seen))
        state = await _until(lambda: _paused(remote, config))
        assert state.next == ("slow",)
        assert await remote.ainvoke(None, config) == {"done": ["first", "slow"]}


async def _paused(remote: Any, config: dict[str, Any]) -> Any:
    """The thread's state once no run is under way (its cancelled run has ended)."""
    state = await remote.aget_state(config)
    info = await remote.gc.client.get_workflow_handle(
        remote.gc.workflow_id(config["configurable"]["thread_id"])).describe()
    from graphrun.client import GRAPH_STATUS

    status = info.typed_search_attributes.get(GRAPH_STATUS)
    return state if status not in ("running", None) else None


async def test_a_cancelled_steps_finished_tasks_are_kept(temporal_client: Any,
                                                        task_queue: str) -> None:
    """As in-process (and LangGraph's pending writes): a sibling that finished before the
    run was cancelled keeps its writes, and is not run again when the thread goes on."""
    started, seen = asyncio.Event(), []

    async def slow(state: S) -> dict[str, Any]:
        seen.append("slow started")
        if seen.count("slow started") == 1:
            await asyncio.sleep(1)  # the sibling's result reaches the workflow meanwhile
            started.set()
            await asyncio.sleep(60)
        return {"done": ["slow"]}

    def fast(state: S) -> dict[str, Any]:
        seen.append("fast")
        return {"done": ["fast"]}

    graph = (StateGraph(S).add_node("fast", fast).add_node("slow", slow)
             .add_edge(START, "fast").add_edge(START, "slow").compile())
    worker, remote = await _served(temporal_client, task_queue, graph)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async with worker:
        call = asyncio.ensure_future(remote.ainvoke({"done": []}, config))
        await asyncio.wait_for(started.wait(), 20)
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        state = await _until(lambda: _paused(remote, config))
        assert state.values == {"done": ["fast"]} and state.next == ("slow",)
        out = await remote.ainvoke(None, config)
    assert sorted(out["done"]) == ["fast", "slow"]
    assert seen.count("fast") == 1
