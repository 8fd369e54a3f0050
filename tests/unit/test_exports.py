"""The public API: `graphrun.__all__` is pinned, and importing graphrun stays light."""

from __future__ import annotations

import subprocess
import sys

import graphrun

EXPECTED_ALL = sorted([
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
    "NodeError",
    "NodeFailedError",
    "NodeTimeoutError",
    "NodeCancelledError",
    "UntrackedValue",
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
    "from_langgraph",
    "get_runtime",
    "get_store",
    "get_stream_writer",
    "heartbeat",
    "interrupt",
])


def test_all_is_pinned() -> None:
    assert sorted(graphrun.__all__) == EXPECTED_ALL
    assert len(set(graphrun.__all__)) == len(graphrun.__all__)


def test_every_exported_name_exists() -> None:
    for name in graphrun.__all__:
        assert getattr(graphrun, name) is not None, name


def test_import_graphrun_does_not_import_temporalio() -> None:
    code = ("import sys, graphrun; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'temporalio'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stdout


# What `langgraph.types` has that graphrun has too, under the same names in graphrun.types
# (LangGraph's tests import them from there; ported, they import these).
LANGGRAPH_TYPES = sorted([
    "CachePolicy", "CheckpointPayload", "CheckpointStreamPart", "CheckpointTask", "Command",
    "CustomStreamPart", "DebugPayload", "DebugStreamPart", "GraphOutput", "Interrupt",
    "MessagesStreamPart", "PregelTask", "RetryPolicy", "Send", "StateSnapshot", "StateUpdate",
    "StreamMode", "StreamPart", "StreamWriter", "TaskPayload", "TaskResultPayload",
    "TasksStreamPart", "TimeoutPolicy", "TracePolicy", "UpdatesStreamPart",
    "ValuesStreamPart", "interrupt", "omit_payload",
])


def test_graphrun_types_has_langgraph_types_names() -> None:
    import graphrun.types

    assert [n for n in LANGGRAPH_TYPES if not hasattr(graphrun.types, n)] == []
    assert graphrun.types.interrupt is graphrun.interrupt
