"""Purchase approval with the Functional API: ``@entrypoint`` and ``@task``.

The approval of ``purchase.py`` written as one function. ``quote`` and ``charge`` are
tasks: each runs once, in an activity of its own on Temporal, and its result is kept
with the thread. The entrypoint pauses at ``interrupt()``; on
``Command(resume=True)`` it runs again from its first line, gets the quote back
without asking for it again, and charges the card.
"""

from graphrun import Command, InMemorySaver, interrupt
from graphrun.func import entrypoint, task

NAME = "purchase_functional"
CHARGED: list[tuple[str, float]] = []  # the card charges made (the side effect)


@task
def quote(item: str, hours: float) -> float:
    return round(12.0 * hours, 2)


@task
def charge(item: str, amount: float) -> str:
    CHARGED.append((item, amount))
    return f"charged {amount:.2f}"


def build(checkpointer=None):
    @entrypoint(checkpointer=checkpointer, name=NAME)
    def purchase(order: dict) -> dict:
        amount = quote(order["item"], order["hours"]).result()
        approved = interrupt({"question": "Approve this purchase?", "item": order["item"],
                              "amount": amount})
        if not approved:
            return {"item": order["item"], "amount": amount, "status": "rejected"}
        receipt = charge(order["item"], amount).result()
        return {"item": order["item"], "amount": amount, "status": receipt}

    return purchase


graph = build()


def main(approve: bool = True) -> dict:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "order-43"}}
    result = app.invoke({"item": "GPU rental", "hours": 8}, config)
    print(result["__interrupt__"])  # the question, with the quoted amount
    final = app.invoke(Command(resume=approve), config)
    print(final["status"])  # "charged 96.00"
    return final


if __name__ == "__main__":
    main()
