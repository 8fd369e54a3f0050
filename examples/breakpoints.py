"""Static breakpoints (seed 001): ``interrupt_before`` / ``interrupt_after``, resumed with None.

``node_a`` -> ``node_b`` -> ``node_c``; the graph stops before ``node_a`` and
after ``node_b`` and ``node_c``. ``invoke(None, config)`` runs on to the next
breakpoint. Static breakpoints are for debugging; use ``interrupt()`` for
human-in-the-loop.
"""

import operator
from typing import Annotated, TypedDict

from graphrun import END, START, InMemorySaver, StateGraph

NAME = "breakpoints"
INTERRUPT_BEFORE = ["node_a"]
INTERRUPT_AFTER = ["node_b", "node_c"]


class State(TypedDict):
    visited: Annotated[list[str], operator.add]


def node_a(state: State):
    return {"visited": ["node_a"]}


def node_b(state: State):
    return {"visited": ["node_b"]}


def node_c(state: State):
    return {"visited": ["node_c"]}


def build(checkpointer=None):
    builder = StateGraph(State)
    builder.add_node("node_a", node_a)
    builder.add_node("node_b", node_b)
    builder.add_node("node_c", node_c)
    builder.add_edge(START, "node_a")
    builder.add_edge("node_a", "node_b")
    builder.add_edge("node_b", "node_c")
    builder.add_edge("node_c", END)
    return builder.compile(name=NAME, checkpointer=checkpointer,
                           interrupt_before=INTERRUPT_BEFORE, interrupt_after=INTERRUPT_AFTER)


graph = build()


def main() -> dict:
    app = build(InMemorySaver())
    # Pass a thread ID to the graph
    config = {"configurable": {"thread_id": "some_thread"}}

    # Run the graph until the first breakpoint
    result = app.invoke({"visited": []}, config=config)
    print(result, app.get_state(config).next)  # -> {'visited': []} ('node_a',)

    # Resume with None: runs to the next breakpoint each time
    while app.get_state(config).next:
        result = app.invoke(None, config=config)
        print(result, app.get_state(config).next)
    return result


if __name__ == "__main__":
    main()
