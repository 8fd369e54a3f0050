"""Run limits on Temporal. config["max_concurrency"]: the workflow schedules at most that
many node activities of a step at once (the nodes count themselves: the worker is in this
process). @task(timeout=...): the call's activity enforces it. step_timeout: a durable
timer in the workflow around each step.
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


def _step_graph(name: str, ran: list[str]) -> Any:
    async def fast(state: State) -> dict:
        ran.append("fast")
        return {"done": [1]}

    async def slow(state: State) -> dict:
        ran.append("slow")
        await asyncio.sleep(30 if ran.count("slow") == 1 else 0)  # slow the first time
        return {"done": [2]}

    return (StateGraph(State).add_node("fast", fast).add_node("slow", slow)
            .add_edge(START, "fast").add_edge(START, "slow").compile(name=name))


async def test_step_timeout_on_temporal(temporal_client: Any, task_queue: str) -> None:
    """A step that runs past step_timeout fails with StepTimeoutError (a TimeoutError)
    well before its slow node would end; what finished is kept, and the thread goes on
    from there without running it again."""
    from graphrun.errors import StepTimeoutError

    ran: list[str] = []
    name = f"step-{uuid.uuid4().hex[:8]}"
    remote = GraphClient(temporal_client, task_queue=task_queue).graph(name)
    remote.step_timeout = 1
    cfg = {"configurable": {"thread_id": f"st-{uuid.uuid4().hex}"}}
    async with create_worker(temporal_client, {name: _step_graph(name, ran)},
                             task_queue=task_queue):
        loop = asyncio.get_running_loop()
        began = loop.time()
        with pytest.raises(StepTimeoutError, match="step_timeout"):
            await remote.ainvoke({"done": [0]}, cfg)
        assert loop.time() - began < 15
        state = await remote.aget_state(cfg)
        assert state.next == ("slow",) and state.values == {"done": [0, 1]}
        remote.step_timeout = None
        out = await remote.ainvoke(None, cfg)
    assert ran == ["fast", "slow", "slow"] and out == {"done": [0, 1, 2]}, (ran, out)


async def test_a_served_graphs_step_timeout_is_named(temporal_client: Any,
                                                    task_queue: str) -> None:
    """graph.step_timeout on a graph a worker serves: the worker says it is the caller's
    to set (RemoteGraph.step_timeout), as a run's limits travel with the run."""
    name = f"step-{uuid.uuid4().hex[:8]}"
    served = _step_graph(name, [])
    served.step_timeout = 1
    with pytest.warns(UserWarning, match=r"RemoteGraph\.step_timeout"):
        create_worker(temporal_client, {name: served}, task_queue=task_queue)
