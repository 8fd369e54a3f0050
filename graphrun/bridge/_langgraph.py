"""Every LangGraph name the bridge reads that LangGraph does not promise to keep.

They were read from langgraph 1.2 (`_internal._constants`, `_internal._scratchpad`,
`managed.base`) and are checked here, once, at import: another minor version fails
with the supported range in the message instead of misbehaving later. Public names
(`langgraph.types`, `langgraph.errors`, `langgraph.runtime`, ...) are imported where
they are used.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

SUPPORTED = ">=1.2,<1.3"  # keep in step with pyproject's `langgraph` extra


def _check() -> str:
    try:
        installed = version("langgraph")
    except PackageNotFoundError:
        raise ImportError(
            f"graphrun.bridge runs LangGraph's own graphs and needs langgraph{SUPPORTED}: "
            f"pip install 'graphrun[langgraph]'.") from None
    major, minor = (int(p) for p in installed.split(".")[:2])
    if (major, minor) != (1, 2):
        raise ImportError(
            f"graphrun.bridge supports langgraph{SUPPORTED}; langgraph {installed} is "
            f"installed. Install a supported one: pip install 'graphrun[langgraph]'.")
    return installed


INSTALLED = _check()

from langgraph._internal._constants import (  # noqa: E402
    CONF,
    CONFIG_KEY_NODE_ERROR,
    CONFIG_KEY_NODE_FINISHED,
    CONFIG_KEY_READ_STATE,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_SCRATCHPAD,
    CONFIG_KEY_SEND,
    CONFIG_KEY_STREAM,
    CONFIG_KEY_TASK_ID,
    NULL_TASK_ID,
    RESUME,
)
from langgraph._internal._scratchpad import PregelScratchpad  # noqa: E402
from langgraph.managed.base import ManagedValue  # noqa: E402

# Where LangGraph's `ToolRuntime.emit_output_delta` reads the running tool call's output
# writer (the 'tools' stream mode sets it: graphrun.stream_tools).
from langgraph.pregel._tools import _tool_call_writer as tool_call_writer  # noqa: E402
from langgraph.pregel.protocol import StreamProtocol  # noqa: E402


def tool_node_reads_state(node: Any) -> bool:
    """Whether a ToolNode sent a tool call (`Send("tools", [call])`) uses the graph's
    state: a wrapper (middleware's `wrap_tool_call`) may, and so may a tool that injects
    the state or its runtime. Read from ToolNode's private `_wrap_tool_call`,
    `_awrap_tool_call` and `_injected_args` (langgraph-prebuilt 1.x)."""
    if getattr(node, "_wrap_tool_call", None) or getattr(node, "_awrap_tool_call", None):
        return True
    injected = getattr(node, "_injected_args", None)
    if not isinstance(injected, dict):
        return True  # another layout: assume it does
    return any(a.state or a.runtime for a in injected.values())


__all__ = [
    "CONF",
    "CONFIG_KEY_NODE_ERROR",
    "CONFIG_KEY_NODE_FINISHED",
    "CONFIG_KEY_READ_STATE",
    "CONFIG_KEY_RUNTIME",
    "CONFIG_KEY_SCRATCHPAD",
    "CONFIG_KEY_SEND",
    "CONFIG_KEY_STREAM",
    "CONFIG_KEY_TASK_ID",
    "INSTALLED",
    "NULL_TASK_ID",
    "RESUME",
    "SUPPORTED",
    "ManagedValue",
    "PregelScratchpad",
    "StreamMux",
    "StreamProtocol",
    "collect_stream_modes",
    "normalize_stream_transformers",
    "tool_call_writer",
    "tool_node_reads_state",
]


# stream_events(version="v3") (graphrun.run_stream): LangGraph's run streams are public
# (langgraph.stream); the mux that feeds them and two helpers of Pregel's are not.
from langgraph.pregel.main import (  # noqa: E402 - for graphrun.run_stream
    _collect_stream_modes as collect_stream_modes,
)
from langgraph.pregel.main import (  # noqa: E402
    _normalize_stream_transformer_factories as normalize_stream_transformers,
)
from langgraph.stream._mux import StreamMux  # noqa: E402
