"""A run's limits in-process: `config["max_concurrency"]` and `step_timeout`.

`Slots` caps how many tasks of a run work at once, as LangGraph's executor does: a
step's tasks and the @task calls they make share the run's slots, and a caller waiting
for its calls keeps its own. Nodes may be coroutines on the loop or functions in
threads, so one limiter serves both. (On Temporal the workflow caps the activities it
schedules instead: see GraphWorkflow.)
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from graphrun.checkpoint import Task, TaskResult
from graphrun.errors import StepTimeoutError

T = TypeVar("T")

# The slots of the run whose task is running, for the @task calls it makes.
_SLOTS: contextvars.ContextVar[Slots | None] = contextvars.ContextVar(
    "graphrun_slots", default=None)


class Slots:
    """At most `n` holders at once, taken from threads or from coroutines."""

    def __init__(self, n: int) -> None:
        self._free = n
        self._lock = threading.Lock()
        self._waiters: deque[Callable[[], None]] = deque()

    def _take(self, wake: Callable[[], None]) -> bool:
        with self._lock:
            if self._free > 0:
                self._free -= 1
                return True
            self._waiters.append(wake)
            return False

    def release(self) -> None:
        with self._lock:
            if not self._waiters:
                self._free += 1
                return
            wake = self._waiters.popleft()  # the slot passes straight to the next waiter
        wake()

    def acquire(self) -> None:
        got = threading.Event()
        if not self._take(got.set):
            got.wait()

    async def aacquire(self) -> None:
        loop = asyncio.get_running_loop()
        got: asyncio.Future[None] = loop.create_future()

        def handed() -> None:
            if got.cancelled():  # its waiter left: pass the slot on
                self.release()
            else:
                got.set_result(None)

        def wake() -> None:
            loop.call_soon_threadsafe(handed)

        if self._take(wake):
            return
        try:
            await got
        except asyncio.CancelledError:
            with self._lock:
                queued = wake in self._waiters
                if queued:
                    self._waiters.remove(wake)
            if not queued and got.done() and not got.cancelled():
                self.release()  # handed over just as it was cancelled
            raise


def slots_for(config: Mapping[str, Any] | None) -> Slots | None:
    n = (config or {}).get("max_concurrency")
    if n is None:
        return None
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"max_concurrency must be a positive int, got {n!r}")
    return Slots(n)


def current_slots() -> Slots | None:
    return _SLOTS.get()


def limited(slots: Slots | None, fn: Callable[..., T], *args: Any) -> T:
    """Run `fn(*args)` in a slot (a thread's task), its calls sharing the slots."""
    if slots is None:
        return fn(*args)
    slots.acquire()
    token = _SLOTS.set(slots)
    try:
        return fn(*args)
    finally:
        _SLOTS.reset(token)
        slots.release()


async def alimited(slots: Slots | None, work: Awaitable[T]) -> T:
    """Await `work` in a slot (run as a task of its own, so the variable stays in it)."""
    if slots is None:
        return await work
    try:
        await slots.aacquire()
    except BaseException:
        if inspect.iscoroutine(work):
            work.close()  # never started: no "never awaited" warning
        raise
    token = _SLOTS.set(slots)
    try:
        return await work
    finally:
        _SLOTS.reset(token)
        slots.release()


def timed_out(tasks: Sequence[Task], timeout: float | None) -> list[TaskResult]:
    """The results of a step's tasks still running at its `step_timeout`: failed, each
    with the same StepTimeoutError, so the run stops keeping what finished."""
    if not tasks:
        return []
    names = sorted({t.name for t in tasks})
    step = tasks[0].step
    exc = StepTimeoutError(
        f"Timed out: step {step} ran past step_timeout={timeout}s and its unfinished "
        f"tasks ({', '.join(map(repr, names))}) were cancelled. What finished is kept: "
        f"invoke the thread with None to run the rest, or raise step_timeout.",
        step=step, nodes=names)
    error = {"type": "StepTimeoutError", "message": str(exc)}
    return [TaskResult(task_id=t.id, error=error, exception=exc) for t in tasks]
