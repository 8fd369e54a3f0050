"""Runtime context, injected parameters and the 'custom' stream, side by side with LangGraph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

import pytest
from langgraph.config import get_stream_writer as lg_get_stream_writer
from langgraph.graph import StateGraph as LGStateGraph

from graphrun import START, StateGraph, get_stream_writer


@dataclass
class Ctx:
    user: str


class State(TypedDict, total=False):
    greeting: str
    route: str


def _build(graph_cls: Any, writer_fn: Any) -> Any:
    def greet(state: State, runtime) -> dict:  # type: ignore[no-untyped-def]
        writer_fn()({"step": "greet", "user": runtime.context.user})
        return {"greeting": f"hello {runtime.context.user}"}

    def shout(state: State, config, *, writer) -> dict:  # type: ignore[no-untyped-def]
        writer("shouting")
        return {"greeting": state["greeting"].upper(),
                "route": config["metadata"]["langgraph_node"]}

    async def route(state: State, runtime) -> str:  # type: ignore[no-untyped-def]
        return "shout" if runtime.context.user == "ann" else "__end__"

    builder = graph_cls(State, context_schema=Ctx)
    builder.add_node("greet", greet)
    builder.add_node("shout", shout)
    builder.add_edge(START, "greet")
    builder.add_conditional_edges("greet", route, ["shout", "__end__"])
    return builder.compile()


@pytest.mark.parametrize("user", ["ann", "bob"])
async def test_context_writer_and_async_routing_match_langgraph(user: str) -> None:
    ours = _build(StateGraph, get_stream_writer)
    theirs = _build(LGStateGraph, lg_get_stream_writer)
    modes = ["custom", "updates", "values"]
    expected = [c async for c in theirs.astream({}, context={"user": user}, stream_mode=modes)]
    got = [c async for c in ours.astream({}, context={"user": user}, stream_mode=modes)]
    assert got == expected
    assert await ours.ainvoke({}, context=Ctx(user)) == await theirs.ainvoke(
        {}, context=Ctx(user))
    # graphrun also awaits an async routing function in a sync run (LangGraph refuses).
    assert ours.invoke({}, context=Ctx(user)) == await theirs.ainvoke({}, context=Ctx(user))


def test_get_stream_writer_outside_a_run_writes_nowhere() -> None:
    get_stream_writer()("nothing happens")
