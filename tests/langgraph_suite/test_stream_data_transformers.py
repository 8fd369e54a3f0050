"""Ported from LangGraph's libs/langgraph/tests/test_stream_data_transformers.py.

Upstream: langchain-ai/langgraph, commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f.
The tests that run a graph: `stream_events(version="v3")` on graphrun's compiled graphs
with LangGraph's `CustomTransformer`, `UpdatesTransformer`, `CheckpointsTransformer`,
`DebugTransformer` and `TasksTransformer` (kept from `langgraph.stream.transformers`, as
upstream imports them: graphrun returns LangGraph's run streams, fed by its own v2
stream), and `run.custom`, `run.updates`, `run.checkpoints`, `run.debug`, `run.tasks`.
Imports switched to graphrun (`StateGraph`, `START`, `END`, `InMemorySaver`,
`get_stream_writer`); bodies as upstream.

Not ported: the 37 tests that feed hand-made protocol events through LangGraph's
private `StreamMux` or read a transformer's class attributes, with no graph (LangGraph
internals): upstream's `test_custom_*`, `test_checkpoints_*`, `test_debug_*`,
`test_tasks_*` and `test_updates_*` tests before its end-to-end group,
`test_unrelated_events_ignored_by_all` and `test_tasks_and_lifecycle_coregistration`.
See README.md.

Upstream's docstring:

Tests for CustomTransformer, UpdatesTransformer, CheckpointsTransformer, DebugTransformer, TasksTransformer.

These transformers capture raw protocol events for their respective stream
modes and expose them as native projections on the run stream (run.custom,
run.updates, run.checkpoints, run.debug, run.tasks). Tests dispatch synthetic
protocol events through a StreamMux to isolate transformer logic; the final
group exercises real graphs through stream_events(version="v3").
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.stream.transformers import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    TasksTransformer,
    UpdatesTransformer,
)
from typing_extensions import TypedDict

from graphrun import END, START, InMemorySaver, StateGraph
from graphrun.config import get_stream_writer

# ---------------------------------------------------------------------------
# End-to-end: real graphs through stream_events(version="v3")
# ---------------------------------------------------------------------------


class _State(TypedDict):
    value: str
    items: Annotated[list[str], operator.add]


def _my_node(state: _State) -> dict[str, Any]:

    writer = get_stream_writer()
    writer({"status": "working", "node": "my_node"})
    return {"value": state["value"] + "!", "items": ["done"]}


def _make_simple_graph() -> Any:
    builder = StateGraph(_State, input_schema=_State)
    builder.add_node("my_node", _my_node)
    builder.add_edge(START, "my_node")
    builder.add_edge("my_node", END)
    return builder.compile()


def test_stream_events_v3_custom_projection_opt_in() -> None:
    """run.custom surfaces get_stream_writer() payloads when opted in."""
    graph = _make_simple_graph()
    run = graph.stream_events(
        {"value": "hello", "items": []}, version="v3", transformers=[CustomTransformer]
    )

    custom_events = list(run.custom)
    assert len(custom_events) >= 1
    assert any(e.get("status") == "working" for e in custom_events)


def test_stream_events_v3_custom_and_values_coexist() -> None:
    """Both run.custom and run.values work in the same run."""
    graph = _make_simple_graph()
    run = graph.stream_events(
        {"value": "hello", "items": []}, version="v3", transformers=[CustomTransformer]
    )

    custom_events = list(run.custom)
    assert run.output is not None
    assert run.output["value"] == "hello!"
    assert len(custom_events) >= 1


def test_stream_events_v3_tasks_projection_opt_in() -> None:
    """run.tasks surfaces raw task events when opted in via transformers=."""
    graph = _make_simple_graph()
    run = graph.stream_events(
        {"value": "x", "items": []}, transformers=[TasksTransformer], version="v3"
    )

    tasks_events = list(run.tasks)
    assert len(tasks_events) >= 1
    names = [t.get("name") for t in tasks_events if "name" in t]
    assert "my_node" in names


def test_stream_events_v3_debug_projection_opt_in() -> None:
    """run.debug surfaces debug events when opted in via transformers=."""
    graph = _make_simple_graph()
    run = graph.stream_events(
        {"value": "x", "items": []}, transformers=[DebugTransformer], version="v3"
    )

    debug_events = list(run.debug)
    assert len(debug_events) >= 1
    types = {d.get("type") for d in debug_events}
    assert types & {"checkpoint", "task", "task_result"}


def test_stream_events_v3_updates_projection_opt_in() -> None:
    """run.updates surfaces node output dicts when opted in via transformers=."""
    graph = _make_simple_graph()
    run = graph.stream_events(
        {"value": "x", "items": []}, version="v3", transformers=[UpdatesTransformer]
    )

    updates = list(run.updates)
    assert len(updates) >= 1
    node_names = {k for u in updates for k in u if k != "__interrupt__"}
    assert "my_node" in node_names


def test_stream_events_v3_all_transformers_interleaved() -> None:
    """All five transformers registered together, consumed via interleave."""
    graph = _make_simple_graph()
    run = graph.stream_events(
        {"value": "x", "items": []},
        version="v3",
        transformers=[
            CustomTransformer,
            UpdatesTransformer,
            CheckpointsTransformer,
            DebugTransformer,
            TasksTransformer,
        ],
    )

    collected: dict[str, list[Any]] = {
        "custom": [],
        "updates": [],
        "debug": [],
        "tasks": [],
    }
    for name, item in run.interleave("custom", "updates", "debug", "tasks"):
        collected[name].append(item)

    assert len(collected["custom"]) >= 1
    assert len(collected["updates"]) >= 1
    assert len(collected["tasks"]) >= 1
    assert len(collected["debug"]) >= 1
    types = {d.get("type") for d in collected["debug"]}
    assert types & {"checkpoint", "task", "task_result"}
    node_names = {k for u in collected["updates"] for k in u if k != "__interrupt__"}
    assert "my_node" in node_names

    assert run.output is not None
    assert run.output["value"] == "x!"


def test_stream_events_v3_all_transformers_with_checkpointer() -> None:
    """All transformers with a checkpointer — run.checkpoints populated."""

    builder = StateGraph(_State, input_schema=_State)
    builder.add_node("my_node", _my_node)
    builder.add_edge(START, "my_node")
    builder.add_edge("my_node", END)
    graph = builder.compile(checkpointer=InMemorySaver())

    run = graph.stream_events(
        {"value": "x", "items": []},
        version="v3",
        config={"configurable": {"thread_id": "test-all"}},
        transformers=[
            CustomTransformer,
            UpdatesTransformer,
            CheckpointsTransformer,
            DebugTransformer,
            TasksTransformer,
        ],
    )

    collected: dict[str, list[Any]] = {
        "custom": [],
        "updates": [],
        "checkpoints": [],
        "debug": [],
        "tasks": [],
    }
    for name, item in run.interleave(
        "custom", "updates", "checkpoints", "debug", "tasks"
    ):
        collected[name].append(item)

    assert len(collected["checkpoints"]) >= 1
    assert len(collected["custom"]) >= 1


def test_stream_events_v3_checkpoints_projection_opt_in() -> None:
    """run.checkpoints surfaces checkpoint data when opted in with a checkpointer."""

    builder = StateGraph(_State, input_schema=_State)
    builder.add_node("my_node", _my_node)
    builder.add_edge(START, "my_node")
    builder.add_edge("my_node", END)
    graph = builder.compile(checkpointer=InMemorySaver())

    run = graph.stream_events(
        {"value": "x", "items": []},
        version="v3",
        config={"configurable": {"thread_id": "test-ckpt-standalone"}},
        transformers=[CheckpointsTransformer],
    )

    checkpoints = list(run.checkpoints)
    assert len(checkpoints) >= 1


# ---------------------------------------------------------------------------
# TasksTransformer + LifecycleTransformer co-registration
# ---------------------------------------------------------------------------


def test_tasks_and_lifecycle_coregistration_e2e() -> None:
    """E2e: TasksTransformer captures task events even when LifecycleTransformer
    is present and suppressing them from the main log.
    """
    graph = _make_simple_graph()
    run = graph.stream_events(
        {"value": "x", "items": []},
        version="v3",
        transformers=[TasksTransformer],
    )

    tasks_events = list(run.tasks)
    assert len(tasks_events) >= 1
    names = [t.get("name") for t in tasks_events if "name" in t]
    assert "my_node" in names
