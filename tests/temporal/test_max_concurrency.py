"""Run limits on Temporal. config["max_concurrency"]: the workflow schedules at most that
many node activities of a step at once (the nodes count themselves: the worker is in this
process). @task(timeout=...): the call's activity enforces it.
"""

from __future__ import annotations

import asyncio
import operator
import uuid
from typing import Annotated, Any, TypedDict

import pytest

from graphrun import START, Send, StateGraph
from graphrun.client import GraphClient
from graphrun.worker import create_worker

pytestmark = pytest.mark.temporal


class State(TypedDict, total=False):
    done: Annotated[list[int], operator.add]


def _graph(name: str, seen: dict[str, int]) -> Any:
    async def work(n: int) -> dict:
        seen["now"] += 1
        seen["most"] = max(seen["most"], seen["now"])
        await asyncio.sleep(0.3)
        seen["now"] -= 1
        return {"done": [n]}

    def fan_out(state: State) -> list[Send]:
        return [Send("work", i) for i in range(6)]

    return (StateGraph(State).add_node("work", work)
            .add_conditional_edges(START, fan_out, ["work"]).compile(name=name))


@pytest.mark.parametrize("limit", [2, None])
async def test_max_concurrency_caps_a_steps_activities(temporal_client: Any, task_queue: str,
                                                       limit: int | None) -> None:
    seen, name = {"now": 0, "most": 0}, f"fan-{uuid.uuid4().hex[:8]}"
    remote = GraphClient(temporal_client, task_queue=task_queue).graph(name)
    config: dict[str, Any] = {"configurable": {"thread_id": f"mc-{uuid.uuid4().hex}"}}
    if limit is not None:
        config["max_concurrency"] = limit
    async with create_worker(temporal_client, {name: _graph(name, seen)},
                             task_queue=task_queue):
        out = await remote.ainvoke({"done": []}, config)
    assert sorted(out["done"]) == list(range(6))
    if limit is None:
        assert seen["most"] > 2  # the measure works: unlimited, the six overlap
    else:
        assert seen["most"] == limit


async def test_task_timeout_on_temporal(temporal_client: Any, task_queue: str) -> None:
    """@task(timeout=...) holds in the call's activity: the call fails NodeTimeoutError."""
    from graphrun.errors import NodeFailedError
    from graphrun.func import entrypoint, task

    @task(timeout=0.05)
    async def slow(x: int) -> int:
        await asyncio.sleep(0.5)
        return x

    name = f"slow-{uuid.uuid4().hex[:8]}"

    @entrypoint(name=name)
    async def caller(x: int) -> int:
        return await slow(x)

    remote = GraphClient(temporal_client, task_queue=task_queue).graph(name)
    async with create_worker(temporal_client, {name: caller}, task_queue=task_queue):
        with pytest.raises(NodeFailedError) as err:
            await remote.ainvoke(1, {"configurable": {"thread_id": f"t-{uuid.uuid4().hex}"}})
    assert "NodeTimeoutError" in str(err.value)  # the call's error, through its caller
