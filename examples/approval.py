"""Approve or reject (seed 001): the node routes with ``Command(goto=...)``.

``approval`` asks ``interrupt({question, details})``; a truthy resume routes to
``proceed`` (status "approved"), a falsy one to ``cancel`` (status "rejected").
"""

from typing import Literal, TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt

NAME = "approval"


class ApprovalState(TypedDict):
    action_details: str
    status: Literal["pending", "approved", "rejected"] | None


def approval_node(state: ApprovalState) -> Command[Literal["proceed", "cancel"]]:
    # Expose details so the caller can render them in a UI
    decision = interrupt({
        "question": "Approve this action?",
        "details": state["action_details"],
    })
    # Route to the appropriate node after resume
    return Command(goto="proceed" if decision else "cancel")


def proceed_node(state: ApprovalState):
    return {"status": "approved"}


def cancel_node(state: ApprovalState):
    return {"status": "rejected"}


def build(checkpointer=None):
    builder = StateGraph(ApprovalState)
    builder.add_node("approval", approval_node)
    builder.add_node("proceed", proceed_node)
    builder.add_node("cancel", cancel_node)
    builder.add_edge(START, "approval")
    builder.add_edge("proceed", END)
    builder.add_edge("cancel", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


graph = build()


def main(approve: bool = True) -> dict:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "approval-123"}}
    initial = app.invoke(
        {"action_details": "Transfer $500", "status": "pending"},
        config=config,
    )
    print(initial["__interrupt__"])  # -> [Interrupt(value={'question': ..., 'details': ...})]

    # Resume with the decision; True routes to proceed, False to cancel
    resumed = app.invoke(Command(resume=approve), config=config)
    print(resumed["status"])  # -> "approved"
    return resumed


if __name__ == "__main__":
    main()
