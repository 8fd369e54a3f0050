"""Run LangGraph's own graphs and agents on graphrun: `from_langgraph`.

`from_langgraph(graph)` reads a LangGraph `StateGraph` (or the builder behind a
compiled one) into a graphrun graph: the same nodes, edges, waiting edges,
branches, channels, schemas, breakpoints and config, with LangGraph's node code
run unchanged (see `graphrun.bridge.run`). LangGraph's `add_messages` becomes
graphrun's, whose message ids are deterministic (it runs inside the workflow).
What a bridged graph raises is LangGraph's error class as well as graphrun's
(`graphrun.bridge.errors`); in-process, the LangGraph saver it was compiled with keeps
its threads (`graphrun.bridge.saver`).

Needs `pip install 'graphrun[langgraph]'`; the supported LangGraph range is
`graphrun.bridge.SUPPORTED`.
"""

from __future__ import annotations

from typing import Any

from graphrun import graph


def is_langgraph(obj: Any) -> bool:
    """A LangGraph graph, compiled or not (checked without importing LangGraph)."""
    return any(c.__module__.startswith("langgraph.") and c.__name__ in (
        "StateGraph", "CompiledStateGraph") for c in type(obj).__mro__)


def is_langgraph_node(obj: Any) -> bool:
    """LangGraph's node code that reads LangGraph's config (ToolNode, RunnableCallable)."""
    return any(c.__module__.startswith(("langgraph.prebuilt", "langgraph._internal"))
               and c.__name__ in ("ToolNode", "RunnableCallable") for c in type(obj).__mro__)


def is_langgraph_value(obj: Any) -> bool:
    """LangGraph's Command or Send (an input given to a graphrun graph by LangGraph code)."""
    return type(obj).__module__ == "langgraph.types" and type(obj).__name__ in (
        "Command", "Send")


def from_langgraph(graph: Any, *, name: str | None = None, checkpointer: Any = None) -> Any:
    """A graphrun compiled graph that runs a LangGraph graph.

    Args:
        graph: a LangGraph `CompiledStateGraph` (e.g. from `create_agent` or
            `create_react_agent`) or an uncompiled `langgraph.graph.StateGraph`.
        name: the graph's name (what a worker registers it under); default the
            compiled graph's own name.
        checkpointer: a LangGraph `BaseCheckpointSaver`, graphrun's `InMemorySaver`
            (or True/False for a subgraph). Default: the LangGraph graph's own. A
            LangGraph saver keeps the threads in LangGraph's format, read back from
            there (`graphrun.bridge.saver`). On Temporal the workflow keeps the thread
            and no checkpointer is needed.

    Example:
        >>> from langchain.agents import create_agent      # doctest: +SKIP
        >>> agent = from_langgraph(create_agent(model, tools), name="agent")  # doctest: +SKIP
    """
    from graphrun.bridge import convert

    return convert.compiled(graph, name=name, checkpointer=checkpointer)


def _adapt_node(name: str, node: Any) -> Any:
    """A LangGraph graph added as a node runs as a subgraph (its questions surface);
    LangGraph's node code (ToolNode) runs with LangGraph's config. None for anything else."""
    if is_langgraph(node):
        return from_langgraph(node, name=name)
    if is_langgraph_node(node):
        from graphrun.bridge.convert import node_function

        return node_function(node, {}, name)
    return None


graph.register_node_adapter(_adapt_node)


def __getattr__(attr: str) -> Any:
    if attr == "SUPPORTED":
        from graphrun.bridge._langgraph import SUPPORTED

        return SUPPORTED
    raise AttributeError(attr)


__all__ = ["from_langgraph", "is_langgraph", "is_langgraph_node", "is_langgraph_value"]
