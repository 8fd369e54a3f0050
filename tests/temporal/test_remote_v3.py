"""`stream_events(version="v3")` on Temporal: LangGraph's run streams over a RemoteGraph's
live stream give what they give in-process (values, chat-model messages streamed as
content blocks from the worker, interrupts, subgraphs, output)."""

from __future__ import annotations

import asyncio
import operator
import uuid
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langgraph.stream")

from langchain_core.messages import AIMessage

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt, registry
from graphrun.client import GraphClient
from graphrun.messages import MessagesState
from graphrun.worker import create_worker
from tests.langgraph_suite.fake_chat import FakeChatModel


class S(TypedDict):
    value: str
    items: Annotated[list[str], operator.add]


def _chain(checkpointer: Any = None) -> Any:
    def a(s: S) -> dict[str, Any]:
        return {"value": s["value"] + "_a", "items": ["a"]}

    def ask(s: S) -> dict[str, Any]:
        return {"items": [interrupt("go on?")]}

    inner = StateGraph(S).add_node("b", lambda s: {"items": ["b"]}).add_edge(START, "b")
    return (StateGraph(S).add_node("a", a).add_node("inner", inner.compile())
            .add_node("ask", ask).add_edge(START, "a").add_edge("a", "inner")
            .add_edge("inner", "ask").add_edge("ask", END).compile(checkpointer=checkpointer))


def _chat() -> Any:
    model = FakeChatModel(messages=[AIMessage(content="hello world")])

    def call(state: MessagesState) -> dict[str, Any]:
        return {"messages": model.invoke(state["messages"])}

    return StateGraph(MessagesState).add_node("call", call).add_edge(START, "call").compile()


def _served(temporal_client: Any, task_queue: str, graph: Any) -> tuple[Any, Any]:
    name = f"v3-{uuid.uuid4().hex[:8]}"
    registry.register(name, graph)
    worker = create_worker(temporal_client, {name: graph}, task_queue=task_queue)
    return worker, GraphClient(temporal_client, task_queue=task_queue, tracing=None).graph(name)


async def _seen(graph: Any, config: dict[str, Any]) -> dict[str, Any]:
    run = await graph.astream_events({"value": "x", "items": []}, config, version="v3")
    values = [v async for v in run.values]
    out: dict[str, Any] = {"values": values, "interrupted": await run.interrupted(),
                           "interrupts": [i.value for i in await run.interrupts()]}
    resumed = await graph.astream_events(Command(resume="yes"), config, version="v3")
    out["resumed"] = [v async for v in resumed.values]
    out["output"] = await resumed.output()
    return out


async def test_values_interrupts_and_output_as_in_process(temporal_client: Any,
                                                         task_queue: str) -> None:
    worker, remote = _served(temporal_client, task_queue, _chain())
    async with worker:
        got = await _seen(remote, {"configurable": {"thread_id": uuid.uuid4().hex}})
    expected = await _seen(_chain(InMemorySaver()), {"configurable": {"thread_id": "t"}})
    assert got == expected
    assert got["interrupted"] and got["interrupts"] == ["go on?"]
    assert got["output"] == {"value": "x_a", "items": ["a", "a", "b", "yes"]}  # inner returns its state


async def test_messages_stream_from_the_worker(temporal_client: Any, task_queue: str
                                               ) -> None:
    worker, remote = _served(temporal_client, task_queue, _chat())

    async def texts(graph: Any, config: dict[str, Any]) -> tuple[list[list[str]], Any]:
        run = await graph.astream_events({"messages": "hi"}, config, version="v3")
        streams = [[t async for t in m.text] async for m in run.messages]
        return streams, await run.output()

    async with worker:
        got, out = await texts(remote, {"configurable": {"thread_id": uuid.uuid4().hex}})
    expected, _ = await texts(_chat(), {})
    assert got == expected == [["hello", " ", "world"]]
    assert out["messages"][-1].text == "hello world"


async def test_sync_stream_events_v3(temporal_client: Any, task_queue: str) -> None:
    worker, remote = _served(temporal_client, task_queue, _chain())
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}

    def run_sync() -> tuple[list[Any], bool]:
        run = remote.stream_events({"value": "x", "items": []}, config, version="v3")
        return list(run.values), run.interrupted

    async with worker:
        values, interrupted = await asyncio.to_thread(run_sync)
    assert values[-1] == {"value": "x_a", "items": ["a", "a", "b"]} and interrupted
