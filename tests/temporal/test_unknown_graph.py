"""Invoking a graph no worker serves fails at once, naming it, and leaves no run open."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from temporalio.client import WorkflowExecutionStatus

from graphrun.client import GraphClient
from graphrun.errors import GraphNotFoundError


async def test_invoke_of_an_unknown_graph_fails_fast_and_closes(temporal_client: Any,
                                                                graph_worker: str) -> None:
    tid = f"nosuch-{uuid.uuid4().hex[:8]}"
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph("nosuch")
    start = time.monotonic()
    with pytest.raises(GraphNotFoundError) as info:
        await remote.ainvoke({"x": 1}, {"configurable": {"thread_id": tid}})
    assert time.monotonic() - start < 5
    assert "'nosuch'" in str(info.value) and "Registered:" in str(info.value)
    handle = temporal_client.get_workflow_handle(tid)
    for _ in range(50):  # the run fails right after refusing the invocation
        if (await handle.describe()).status != WorkflowExecutionStatus.RUNNING:
            break
        await asyncio.sleep(0.1)
    assert (await handle.describe()).status == WorkflowExecutionStatus.FAILED
