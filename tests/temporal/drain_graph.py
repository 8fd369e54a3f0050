"""A graph for the drain test: one sync node that works for DRAIN_NODE_S seconds (4 by
default), heartbeating, and journals its start and end, with its thread and process, to
DRAIN_JOURNAL."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from typing import TypedDict

from graphrun import START, StateGraph, heartbeat


class State(TypedDict):
    order: str
    status: str


def _log(what: str, order: str) -> None:
    with open(os.environ["DRAIN_JOURNAL"], "a") as journal:
        journal.write(f"{what} {order} {os.getpid()}\n")


def work(state: State) -> dict:
    _log("start", state["order"])
    end = time.monotonic() + float(os.environ.get("DRAIN_NODE_S", "4"))
    while time.monotonic() < end:
        time.sleep(0.1)
        heartbeat()  # the node says it lives: a killed worker's is noticed in a second
    _log("end", state["order"])
    return {"status": "worked"}


graph = (StateGraph(State).add_node("work", work, heartbeat_timeout=timedelta(seconds=1))
         .add_edge(START, "work").compile(name="drain"))
