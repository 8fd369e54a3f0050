"""Error handlers on Temporal, as LangGraph runs them: a node of its own,
`__error_handler__<node>` (or `__default_error_handler__`), run as its own activity
right after the failed node's, while the step's other tasks go on. After a handler
fails, resuming the thread runs the handler again, never the failed node.

Each scenario runs on LangGraph, in-process and on Temporal: the same values, the same
'updates' chunks, the same calls. The error reaches a handler on Temporal (and on a
resume) as a ReportedError: its type's name and its message.
"""

import operator
import threading
import uuid
from typing import Annotated, Any, TypedDict

import pytest

from graphrun import START, InMemorySaver, StateGraph, registry
from graphrun.client import GraphClient
from graphrun.errors import NodeFailedError, ReportedError


class State(TypedDict):
    results: Annotated[list[str], operator.add]


def crashing_handlers(lib: Any, calls: dict[str, int], crash: list[bool],
                      errors: list[Any]) -> Any:
    """Nodes 'a' and 'b' fail in one step; each has a handler, and 'b' waits until
    a's handler started (the handlers run while the step's other tasks go on). The
    handlers fail while `crash[0]`."""
    started = threading.Event()

    def node_a(state: State) -> dict[str, Any]:
        calls["a"] += 1
        raise RuntimeError("a failed")

    def node_b(state: State) -> dict[str, Any]:
        calls["b"] += 1
        assert started.wait(timeout=10), "handler_a never started"
        raise RuntimeError("b failed")

    def make_handler(name: str) -> Any:
        def handler(state: State, error: lib.NodeError) -> dict[str, Any]:
            calls[f"handler_{name}"] += 1
            errors.append(error)
            if name == "a":
                started.set()
            if crash[0]:
                raise RuntimeError(f"handler_{name} crash")
            return {"results": [f"recovered_{name}:{error.node}:{error.error}"]}
        return handler

    return (lib.StateGraph(State)
            .add_node("a", node_a, error_handler=make_handler("a"))
            .add_node("b", node_b, error_handler=make_handler("b"))
            .add_edge(lib.START, "a").add_edge(lib.START, "b"))


def _langgraph() -> Any:
    import langgraph.errors
    import langgraph.graph

    class Lib:
        StateGraph = langgraph.graph.StateGraph
        START = langgraph.graph.START
        NodeError = langgraph.errors.NodeError

    return Lib


def _graphrun() -> Any:
    import graphrun

    class Lib:
        StateGraph = graphrun.StateGraph
        START = graphrun.START
        NodeError = graphrun.NodeError

    return Lib


async def test_a_crashed_handler_is_resumed_not_its_node(temporal_client: Any,
                                                         graph_worker: str) -> None:
    calls = {"a": 0, "b": 0, "handler_a": 0, "handler_b": 0}
    crash, errors = [True], []
    name = f"handlers-{uuid.uuid4().hex[:8]}"
    registry.register(name, crashing_handlers(_graphrun(), calls, crash, errors)
                      .compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    config = {"configurable": {"thread_id": f"h-{uuid.uuid4().hex[:8]}"}}

    with pytest.raises(NodeFailedError, match=r"handler_[ab] crash"):
        await remote.ainvoke({"results": []}, config)
    assert calls == {"a": 1, "b": 1, "handler_a": 1, "handler_b": 1}
    snapshot = await remote.aget_state(config)
    assert snapshot.next == ("a", "b")
    assert [(t.name, t.error) for t in snapshot.tasks] == [
        ("a", "RuntimeError('a failed')"), ("b", "RuntimeError('b failed')")]

    crash[0] = False
    out = await remote.ainvoke(None, config)
    assert sorted(out["results"]) == ["recovered_a:a:a failed", "recovered_b:b:b failed"]
    assert calls == {"a": 1, "b": 1, "handler_a": 2, "handler_b": 2}
    # What a handler is given on Temporal: the node, and its error's type and message.
    # Known by name and message, and a RuntimeError still (a built-in class).
    assert {(e.node, e.error.error_type, str(e.error)) for e in errors} == {
        ("a", "RuntimeError", "a failed"), ("b", "RuntimeError", "b failed")}
    assert all(isinstance(e.error, ReportedError) and isinstance(e.error, RuntimeError)
               for e in errors)


@pytest.mark.parametrize("lib", ["langgraph", "graphrun", "temporal"])
async def test_handler_runs_beside_the_step_and_streams_as_its_node(
        temporal_client: Any, graph_worker: str, lib: str) -> None:
    """The same chunks on each: the failed node's 'tasks' result with its error, then the
    handler's update under its own node's name; the same state at the end."""
    calls = {"a": 0, "b": 0, "handler_a": 0, "handler_b": 0}
    builder = crashing_handlers(_langgraph() if lib == "langgraph" else _graphrun(),
                                calls, [False], [])
    config = {"configurable": {"thread_id": f"s-{uuid.uuid4().hex[:8]}"}}
    if lib == "langgraph":
        from langgraph.checkpoint.memory import InMemorySaver as LgSaver

        graph: Any = builder.compile(checkpointer=LgSaver())
    elif lib == "graphrun":
        graph = builder.compile(checkpointer=InMemorySaver())
    else:
        name = f"handlers-{uuid.uuid4().hex[:8]}"
        registry.register(name, builder.compile(name=name))
        graph = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    chunks = [c async for c in graph.astream({"results": []}, config, stream_mode="updates")]
    assert sorted(chunks, key=repr) == sorted([
        {"__error_handler__a": {"results": ["recovered_a:a:a failed"]}},
        {"__error_handler__b": {"results": ["recovered_b:b:b failed"]}}], key=repr)
    assert calls == {"a": 1, "b": 1, "handler_a": 1, "handler_b": 1}
    state = await graph.aget_state(config)
    assert sorted(state.values["results"]) == ["recovered_a:a:a failed",
                                                "recovered_b:b:b failed"]
    assert state.next == ()


def test_handlers_are_nodes() -> None:
    """Named as LangGraph names them; a breakpoint may name one."""
    def handler(state: State) -> dict[str, Any]:
        return {}

    graph = (StateGraph(State).set_node_defaults(error_handler=handler)
             .add_node("a", lambda s: {}, error_handler=handler)
             .add_node("b", lambda s: {})
             .add_edge(START, "a").add_edge("a", "b")
             .compile(interrupt_before=["__error_handler__a"]))
    assert list(graph.spec.nodes) == ["__start__", "__error_handler__a", "a", "b",
                                      "__default_error_handler__"]
    assert graph.spec.nodes["b"].error_handler_node == "__default_error_handler__"
    assert graph.spec.nodes["a"].error_handler_node == "__error_handler__a"
