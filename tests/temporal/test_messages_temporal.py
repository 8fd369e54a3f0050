"""MessagesState on Temporal: add_messages runs in the workflow, ids are deterministic."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from graphrun import START, StateGraph, registry
from graphrun.client import GraphClient
from graphrun.worker import create_replayer

pytest.importorskip("langchain_core.messages", reason="langchain-core not installed")

from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)

from graphrun.messages import MessagesState


def chat(state: MessagesState) -> dict[str, Any]:
    last = state["messages"][-1]
    assert isinstance(last, HumanMessage) and isinstance(last.id, str)  # typed, with its id
    return {"messages": [
        AIMessage(content=f"echo: {last.content}",
                  tool_calls=[{"name": "lookup", "args": {"q": last.content}, "id": "c1"}]),
        ToolMessage(content="found", tool_call_id="c1"),
        ("ai", "done"),
    ]}


def tidy(state: MessagesState) -> dict[str, Any]:
    # Removes by an id the workflow gave in the step before: on replay the workflow
    # must give the same id, or this removal names an id that doesn't exist.
    tool = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert tool.id is not None
    return {"messages": [RemoveMessage(id=tool.id)]}


def _view(messages: list[Any]) -> list[tuple[type, Any]]:
    return [(type(m), m.content) for m in messages]


async def test_messages_state_on_temporal(temporal_client: Any, graph_worker: str) -> None:
    name = f"messages-{uuid.uuid4().hex[:8]}"
    graph = (StateGraph(MessagesState).add_node("chat", chat).add_node("tidy", tidy)
             .add_edge(START, "chat").add_edge("chat", "tidy").compile(name=name))
    registry.register(name, graph)
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    tid = uuid.uuid4().hex
    config = {"configurable": {"thread_id": tid}}

    out = (await remote.ainvoke({"messages": [("user", "hi")]}, config))["messages"]
    assert _view(out) == [(HumanMessage, "hi"), (AIMessage, "echo: hi"), (AIMessage, "done")]
    assert out[1].tool_calls[0]["args"] == {"q": "hi"}
    ids = [m.id for m in out]
    assert all(isinstance(i, str) for i in ids) and len(set(ids)) == 3

    # the ids are kept in the checkpoint and the same on every read
    for _ in range(2):
        snap = await remote.aget_state(config)
        assert _view(snap.values["messages"]) == _view(out)
        assert [m.id for m in snap.values["messages"]] == ids

    # the run replays: the workflow gives the same ids again
    history = await temporal_client.get_workflow_handle(tid).fetch_history()
    result = await create_replayer({name: graph}).replay_workflow(history)
    assert result.replay_failure is None

    # a second turn (its input removes the first message by id) keeps the other ids
    out2 = (await remote.ainvoke({"messages": [RemoveMessage(id=ids[0]), "again"]},
                                 config))["messages"]
    assert [m.id for m in out2[:2]] == ids[1:] and len({m.id for m in out2}) == 5
    assert _view(out2[2:]) == [(HumanMessage, "again"), (AIMessage, "echo: again"),
                               (AIMessage, "done")]
    for _ in range(2):
        snap = await remote.aget_state(config)
        assert [m.id for m in snap.values["messages"]] == [m.id for m in out2]
