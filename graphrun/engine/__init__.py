"""The superstep, as plain functions over channels, and `Run`, the loop both drivers share.

A driver does three things: build a `Run`, execute the tasks it hands out
(in-process, or as Temporal activities), and give the results back:

    run = Run(graph, thread, input, clock=clock)
    while tasks := run.next_tasks():
        run.finish_step([execute(run.call_for(t)) for t in tasks])
    run.output()   # values, plus "__interrupt__" when paused

Everything here is deterministic: ids are xxhash digests of the thread id, the
checkpoint sequence number, the step and the task path; the only time is the
`clock` the driver passes in (workflow.now() on Temporal). No I/O.

    planning     the superstep as functions: tasks, writes, values, resumes
    run          `Run`: start, the step loop, commits
    task_calls   the rounds of a step's @task calls
    events       the stream events, and `stream_chunks`
"""

from __future__ import annotations

from graphrun.channels import MISSING
from graphrun.checkpoint import (
    Checkpoint,
    Task,
    TaskCall,
    TaskResult,
    Thread,
    Write,
    checkpoint_id,
    interrupt_id,
    is_interrupt_id,
    task_id,
)
from graphrun.spec import goto_writes

from .events import stream_chunks, update_chunk
from .planning import (
    apply_writes,
    is_paused,
    pending_interrupts,
    prepare_tasks,
    read_values,
    resolve_checkpoint,
    restore_channels,
    save_channels,
    should_interrupt,
    task_result,
    validate_resume,
    values_with_pending,
)
from .run import Run, RunOptions

# Re-exported: the drivers use them from here. Data stored when they lived here names
# `graphrun.engine:Task` etc.; serde decodes those paths as aliases (serde._OWN_TYPES).
__all__ = [
    "MISSING",
    "Checkpoint",
    "Run",
    "RunOptions",
    "Task",
    "TaskCall",
    "TaskResult",
    "Thread",
    "Write",
    "apply_writes",
    "checkpoint_id",
    "goto_writes",
    "interrupt_id",
    "is_interrupt_id",
    "is_paused",
    "pending_interrupts",
    "prepare_tasks",
    "read_values",
    "resolve_checkpoint",
    "restore_channels",
    "save_channels",
    "should_interrupt",
    "stream_chunks",
    "task_id",
    "task_result",
    "update_chunk",
    "validate_resume",
    "values_with_pending",
]
