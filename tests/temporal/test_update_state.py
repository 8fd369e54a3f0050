"""update_state as a node with a routing function: the routing runs in an activity."""

from __future__ import annotations

import uuid
from typing import Any, TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt, registry
from graphrun.client import GraphClient


class State(TypedDict, total=False):
    x: int
    path: str



def _build(name: str, checkpointer: Any = None) -> Any:
    def ask(state: State) -> dict:
        return {"x": interrupt("x?")}

    def route(state: State) -> str:
        return "big" if state["x"] > 10 else "small"

    return (StateGraph(State)
            .add_node("ask", ask)
            .add_node("big", lambda s: {"path": "big"})
            .add_node("small", lambda s: {"path": "small"})
            .add_edge(START, "ask")
            .add_conditional_edges("ask", route, ["big", "small"])
            .add_edge("big", END).add_edge("small", END)
            .compile(name=name, checkpointer=checkpointer))


async def test_update_state_routes_like_the_in_process_driver(temporal_client: Any,
                                                              graph_worker: str) -> None:
    name = f"route-{uuid.uuid4().hex[:8]}"
    registry.register(name, _build(name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    local = _build(name, InMemorySaver())
    seen = []
    for graph in (local, remote):
        config = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
        await graph.ainvoke({}, config)
        await graph.aupdate_state(config, {"x": 42}, as_node="ask")
        snap = await graph.aget_state(config)
        final = await graph.ainvoke(None, config)
        seen.append((snap.next, snap.values, final))
    assert seen[0] == seen[1] == (("big",), {"x": 42}, {"x": 42, "path": "big"})

    # On Temporal the routing function ran in the route_update activity.
    handle = temporal_client.get_workflow_handle(config["configurable"]["thread_id"])
    history = await handle.fetch_history()
    kinds = [e.activity_task_scheduled_event_attributes.activity_type.name
             for e in history.events if e.HasField("activity_task_scheduled_event_attributes")]
    assert "route_update" in kinds


async def test_update_state_on_a_finished_thread_goes_on_from_there(temporal_client: Any,
                                                                    graph_worker: str) -> None:
    name = f"finished-{uuid.uuid4().hex[:8]}"
    registry.register(name, _build(name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    local = _build(name, InMemorySaver())
    config = {"configurable": {"thread_id": f"fin-{uuid.uuid4().hex[:8]}"}}
    for graph in (remote, local):
        call = graph.ainvoke
        await call({"x": 0}, config)
        await call(Command(resume=3), config)  # finished: path "small"
        await graph.aupdate_state(config, {"x": 99})  # the run is over; LangGraph allows it
        assert (await graph.aget_state(config)).values == {"x": 99, "path": "small"}
        await graph.aupdate_state(config, {"x": 100})  # and again, on the new run
    ours = await remote.aget_state(config)
    theirs = await local.aget_state(config)
    assert ours.values == theirs.values == {"x": 100, "path": "small"}
    assert ours.next == theirs.next == ()
    ours_history = [s.values async for s in remote.aget_state_history(config)]
    theirs_history = [s.values async for s in local.aget_state_history(config)]
    assert ours_history == theirs_history
