"""Runtime context and 'custom' chunks cross Temporal: context to the activity, chunks back."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, TypedDict

from graphrun import START, Command, RetryPolicy, Runtime, StateGraph, registry
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


class Flaky(TypedDict, total=False):
    greeting: str
    handled_by: str


def always_fails(state: Flaky) -> dict:
    raise ValueError("down for maintenance")


def recover(state: Flaky, error: Any) -> Command:
    return Command(update={"handled_by": f"{error.node}: {error.error}"}, goto="after")


async def test_an_error_handler_runs_once_retries_are_used_up(
        temporal_client: Any, graph_worker: str) -> None:
    """The handler runs as a task of its own (its activity), given the node's error as
    its type and message (a ReportedError whose text is the exception's)."""
    name = f"handler-{uuid.uuid4().hex[:8]}"
    graph = (StateGraph(Flaky)
             .add_node("fails", always_fails, error_handler=recover,
                       retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.01,
                                                retry_on=ValueError))
             .add_node("after", lambda s: {"greeting": "recovered"})
             .add_edge(START, "fails").compile(name=name))
    registry.register(name, graph)
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    out = await remote.ainvoke({}, {"configurable": {"thread_id": f"h-{uuid.uuid4().hex[:8]}"}})
    assert out == graph.invoke({}) == {"greeting": "recovered",
                                        "handled_by": "fails: down for maintenance"}
