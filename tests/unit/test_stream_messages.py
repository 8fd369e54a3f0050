"""stream_mode="messages": a chat model's tokens inside a node, as LangGraph streams them."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import StateGraph as LGStateGraph
from langgraph.graph.message import MessagesState as LGMessagesState

from graphrun import START, StateGraph
from graphrun.messages import MessagesState


def build(graph_cls: Any, state: Any, explicit_config: bool) -> Any:
    def chat(state, config):  # type: ignore[no-untyped-def]
        model = GenericFakeChatModel(messages=iter([AIMessage(content="hello there you",
                                                              id="ai-1")]))
        reply = model.invoke(state["messages"], config) if explicit_config else model.invoke(
            state["messages"])
        return {"messages": [reply]}

    def echo(state):  # type: ignore[no-untyped-def]
        return {"messages": [AIMessage(content="done", id="ai-2")]}

    builder = graph_cls(state)
    builder.add_node("chat", chat)
    builder.add_node("echo", echo)
    builder.add_edge(START, "chat")
    builder.add_edge("chat", "echo")
    return builder.compile()


def shape(chunks: list[Any]) -> list[Any]:
    return [(type(m).__name__, m.content, meta["langgraph_node"]) for m, meta in chunks]


@pytest.mark.parametrize("explicit_config", [True, False])
def test_tokens_and_returned_messages_stream_as_in_langgraph(explicit_config: bool) -> None:
    inputs = {"messages": [("user", "hi")]}
    ours = list(build(StateGraph, MessagesState, explicit_config).stream(
        inputs, stream_mode="messages"))
    theirs = list(build(LGStateGraph, LGMessagesState, explicit_config).stream(
        inputs, stream_mode="messages"))
    assert shape(ours) == shape(theirs)
    assert len(ours) > 3  # token by token, then the echo node's message
