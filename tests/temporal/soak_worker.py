"""A worker process for the soak test: serves `soak`, whose nodes log each run.

    python -m tests.temporal.soak_worker ADDRESS TASK_QUEUE JOURNAL_PATH CACHE_SIZE
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TypedDict

from temporalio.client import Client

from graphrun import START, StateGraph, interrupt
from graphrun.client import data_converter
from graphrun.worker import create_worker


class State(TypedDict):
    order: str
    status: str


def _log(name: str, order: str) -> None:
    # One short append per line: whole lines even with many nodes at once.
    with open(os.environ["JOURNAL"], "a") as f:
        f.write(f"{name} {order} {os.getpid()}\n")


def prepare(state: State) -> dict:
    _log("prepare", state["order"])
    return {"status": "prepared"}


def approve(state: State) -> dict:
    ok = interrupt({"question": f"Approve {state['order']}?"})
    _log("approve", state["order"])  # after the answer: once per finished approve
    return {"status": "approved" if ok else "rejected"}


def finish(state: State) -> dict:
    _log("finish", state["order"])
    return {"status": f"done after {state['status']}"}


graph = (StateGraph(State).add_sequence([prepare, approve, finish])
         .add_edge(START, "prepare").compile(name="soak"))


async def main(address: str, task_queue: str, cache: int) -> None:
    client = await Client.connect(address, data_converter=data_converter)
    async with create_worker(client, {"soak": graph}, task_queue=task_queue,
                             max_cached_workflows=cache):
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    os.environ["JOURNAL"] = sys.argv[3]
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[4])))
