"""Interrupts inside subgraphs (seed 001), in both shapes.

1. ``graph`` ("subgraph"): a compiled subgraph is a node of the parent graph;
   its inner node ``ask_name`` interrupts. The interrupt surfaces on the parent
   thread, and ``Command(resume=...)`` on the parent thread answers it.
2. ``graph_as_function`` ("subgraph_function"): a parent node calls
   ``inner.invoke(...)`` as a plain function. On resume both the parent node
   and the inner node re-run from their first line (``some_code()`` and
   ``some_other_code()`` in the seed); ``CALLS`` records every entry.
"""

from typing import TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt

NAME = "subgraph"
FUNCTION_NAME = "subgraph_function"
INNER_NAME = "subgraph_inner"

CALLS: list[str] = []
"""Node entries, in order (shows which code re-runs on resume)."""


class SubState(TypedDict, total=False):
    name: str | None
    greeting: str | None


class ParentState(TypedDict, total=False):
    name: str | None
    greeting: str | None
    status: str


# -- the subgraph ---------------------------------------------------------------
def ask_name(state: SubState):
    CALLS.append("ask_name")  # some_other_code(): re-executes when resumed
    result = interrupt("What's your name?")
    return {"name": result}


def greet(state: SubState):
    CALLS.append("greet")
    return {"greeting": f"Hello, {state['name']}!"}


def build_inner(checkpointer=None):
    builder = StateGraph(SubState)
    builder.add_node("ask_name", ask_name)
    builder.add_node("greet", greet)
    builder.add_edge(START, "ask_name")
    builder.add_edge("ask_name", "greet")
    builder.add_edge("greet", END)
    return builder.compile(name=INNER_NAME, checkpointer=checkpointer)


inner = build_inner()


# -- 1. the compiled subgraph as a node -------------------------------------------
def prepare(state: ParentState):
    CALLS.append("prepare")
    return {"status": "asking"}


def finish(state: ParentState):
    CALLS.append("finish")
    return {"status": "done"}


def build(checkpointer=None):
    builder = StateGraph(ParentState)
    builder.add_node("prepare", prepare)
    builder.add_node("inner", inner)
    builder.add_node("finish", finish)
    builder.add_edge(START, "prepare")
    builder.add_edge("prepare", "inner")
    builder.add_edge("inner", "finish")
    builder.add_edge("finish", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


graph = build()


# -- 2. the subgraph called as a function from a parent node ---------------------
def node_in_parent_graph(state: ParentState):
    CALLS.append("node_in_parent_graph")  # some_code(): re-executes when resumed
    # Invoke a subgraph as a function. The subgraph contains an `interrupt` call.
    subgraph_result = inner.invoke({"name": None})
    return {"name": subgraph_result["name"], "greeting": subgraph_result["greeting"],
            "status": "done"}


def build_function(checkpointer=None):
    builder = StateGraph(ParentState)
    builder.add_node("node_in_parent_graph", node_in_parent_graph)
    builder.add_edge(START, "node_in_parent_graph")
    builder.add_edge("node_in_parent_graph", END)
    return builder.compile(name=FUNCTION_NAME, checkpointer=checkpointer)


graph_as_function = build_function()


def _run(app, thread_id: str, answer: str) -> dict:
    config = {"configurable": {"thread_id": thread_id}}
    CALLS.clear()
    first = app.invoke({"name": None, "greeting": None, "status": "new"}, config=config)
    print(first["__interrupt__"])  # -> [Interrupt(value="What's your name?", ...)]
    final = app.invoke(Command(resume=answer), config=config)
    print(final)
    print(CALLS)
    return final


def main() -> tuple[dict, dict]:
    print("-- compiled subgraph as a node")
    as_node = _run(build(InMemorySaver()), "subgraph-node-1", "Ada")
    print("-- subgraph called as a function")
    as_function = _run(build_function(InMemorySaver()), "subgraph-function-1", "Grace")
    return as_node, as_function


if __name__ == "__main__":
    main()
