"""Running an invocation step by step: each task is the `run_node` activity (local, or
heartbeated so a lost worker is noticed), at most `max_concurrency` at once, within the
run's step timeout."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy as TemporalRetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TemporalError

from .deadlines import step_timeout, within
from .inputs import Inputs
from .live_stream import LiveStream
from .payload_limits import PayloadLimits
from .relayed import RelayedRuns
from .thread_state import Invocation, ThreadState, now
from .visibility import Visibility

with workflow.unsafe.imports_passed_through():
    from graphrun import engine, payloads, serde
    from graphrun.errors import (
        GraphrunError,
        InvalidResumeError,
        ResumeValidationError,
        UndeclaredTypeError,
    )
    from graphrun.payloads import NodeResult, RunResult
    from graphrun.runner import run_task
    from graphrun.spec import NodeSpec
    from graphrun.types import PUSH, START

DEFAULT_NODE_TIMEOUT = timedelta(minutes=5)
# A node that does not heartbeat itself is heartbeated by its activity while it runs,
# so a lost worker is noticed within this time and the node is run again elsewhere.
LIVENESS_TIMEOUT = timedelta(seconds=20)
# Attempts Temporal makes when the worker, not the node, fails (lost worker, timeouts):
# a node's own exceptions follow its RetryPolicy (once, without one), as in LangGraph.
INFRA_ATTEMPTS = 3
# A failed node's error handler runs as a task of its own (its activity), not inside the
# node's activity as older histories have it.
HANDLER_NODES = "graphrun-error-handler-nodes"


class StepRunner:
    def __init__(self, state: ThreadState, inputs: Inputs, limits: PayloadLimits,
                 stream: LiveStream, visibility: Visibility, relayed: RelayedRuns) -> None:
        self._state = state
        self._inputs = inputs
        self._limits = limits
        self._stream = stream
        self._visibility = visibility
        self._relayed = relayed
        self._task_states: dict[str, Any] = {}  # running Send tasks' state (task_state)

    def task_state(self, task_id: str) -> Any:
        """The state a running Send task reads (typed JSON), for its node activity;
        None once the task has finished."""
        if task_id not in self._task_states:
            return None
        return {"state": serde.dumps(self._task_states[task_id])}

    async def run(self, item: Invocation) -> RunResult:
        """Run the graph for `item` until it ends or pauses."""
        state = self._state
        before = state.status
        try:
            run = engine.Run(state.spec, state.thread, item.input, clock=now,
                             options=engine.RunOptions(
                                 checkpoint=item.checkpoint_id,
                                 recursion_limit=int(item.config.get(
                                     "recursion_limit", state.spec.recursion_limit)),
                                 interrupt_before=item.interrupt_before,
                                 interrupt_after=item.interrupt_after, context=item.context,
                                 stream_modes=frozenset(item.stream_modes),
                                 messages_v2=item.messages_v2, durability=item.durability,
                                 subgraph_checkpoints=item.subgraph_checkpoints))
        except (GraphrunError, RuntimeError, ValueError) as exc:
            return self.refused(item, exc)
        self._visibility.set_status("running")
        events: list[Any] = []
        self._stream.begin(item)
        self._relayed.resumed(item, run)
        after_step = False  # paused at an interrupt_after breakpoint
        try:
            slots, timeout = self._slots_for(item), step_timeout(item)
            while tasks := run.next_tasks():
                events += self._stream.hand_on(item, run)
                if timeout is None:
                    results = [r for rs in await asyncio.gather(
                        *(self._slotted(slots, run, t, item) for t in tasks)) for r in rs]
                else:
                    results = await within(timeout, tasks, [
                        self._slotted(slots, run, t, item) for t in tasks])
                run.finish_step(results)
                after_step = run.status == "interrupted" and not run.interrupts
            events += self._stream.hand_on(item, run)
            run.close()  # durability="exit": the steps between its first and last go
            self._relayed.paused(item, run, after_step)
        except asyncio.CancelledError:
            # The step's tasks that finished are not run again (LangGraph's pending writes).
            if workflow.patched("graphrun-cancel-keeps-finished"):
                run.keep_finished()
            raise
        except InvalidResumeError as exc:
            self._visibility.set_status(before)
            return self.refused(item, exc)
        except TemporalError:
            raise  # the SDK's own (nondeterminism, sandbox): a deploy must fix those
        except Exception as exc:  # an engine error, or a reducer that raised: data, not code
            self._visibility.set_status("failed")
            return RunResult(status="failed", values=serde.dumps(run.values()),
                             error={"type": type(exc).__name__, "message": str(exc)})
        if run.status == "failed":
            failure = run.failure()
            self._visibility.set_status("failed")
            error = {"type": "NodeFailedError", "node": failure.node, "message": str(failure),
                     "error_type": failure.error_type, "error_message": failure.error_message}
            if "command" in (cause := run.failed[0].error or {}):  # the caller's ParentCommand
                error["command"] = cause["command"]
            return RunResult(status="failed", values=serde.dumps(run.output_values()),
                             error=error)
        self._visibility.set_status("interrupted" if run.status == "interrupted" else "done")
        return RunResult(status=state.status, values=serde.dumps(run.output_values()),
                         interrupts=[serde.interrupt_to_json(i) for i in run.interrupts],
                         events=serde.dumps(events) if item.stream and not item.stream_to
                         else None)

    def refused(self, item: Invocation, exc: Exception) -> RunResult:
        message = f"{type(exc).__name__}: {exc}"
        if item.from_signal:
            # A bad signal changes nothing; it is logged and kept on the thread.
            self._visibility.refuse(f"resume signal refused: {message}")
        error: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)}
        if isinstance(exc, ResumeValidationError):  # pydantic's errors, for the caller's
            error.update(type="InvalidResumeError", answer=exc.answer())
        return RunResult(status=self._state.status, error=error)

    def _slots_for(self, item: Invocation) -> asyncio.Semaphore | None:
        """config["max_concurrency"]: at most that many activities of a step (its tasks,
        and its @task calls, which run as activities of their own) at once."""
        n = item.config.get("max_concurrency")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            return None
        # Older histories scheduled a whole step at once.
        return asyncio.Semaphore(n) if workflow.patched("graphrun-max-concurrency") else None

    async def _slotted(self, slots: asyncio.Semaphore | None, run: engine.Run,
                       task: engine.Task, item: Invocation) -> list[engine.TaskResult]:
        if slots is None:
            return await self._reported(run, task, item)
        async with slots:
            return await self._reported(run, task, item)

    async def _reported(self, run: engine.Run, task: engine.Task, item: Invocation
                        ) -> list[engine.TaskResult]:
        """A task's result, then its error handler's when it failed and its node has one
        (run at once, while the step's other tasks go on: LangGraph's)."""
        result = await self._execute(run, task, item)
        run.task_finished(result)  # stream chunks in the order tasks finish
        if item.stream_to:  # a live reader gets them now, not when the step ends
            self._stream.hand_on(item, run)
        handler = (run.error_handler(task, result) if result.error
                   and self._handler_node(task) and workflow.patched(HANDLER_NODES) else None)
        if handler is None:
            return [result]
        return [result, *await self._reported(run, handler, item)]

    def _handler_node(self, task: engine.Task) -> bool:
        node = self._state.spec.nodes.get(task.name)
        return node is not None and node.error_handler_node is not None

    async def _execute(self, run: engine.Run, task: engine.Task, item: Invocation
                       ) -> engine.TaskResult:
        spec = self._state.spec
        call = run.call_for(task)
        if task.name == START and START not in spec.branches:
            return run_task(spec, call)  # no user code: mapping input to state
        # A @task call runs as the task that made it, run again down to that call.
        own = call.task
        node: NodeSpec = spec.nodes[own.name]
        local = node.local if node.local is not None else spec.local_activities
        # A Send's task that reads the state fetches it with the `task_state` query: one
        # copy of the state per tool call would otherwise go into history.
        by_query = own.state is not None and own.path[0] == PUSH and not local
        shared = own.state
        if by_query:
            own = dataclasses.replace(own, state=None)
        payload = payloads.node_call(
            call, serde.task_to_wire(own, spec.usual_triggers(own.name, own.path[0])),
            counts_steps=spec.counts_steps, graph=self._state.req.graph, node=own.name,
            thread_id=self._state.thread.thread_id, state_by_query=by_query,
            # The answers by id reach the subgraphs a task resumes; a task without any
            # has its own answer in `resume` already.
            resume_map=(serde.dumps(dict(run.resume_map)) if call.nested or call.calls
                        else {}),
            config=node_config(item.config), stream=item.stream, stream_to=item.stream_to,
            callbacks=item.callbacks,
            handler_apart=node.error_handler_node is not None and workflow.patched(
                HANDLER_NODES))
        if (too_big := self._limits.oversized(payload, f"node '{task.name}' input")) is not None:
            return engine.TaskResult(task_id=task.id, resume=call.resume, nested=call.nested,
                                     error={"type": "PayloadTooLargeError", "message": too_big})
        options: dict[str, Any] = {
            "start_to_close_timeout": node.timeout or DEFAULT_NODE_TIMEOUT,
            "retry_policy": retry_policy(node),
            "summary": task.name,
        }
        if by_query:
            self._task_states[own.id] = shared
        try:
            if local:
                res = await workflow.execute_local_activity(
                    "run_node", payload, result_type=NodeResult, **options)
            else:
                options["heartbeat_timeout"] = node.heartbeat_timeout or LIVENESS_TIMEOUT
                res = await workflow.execute_activity(
                    "run_node", payload, result_type=NodeResult, **options)
        except ActivityError as exc:
            return engine.TaskResult(task_id=task.id, resume=call.resume, nested=call.nested,
                                     error=node_error(exc))
        finally:
            self._task_states.pop(own.id, None)
        self._relayed.task(item, own, res.runs)
        try:
            return payloads.task_result(res, task.id, self._inputs.loads)
        except (UndeclaredTypeError, ValueError) as exc:  # never a workflow-task failure
            return engine.TaskResult(task_id=task.id, resume=call.resume, nested=call.nested,
                                     error={"type": type(exc).__name__, "message": str(exc)})


def node_error(exc: ActivityError) -> dict[str, Any]:
    """The user's error behind a failed activity: its type name and message (and the
    Command of a root graph's node that returned one for its parent)."""
    cause = exc.cause
    if isinstance(cause, ApplicationError):
        error: dict[str, Any] = {"type": cause.type or "Exception", "message": cause.message}
        if cause.type == "ParentCommand" and cause.details:
            error["command"] = cause.details[0]
        return error
    return {"type": type(cause).__name__, "message": str(cause)}


