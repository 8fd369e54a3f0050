"""stream(subgraphs=True): a subgraph's chunks under its task's namespace, as in LangGraph."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.graph import StateGraph as LGStateGraph

from graphrun import START, StateGraph


class State(TypedDict):
    log: Annotated[list, operator.add]


def steps(graph_cls: Any, first: str, second: str, sub: Any = None) -> Any:
    """A builder of `first` then `second`, each logging its name, or `second` running the
    compiled graph `sub`."""
    b = graph_cls(State)
    b.add_node(first, lambda s: {"log": [first]})
    b.add_node(second, sub if sub is not None else (lambda s: {"log": [second]}))
    b.add_edge(START, first)
    b.add_edge(first, second)
    return b


def build(graph_cls: Any) -> Any:
    return steps(graph_cls, "first", "inner",
                 steps(graph_cls, "inner_1", "inner_2").compile()).compile()


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


def streamed_in_a_node(graph_cls: Any, stream: Callable[[Any, Any], Any]) -> list[Any]:
    """What `stream(sub, state)` gives in a node of an outer graph that runs it."""
    seen: list[Any] = []

    def caller(state: State) -> dict[str, Any]:
        seen.extend(stream(build(graph_cls), state))
        return {}

    outer = graph_cls(State)
    outer.add_node("caller", caller)
    outer.add_edge(START, "caller")
    outer.compile().invoke({"log": []})
    return seen


@pytest.mark.parametrize("mode", ["updates", ["updates", "values"]])
def test_a_graph_streamed_in_a_node_streams_under_the_nodes_namespace(mode: Any) -> None:
    def v1(g: Any, s: Any) -> Any:
        return g.stream(s, stream_mode=mode, subgraphs=True)

    def v2(g: Any, s: Any) -> Any:
        return [(p["ns"], p["type"], p["data"])
                for sub in (False, True)
                for p in g.stream(s, stream_mode=mode, subgraphs=sub, version="v2")]

    for stream in (v1, v2):
        ours = streamed_in_a_node(StateGraph, stream)
        assert names(ours) == names(streamed_in_a_node(LGStateGraph, stream))
        assert all(c[0][0].startswith("caller:") for c in ours)


def test_stream_events_v3_in_a_node_shows_the_graphs_own_run() -> None:
    """Scoped to the namespace its chunks stream under: the node's, numbered from the
    node's second graph run on (LangGraph scopes every run to the node's own namespace,
    where a second run's projections stay empty)."""
    outputs: list[Any] = []
    lifecycle: list[Any] = []

    def caller(state: State) -> dict[str, Any]:
        for _ in range(2):
            run = build(StateGraph).stream_events(state, version="v3")
            lifecycle.append([(e["event"], len(e["namespace"])) for e in run.lifecycle])
            outputs.append(run.output)
        return {}

    outer = StateGraph(State)
    outer.add_node("caller", caller)
    outer.add_edge(START, "caller")
    outer.compile().invoke({"log": []})
    assert outputs == [build(LGStateGraph).invoke({"log": []})] * 2
    assert lifecycle == [[("started", 2), ("completed", 2)], [("started", 3), ("completed", 3)]]


def test_stream_events_v3_scoped_by_a_configs_checkpoint_ns() -> None:
    config = {"configurable": {"checkpoint_ns": "outer:abc"}}
    ours = build(StateGraph).stream_events({"log": []}, config, version="v3")
    theirs = build(LGStateGraph).stream_events({"log": []}, config, version="v3")
    assert (list(ours.values), ours.output) == (list(theirs.values), theirs.output) == ([], None)


def build_nested(graph_cls: Any, **compile_kw: Any) -> Any:
    """Three levels: outer -> middle (a subgraph node) -> inner (one more)."""
    inner = steps(graph_cls, "inner_1", "inner_2").compile()
    middle = steps(graph_cls, "middle_1", "inner", inner).compile()
    return steps(graph_cls, "first", "middle", middle).compile(**compile_kw)


def relabelled(chunks: Any) -> Any:
    """Chunks with each id (of a checkpoint, a task, a namespace's task) replaced by the
    order it first appears in, and without the clock: two runs of one graph compare equal
    whatever their ids (LangGraph's are uuids; a thread's own id enters graphrun's)."""
    labels: dict[str, str] = {}

    def label(found: re.Match[str]) -> str:
        return labels.setdefault(found.group(0), f"#{len(labels)}")

    def walk(value: Any) -> Any:
        if isinstance(value, dict):  # in key order: ids labelled alike whatever the order
            return {walk(k): walk(v) for k, v in sorted(value.items(), key=lambda i: str(i[0]))
                    if k != "timestamp"}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        if isinstance(value, str):
            return _ID.sub(label, value)
        return value

    return walk(chunks)


_ID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}")


@pytest.mark.parametrize("modes", [["checkpoints"], ["debug"], ["checkpoints", "debug", "tasks"]])
def test_subgraphs_checkpoints_and_debug_under_their_namespace_as_langgraph(
        modes: list[str]) -> None:
    """With subgraphs=True each subgraph streams its own checkpoints (and debug chunks)
    under its namespace, their configs naming the checkpoints around them
    (checkpoint_map), as LangGraph's; the same configs get_state_history gives."""
    from langgraph.checkpoint.memory import InMemorySaver as LGSaver

    from graphrun import InMemorySaver

    config = {"configurable": {"thread_id": "t"}}
    ours_graph = build_nested(StateGraph, checkpointer=InMemorySaver())
    ours = list(ours_graph.stream({"log": []}, config, stream_mode=modes, subgraphs=True))
    theirs = list(build_nested(LGStateGraph, checkpointer=LGSaver()).stream(
        {"log": []}, config, stream_mode=modes, subgraphs=True))
    assert relabelled(ours) == relabelled(theirs)
    checkpoints = [(ns, c.get("payload", c)) for ns, mode, c in ours if mode == "checkpoints"
                   or (mode == "debug" and c["type"] == "checkpoint")]
    assert len({ns for ns, _ in checkpoints}) == 3
    for ns, chunk in checkpoints:
        history = ours_graph.get_state_history(
            {"configurable": {"thread_id": "t", "checkpoint_ns": "|".join(ns)}})
        assert chunk["config"] in [h.config for h in history]
