"""Two versions of one graph, served under one name by two worker versions in the Worker
Versioning test: v2 words its charge differently and adds a receipt node."""

from __future__ import annotations

from typing import TypedDict

from graphrun import END, START, StateGraph, interrupt


class State(TypedDict, total=False):
    order: str
    status: str
    receipt: str


def ask(state: State) -> dict:
    answer = interrupt({"question": f"approve {state['order']}?"})
    return {"status": "approved" if answer == "yes" else "rejected"}


def charge_v1(state: State) -> dict:
    return {"status": f"{state['status']}, charged by v1"}


def charge_v2(state: State) -> dict:
    return {"status": f"{state['status']}, charged by v2"}


def receipt(state: State) -> dict:
    return {"receipt": f"receipt for {state['order']}"}


v1 = (StateGraph(State).add_node("ask", ask).add_node("charge", charge_v1)
      .add_edge(START, "ask").add_edge("ask", "charge").add_edge("charge", END)
      .compile(name="versioned"))

v2 = (StateGraph(State).add_node("ask", ask).add_node("charge", charge_v2)
      .add_node("receipt", receipt)
      .add_edge(START, "ask").add_edge("ask", "charge").add_edge("charge", "receipt")
      .add_edge("receipt", END).compile(name="versioned"))
