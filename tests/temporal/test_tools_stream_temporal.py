"""The 'tools' stream mode on Temporal: a ToolNode's tool calls stream from the node's
activity as they do in-process (started, output deltas, finished or error)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool
from langgraph.prebuilt import ToolNode, ToolRuntime
from typing_extensions import TypedDict

from graphrun import END, START, NodeFailedError, StateGraph, registry
from graphrun.client import GraphClient
from graphrun.messages import add_messages


class State(TypedDict):
    messages: Annotated[list, add_messages]


@tool
def streamer(marker: str, runtime: ToolRuntime) -> str:
    """Streams two pieces of its output, then returns it."""
    runtime.emit_output_delta(f"{marker}-1")
    runtime.emit_output_delta({"piece": 2})
    return marker


@tool
def boom() -> str:
    """Fails."""
    raise ValueError("nope")


def _agent(calls: list[dict[str, Any]], tools: list[Any], name: str) -> Any:
    def caller(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    inner = StateGraph(State)
    inner.add_node("caller", caller)
    inner.add_node("tools", ToolNode(tools))
    inner.add_edge(START, "caller")
    inner.add_edge("caller", "tools")
    inner.add_edge("tools", END)
    outer = StateGraph(State)  # the agent as a subgraph: its tools stream under its namespace
    outer.add_node("agent", inner.compile())
    outer.add_edge(START, "agent")
    return outer.compile(name=name)


def _served(temporal_client: Any, queue: str, graph: Any) -> Any:
    registry.register(graph.name, graph)
    return GraphClient(temporal_client, task_queue=queue).graph(graph.name)


def _config() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"tools-{uuid.uuid4().hex[:8]}"}}


def _shown(chunks: list[Any]) -> list[Any]:
    """Chunks with task ids and message ids taken out (they come from the thread id)."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "id"}
        if isinstance(value, (list, tuple)):
            return type(value)(strip(v) for v in value)
        if isinstance(value, str) and ":" in value:
            return value.split(":")[0]
        if isinstance(value, BaseMessage):
            return (type(value).__name__, value.content, getattr(value, "tool_call_id", None),
                    getattr(value, "tool_calls", None))
        return value

    return [strip(c) for c in chunks]


@pytest.mark.parametrize("subgraphs", [True, False])
async def test_tool_calls_stream_as_in_process(temporal_client: Any, graph_worker: str,
                                               subgraphs: bool) -> None:
    calls = [{"name": "streamer", "args": {"marker": "A"}, "id": "a"}]
    graph = _agent(calls, [streamer], f"tools-{uuid.uuid4().hex[:8]}")
    remote = _served(temporal_client, graph_worker, graph)
    got = [c async for c in remote.astream({"messages": []}, _config(),
                                           stream_mode=["tools", "updates"],
                                           subgraphs=subgraphs)]
    want = list(graph.stream({"messages": []}, stream_mode=["tools", "updates"],
                             subgraphs=subgraphs))
    assert _shown(got) == _shown(want)
    tools = [c[-1] for c in got if c[-2] == "tools"]
    assert [e["event"] for e in tools] == (
        ["tool-started", "tool-output-delta", "tool-output-delta", "tool-finished"]
        if subgraphs else [])  # the tools run in the agent subgraph
    if subgraphs:
        assert {c[0][0].split(":")[0] for c in got if c[1] == "tools"} == {"agent"}
        assert [e.get("delta") for e in tools[1:3]] == ["A-1", {"piece": 2}]
        assert tools[-1]["output"].content == "A"


async def test_parallel_tool_calls_keep_their_own_deltas(temporal_client: Any,
                                                         graph_worker: str) -> None:
    calls = [{"name": "streamer", "args": {"marker": m}, "id": m} for m in ("A", "B")]
    graph = _agent(calls, [streamer], f"tools-{uuid.uuid4().hex[:8]}")
    remote = _served(temporal_client, graph_worker, graph)
    events = [c async for c in remote.astream({"messages": []}, _config(), stream_mode="tools",
                                              subgraphs=True)]
    deltas: dict[str, list[Any]] = {}
    for _, e in events:
        if e["event"] == "tool-output-delta":
            deltas.setdefault(e["tool_call_id"], []).append(e["delta"])
    assert deltas == {"A": ["A-1", {"piece": 2}], "B": ["B-1", {"piece": 2}]}


async def test_a_failing_tool_streams_its_error_then_the_run_fails(temporal_client: Any,
                                                                    graph_worker: str) -> None:
    graph = _agent([{"name": "boom", "args": {}, "id": "t1"}], [boom],
                   f"tools-{uuid.uuid4().hex[:8]}")
    remote = _served(temporal_client, graph_worker, graph)
    events: list[dict[str, Any]] = []
    with pytest.raises(NodeFailedError, match="nope"):
        async for _, mode, event in remote.astream({"messages": []}, _config(),
                                                   stream_mode=["tools"], subgraphs=True):
            assert mode == "tools"
            events.append(event)
    assert [(e["event"], e.get("message")) for e in events] == [
        ("tool-started", None), ("tool-error", "nope")]
