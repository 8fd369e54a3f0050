"""Stopping runs: `cancel_run`, and a new run's multitask strategy ("interrupt" or
"rollback") applied to the runs before it."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

from .live_stream import LiveStream
from .run_records import RunRecords
from .thread_state import Invocation, ThreadState
from .visibility import Visibility

with workflow.unsafe.imports_passed_through():
    from graphrun import serde
    from graphrun.payloads import RunResult


class Cancellation:
    def __init__(self, state: ThreadState, records: RunRecords, stream: LiveStream,
                 visibility: Visibility) -> None:
        self._state = state
        self._records = records
        self._stream = stream
        self._visibility = visibility

    def can_cancel(self, run_id: str) -> bool:
        return bool(run_id) and any(i.run_id == run_id and not i.cancel
                                    for i in self._state.runs_waiting())

    def cancel_run(self, run_id: str, action: str) -> str:
        """Stop the run; its status before ("running" or "pending")."""
        item = next(i for i in self._state.runs_waiting() if i.run_id == run_id)
        self.cancel(item, action)
        return "running" if item is self._state.current else "pending"

    def make_way(self, multitask: str) -> None:
        """A new run that interrupts (or rolls back) every run before it."""
        if multitask in ("interrupt", "rollback"):
            for waiting in self._state.runs_waiting():
                self.cancel(waiting, multitask)

    def cancel(self, item: Invocation, action: str) -> None:
        """Stop a run: a pending one leaves the inbox, the running one is cancelled (its
        node activities are asked to stop; the thread keeps its last checkpoint)."""
        state = self._state
        item.cancel = action
        if item is state.current:
            if state.processing is not None:
                state.processing.cancel()
            return
        state.inbox.remove(item)
        state.results[item.number] = RunResult(status="cancelled",
                                               values=serde.dumps(state.values()))
        self._stream.end(item)
        self._records.cancelled(item, action)

    def cancelled(self, item: Invocation, before: tuple[list[Any], str]) -> RunResult:
        """The running run was cancelled: "rollback" drops the checkpoints it made; either
        way the thread waits where it stands, and `invoke(None)` goes on from there."""
        thread = self._state.thread
        if item.cancel == "rollback":
            thread.checkpoints, status = before
            self._visibility.set_status(status)
        else:
            self._visibility.set_status("interrupted" if thread.checkpoints else "done")
        if item.stream_to:
            self._stream.end(item)
            item.stream_to = ""  # ended here; the loop publishes no second end
        result = RunResult(status="cancelled", values=serde.dumps(self._state.values()))
        self._records.cancelled(item, item.cancel)
        return result
