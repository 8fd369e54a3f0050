"""Shared by the external storage tests: graphs whose state outgrows Temporal's payload
limit, and a walk over every Payload in a workflow's history."""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

from google.protobuf.message import Message
from temporalio.api.common.v1 import Payload
from temporalio.client import Client

from graphrun import END, START, StateGraph, interrupt

REFERENCE_TYPE = b"temporal.api.sdk.v1.ExternalStorageReference"


def text(size: int, seed: str) -> str:
    """`size` characters of hex, different for each seed (so content hashes differ)."""
    unit = hashlib.sha256(seed.encode()).hexdigest()
    return (unit * (size // len(unit) + 1))[:size]


class Grow(TypedDict):
    chunks: Annotated[list[str], operator.add]


def growing_graph(name: str, *, chunk: int, steps: int) -> Any:
    """One node in a loop: each step appends `chunk` characters, `steps` times."""
    def grow(state: Grow) -> dict[str, Any]:
        n = len(state["chunks"])
        return {"chunks": [text(chunk, f"step-{n}")]}

    return (StateGraph(Grow).add_node("grow", grow).add_edge(START, "grow")
            .add_conditional_edges("grow", lambda s: "grow" if len(s["chunks"]) < steps
                                   else END)
            .compile(name=name))


class Big(TypedDict):
    blob: str
    answers: Annotated[list[str], operator.add]


def big_state_graph(name: str, *, size: int, rounds: int = 1) -> Any:
    """`load` makes a `size`-character state; `ask` then pauses `rounds` times."""
    def load(state: Big) -> dict[str, Any]:
        return {"blob": text(size, "big")}

    def ask(state: Big) -> dict[str, Any]:
        answer = interrupt({"question": f"round {len(state['answers'])}?",
                            "size": len(state["blob"])})
        return {"answers": [answer]}

    return (StateGraph(Big).add_node("load", load).add_node("ask", ask)
            .add_edge(START, "load").add_edge("load", "ask")
            .add_conditional_edges("ask", lambda s: "ask" if len(s["answers"]) < rounds
                                   else END)
            .compile(name=name))


def payloads(msg: Message) -> Iterator[Payload]:
    """Every Payload in a proto message: fields, repeated fields and maps, at any depth."""
    if isinstance(msg, Payload):
        yield msg
        return
    for field, value in msg.ListFields():
        if field.type != field.TYPE_MESSAGE:
            continue
        if field.message_type.GetOptions().map_entry:
            items = list(value.values())
        elif field.is_repeated:
            items = list(value)
        else:
            items = [value]
        for item in items:
            if isinstance(item, Message):
                yield from payloads(item)


def is_reference(p: Payload) -> bool:
    return p.metadata.get("messageType") == REFERENCE_TYPE


async def history_payloads(client: Client, workflow_id: str) -> tuple[list[Payload], int]:
    """Every Payload in the histories of all the workflow's runs, and how many runs.

    A thread continues as new when Temporal suggests it, so walk back from the latest
    run through each run's predecessor."""
    found: list[Payload] = []
    run_id: str | None = None
    runs = 0
    while True:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        runs += 1
        found += [p for event in history.events for p in payloads(event)]
        run_id = history.events[0].workflow_execution_started_event_attributes \
            .continued_execution_run_id or None
        if run_id is None:
            return found, runs


# For `graphrun worker --graph tests.temporal.storage_helpers:cli_big` (S3 from the env).
cli_big = big_state_graph("cli-big", size=3_000_000)
