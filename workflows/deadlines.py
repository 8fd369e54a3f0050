"""Deadlines as durable timers: an interrupt's timeout (its question is then answered
with its default, or the thread fails), and a run's step timeout."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow

from .thread_state import Invocation

with workflow.unsafe.imports_passed_through():
    from graphrun import engine
    from graphrun.limits import timed_out
    from graphrun.types import Interrupt


class InterruptDeadlines:
    def __init__(self, carried: dict[str, str]) -> None:
        # interrupt id -> ISO time its durable timer expires
        self.deadlines: dict[str, str] = dict(carried)

    def track(self, thread: engine.Thread) -> None:
        pending = engine.pending_interrupts(thread.head)
        self.deadlines = {i: d for i, d in self.deadlines.items() if i in pending}
        for i in pending.values():
            if i.timeout is not None and i.id not in self.deadlines:
                expiry = workflow.now() + timedelta(seconds=i.timeout)
                self.deadlines[i.id] = expiry.isoformat()

    def seconds_to_next(self) -> float | None:
        if not self.deadlines:
            return None
        first = min(datetime.fromisoformat(d) for d in self.deadlines.values())
        return max((first - workflow.now()).total_seconds(), 0.001)

    def expire(self, thread: engine.Thread) -> list[tuple[str, Interrupt]]:
        """Forget the deadlines that have passed; the questions still pending among them
        (by id, in the order of their ids)."""
        now = workflow.now()
        pending = engine.pending_interrupts(thread.head)
        expired: list[tuple[str, Interrupt]] = []
        for iid, expiry in sorted(self.deadlines.items()):
            if datetime.fromisoformat(expiry) > now:
                continue
            del self.deadlines[iid]
            question = pending.get(iid)
            if question is not None:
                expired.append((iid, question))
        return expired


def step_timeout(item: Invocation) -> float | None:
    """The run's step timeout, as its caller sent it (RemoteGraph.step_timeout): from
    history, so a replay reads the same whatever the deployed graph says."""
    seconds = item.step_timeout
    if not seconds:
        return None
    # Older histories ran their steps without a timer.
    return float(seconds) if workflow.patched("graphrun-step-timeout") else None


async def within(timeout: float, tasks: list[engine.Task],
                 work: list[Any]) -> list[engine.TaskResult]:
    """A step's results, or at `timeout` (a durable timer) the finished ones and a
    StepTimeoutError for each task still running, whose activity is cancelled. Each of
    `work` gives its task's results (the task's, and its error handler's)."""
    running = [asyncio.ensure_future(w) for w in work]
    _done, late = await workflow.wait(running, timeout=timeout)
    for f in late:
        f.cancel()
    await asyncio.gather(*late, return_exceptions=True)
    finished = [r for f in running if f not in late for r in f.result()]
    return finished + timed_out([t for t, f in zip(tasks, running, strict=True)
                                 if f in late], timeout)
