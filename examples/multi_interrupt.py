"""Several interrupts in one node (seed 001): name, age and city, matched by index.

Each resume answers the next question; the node re-runs from its first line
every time, replaying the answers it already has in order.
"""

from typing import TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt

NAME = "multi_interrupt"


class ProfileState(TypedDict, total=False):
    name: str
    age: int
    city: str


def node_a(state: ProfileState):
    # Interrupt calls happen in the same order every time
    name = interrupt("What's your name?")
    age = interrupt("What's your age?")
    city = interrupt("What's your city?")

    return {
        "name": name,
        "age": age,
        "city": city,
    }


def build(checkpointer=None):
    builder = StateGraph(ProfileState)
    builder.add_node("node_a", node_a)
    builder.add_edge(START, "node_a")
    builder.add_edge("node_a", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


graph = build()

ANSWERS = ("Ada", 36, "London")


def main() -> dict:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "profile-1"}}
    result = app.invoke({}, config=config)
    for answer in ANSWERS:
        print(result["__interrupt__"])  # -> [Interrupt(value="What's your name?", ...)], ...
        result = app.invoke(Command(resume=answer), config=config)
    print(result)  # -> {'name': 'Ada', 'age': 36, 'city': 'London'}
    return result


if __name__ == "__main__":
    main()
