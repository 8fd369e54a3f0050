"""A thread with several workflow runs: listed once, by its latest run; and `invoke(None)`
on a finished thread is refused without starting another run."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt, registry
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
    # A thread is one open workflow for its whole life: the same run, its status now.
    assert row.workflow_status == "RUNNING" and row.run_id == first.run_id
    await _listed(gc, tid, ["interrupted"], status="interrupted")
    assert tid not in [t.thread_id for t in await gc.list_threads(status="done",
                                                                  graph=remote.name)]

    await remote.ainvoke(Command(resume=2), config)  # the second run ends too
    [row] = await _listed(gc, tid, ["done"], status="done", graph=remote.name)
    assert row.workflow_status == "RUNNING" and row.run_id == first.run_id
    assert len(await gc.list_threads(graph=remote.name, limit=1)) == 1


async def test_invoke_none_on_a_finished_thread_returns_its_state_and_starts_nothing(
        temporal_client: Any, graph_worker: str) -> None:
    remote = _remote(temporal_client, graph_worker)
    local = _build(remote.name, InMemorySaver())
    config = await _finished(remote)
    handle = temporal_client.get_workflow_handle(config["configurable"]["thread_id"])
    run_id = (await handle.describe()).run_id

    # As in-process and in LangGraph: the final state, nothing run again.
    local_config = await _finished(local)
    assert await remote.ainvoke(None, config) == await local.ainvoke(None, local_config)
    assert (await handle.describe()).run_id == run_id  # no second run

    # A replay from an earlier checkpoint still runs (time travel), in a new run.
    history = [s async for s in remote.aget_state_history(config)]
    before_done = next(s for s in history if s.next == ("done",))
    assert (await remote.ainvoke(None, before_done.config))["log"] == ["ask:1", "done"]


async def test_invoke_none_runs_what_update_state_scheduled_after_the_end(
        temporal_client: Any, graph_worker: str) -> None:
    # update_state on a finished thread seeds a new run; None then runs what it scheduled,
    # as in-process.
    remote = _remote(temporal_client, graph_worker)
    local = _build(remote.name, InMemorySaver())
    seen = []
    for graph in (local, remote):
        config = await _finished(graph)
        await graph.aupdate_state(config, {"log": ["edited"]}, as_node="ask")
        assert (await graph.aget_state(config)).next == ("done",)
        seen.append(await graph.ainvoke(None, config))
    assert seen[0] == seen[1] == {"item": "a", "log": ["edited", "done"]}
