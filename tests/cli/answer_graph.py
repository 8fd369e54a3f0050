"""A graph served by the CLI tests' worker: two questions, the first with a response_schema.

`graphrun worker --graph tests.cli.answer_graph:graph` (run from the repository root).
"""

from __future__ import annotations

from typing import TypedDict

from pydantic import BaseModel

from graphrun import END, START, StateGraph, interrupt

NAME = "answer"


class Approval(BaseModel):
    approved: bool


class State(TypedDict, total=False):
    item: str
    status: str
    note: str


def approve(state: State) -> dict:
    answer = interrupt({"question": "Approve?", "item": state["item"]},
                       response_schema=Approval)
    return {"status": "approved" if answer.approved else "rejected"}


def note(state: State) -> dict:
    return {"note": interrupt({"question": "Any note?"})}


graph = (StateGraph(State).add_node("approve", approve).add_node("note", note)
         .add_edge(START, "approve").add_edge("approve", "note").add_edge("note", END)
         .compile(name=NAME))
