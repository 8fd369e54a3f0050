"""The 'tools' stream mode: the life of each tool call made inside a node.

As LangGraph does it: a LangChain callback handler in the node's config hears every
LangChain tool the node runs (LangGraph's `ToolNode` runs them so) start, end or fail,
and streams `{"event": "tool-started" | "tool-finished" | "tool-error", "tool_call_id":
..., ...}`. While a tool runs, what it streams of its output (LangGraph's
`ToolRuntime.emit_output_delta`) goes out as `tool-output-delta` events of its call.
Needs langchain-core (`graphrun[messages]`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from graphrun._lc_private import StreamingCallbackHandler
from graphrun.errors import GraphDrained, GraphInterrupt
from graphrun.stream_messages import NOSTREAM
from graphrun.types import NS_SEP

Emit = Callable[[tuple[Any, ...]], None]


class StreamTools(BaseCallbackHandler, StreamingCallbackHandler[Any]):
    """Sends ("tools", event) to `emit` for the tool calls of one task.

    `depth`: how many namespace segments the task's own graph has. A tool run by a
    LangGraph graph the node calls (its tasks' metadata name a deeper namespace) streams
    under that graph's namespace, as LangGraph's handler streams it."""

    run_inline = True  # in the tool's thread: its events keep their order

    def __init__(self, emit: Emit, depth: int) -> None:
        self.emit = emit
        self.depth = depth
        # run id -> the call's id, where it streams, and what unsets its delta writer
        self.calls: dict[UUID, tuple[str, tuple[str, ...] | None, Callable[[], None]]] = {}

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]
                         ) -> AsyncIterator[Any]:
        return output

    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        return output

    def _send(self, ns: tuple[str, ...] | None, event: dict[str, Any]) -> None:
        self.emit(("tools", event) if ns is None else (ns, "tools", event))

    def _namespace(self, metadata: dict[str, Any] | None) -> tuple[str, ...] | None:
        """None for the task's own graph, else the namespace of the graph the tool ran in."""
        nskey = (metadata or {}).get("langgraph_checkpoint_ns")
        ns = tuple(str(nskey).split(NS_SEP))[:-1] if nskey else ()
        return ns if len(ns) > self.depth else None

    def on_tool_start(self, serialized: dict[str, Any], input_str: str, *, run_id: UUID,
                      tags: list[str] | None = None, metadata: dict[str, Any] | None = None,
                      inputs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if NOSTREAM in (tags or ()):
            return
        ns = self._namespace(metadata)
        # A tool called without a tool call (a plain `invoke`) is known by its run.
        call_id = kwargs.get("tool_call_id") or str(run_id)
        name = (serialized or {}).get("name") or kwargs.get("name") or ""

        def delta(chunk: Any) -> None:
            self._send(ns, {"event": "tool-output-delta", "tool_call_id": call_id,
                            "delta": chunk})

        self.calls[run_id] = (call_id, ns, set_output_writer(delta))
        event = {"event": "tool-started", "tool_call_id": call_id, "tool_name": name}
        if inputs is not None:
            event["input"] = inputs
        self._send(ns, event)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if (call := self.calls.pop(run_id, None)) is not None:
            call_id, ns, unset = call
            unset()
            self._send(ns, {"event": "tool-finished", "tool_call_id": call_id,
                            "output": output})

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        if (call := self.calls.pop(run_id, None)) is not None:
            call_id, ns, unset = call
            unset()
            # A tool that asked a question or was drained is paused, not failed: it runs
            # again on resume, and tells its start and end then.
            if not isinstance(error, tuple(PAUSES)):
                self._send(ns, {"event": "tool-error", "tool_call_id": call_id,
                                "message": str(error)})


# Another library's tools may read their call's output writer from a ContextVar of its
# own, and unwind with exceptions of its own when they pause: graphrun.bridge registers
# LangGraph's (`ToolRuntime.emit_output_delta` reads that writer) when it runs LangGraph's
# node code, a ToolNode among it.
OUTPUT_WRITERS: list[contextvars.ContextVar[Any]] = []
PAUSES: list[type[BaseException]] = [GraphInterrupt, GraphDrained]


def register_tool_runtime(writer: contextvars.ContextVar[Any],
                          pauses: tuple[type[BaseException], ...]) -> None:
    """Set a tool call's output writer in `writer` too while it runs, and take `pauses`
    as a tool pausing (asking a question, drained), not failing."""
    if writer not in OUTPUT_WRITERS:
        OUTPUT_WRITERS.append(writer)
    PAUSES.extend(p for p in pauses if p not in PAUSES)


def set_output_writer(write: Callable[[Any], None]) -> Callable[[], None]:
    """Make `write` the running tool call's output writer where tools look for it;
    returns what unsets it."""
    tokens = [(var, var.set(write)) for var in OUTPUT_WRITERS]

    def unset() -> None:
        for var, token in reversed(tokens):
            # (a call that ends in another context than it started in keeps it there)
            with contextlib.suppress(ValueError):
                var.reset(token)

    return unset
