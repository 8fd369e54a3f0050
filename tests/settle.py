"""Waiting for a thread to settle: its workflow stays open once its graph ends, so a
test that answered by signal waits for the thread's GraphStatus instead of a result."""

from __future__ import annotations

import asyncio
from typing import Any

from graphrun.visibility import GRAPH_STATUS


async def settled(handle: Any, status: str = "done", timeout: float = 30.0) -> None:
    """Until the thread's GraphStatus (described: its own state, not visibility's
    lagging copy) is `status`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        desc = await handle.describe()
        if desc.typed_search_attributes.get(GRAPH_STATUS) == status:
            return
        if loop.time() > deadline:
            raise TimeoutError(f"thread {handle.id} is "
                               f"{desc.typed_search_attributes.get(GRAPH_STATUS)!r}, "
                               f"not {status!r}")
        await asyncio.sleep(0.02)
