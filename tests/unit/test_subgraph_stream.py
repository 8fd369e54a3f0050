"""stream(subgraphs=True): a subgraph's chunks under its task's namespace, as in LangGraph."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import StateGraph as LGStateGraph

from graphrun import START, StateGraph


class State(TypedDict):
    log: Annotated[list, operator.add]


def build(graph_cls: Any) -> Any:
    inner = graph_cls(State)
    inner.add_node("inner_1", lambda s: {"log": ["inner_1"]})
    inner.add_node("inner_2", lambda s: {"log": ["inner_2"]})
    inner.add_edge(START, "inner_1")
    inner.add_edge("inner_1", "inner_2")
    outer = graph_cls(State)
    outer.add_node("first", lambda s: {"log": ["first"]})
    outer.add_node("inner", inner.compile())
    outer.add_edge(START, "first")
    outer.add_edge("first", "inner")
    return outer.compile()


def names(chunks: list[Any]) -> list[Any]:
    """Namespaces without task ids ("inner:<id>" -> "inner"): the ids differ by design."""
    return [(tuple(n.split(":")[0] for n in c[0]), *c[1:]) for c in chunks]


@pytest.mark.parametrize("mode", ["updates", ["updates", "values"]])
def test_subgraph_chunks_match_langgraph(mode: Any) -> None:
    ours = list(build(StateGraph).stream({"log": []}, stream_mode=mode, subgraphs=True))
    theirs = list(build(LGStateGraph).stream({"log": []}, stream_mode=mode, subgraphs=True))
    assert names(ours) == names(theirs)
    assert any(c[0] for c in ours)  # the subgraph's own chunks are there
    # Without subgraphs=True only the graph's own chunks come, as before.
    assert list(build(StateGraph).stream({"log": []}, stream_mode=mode)) == [
        c[1:] if len(c) > 2 else c[1] for c in ours if not c[0]]


def _shape(chunk: Any) -> Any:
    """A checkpoint or debug chunk without what differs by design (ids, clock)."""
    if isinstance(chunk, dict):
        return {k: _shape(v) for k, v in chunk.items()
                if k not in ("id", "checkpoint_id", "timestamp", "config", "parent_config",
                             "checkpoint_ns", "metadata", "input", "triggers")}
    if isinstance(chunk, (list, tuple)):
        return [_shape(v) for v in chunk]
    return chunk


@pytest.mark.parametrize("mode", ["checkpoints", "debug", "tasks"])
def test_checkpoints_debug_and_tasks_modes_match_langgraph(mode: str) -> None:
    from langgraph.checkpoint.memory import InMemorySaver as LGSaver

    from graphrun import InMemorySaver

    def make(graph_cls: Any, saver: Any) -> Any:
        g = graph_cls(State)
        g.add_node("a", lambda s: {"log": ["a"]})
        g.add_node("b", lambda s: {"log": ["b"]})
        g.add_edge(START, "a")
        g.add_edge("a", "b")
        return g.compile(checkpointer=saver)

    config = {"configurable": {"thread_id": "t"}}
    ours = list(make(StateGraph, InMemorySaver()).stream({"log": []}, config, stream_mode=mode))
    theirs = list(make(LGStateGraph, LGSaver()).stream({"log": []}, config, stream_mode=mode))
    assert _shape(ours) == _shape(theirs)
    assert len(ours) == len(theirs) > 0
