"""Purchase approval (seed 003): pause before charging the card.

``request_approval`` asks with ``interrupt({question, item, amount})``; on
``Command(resume=True)`` it re-runs from its first line, gets ``True`` back
from ``interrupt()`` and the graph continues into ``charge_card``.
"""

from typing import TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt

NAME = "purchase"


class PurchaseState(TypedDict):
    item: str
    amount: float
    status: str


def request_approval(state: PurchaseState) -> PurchaseState:
    decision = interrupt(
        {
            "question": "Approve this purchase?",
            "item": state["item"],
            "amount": state["amount"],
        }
    )
    if not decision:
        return {"status": "rejected"}  # type: ignore[typeddict-item]
    return {"status": "approved"}  # type: ignore[typeddict-item]


def charge_card(state: PurchaseState) -> PurchaseState:
    # Only reached after the approval gate: the irreversible side effect belongs here.
    return {"status": "charged"}  # type: ignore[typeddict-item]


def build(checkpointer=None):
    builder = StateGraph(PurchaseState)
    builder.add_node("request_approval", request_approval)
    builder.add_node("charge_card", charge_card)
    builder.add_edge(START, "request_approval")
    builder.add_edge("request_approval", "charge_card")
    builder.add_edge("charge_card", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


graph = build()


def main() -> dict:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "order-42"}}

    # First call: runs until interrupt() fires, then returns control here.
    result = app.invoke(
        {"item": "GPU rental, 8 hours", "amount": 96.00, "status": "pending"},
        config,
    )
    print(result["__interrupt__"])  # the payload passed to interrupt()

    # Second call: same thread_id, resumes request_approval with decision=True,
    # then continues on into charge_card.
    final = app.invoke(Command(resume=True), config)
    print(final["status"])  # "charged"
    return final


if __name__ == "__main__":
    main()