def node_config(config: dict[str, Any]) -> dict[str, Any]:
    """The invocation's `configurable` for the node, without the thread id the call
    carries anyway; nothing at all when that is all there is."""
    configurable = {k: v for k, v in (config.get("configurable") or {}).items()
                    if k != "thread_id"}
    return serde.dumps({"configurable": configurable}) if configurable else {}


def retry_policy(node: NodeSpec) -> TemporalRetryPolicy:
    """Temporal retries what the worker lost (timeouts, a dead worker); the activity marks
    a node's own exception non-retryable once its RetryPolicy is used up, so a node
    without one runs once when it raises, as in LangGraph."""
    if not node.retry_policy:
        return TemporalRetryPolicy(initial_interval=timedelta(seconds=1),
                                   maximum_interval=timedelta(seconds=30),
                                   maximum_attempts=INFRA_ATTEMPTS)
    # Temporal keeps one schedule: the first policy's. The activity stops retrying an
    # error once the policy that matches it has used its own attempts.
    p = node.retry_policy[0]
    return TemporalRetryPolicy(initial_interval=timedelta(seconds=p.initial_interval),
                               backoff_coefficient=p.backoff_factor,
                               maximum_interval=timedelta(seconds=p.max_interval),
                               maximum_attempts=max(INFRA_ATTEMPTS,
                                                    *(q.max_attempts for q in node.retry_policy)))
