"""A state that outgrows Temporal's payload limit fails a node cleanly; never a
workflow-task failure loop, and the thread can be driven on."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, Any, TypedDict

import pytest
from temporalio.api.enums.v1 import EventType

from graphrun import END, START, NodeFailedError, Overwrite, StateGraph, registry
from graphrun.client import GraphClient

CHUNK = "x" * 60_000  # ~60 KB a step


class Growing(TypedDict):
    blobs: Annotated[list[str], operator.add]
    steps: int


def _graph(name: str) -> Any:
    def grow(state: Growing) -> dict[str, Any]:
        return {"blobs": [CHUNK], "steps": state["steps"] + 1}

    return (StateGraph(Growing).add_node("grow", grow).add_edge(START, "grow")
            .add_conditional_edges("grow", lambda s: "grow" if s["steps"] < 40 else END)
            .compile(name=name))


async def test_growing_state_fails_the_node_cleanly_and_the_thread_goes_on(
        temporal_client: Any, graph_worker: str) -> None:
    name = f"grow-{uuid.uuid4().hex[:8]}"
    registry.register(name, _graph(name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    tid = f"grow-{uuid.uuid4().hex[:8]}"
    cfg = {"configurable": {"thread_id": tid}}
    with pytest.raises(NodeFailedError) as info:
        await remote.ainvoke({"blobs": [], "steps": 0}, {**cfg, "recursion_limit": 100})
    err = info.value
    assert err.node == "grow" and err.error_type == "PayloadTooLargeError"
    assert "2,000,000" in err.error_message and "external payload storage" in err.error_message
    snap = await remote.aget_state(cfg)
    assert 30 <= snap.values["steps"] < 40 and snap.next == ("grow",)

    # No workflow task ever failed: the history has no failed workflow task.
    handle = temporal_client.get_workflow_handle(tid)
    history = await handle.fetch_history()
    failed = EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    assert not [e for e in history.events if e.event_type == failed]

    # The fix: drop the blobs, and the thread runs on to the end from its checkpoint.
    await remote.aupdate_state(cfg, {"blobs": Overwrite([])}, as_node="grow")
    out = await remote.ainvoke(None, {**cfg, "recursion_limit": 100})
    assert out["steps"] == 40 and len(out["blobs"]) == 40 - snap.values["steps"]
