"""A separate worker process for the security tests: serves `approval`.

    python -m tests.temporal.security_worker ADDRESS TASK_QUEUE

Attacks are sent to it by signal, update and start; a marker file they would
create, had any code run, must never appear.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TypedDict

from temporalio.client import Client

from graphrun import START, StateGraph, interrupt
from graphrun.client import data_converter
from graphrun.serde import InputLimits
from graphrun.worker import create_worker


class State(TypedDict):
    item: str
    amount: float
    scores: list[float]
    status: str


def approve(state: State) -> dict:
    ok = interrupt({"question": f"Approve {state['item']}?", "amount": state["amount"]})
    return {"status": "approved" if ok is True else f"rejected: {ok!r}"}


graph = StateGraph(State).add_node("approve", approve).add_edge(START, "approve").compile(
    name="approval")
LIMITS = InputLimits(max_bytes=200_000, max_depth=32)


async def main(address: str, task_queue: str) -> None:
    client = await Client.connect(address, data_converter=data_converter)
    async with create_worker(client, {"approval": graph}, task_queue=task_queue,
                             limits=LIMITS):
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
