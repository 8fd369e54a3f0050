"""compile(transformers=...): LangGraph's name for a graph's v3 stream transformers, on
graphrun's graphs and carried over by from_langgraph; other keywords are refused."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import StateGraph as LGStateGraph
from langgraph.stream.stream_channel import StreamChannel
from langgraph.stream.transformers import StreamTransformer

from graphrun import START, StateGraph, from_langgraph


class State(TypedDict):
    log: Annotated[list, operator.add]


class Counting(StreamTransformer):
    """Counts the run's 'values' events on an extension channel of its own."""

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._channel: StreamChannel[int] = StreamChannel("counted")
        self._count = 0

    def init(self) -> dict[str, Any]:
        return {"counted": self._channel}

    def process(self, event: Any) -> bool:
        if event["method"] == "values":
            self._count += 1
            self._channel.push(self._count)
        return True


def _builder(cls: Any) -> Any:
    b = cls(State)
    b.add_node("a", lambda s: {"log": ["a"]})
    b.add_node("b", lambda s: {"log": ["b"]})
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    return b


def _counted(graph: Any) -> list[int]:
    run = graph.stream_events({"log": []}, version="v3")
    counted = iter(run.extensions["counted"])
    assert run.output == {"log": ["a", "b"]}
    return list(counted)


def test_langgraphs_keyword_and_graphruns_give_the_same_extension() -> None:
    expected = _counted(_builder(LGStateGraph).compile(transformers=[Counting]))
    assert expected == [1, 2, 3]
    assert _counted(_builder(StateGraph).compile(transformers=[Counting])) == expected
    assert _counted(_builder(StateGraph).compile(stream_transformers=[Counting])) == expected


def test_from_langgraph_carries_the_transformers_over() -> None:
    lg = _builder(LGStateGraph).compile(transformers=[Counting])
    assert _counted(from_langgraph(lg)) == _counted(lg)


def test_an_unknown_keyword_is_refused() -> None:
    with pytest.raises(TypeError, match="transformer"):
        _builder(StateGraph).compile(transformer=[Counting])  # a typo, not ignored
