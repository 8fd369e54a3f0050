"""A worker process for the restart tests: serves `journal`, `crashy` and `streamy`,
whose nodes log to a file.

    python -m tests.temporal.restart_worker ADDRESS TASK_QUEUE JOURNAL_PATH
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from datetime import timedelta
from typing import TypedDict

from temporalio.client import Client

from graphrun import START, StateGraph, heartbeat, interrupt
from graphrun.client import data_converter
from graphrun.worker import create_worker


class State(TypedDict):
    order: str
    status: str


def _log(name: str) -> None:
    with open(os.environ["JOURNAL"], "a") as f:
        f.write(f"{name} {os.getpid()}\n")


def prepare(state: State) -> dict:
    _log("prepare")
    return {"status": "prepared"}


def approve(state: State) -> dict:
    _log("approve")
    ok = interrupt({"question": f"Approve {state['order']}?"})
    return {"status": "approved" if ok else "rejected"}


def finish(state: State) -> dict:
    _log("finish")
    return {"status": f"done after {state['status']}"}


graph = (StateGraph(State).add_sequence([prepare, approve, finish])
         .add_edge(START, "prepare").compile(name="journal"))


# crashy: first -> slow (4 s, heartbeating, no RetryPolicy) -> last
def first(state: State) -> dict:
    _log("first")
    return {"status": "first"}


def slow(state: State) -> dict:
    _log("slow-start")
    for _ in range(40):
        time.sleep(0.1)
        heartbeat()
    _log("slow-end")
    return {"status": "slow"}


def last(state: State) -> dict:
    _log("last")
    return {"status": f"done after {state['status']}"}


crashy = (StateGraph(State).add_node(first)
          .add_node("slow", slow, heartbeat_timeout=timedelta(seconds=1))
          .add_node(last).add_edge(START, "first").add_edge("first", "slow")
          .add_edge("slow", "last").compile(name="crashy"))


# streamy: one node streams 30 custom chunks over 3 s (heartbeating), then a last step
def chatter(state: State) -> dict:
    from graphrun import get_stream_writer

    _log("chatter-start")
    write = get_stream_writer()
    for i in range(30):
        write({"i": i})
        time.sleep(0.1)
        heartbeat()
    return {"status": "chattered"}


streamy = (StateGraph(State).add_node("chatter", chatter, heartbeat_timeout=timedelta(seconds=1))
           .add_node(last).add_edge(START, "chatter").add_edge("chatter", "last")
           .compile(name="streamy"))


async def main(address: str, task_queue: str) -> None:
    client = await Client.connect(address, data_converter=data_converter)
    async with create_worker(client, {"journal": graph, "crashy": crashy, "streamy": streamy},
                             task_queue=task_queue):
        print("ready", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    os.environ["JOURNAL"] = sys.argv[3]
    asyncio.run(main(sys.argv[1], sys.argv[2]))
