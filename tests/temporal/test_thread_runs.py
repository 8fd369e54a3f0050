"""A thread with several workflow runs: listed once, by its latest run."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, TypedDict

from graphrun import END, START, Command, StateGraph, interrupt, registry
from graphrun.client import GraphClient, ThreadInfo


class State(TypedDict, total=False):
    item: str
    log: list[str]


def _build(name: str, checkpointer: Any = None) -> Any:
    def ask(state: State) -> dict:
        return {"log": [*state.get("log", []), f"ask:{interrupt('ok?')}"]}

    def done(state: State) -> dict:
        return {"log": [*state["log"], "done"]}

    return (StateGraph(State).add_node("ask", ask).add_node("done", done)
            .add_edge(START, "ask").add_edge("ask", "done").add_edge("done", END)
            .compile(name=name, checkpointer=checkpointer))


def _remote(temporal_client: Any, queue: str) -> Any:
    name = f"runs-{uuid.uuid4().hex[:8]}"
    registry.register(name, _build(name))
    return GraphClient(temporal_client, task_queue=queue).graph(name)


async def _finished(remote: Any) -> dict:
    config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:10]}"}}
    await remote.ainvoke({"item": "a"}, config)
    assert (await remote.ainvoke(Command(resume=1), config))["log"] == ["ask:1", "done"]
    return config


async def _listed(gc: GraphClient, tid: str, want: list[str], **filters: Any
                  ) -> list[ThreadInfo]:
    """The rows of thread `tid`, once their statuses are `want` (visibility lags)."""
    for _ in range(100):
        rows = [t for t in await gc.list_threads(**filters) if t.thread_id == tid]
        if [t.status for t in rows] == want:
            return rows
        await asyncio.sleep(0.1)
    raise AssertionError(f"rows of {tid} with {filters}: {rows}, wanted statuses {want}")


async def test_a_thread_invoked_again_is_listed_once_by_its_latest_run(
        temporal_client: Any, graph_worker: str) -> None:
    remote = _remote(temporal_client, graph_worker)
    gc = remote.gc
    config = await _finished(remote)
    tid = config["configurable"]["thread_id"]
    first = (await _listed(gc, tid, ["done"], graph=remote.name))[0]

    await remote.ainvoke({"item": "b"}, config)  # a second run, paused
    [row] = await _listed(gc, tid, ["interrupted"], graph=remote.name)
    assert row.workflow_status == "RUNNING" and row.run_id != first.run_id
    # The first run is still "done" in visibility; the thread is not.
    await _listed(gc, tid, ["interrupted"], status="interrupted")
    assert tid not in [t.thread_id for t in await gc.list_threads(status="done",
                                                                  graph=remote.name)]

    await remote.ainvoke(Command(resume=2), config)  # the second run ends too
    [row] = await _listed(gc, tid, ["done"], status="done", graph=remote.name)
    assert row.workflow_status == "COMPLETED" and row.run_id != first.run_id
    assert len(await gc.list_threads(graph=remote.name, limit=1)) == 1

