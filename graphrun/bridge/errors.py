"""graphrun's errors as LangGraph's too, where a bridged graph raises them.

Code written for LangGraph catches `langgraph.errors.GraphRecursionError` (and the
rest) around `invoke`; code written for graphrun catches `graphrun.errors`' classes.
A bridged graph raises a class that is both (graphrun's, with LangGraph's as a second
base), so either `except` holds and the exception keeps its data (`.step`, `.node`,
...). A `ParentCommand` carries LangGraph's `Command` in `args[0]`, as LangGraph's
does, and graphrun's in `.command`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from langgraph import errors as lg

from graphrun import errors as gr
from graphrun.bridge.run import to_langgraph


class InvalidUpdateError(gr.InvalidUpdateError, lg.InvalidUpdateError):
    """graphrun's InvalidUpdateError, and LangGraph's."""


class GraphRecursionError(gr.GraphRecursionError, lg.GraphRecursionError):
    """graphrun's GraphRecursionError, and LangGraph's."""


class EmptyInputError(gr.EmptyInputError, lg.EmptyInputError):
    """graphrun's EmptyInputError, and LangGraph's."""


class NodeTimeoutError(gr.NodeTimeoutError, lg.NodeTimeoutError):  # type: ignore[misc]
    """graphrun's NodeTimeoutError, and LangGraph's (`kind`: a str there, a Literal here)."""


class NodeCancelledError(gr.NodeCancelledError, lg.NodeCancelledError):
    """graphrun's NodeCancelledError, and LangGraph's."""


class GraphDrained(gr.GraphDrained, lg.GraphDrained):
    """graphrun's GraphDrained, and LangGraph's."""


class GraphInterrupt(gr.GraphInterrupt, lg.GraphInterrupt):
    """A bridged graph run inside a node paused: LangGraph's code around the call
    (ToolNode's `except GraphBubbleUp: raise`) lets it through, as LangGraph's."""


class ParentCommand(gr.ParentCommand, lg.ParentCommand):
    """graphrun's ParentCommand, and LangGraph's (`args[0]` is LangGraph's Command)."""


_BOTH: dict[type[BaseException], type[BaseException]] = {
    gr.InvalidUpdateError: InvalidUpdateError,
    gr.GraphRecursionError: GraphRecursionError,
    gr.EmptyInputError: EmptyInputError,
    gr.NodeTimeoutError: NodeTimeoutError,
    gr.NodeCancelledError: NodeCancelledError,
    gr.GraphDrained: GraphDrained,
    gr.GraphInterrupt: GraphInterrupt,
    gr.ParentCommand: ParentCommand,
}
_DUAL = tuple(_BOTH.values())


def as_langgraph(exc: BaseException) -> BaseException:
    """`exc` as the class that is also LangGraph's (same args, attributes, traceback
    and cause); `exc` itself if it has none or is one already."""
    if isinstance(exc, _DUAL):
        return exc
    cls = next((_BOTH[c] for c in type(exc).__mro__ if c in _BOTH), None)
    if cls is None:
        return exc
    both = cls.__new__(cls)
    both.__dict__.update(vars(exc))
    both.args = (to_langgraph(exc.args[0]),) if isinstance(exc, gr.ParentCommand) else exc.args
    both.__cause__, both.__context__ = exc.__cause__, exc.__context__
    both.__suppress_context__ = exc.__suppress_context__
    return both.with_traceback(exc.__traceback__)


@contextlib.contextmanager
def langgraph_errors() -> Iterator[None]:
    """Re-raise what graphrun raises inside as the class that is LangGraph's too."""
    try:
        yield
    except (gr.GraphrunError, gr.GraphInterrupt, gr.GraphDrained, gr.ParentCommand) as exc:
        both = as_langgraph(exc)
        if both is exc:
            raise
        raise both from exc.__cause__

