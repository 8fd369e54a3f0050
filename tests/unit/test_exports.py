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
