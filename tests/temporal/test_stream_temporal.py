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
