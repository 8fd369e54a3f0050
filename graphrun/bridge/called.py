"""A `checkpointer=True` LangGraph graph that a bridged node's code invokes runs as the
task's stateful subgraph on graphrun.

A LangGraph graph a node's own code invokes otherwise runs on LangGraph, nested in the
graphrun task (graphrun.bridge.run gives it LangGraph's parent stream). One compiled
with `checkpointer=True` cannot: it keeps its state in its parent's checkpointer, which
a graphrun task does not give it. So `from_langgraph` finds such graphs where LangGraph
finds them (the node function's closure and globals), converts them, and while a
graphrun task runs, their `invoke`/`stream` (and async twins) run the converted graph:
its state is the task's, shown by `get_state(subgraphs=True)` and kept across runs, as
under LangGraph. Outside graphrun tasks the graph runs on LangGraph as before.
"""

from __future__ import annotations

import inspect
import weakref
from typing import Any

from langgraph.graph.state import CompiledStateGraph as LGCompiled

from graphrun.task import current_task

_CONVERTED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_METHODS = ("invoke", "ainvoke", "stream", "astream")


def stateful_graph_called_by(fn: Any) -> Any:
    """The graphrun graph a node function's `checkpointer=True` LangGraph graph runs as,
    if the function refers to one; None otherwise."""
    try:
        refs = inspect.getclosurevars(fn)
    except (TypeError, ValueError):
        return None
    found = next((v for v in (*refs.nonlocals.values(), *refs.globals.values())
                  if isinstance(v, LGCompiled) and v.checkpointer is True), None)
    return None if found is None else _converted(found)


def _converted(graph: Any) -> Any:
    if graph in _CONVERTED:
        return _CONVERTED[graph]
    from graphrun.bridge.convert import compiled

    converted = compiled(graph, name=None, checkpointer=None)
    _CONVERTED[graph] = converted
    for name in _METHODS:
        own = getattr(graph, name)

        def call(*args: Any, __own: Any = own, __name: str = name, **kwargs: Any) -> Any:
            if current_task() is None:
                return __own(*args, **kwargs)
            return getattr(converted, __name)(*args, **kwargs)

        setattr(graph, name, call)
    return converted
