"""LangGraph's "Add human-in-the-loop controls" tutorial, in-process: on LangGraph,
bridged (`from_langgraph`), and with its ToolNode in a graphrun StateGraph."""

from __future__ import annotations

from typing import Any

from langgraph.types import Command

import graphrun
from graphrun import from_langgraph
from tests.langgraph_bridge import tutorial_hitl as t
from tests.langgraph_bridge.routing import unrouted


def _run(graph: Any, command: Any) -> tuple[list[Any], Any, list[Any]]:
    config = {"configurable": {"thread_id": "1"}}
    events = list(graph.stream({"messages": [{"role": "user", "content": t.USER_INPUT}]},
                               config, stream_mode="values"))
    snapshot = graph.get_state(config)
    after = list(graph.stream(command(resume={"data": t.HUMAN_RESPONSE}), config,
                              stream_mode="values"))
    return events, snapshot.next, after


def _shown(events: list[Any]) -> list[list[tuple[str, Any]]]:
    return [[(m.type, m.content) for m in e["messages"]] for e in events]


def test_tutorial_runs_as_on_langgraph() -> None:
    with unrouted():
        lg_events, lg_next, lg_after = _run(t.compile(t.memory()), Command)
    events, next_, after = _run(from_langgraph(t.compile(t.memory())), Command)
    assert lg_next == next_ == ("tools",)
    assert _shown(events) == _shown(lg_events)
    assert _shown(after) == _shown(lg_after)
    assert after[-1]["messages"][-1].content == f"The experts say: {t.HUMAN_RESPONSE}"


def test_tool_node_in_a_graphrun_graph() -> None:
    builder = graphrun.StateGraph(t.State)
    builder.add_node("chatbot", t.chatbot)
    builder.add_node("tools", t.ToolNode(tools=t.tools))
    builder.add_conditional_edges("chatbot", t.tools_condition)
    builder.add_edge("tools", "chatbot")
    builder.add_edge(graphrun.START, "chatbot")
    graph = builder.compile(checkpointer=graphrun.InMemorySaver())
    events, next_, after = _run(graph, graphrun.Command)
    assert events[-1]["messages"][-1].tool_calls[0]["name"] == "human_assistance"
    assert next_ == ("tools",)
    assert after[-1]["messages"][-1].content == f"The experts say: {t.HUMAN_RESPONSE}"
