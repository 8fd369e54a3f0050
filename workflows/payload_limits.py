"""Temporal refuses a command that carries more than its payload limit, and would fail
the workflow task again and again: graphrun fails the node or drops the result's
values instead, keeping the thread."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

from .thread_state import Invocation

with workflow.unsafe.imports_passed_through():
    from graphrun import registry
    from graphrun.payloads import RunResult
    from graphrun.serde import InputLimits


class PayloadLimits:
    def __init__(self, graph: str) -> None:
        self._graph = graph
        self.limit = registry.limits(graph).max_payload_bytes  # see choose_for

    def choose_for(self, item: Invocation) -> None:
        """The payload limit of this invocation. External storage lifts it, but only for
        invocations that first ran with it on (a marker says so): replaying one that ran
        without it must fail its oversized node again, not schedule it."""
        configured = registry.limits(self._graph).max_payload_bytes
        if configured is None and not workflow.patched(
                f"graphrun-external-storage-{item.number}"):
            self.limit = InputLimits().max_payload_bytes
        else:
            self.limit = configured

    def oversized(self, value: Any, what: str) -> str | None:
        """Why `value` cannot go out in one payload, or None."""
        limit = self.limit
        if not limit:
            return None
        # The JSON graphrun's converter writes for a wire model, without asking the SDK
        # for a converter each time (that is costly in the sandbox).
        size = len(value.model_dump_json(exclude_unset=True))
        if size <= limit:
            return None
        return (f"{what} is {size:,} bytes, over the {limit:,} a Temporal payload may "
                f"carry. Turn on external payload storage (README: Large state) or keep "
                f"large data out of the state (store it elsewhere, keep a reference); then "
                f"update_state or invoke(None) to go on from the last checkpoint.")

    def trimmed(self, result: RunResult) -> RunResult:
        """The run's answer, without the values if they are too large to send back."""
        too_big = self.oversized(result, "the run's result (its state)")
        if too_big is None:
            return result
        return RunResult(status=result.status, values=None, interrupts=result.interrupts,
                         error=result.error or {"type": "PayloadTooLargeError",
                                                "message": too_big})
