"""A purchase approval that waits for days, on the time-skipping test server."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

from graphrun import Command
from graphrun.client import GraphClient
from graphrun.worker import create_worker

from examples import purchase


async def test_approval_resumed_after_two_days(time_skipping_env: Any) -> None:
    env = time_skipping_env
    queue = f"tq-{uuid.uuid4()}"
    thread = f"order-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread}}
    async with create_worker(env.client, {purchase.NAME: purchase.graph}, task_queue=queue):
        remote = GraphClient(env.client, task_queue=queue, search_attributes=False).graph(purchase.NAME)
        out = await remote.ainvoke({"item": "GPU", "amount": 96.0, "status": "pending"}, config)
        assert out["__interrupt__"][0].value["question"] == "Approve this purchase?"
        paused_at = await env.get_current_time()
        started = time.monotonic()
        await env.sleep(timedelta(days=2))
        assert await env.get_current_time() - paused_at >= timedelta(days=2)
        state = await remote.aget_state(config)
        assert state.next == ("request_approval",)
        final = await remote.ainvoke(Command(resume=True), config)
        assert final["status"] == "charged"
        assert time.monotonic() - started < 30  # two days passed in seconds of wall time
