"""Runtime context and 'custom' chunks cross Temporal: context to the activity, chunks back."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, TypedDict

from graphrun import START, Runtime, StateGraph, registry
from graphrun.client import GraphClient


@dataclass
class Ctx:
    user: str


class State(TypedDict, total=False):
    greeting: str


def greet(state: State, runtime: Runtime[Ctx]) -> dict:
    runtime.stream_writer({"user": runtime.context.user})
    return {"greeting": f"hello {runtime.context.user}"}


def route(state: State, runtime: Runtime[Ctx]) -> str:
    return "shout" if runtime.context.user == "ann" else "__end__"


def shout(state: State) -> dict:
    return {"greeting": state["greeting"].upper()}


graph = (StateGraph(State, context_schema=Ctx).add_node("greet", greet)
         .add_node("shout", shout).add_edge(START, "greet")
         .add_conditional_edges("greet", route, ["shout", "__end__"]))


async def test_context_reaches_nodes_and_routing_and_custom_chunks_come_back(
        temporal_client: Any, graph_worker: str) -> None:
    name = f"runtime-{uuid.uuid4().hex[:8]}"
    compiled = graph.compile(name=name)
    registry.register(name, compiled)
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    for user, greeting in (("ann", "HELLO ANN"), ("bob", "hello bob")):
        config = {"configurable": {"thread_id": f"rt-{uuid.uuid4().hex[:8]}"}}
        chunks = [c async for c in remote.astream({}, config, context=Ctx(user),
                                                  stream_mode=["custom", "updates"])]
        local = list(compiled.stream({}, context=Ctx(user),
                                     stream_mode=["custom", "updates"]))
        assert chunks == local
        assert ("custom", {"user": user}) in chunks
        assert (await remote.aget_state(config)).values == {"greeting": greeting}
