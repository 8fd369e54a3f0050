"""The @task calls (graphrun.calls) a step's tasks make, as the run keeps them.

In-process a call runs inside its caller, and only its outcome comes back. On Temporal
a call runs as a task of its own: the step then goes on in rounds, running the calls
its tasks await and then those callers again, until every task of the step is done.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from graphrun.checkpoint import Task, TaskResult
from graphrun.types import PendingTask


class TaskCalls:
    """The calls of the step being run: their outcomes; on Temporal also the calls being
    run (id -> the call, the ids from its step task down to it, and that task), who
    waits for which, results held meanwhile, and the next round."""

    def __init__(self) -> None:
        self.results: dict[str, PendingTask] = {}
        self._tasks: Mapping[str, Task] = {}  # the step's tasks, by id
        self._calls: dict[str, tuple[Task, tuple[str, ...], Task]] = {}
        self._waiting: dict[str, set[str]] = {}
        self._held: dict[str, TaskResult] = {}
        self._round: list[Task] = []

    def new_step(self, tasks: Mapping[str, Task]) -> None:
        self._tasks = tasks
        self.results = {}

    def next_round(self) -> list[Task]:
        """Calls to run, or their callers again; empty when the step is not waiting."""
        tasks, self._round = self._round, []
        return tasks

    def path_of(self, call_id: str) -> tuple[tuple[str, ...], Task] | None:
        """For a call run on its own: the ids from its step task down to it, and that task."""
        if call_id not in self._calls:
            return None
        _, path, owner = self._calls[call_id]
        return path, owner

    def take(self, results: Sequence[TaskResult],
             on_finished: Callable[[Task, TaskResult], None]) -> list[TaskResult] | None:
        """Sort out @task calls: record their outcomes, and on Temporal plan the next
        round (calls awaited, callers whose calls are done). None while the step waits.
        `on_finished` is told of each call run on its own that finished (to stream it)."""
        if not (self._calls or self._held or any(r.calls or r.awaiting for r in results)):
            return list(results)
        ready: list[str] = []
        for r in results:
            for call, cr in r.calls:  # finished inside their caller (in-process)
                self.results[call.id] = _pending_of(cr)
            entry = self._calls.get(r.task_id)
            if entry is not None:  # a call run on its own (Temporal)
                call, path, owner = entry
                if r.error and r.error.get("type") == "CallMismatchError":
                    self._drop(owner)  # its caller changed: the caller fails
                    self._held[owner.id] = dataclasses.replace(r, task_id=owner.id)
                    continue
                if r.awaiting and not r.error:
                    self._await(r.awaiting, path, owner, r.task_id)
                    continue
                del self._calls[r.task_id]
                self.results[call.id] = _pending_of(r)
                on_finished(call, r)
                caller = path[-2] if len(path) > 1 else owner.id
                waits = self._waiting.get(caller, set())
                waits.discard(r.task_id)
                if not waits:
                    self._waiting.pop(caller, None)
                    ready.append(caller)
            elif r.task_id not in self._tasks:
                continue  # a call of a caller that failed meanwhile
            elif r.awaiting and not r.error:
                self._await(r.awaiting, (), self._tasks[r.task_id], r.task_id)
            else:
                self._held[r.task_id] = r
        for caller in ready:  # runs again, now with its calls' outcomes
            self._round.append(self._caller(caller))
        if self._round:
            return None
        held, self._held = list(self._held.values()), {}
        return held

    def _await(self, calls: Sequence[Task], path: tuple[str, ...], owner: Task,
               caller: str) -> None:
        for call in calls:
            if call.id in self._calls or call.id in self.results:
                continue
            self._calls[call.id] = (call, (*path, call.id), owner)
            self._waiting.setdefault(caller, set()).add(call.id)
            self._round.append(call)
        if caller not in self._waiting:  # nothing new to wait for: run it again now
            self._round.append(self._caller(caller))

    def _caller(self, caller: str) -> Task:
        """The task that made calls: one of the step's, or a call that made its own."""
        return self._calls[caller][0] if caller in self._calls else self._tasks[caller]

    def _drop(self, owner: Task) -> None:
        mine = {k for k, (_, _, o) in self._calls.items() if o.id == owner.id}
        for k in mine:
            del self._calls[k]
        for k in (*mine, owner.id):
            self._waiting.pop(k, None)
        self._round = [t for t in self._round if t.id not in mine and t.id != owner.id]


def _pending_of(r: TaskResult) -> PendingTask:
    """What a @task call's result leaves on the checkpoint."""
    if r.error:
        return PendingTask(status="failed", error=r.error, resume=list(r.resume))
    if r.interrupts or r.paused:
        return PendingTask(status="interrupted", interrupts=list(r.interrupts),
                           resume=list(r.resume))
    return PendingTask(status="done", writes=list(r.writes))
