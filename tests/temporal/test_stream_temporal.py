"""On Temporal, astream gives the chunks the in-process driver gives, subgraphs' included."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from graphrun import StateGraph, registry
from graphrun.client import GraphClient
from tests.unit.test_subgraph_stream import build


@pytest.mark.parametrize("mode", ["updates", ["updates", "values", "tasks"]])
async def test_astream_on_temporal_equals_in_process(temporal_client: Any, graph_worker: str,
                                                     mode: Any) -> None:
    name = f"stream-{uuid.uuid4().hex[:8]}"
    graph = build(StateGraph)
    registry.register(name, graph)
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    for subgraphs in (False, True):
        config = {"configurable": {"thread_id": f"st-{uuid.uuid4().hex[:8]}"}}
        got = [c async for c in remote.astream({"log": []}, config, stream_mode=mode,
                                               subgraphs=subgraphs)]
        want = list(graph.stream({"log": []}, stream_mode=mode, subgraphs=subgraphs))
        # Task ids come from the thread id: compare with the ids taken out.
        assert _no_ids(got) == _no_ids(want)
        assert any(c[0] for c in got) if subgraphs else True


def _no_ids(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_ids(v) for k, v in value.items() if k != "id"}
    if isinstance(value, (list, tuple)):
        return type(value)(_no_ids(v) for v in value)
    if isinstance(value, str) and ":" in value:
        return value.split(":")[0]
    return value


async def test_messages_mode_on_temporal(temporal_client: Any, graph_worker: str) -> None:
    from graphrun.messages import MessagesState
    from tests.unit.test_stream_messages import build as build_chat
    from tests.unit.test_stream_messages import shape

    name = f"chat-{uuid.uuid4().hex[:8]}"
    graph = build_chat(StateGraph, MessagesState, explicit_config=False)
    registry.register(name, graph)
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    config = {"configurable": {"thread_id": f"chat-{uuid.uuid4().hex[:8]}"}}
    got = [c async for c in remote.astream({"messages": [("user", "hi")]}, config,
                                           stream_mode="messages")]
    want = list(graph.stream({"messages": [("user", "hi")]}, stream_mode="messages"))
    assert shape(got) == shape(want) and len(got) > 3


@pytest.mark.parametrize("modes", [["checkpoints"], ["debug"]])
async def test_subgraphs_checkpoints_and_debug_on_temporal(temporal_client: Any,
                                                           graph_worker: str,
                                                           modes: list[str]) -> None:
    """A subgraph's own checkpoints and debug chunks come from the node's activity, under
    the subgraph's namespace, as in-process (ids aside), and name the checkpoints the
    thread's history names."""
    from graphrun import InMemorySaver
    from tests.unit.test_subgraph_stream import build_nested, relabelled

    name = f"nested-{uuid.uuid4().hex[:8]}"
    registry.register(name, build_nested(StateGraph))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    tid = f"nested-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": tid}}
    got = [c async for c in remote.astream({"log": []}, config, stream_mode=modes,
                                           subgraphs=True)]
    want = list(build_nested(StateGraph, checkpointer=InMemorySaver()).stream(
        {"log": []}, {"configurable": {"thread_id": tid}}, stream_mode=modes,
        subgraphs=True))
    assert relabelled(got) == relabelled(want)
    inner = [(ns, c.get("payload", c)) for ns, _, c in got if len(ns) == 2
             and c.get("type", "checkpoint") == "checkpoint"]
    assert inner
    history = [h.config async for h in remote.aget_state_history(
        {"configurable": {"thread_id": tid, "checkpoint_ns": "|".join(inner[0][0])}})]
    assert [c["config"] for _, c in inner] == history[::-1]
