"""ThreadHandle: one thread's protocol, the object RemoteGraph's methods go through."""

from __future__ import annotations

import uuid
from typing import Any

from graphrun import Command, registry
from graphrun.client import GraphClient
from tests.temporal.test_update_state import _build


async def test_a_thread_handle_runs_reads_and_updates_its_thread(temporal_client: Any,
                                                                 graph_worker: str) -> None:
    name = f"handle-{uuid.uuid4().hex[:8]}"
    registry.register(name, _build(name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    tid = f"t-{uuid.uuid4().hex[:8]}"
    thread = remote.thread(tid)
    assert thread.thread_id == tid and thread.workflow_id == remote.gc.workflow_id(tid)

    paused = await thread.run({"x": 0})
    assert paused.status == "interrupted" and [i["value"] for i in paused.interrupts] == ["x?"]
    assert (await thread.state()).next == ("ask",)
    assert (await remote.aget_state({"configurable": {"thread_id": tid}})).next == ("ask",)

    done = await thread.run(Command(resume=42))
    assert done.status == "done"
    assert (await thread.state()).values == {"x": 42, "path": "big"}

    config = await thread.update({"x": 1}, as_node="ask")
    assert config["configurable"]["thread_id"] == tid
    assert (await thread.state()).next == ("small",)
    history = [s async for s in thread.history()]
    assert history[0].config["configurable"]["checkpoint_id"] == \
        config["configurable"]["checkpoint_id"]
    assert (await thread.stream_end())[1] == 0  # no run of it streamed
    await thread.cancel("no-such-run")  # a run that is over, or never was: nothing to do
