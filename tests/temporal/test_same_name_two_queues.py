"""Two workers in one process may serve different graphs under one name, each on its
own task queue: each thread runs its own queue's graph (nodes, state schema, limits)."""

from __future__ import annotations

import uuid
from typing import Any

from typing_extensions import TypedDict

from graphrun import START, StateGraph
from graphrun.client import GraphClient
from graphrun.worker import create_worker


class Said(TypedDict, total=False):
    said: str


def _graph(word: str) -> Any:
    def say(state: Said) -> Said:
        return {"said": word}

    return StateGraph(Said).add_node("say", say).add_edge(START, "say").compile()


async def test_each_queue_runs_its_own_graph_of_the_same_name(temporal_client: Any) -> None:
    queues = {word: f"same-name-{word}-{uuid.uuid4().hex[:6]}" for word in ("one", "two")}
    one = create_worker(temporal_client, {"agent": _graph("one")}, task_queue=queues["one"])
    two = create_worker(temporal_client, {"agent": _graph("two")}, task_queue=queues["two"])
    async with one, two:
        for word, queue in queues.items():
            remote = GraphClient(temporal_client, task_queue=queue).graph("agent")
            out = await remote.ainvoke({}, {"configurable": {"thread_id": str(uuid.uuid4())}})
            assert out == {"said": word}
