"""graphrun: LangGraph-style graphs (state, nodes, edges, interrupt) run durably on Temporal.

In-process, a compiled graph is a drop-in for LangGraph's. Serve the same graph
with `graphrun.worker.create_worker` and call it with `graphrun.client.GraphClient`.
"""

from graphrun.bridge import from_langgraph
from graphrun.channels import Overwrite, UntrackedValue
from graphrun.errors import (
                             EmptyInputError,
                             GraphRecursionError,
                             GraphrunError,
                             GraphValidationError,
                             InvalidResumeError,
                             InvalidUpdateError,
                             NodeCancelledError,
                             NodeError,
                             NodeFailedError,
                             NodeTimeoutError,
                             ResumeValidationError,
)
from graphrun.graph import StateGraph
from graphrun.local import CompiledStateGraph, InMemorySaver, MemorySaver
from graphrun.runner import heartbeat, interrupt
from graphrun.runtime import Runtime, get_runtime, get_store, get_stream_writer
from graphrun.types import (
                             END,
                             START,
                             CachePolicy,
                             Command,
                             Interrupt,
                             PregelTask,
                             RetryPolicy,
                             Send,
                             StateSnapshot,
                             StateUpdate,
                             TimeoutPolicy,
)

__all__ = [
                             "END",
                             "START",
                             "CachePolicy",
                             "Command",
                             "CompiledStateGraph",
                             "EmptyInputError",
                             "GraphRecursionError",
                             "GraphValidationError",
                             "GraphrunError",
                             "InMemorySaver",
                             "Interrupt",
                             "InvalidResumeError",
                             "InvalidUpdateError",
                             "MemorySaver",
                             "NodeCancelledError",
                             "NodeError",
                             "NodeFailedError",
                             "NodeTimeoutError",
                             "Overwrite",
                             "PregelTask",
                             "ResumeValidationError",
                             "RetryPolicy",
                             "Runtime",
                             "Send",
                             "StateGraph",
                             "StateSnapshot",
                             "StateUpdate",
                             "TimeoutPolicy",
                             "UntrackedValue",
                             "from_langgraph",
                             "get_runtime",
                             "get_store",
                             "get_stream_writer",
                             "heartbeat",
                             "interrupt",
]
