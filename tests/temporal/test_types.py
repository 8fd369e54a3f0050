"""Values keep their types across Temporal: LangChain messages, dataclasses, tuples."""

from __future__ import annotations

import operator
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, TypedDict

import pytest

from graphrun import START, StateGraph, registry
from graphrun.client import GraphClient

messages = pytest.importorskip("langchain_core.messages", reason="langchain-core not installed")


@dataclass
class Receipt:
    number: int
    issued: datetime


class State(TypedDict, total=False):
    messages: Annotated[list, operator.add]
    receipt: Receipt
    pair: tuple[int, int]


def reply(state: State) -> dict:
    last = state["messages"][-1]
    assert isinstance(last, messages.HumanMessage), type(last)  # typed inside the activity too
    return {"messages": [messages.AIMessage(content=f"echo: {last.content}")],
            "receipt": Receipt(7, datetime(2026, 1, 2, tzinfo=UTC)), "pair": (1, 2)}


async def test_messages_dataclasses_and_tuples_round_trip(temporal_client: Any,
                                                          graph_worker: str) -> None:
    name = f"types-{uuid.uuid4().hex[:8]}"
    registry.register(name, StateGraph(State).add_node("reply", reply)
                      .add_edge(START, "reply").compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    out = await remote.ainvoke({"messages": [messages.HumanMessage(content="hi")]}, config)
    assert [type(m) for m in out["messages"]] == [messages.HumanMessage, messages.AIMessage]
    assert out["messages"][1].content == "echo: hi"
    assert out["receipt"] == Receipt(7, datetime(2026, 1, 2, tzinfo=UTC))
    assert out["pair"] == (1, 2)
    state = await remote.aget_state(config)
    assert isinstance(state.values["messages"][1], messages.AIMessage)
