"""The task a node runs in: graphrun's runner sets it, and everything that runs inside a
node (interrupt(), the runtime accessors, the stream writer, callbacks, @task calls, the
LangGraph bridge) reads it here. The lowest module, so that none of them imports the
runner for it."""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphrun.runner import TaskContext

CURRENT: contextvars.ContextVar[TaskContext | None] = contextvars.ContextVar(
    "graphrun_task", default=None)


def current_task() -> TaskContext | None:
    """The task running here, or None outside any node."""
    return CURRENT.get()


__all__ = ["CURRENT", "current_task"]
