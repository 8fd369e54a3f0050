"""A long node that heartbeats outlives its heartbeat timeout; a silent one does not."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any, TypedDict

import pytest

from graphrun import START, NodeFailedError, StateGraph, heartbeat, registry
from graphrun.client import GraphClient


class State(TypedDict, total=False):
    done: bool


def _graph(beat: bool) -> Any:
    def slow(state: State) -> dict:
        for _ in range(12):  # 1.2 s in all, against a 0.5 s heartbeat timeout
            time.sleep(0.1)
            if beat:
                heartbeat("still working")
        return {"done": True}

    name = f"slow-{uuid.uuid4().hex[:8]}"
    graph = (StateGraph(State)
             .add_node("slow", slow, heartbeat_timeout=timedelta(seconds=0.5))
             .add_edge(START, "slow").compile(name=name))
    registry.register(name, graph)
    return graph


async def test_heartbeating_node_survives_its_heartbeat_timeout(temporal_client: Any,
                                                                graph_worker: str) -> None:
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(_graph(True).name)
    out = await remote.ainvoke({}, {"configurable": {"thread_id": uuid.uuid4().hex}})
    assert out == {"done": True}


async def test_silent_node_times_out(temporal_client: Any, graph_worker: str) -> None:
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(_graph(False).name)
    with pytest.raises(NodeFailedError) as info:
        await remote.ainvoke({}, {"configurable": {"thread_id": uuid.uuid4().hex}})
    assert info.value.node == "slow"
