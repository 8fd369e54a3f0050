"""The nodes' callback events for a caller with handlers (graphrun.relay_wire): each
task's batch from its result (or a failed attempt's signal) with the task it ran, and the
run's own pauses and resumes; published live to a caller that reads the run's stream,
else kept for the caller's `relayed` query. Memory only: nothing here adds to history."""

from __future__ import annotations

import json
from typing import Any

from temporalio import workflow

from .live_stream import LiveStream
from .thread_state import Invocation

with workflow.unsafe.imports_passed_through():
    from graphrun import engine, relay_wire, serde
    from graphrun.payloads import RunResult
    from graphrun.types import Command

KEPT = 2  # runs whose events wait for their caller's query
PAGE_BYTES = 1_000_000  # a query's answer stays well within gRPC's message size


class RelayedRuns:
    def __init__(self, stream: LiveStream) -> None:
        self._stream = stream
        self._kept: dict[str, list[Any]] = {}  # run id -> its entries

    def _add(self, item: Invocation, entry: dict[str, Any]) -> None:
        if not item.callbacks:
            return
        if item.stream_to:
            self._stream.relayed(item, entry)
        else:
            item.relayed.append(entry)

    def task(self, item: Invocation, task: engine.Task, batch: dict[str, Any] | None) -> None:
        """A task's result brought its events."""
        if batch:
            self._add(item, relay_wire.entry(batch, relay_wire.task_of(task)))

    def signalled(self, item: Invocation | None, payload: Any) -> None:
        """A failed attempt's events, signalled by its activity (never raises: a signal)."""
        if (item is None or not isinstance(payload, dict)
                or not isinstance(payload.get("events"), list)):
            return
        self._add(item, {k: payload[k] for k in ("events", "attempt", "task") if k in payload})

    def resumed(self, item: Invocation, run: engine.Run) -> None:
        """The run goes on from a saved checkpoint (a resume, or None as input)."""
        if item.callbacks and (item.input is None or isinstance(item.input, Command)
                               ) and run.ckpt is not None:
            self._lifecycle(item, {"kind": "graph_resume", "checkpoint_id": run.ckpt.id})

    def paused(self, item: Invocation, run: engine.Run, after_step: bool) -> None:
        """The run stopped for its interrupts, or at a breakpoint (`after_step`: one of
        interrupt_after's)."""
        if not item.callbacks or run.status != "interrupted":
            return
        status = ("pending" if run.interrupts else
                  "interrupt_after" if after_step else "interrupt_before")
        self._lifecycle(item, {"kind": "graph_interrupt", "status": status,
                               "checkpoint_id": run.ckpt.id if run.ckpt is not None else "",
                               "interrupts": list(run.interrupts)})

    def _lifecycle(self, item: Invocation, event: dict[str, Any]) -> None:
        self._add(item, relay_wire.entry(relay_wire.batch(serde.dumps([event]), 1), None))

    def finished(self, item: Invocation, result: RunResult) -> RunResult:
        """The run's result, naming where its events are kept when its caller did not
        read them live."""
        if not item.callbacks or item.stream_to or not item.run_id:
            return result
        self._kept[item.run_id] = item.relayed
        while len(self._kept) > KEPT:
            del self._kept[next(iter(self._kept))]
        return result.model_copy(update={"relayed_in": workflow.info().run_id})

    def page(self, run_id: str, offset: int) -> dict[str, Any] | None:
        """Run `run_id`'s entries from `offset`, as many as fit a page (one at least), and
        the offset of the next page (None after the last); None if none are kept."""
        kept = self._kept.get(run_id)
        if kept is None:
            return None
        entries: list[Any] = []
        size, at = 0, max(offset, 0)
        while at < len(kept) and (not entries or size < PAGE_BYTES):
            size += len(json.dumps(kept[at]))
            entries.append(kept[at])
            at += 1
        return {"entries": entries, "next": at if at < len(kept) else None}
