"""GraphWorkflow: one workflow per thread, driving the same engine as `graphrun.local`.

Deterministic by construction: the engine is pure, ids are hashes, the only
clock is `workflow.now()`. Node code never runs here; each task is the
`run_node` activity, which reports interrupts as its result. Reducers run here,
so they must be pure.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy as TemporalRetryPolicy
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate
from temporalio.contrib.workflow_streams import WorkflowStream
from temporalio.exceptions import ActivityError, ApplicationError, TemporalError

from .metadata_update import MetadataUpdate

with workflow.unsafe.imports_passed_through():
    from graphrun import engine, lifetime, payloads, registry, serde, state, visibility
    from graphrun.details import current_details
    from graphrun.errors import (
        GraphNotFoundError,
        GraphrunError,
        InvalidResumeError,
        RunNotFoundError,
        ThreadBusyError,
        UndeclaredTypeError,
    )
    from graphrun.limits import timed_out
    from graphrun.payloads import (
        InvokeRequest,
        NodeResult,
        RunResult,
        StartRequest,
        SubgraphUpdate,
        ThreadResult,
        UpdateCall,
        WebhookCall,
    )
    from graphrun.runner import node_writes, run_task
    from graphrun.serde import InputLimits
    from graphrun.spec import GraphSpec, NodeSpec
    from graphrun.stream import STREAM_TOPIC
    from graphrun.types import PUSH, START, Command

GRAPH_STATUS = SearchAttributeKey.for_keyword("GraphStatus")
GRAPH_NAME = SearchAttributeKey.for_keyword("GraphName")
# A thread lives until it is deleted or its TTL ends (graphrun.lifetime); histories from
# before this patch closed the workflow once the graph finished.
LIVES = "graphrun-thread-lives"
DEFAULT_NODE_TIMEOUT = timedelta(minutes=5)
# A node that does not heartbeat itself is heartbeated by its activity while it runs,
# so a lost worker is noticed within this time and the node is run again elsewhere.
LIVENESS_TIMEOUT = timedelta(seconds=20)
# Attempts Temporal makes when the worker, not the node, fails (lost worker, timeouts):
# a node's own exceptions follow its RetryPolicy (once, without one), as in LangGraph.
INFRA_ATTEMPTS = 3
MAX_REFUSALS_KEPT = 20
MAX_RUNS_KEPT = 100  # run records a thread keeps (the `runs` query)
# A run record's status once its invocation has ended (RunResult.status -> record).
RUN_OUTCOME = {"done": "success", "interrupted": "success", "failed": "error",
               "cancelled": "interrupted", "running": "error"}


@contextlib.contextmanager
def _update_failure() -> Iterator[None]:
    """An update that cannot be applied fails the update, not the workflow task: a
    routing function that raised (its activity), or data the thread refuses."""
    try:
        yield
    except ActivityError as exc:
        error = _node_error(exc)
        raise ApplicationError(error["message"], type=error["type"],
                               non_retryable=True) from exc
    except (GraphrunError, ValueError) as exc:
        raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc


@dataclass
class _Target:
    """What an update applies to: the thread, or the thread of a subgraph in it."""

    spec: GraphSpec
    thread: engine.Thread
    ns: str


@dataclass
class _Invocation:
    number: int
    input: Any
    checkpoint_id: str | None
    config: dict[str, Any]
    from_signal: bool = False
    stream: bool = False
    interrupt_before: list[str] | None = None
    interrupt_after: list[str] | None = None
    refusal: Exception | None = None  # refused on arrival; answered in turn
    context: Any = None
    stream_modes: tuple[str, ...] = ()
    stream_to: str = ""  # publish the run's chunks live, tagged with this id
    run_id: str = ""  # the invoke update's id: the run's id (its record, cancel_run)
    cancel: str = ""  # "interrupt" or "rollback" once cancel_run (or a multitask) asked
    webhook: str = ""
    webhook_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    delete_after: bool = False  # InvokeRequest.delete_after
    after_seconds: float = 0
    callbacks: str = ""  # relay the nodes' callback events: "runs" or "stream" (NodeCall)
    messages_v2: bool = False  # 'messages' as content-block events (stream_events v3)
    subgraph_checkpoints: dict[str, str] = dataclasses.field(default_factory=dict)
    step_timeout: float | None = None


@workflow.defn(name="GraphWorkflow")
class GraphWorkflow(MetadataUpdate):
    @workflow.init
    def __init__(self, req: StartRequest) -> None:
        self._req = req
        # Live chunks for astream (temporalio's workflow streams: published here and by
        # node activities, read by long-poll updates). Publishing here appends to a log
        # in memory and adds nothing to history; only a subscriber's polls do.
        self._stream = WorkflowStream(req.stream)
        self._chunks = self._stream.topic(STREAM_TOPIC)
        self._stream_starts: list[int] = []
        self._handling = 0  # invoke and update_state handlers still running
        self._runs: list[dict[str, Any]] = [dict(r) for r in req.runs]  # run records
        self._processing: asyncio.Future[RunResult] | None = None
        self._current: _Invocation | None = None
        self._missing: GraphNotFoundError | None = None
        self._lives: bool | None = None  # see _lives_now
        self._deleting = False  # its TTL ended: the thread deletes itself
        self._rearm = False  # a signal changed the TTL: the loop sets its timer again
        self._uncarried = -1  # invocations taken when the thread was too large to carry
        self._ttl = _ttl(req.ttl)
        self._expires_at = req.expires_at if self._ttl is not None else ""
        try:
            self._graph = registry.lookup(req.graph)
        except GraphNotFoundError as exc:
            if req.thread or workflow.info().continued_run_id:
                # A thread with a past waits (its workflow task retries) for a worker
                # that serves its graph: a rolling deploy may not have reached this one.
                raise
            # A new thread of a graph this worker does not serve: refuse its invocation
            # and end the run at once, so nothing is left waiting (run() fails it).
            self._missing = exc
            return
        self._spec: GraphSpec = self._graph.spec
        self._thread = engine.Thread(thread_id=req.thread_id)
        self._status = "done" if req.thread else "running"
        self._inbox: list[_Invocation] = []
        self._results: dict[int, RunResult] = {}
        self._count = 0
        self._started_empty = False
        self._busy = False
        self._rejected: list[str] = []
        self._task_states: dict[str, Any] = {}  # running Send tasks' state (task_state)
        # update id -> its argument, decoded once by the validator for the handler
        self._decoded: dict[str, Any] = {}
        # interrupt id -> ISO time its durable timer expires
        self._deadlines: dict[str, str] = dict(req.deadlines)
        self._payload_limit = registry.limits(req.graph).max_payload_bytes  # see _limit_for
        if req.thread:
            try:
                self._thread = _loads(req.thread, self._spec, serde.thread_from_json)
            except (UndeclaredTypeError, ValueError) as exc:
                # Whoever started this run wrote data we will not build: keep the thread
                # open and empty, and say why. Only an invocation can change it now.
                self._status = "failed"
                self._record_refusal(f"seeded thread refused: {type(exc).__name__}: {exc}")
        self._thread.max_history = req.max_history

    # -- the loop -------------------------------------------------------------------
    @workflow.run
    async def run(self, req: StartRequest) -> ThreadResult:
        if self._missing is not None:
            raise ApplicationError(str(self._missing), type="GraphNotFoundError",
                                   non_retryable=True)
        # Update handlers of the first task run before this line. Started with no seed and
        # no accepted invocation (its first update was refused, even by the SDK's decoder):
        # nothing to keep, so close rather than stay open and empty.
        if (req.thread is None and not self._count
                and workflow.patched("graphrun-close-empty-start")):
            self._started_empty = True
        if self._lives_now():
            self._begin_life(req)
        while True:
            try:
                await workflow.wait_condition(
                    lambda: bool(self._inbox) or self._deleting or self._rearm
                    or (self._closes() and self._handling == 0) or self._idle_and_long(),
                    timeout=self._next_timer())
            except TimeoutError:
                self._timer_fired()
                continue
            self._rearm = False
            if self._deleting and not self._inbox and self._handling == 0:
                await self._delete_thread()
                break
            if not self._inbox:
                if self._idle_and_long():
                    await self._carry_on(req)
                    continue
                if self._closes() and self._handling == 0:
                    break
                continue
            item = self._inbox.pop(0)
            self._busy = True
            self._current = item
            before = list(self._thread.checkpoints), self._status
            try:
                # A task of its own, so that cancel_run (or a multitask) can stop it.
                self._processing = asyncio.ensure_future(self._process(item))
                result = await self._processing
            except asyncio.CancelledError:
                if not item.cancel:
                    raise  # the workflow itself is cancelled
                result = self._cancelled(item, before)
            finally:
                self._busy = False
                self._current = self._processing = None
            self._results[item.number] = self._result(result)
            self._set_run(item, "error" if result.error is not None and result.status != "failed"
                          else RUN_OUTCOME.get(result.status, "error"), result.error)
            if item.webhook:
                await self._send_webhook(item, result)
            if item.delete_after:  # a stateless run's thread (on_completion "delete")
                self._deleting = True
            if item.stream_to:
                self._chunks.publish({"id": item.stream_to, "end": True})
            self._track_deadlines()
            self._refresh_ttl()
            if not self._inbox and self._history_is_long():
                await self._carry_on(req)
        # Polls still waiting return now; a reader then reads the closed run by query.
        self._stream.detach_pollers()
        values = engine.values_with_pending(
            self._spec, engine.restore_channels(self._spec, self._thread.head), None)
        # The final values and the last checkpoint; the whole thread stays readable by
        # the `thread` query (a client seeding a new run asks for it).
        last = engine.Thread(self._thread.thread_id, self._thread.checkpoints[-1:],
                             seq=self._thread.seq, max_history=self._thread.max_history,
                             life=self._thread.life)
        final = ThreadResult(graph=req.graph, thread=serde.thread_to_json(last),
                             values=serde.dumps(values), runs=self._runs)
        # Never a completion Temporal refuses: drop what is too large to send.
        if self._oversized(final, "the thread's result") is not None:
            final = ThreadResult(graph=req.graph, thread=final.thread, runs=self._runs)
        if self._oversized(final, "the thread's result") is not None:
            final = ThreadResult(graph=req.graph, thread=serde.thread_to_json(
                engine.Thread(self._thread.thread_id, seq=self._thread.seq,
                              life=self._thread.life)))
        return final

    async def _carry_on(self, req: StartRequest) -> None:
        """Continue as new with the thread, so its history stays short; a thread too
        large to carry stays in this run (its history grows) until it changes."""
        # Readers' polls return what they wait for and new ones go to the next run
        # (temporalio's recipe for streams across continue-as-new).
        self._stream.detach_pollers()
        await workflow.wait_condition(
            lambda: bool(self._inbox) or workflow.all_handlers_finished())
        carried = StartRequest(
            graph=req.graph, thread_id=req.thread_id,
            thread=serde.thread_to_json(self._thread), max_history=req.max_history,
            history_event_limit=req.history_event_limit,
            search_attributes=req.search_attributes,
            upsert_changes_only=req.upsert_changes_only, deadlines=dict(self._deadlines),
            stream=self._stream.get_state() if self._stream_starts else None,
            runs=self._runs, ttl=req.ttl if self._ttl is None else self._ttl.model_dump(),
            expires_at=self._expires_at, index_metadata=req.index_metadata, keep=req.keep)
        if not self._inbox and self._oversized(carried, "the thread") is None:
            workflow.continue_as_new(carried)
        self._uncarried = self._count
        # It stays in this run (new input, or a thread too large to carry over, whose
        # history grows): its stream takes polls again.
        self._stream._detaching = False  # no public way to undo detach_pollers

    # -- a thread's life: open until deleted or its TTL ends ---------------------------
    def _lives_now(self) -> bool:
        """Whether this run keeps the thread open once its graph finishes (decided once:
        a history from before that closed it replays as it ran)."""
        if self._lives is None:
            self._lives = workflow.patched(LIVES)
        return self._lives

    def _begin_life(self, req: StartRequest) -> None:
        """A new thread takes its life's id (its ids then never repeat those of a thread
        deleted before under the same id), and says when it was created."""
        if req.thread is None and not self._thread.life:
            self._thread.life = workflow.info().first_execution_run_id
        if self._ttl is not None and not self._expires_at:
            self._refresh_ttl()
        if not req.search_attributes:
            return
        have = workflow.info().typed_search_attributes
        if have.get(visibility.CREATED_AT) is None:  # started by a client that did not set it
            now = visibility.stamp(workflow.info().start_time)
            metadata = workflow.memo_value("metadata", default={}) or {}
            workflow.upsert_search_attributes([
                visibility.CREATED_AT.value_set(now), visibility.UPDATED_AT.value_set(now),
                visibility.METADATA.value_set(visibility.metadata_entries(
                    metadata if isinstance(metadata, dict) else {}, req.index_metadata))])

    def _closes(self) -> bool:
        """The run ends: before lives, once the graph finished; now only a thread that
        never took anything (its first invocation refused before any checkpoint)."""
        if not self._lives:
            return self._idle_and_finished()
        return (not self._req.keep and (self._count > 0 or self._started_empty)
                and not self._thread.checkpoints)

    def _idle_and_long(self) -> bool:
        """Nothing to do and a long history: continue as new while idle too (signals
        and updates on an idle thread grow its history)."""
        return (bool(self._lives) and not self._busy and not self._inbox
                and self._handling == 0 and self._uncarried != self._count
                and self._history_is_long())

    def _next_timer(self) -> float | None:
        """Seconds to the first interrupt deadline or the TTL's end, whichever is first."""
        if self._inbox:
            return None
        waits = [w for w in (self._next_deadline(),
                             lifetime.seconds_left(self._expires_at, workflow.now()))
                 if w is not None]
        return min(waits) if waits else None

    def _timer_fired(self) -> None:
        self._expire_deadlines()
        if self._expires_at and datetime.fromisoformat(self._expires_at) <= workflow.now():
            self._deleting = True

    def _refresh_ttl(self) -> None:
        """The thread changed (or was read, with refresh on read): its TTL starts again."""
        if self._ttl is not None:
            self._expires_at = lifetime.expiry(self._ttl, workflow.now())

    async def _delete_thread(self) -> None:
        """The TTL ended: delete every execution of the thread, this one too (a
        workflow cannot delete itself; the `delete_thread` activity can). On a server
        that cannot delete (the time-skipping one) the activity says so and the run
        ends."""
        workflow.logger.info("thread %s: its TTL ended, or its stateless run did; deleting it",
                             self._thread.thread_id)
        self._stream.detach_pollers()
        await workflow.execute_activity(
            "delete_thread", workflow.info().workflow_id, summary="TTL: delete the thread",
            start_to_close_timeout=timedelta(minutes=1))

    # -- runs: records, cancellation, multitask -------------------------------------------
    # -- what a worker interceptor may read (graphrun.tracing, graphrun.metrics): no
    # handlers, no state ---------------------------------------------------------------
    def graph_and_thread(self) -> tuple[str, str]:
        """The graph this thread runs and the thread's id."""
        return self._req.graph, self._req.thread_id

    def invocations_taken(self) -> int:
        """How many invocations the thread has taken in (numbered 1, 2, ...)."""
        return getattr(self, "_count", 0)

    def current_invocation(self) -> tuple[int, str] | None:
        """The invocation being processed: its number and its run id ("" if none)."""
        current = getattr(self, "_current", None)
        return None if current is None else (current.number, current.run_id)

    def result_of(self, number: int) -> RunResult | None:
        """The result of invocation `number`, once it has one."""
        return getattr(self, "_results", {}).get(number)

    def _record_run(self, item: _Invocation, record: dict[str, Any]) -> None:
        now = self._now()
        # The workflow run that took it: its update's outcome is found there (join).
        self._runs = [*self._runs, {**record, "run_id": item.run_id, "status": "pending",
                                    "created_at": now, "updated_at": now,
                                    "workflow_run_id": workflow.info().run_id}
                      ][-MAX_RUNS_KEPT:]

    def _set_run(self, item: _Invocation, status: str,
                 error: dict[str, str] | None = None) -> None:
        for r in self._runs:
            if r["run_id"] == item.run_id and item.run_id:
                r.update(status=status, updated_at=self._now())
                if error:
                    r["error"] = error

    def _cancel(self, item: _Invocation, action: str) -> None:
        """Stop a run: a pending one leaves the inbox, the running one is cancelled (its
        node activities are asked to stop; the thread keeps its last checkpoint)."""
        item.cancel = action
        if item is self._current:
            if self._processing is not None:
                self._processing.cancel()
            return
        self._inbox.remove(item)
        self._results[item.number] = RunResult(status="cancelled",
                                               values=serde.dumps(self._values()))
        if item.stream_to:
            self._chunks.publish({"id": item.stream_to, "end": True})
        self._end_run(item, action)

    def _end_run(self, item: _Invocation, action: str) -> None:
        if action == "rollback":  # as LangGraph: a rolled-back run is deleted
            self._runs = [r for r in self._runs if r["run_id"] != item.run_id]
        else:
            self._set_run(item, "interrupted")

    def _cancelled(self, item: _Invocation, before: tuple[list[Any], str]) -> RunResult:
        """The running run was cancelled: "rollback" drops the checkpoints it made; either
        way the thread waits where it stands, and `invoke(None)` goes on from there."""
        if item.cancel == "rollback":
            self._thread.checkpoints, status = before
            self._set_status(status)
        else:
            self._set_status("interrupted" if self._thread.checkpoints else "done")
        if item.stream_to:
            self._chunks.publish({"id": item.stream_to, "end": True})
            item.stream_to = ""  # ended here; the loop publishes no second end
        result = RunResult(status="cancelled", values=serde.dumps(self._values()))
        self._end_run(item, item.cancel)
        return result

    async def _send_webhook(self, item: _Invocation, result: RunResult) -> None:
        """POST the finished run to its webhook (an activity: the network is not here).
        A webhook that keeps failing is logged; the thread goes on."""
        record = next((r for r in self._runs if r["run_id"] == item.run_id), {})
        try:
            await workflow.execute_activity(
                "send_webhook", WebhookCall(url=item.webhook, graph=self._req.graph,
                                            thread_id=self._thread.thread_id, run=record,
                                            values=result.values, error=result.error,
                                            options=item.webhook_options),
                start_to_close_timeout=timedelta(seconds=30), summary="webhook",
                retry_policy=TemporalRetryPolicy(maximum_attempts=3))
        except ActivityError as exc:
            workflow.logger.warning("webhook of run %s failed: %s", item.run_id, exc.cause)

    def _values(self) -> Any:
        if self._thread.head is None:
            return {}
        return engine.values_with_pending(
            self._spec, engine.restore_channels(self._spec, self._thread.head), None)

    def _runs_waiting(self) -> list[_Invocation]:
        """The runs on the thread not yet finished: the running one, then the queued."""
        current = [self._current] if self._current is not None else []
        return [*current, *(i for i in self._inbox if i.run_id)]

    # -- interrupt deadlines -----------------------------------------------------------
    def _track_deadlines(self) -> None:
        pending = engine.pending_interrupts(self._thread.head)
        self._deadlines = {i: d for i, d in self._deadlines.items() if i in pending}
        for i in pending.values():
            if i.timeout is not None and i.id not in self._deadlines:
                expiry = workflow.now() + timedelta(seconds=i.timeout)
                self._deadlines[i.id] = expiry.isoformat()

    def _next_deadline(self) -> float | None:
        if not self._deadlines or self._inbox:
            return None
        first = min(datetime.fromisoformat(d) for d in self._deadlines.values())
        return max((first - workflow.now()).total_seconds(), 0.001)

    def _expire_deadlines(self) -> None:
        now = workflow.now()
        pending = engine.pending_interrupts(self._thread.head)
        for iid, expiry in sorted(self._deadlines.items()):
            if datetime.fromisoformat(expiry) > now:
                continue
            del self._deadlines[iid]
            question = pending.get(iid)
            if question is None:
                continue
            if question.has_default:
                workflow.logger.info("interrupt %s timed out; resuming with its default", iid)
                self._enqueue(Command(resume={iid: question.default}), None, {},
                              from_signal=True)
            else:
                self._set_status("failed")
                self._record_refusal(f"interrupt {iid} timed out with no default answer")

    def _idle_and_finished(self) -> bool:
        # Done, or every invocation so far was refused before the thread had a checkpoint
        # (nothing to keep, so the workflow need not stay open).
        return self._status == "done" or ((self._count > 0 or self._started_empty)
                                          and not self._thread.checkpoints)

    def _history_is_long(self) -> bool:
        info = workflow.info()
        return (info.is_continue_as_new_suggested()
                or info.get_current_history_length() > self._req.history_event_limit)

    async def _process(self, item: _Invocation) -> RunResult:
        if item.refusal is not None:
            return self._refused(item, item.refusal)
        if item.after_seconds > 0:  # a run asked to start later (a durable timer)
            await workflow.sleep(item.after_seconds)
        self._set_run(item, "running")
        self._payload_limit = self._limit_for(item)
        before = self._status
        try:
            run = engine.Run(self._spec, self._thread, item.input, clock=self._now,
                             options=engine.RunOptions(
                                 checkpoint=item.checkpoint_id,
                                 recursion_limit=int(item.config.get(
                                     "recursion_limit", self._spec.recursion_limit)),
                                 interrupt_before=item.interrupt_before,
                                 interrupt_after=item.interrupt_after, context=item.context,
                                 stream_modes=frozenset(item.stream_modes),
                                 messages_v2=item.messages_v2,
                                 subgraph_checkpoints=item.subgraph_checkpoints))
        except (GraphrunError, RuntimeError, ValueError) as exc:
            return self._refused(item, exc)
        self._set_status("running")
        events: list[Any] = []
        self._begin_stream(item)
        try:
            slots, timeout = self._slots_for(item), self._step_timeout(item)
            while tasks := run.next_tasks():
                events += self._hand_on(item, run)
                if timeout is None:
                    results = await asyncio.gather(*(self._slotted(slots, run, t, item)
                                                     for t in tasks))
                else:
                    results = await self._within(timeout, tasks, [
                        self._slotted(slots, run, t, item) for t in tasks])
                run.finish_step(results)
            events += self._hand_on(item, run)
        except asyncio.CancelledError:
            # The step's tasks that finished are not run again (LangGraph's pending writes).
            if workflow.patched("graphrun-cancel-keeps-finished"):
                run.keep_finished()
            raise
        except InvalidResumeError as exc:
            self._set_status(before)
            return self._refused(item, exc)
        except TemporalError:
            raise  # the SDK's own (nondeterminism, sandbox): a deploy must fix those
        except Exception as exc:  # an engine error, or a reducer that raised: data, not code
            self._set_status("failed")
            return RunResult(status="failed", values=serde.dumps(run.values()),
                             error={"type": type(exc).__name__, "message": str(exc)})
        if run.status == "failed":
            failure = run.failure()
            self._set_status("failed")
            return RunResult(status="failed", values=serde.dumps(run.output_values()), error={
                "type": "NodeFailedError", "node": failure.node, "message": str(failure),
                "error_type": failure.error_type, "error_message": failure.error_message})
        self._set_status("interrupted" if run.status == "interrupted" else "done")
        return RunResult(status=self._status, values=serde.dumps(run.output_values()),
                         interrupts=[serde.interrupt_to_json(i) for i in run.interrupts],
                         events=serde.dumps(events) if item.stream and not item.stream_to
                         else None)

    def _slots_for(self, item: _Invocation) -> asyncio.Semaphore | None:
        """config["max_concurrency"]: at most that many activities of a step (its tasks,
        and its @task calls, which run as activities of their own) at once."""
        n = item.config.get("max_concurrency")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            return None
        # Older histories scheduled a whole step at once.
        return asyncio.Semaphore(n) if workflow.patched("graphrun-max-concurrency") else None

    def _step_timeout(self, item: _Invocation) -> float | None:
        """The run's step timeout, as its caller sent it (RemoteGraph.step_timeout): from
        history, so a replay reads the same whatever the deployed graph says."""
        seconds = item.step_timeout
        if not seconds:
            return None
        # Older histories ran their steps without a timer.
        return float(seconds) if workflow.patched("graphrun-step-timeout") else None

    async def _within(self, timeout: float, tasks: list[engine.Task],
                      work: list[Any]) -> list[engine.TaskResult]:
        """A step's results, or at `timeout` (a durable timer) the finished ones and a
        StepTimeoutError for each task still running, whose activity is cancelled."""
        running = [asyncio.ensure_future(w) for w in work]
        _done, late = await workflow.wait(running, timeout=timeout)
        for f in late:
            f.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        finished = [f.result() for f in running if f not in late]
        return finished + timed_out([t for t, f in zip(tasks, running, strict=True)
                                     if f in late], timeout)

    async def _slotted(self, slots: asyncio.Semaphore | None, run: engine.Run,
                       task: engine.Task, item: _Invocation) -> engine.TaskResult:
        if slots is None:
            return await self._reported(run, task, item)
        async with slots:
            return await self._reported(run, task, item)

    def _begin_stream(self, item: _Invocation) -> None:
        """A streamed run starts: the stream keeps the chunks of the last two."""
        if item.stream_to:
            # The log's current end (the stream's own offset query reads the same).
            self._stream_starts = [*self._stream_starts[-1:], self._stream._on_offset()]
            if len(self._stream_starts) == 2:
                self._stream.truncate(self._stream_starts[0])

    def _hand_on(self, item: _Invocation, run: engine.Run) -> list[Any]:
        """Take the run's chunks so far: published to the live stream when the caller
        reads it (one item per chunk, so a reader can go on from any offset), else
        returned for the run's result."""
        events, run.events = run.events, []
        if not item.stream_to:
            return events
        for event in events:
            self._chunks.publish({"id": item.stream_to, "e": serde.dumps(event)})
        return []

    def _refused(self, item: _Invocation, exc: Exception) -> RunResult:
        message = f"{type(exc).__name__}: {exc}"
        if item.from_signal:
            # A bad signal changes nothing; it is logged and kept on the thread.
            self._record_refusal(f"resume signal refused: {message}")
        return RunResult(status=self._status,
                         error={"type": type(exc).__name__, "message": str(exc)})

    async def _reported(self, run: engine.Run, task: engine.Task, item: _Invocation
                        ) -> engine.TaskResult:
        result = await self._execute(run, task, item)
        run.task_finished(result)  # stream chunks in the order tasks finish
        if item.stream_to:  # a live reader gets them now, not when the step ends
            self._hand_on(item, run)
        return result

    async def _execute(self, run: engine.Run, task: engine.Task, item: _Invocation
                       ) -> engine.TaskResult:
        call = run.call_for(task)
        if task.name == START and START not in self._spec.branches:
            return run_task(self._spec, call)  # no user code: mapping input to state
        # A @task call runs as the task that made it, run again down to that call.
        own = call.task
        node: NodeSpec = self._spec.nodes[own.name]
        local = node.local if node.local is not None else self._spec.local_activities
        # A Send's task that reads the state fetches it with the `task_state` query: one
        # copy of the state per tool call would otherwise go into history.
        by_query = own.state is not None and own.path[0] == PUSH and not local
        shared = own.state
        if by_query:
            own = dataclasses.replace(own, state=None)
        payload = payloads.node_call(
            call, serde.task_to_wire(own, self._spec.usual_triggers(own.name, own.path[0])),
            counts_steps=self._spec.counts_steps,
            graph=self._req.graph, node=own.name,
            thread_id=self._thread.thread_id, state_by_query=by_query,
            # The answers by id reach the subgraphs a task resumes; a task without any
            # has its own answer in `resume` already.
            resume_map=(serde.dumps(dict(run.resume_map)) if call.nested or call.calls
                        else {}),
            config=_node_config(item.config), stream=item.stream, stream_to=item.stream_to,
            callbacks=item.callbacks)
        if (too_big := self._oversized(payload, f"node '{task.name}' input")) is not None:
            return engine.TaskResult(task_id=task.id, resume=call.resume, nested=call.nested,
                                     error={"type": "PayloadTooLargeError", "message": too_big})
        options: dict[str, Any] = {
            "start_to_close_timeout": node.timeout or DEFAULT_NODE_TIMEOUT,
            "retry_policy": _retry_policy(node),
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
                                     error=_node_error(exc))
        finally:
            self._task_states.pop(own.id, None)
        try:
            return payloads.task_result(res, task.id, self._loads)
        except (UndeclaredTypeError, ValueError) as exc:  # never a workflow-task failure
            return engine.TaskResult(task_id=task.id, resume=call.resume, nested=call.nested,
                                     error={"type": type(exc).__name__, "message": str(exc)})

    def _now(self) -> str:
        return workflow.now().isoformat()

    def _oversized(self, value: Any, what: str) -> str | None:
        """Why `value` cannot go out in one payload, or None. Temporal refuses a command
        that carries more than its limit, and would fail the workflow task again and
        again: graphrun fails the node or the result instead, keeping the thread."""
        limit = self._payload_limit
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

    def _limit_for(self, item: _Invocation) -> int | None:
        """The payload limit of this invocation. External storage lifts it, but only for
        invocations that first ran with it on (a marker says so): replaying one that ran
        without it must fail its oversized node again, not schedule it."""
        configured = registry.limits(self._req.graph).max_payload_bytes
        if configured is None and not workflow.patched(
                f"graphrun-external-storage-{item.number}"):
            return InputLimits().max_payload_bytes
        return configured

    def _result(self, result: RunResult) -> RunResult:
        """The run's answer, without the values if they are too large to send back."""
        too_big = self._oversized(result, "the run's result (its state)")
        if too_big is None:
            return result
        return RunResult(status=result.status, values=None, interrupts=result.interrupts,
                         error=result.error or {"type": "PayloadTooLargeError",
                                                "message": too_big})

    # -- status for people ----------------------------------------------------------
    def _set_status(self, status: str) -> None:
        self._status = status
        if self._req.search_attributes:
            want: list[SearchAttributeUpdate[Any]] = [
                GRAPH_STATUS.value_set(status), GRAPH_NAME.value_set(self._req.graph)]
            if self._req.upsert_changes_only:
                # Each upsert is a visibility write: about a tenth of the server's work
                # for an approval. Decided by the input, so old histories replay as run.
                have = workflow.info().typed_search_attributes
                want = [u for u in want if have.get(u.key) != u.value]
            if want and self._lives:  # the same write says when it changed
                want.append(visibility.UPDATED_AT.value_set(visibility.stamp(workflow.now())))
            if want:
                workflow.upsert_search_attributes(want)
        self._publish_details()

    def _changed(self, metadata: dict[str, Any] | None = None) -> None:
        """A state update or a metadata patch: the thread's TTL starts again, and its
        search attributes say when (and what metadata it now has)."""
        self._refresh_ttl()
        if not (self._lives and self._req.search_attributes):
            return
        want: list[SearchAttributeUpdate[Any]] = [
            visibility.UPDATED_AT.value_set(visibility.stamp(workflow.now()))]
        if metadata is not None:
            want.append(visibility.METADATA.value_set(
                visibility.metadata_entries(metadata, self._req.index_metadata)))
        workflow.upsert_search_attributes(want)

    def _publish_details(self) -> None:
        # The UI renders this as markdown; graphrun.details keeps the data in it as text.
        # Setting details is not a workflow command: the text may change without a patch.
        head = self._thread.head
        workflow.set_current_details(current_details(
            graph=self._req.graph, thread_id=self._thread.thread_id, status=self._status,
            questions=[(i.id, _json(serde.dumps(i.value)))
                       for i in engine.pending_interrupts(head).values()],
            failures=[p.error or "" for p in head.pending.values() if p.status == "failed"]
            if head is not None else [],
            refused=self._rejected[-1] if self._rejected else None))

    # -- handlers -------------------------------------------------------------------
    def _enqueue(self, input: Any, checkpoint_id: str | None, config: dict[str, Any],
                 from_signal: bool = False, stream: bool = False,
                 interrupt_before: list[str] | None = None,
                 interrupt_after: list[str] | None = None,
                 refusal: Exception | None = None, context: Any = None,
                 stream_modes: tuple[str, ...] = (), stream_to: str = "") -> int:
        self._count += 1
        self._inbox.append(_Invocation(self._count, input, checkpoint_id, config, from_signal,
                                       stream, interrupt_before, interrupt_after, refusal,
                                       context, stream_modes, stream_to))
        return self._count

    # -- what arrives: decoded once, into declared types only, within the limits --------
    def _loads(self, data: Any, decode: Any = serde.loads) -> Any:
        return _loads(data, self._spec, decode)

    def _decode_input(self, data: Any, what: str) -> Any:
        registry.limits(self._req.graph).check(data, what)
        return self._loads(data)

    def _take_decoded(self, data: Any, what: str) -> Any:
        """The validator's decoding of this update (on replay validators don't run)."""
        update_id = workflow.current_update_info().id  # type: ignore[union-attr]
        if update_id in self._decoded:
            return self._decoded.pop(update_id)
        return self._decode_input(data, what)

    @workflow.update
    async def invoke(self, req: InvokeRequest) -> RunResult:
        """Run the graph with new input, None or a Command; answers when it next stops."""
        refusal: Exception | None = None
        try:
            value, context = self._take_decoded([req.input, req.context], "the input")
        except (GraphrunError, ValueError) as exc:
            # Only on a thread that never started (see the validator): refused in turn,
            # so the workflow closes instead of staying open with nothing in it.
            value, context, refusal = None, None, exc
        if req.multitask in ("interrupt", "rollback"):
            for waiting in self._runs_waiting():
                self._cancel(waiting, req.multitask)
        n = self._enqueue(value, req.checkpoint_id, dict(req.config),
                          stream=req.stream, interrupt_before=req.interrupt_before,
                          interrupt_after=req.interrupt_after, refusal=refusal,
                          context=context, stream_modes=tuple(req.stream_modes),
                          stream_to=req.stream_to)
        item = self._inbox[-1]
        item.run_id = workflow.current_update_info().id  # type: ignore[union-attr]
        item.webhook, item.after_seconds = req.webhook, req.after_seconds
        item.webhook_options = dict(req.webhook_options)
        item.delete_after = req.delete_after
        item.callbacks = req.callbacks if req.stream_to else ""
        item.messages_v2 = req.messages_v2
        item.subgraph_checkpoints = dict(req.subgraph_checkpoints)
        item.step_timeout = req.step_timeout
        if req.run:  # a run the Server API made: it lists runs by their records
            self._record_run(item, req.run)
        with self._handling_update():
            await workflow.wait_condition(lambda: n in self._results)
        result = self._results.pop(n)
        if result.error is not None and result.status != "failed":
            raise ApplicationError(result.error["message"], result.error,
                                   type=result.error["type"], non_retryable=True)
        return result

    @invoke.validator
    def _validate_invoke(self, req: InvokeRequest) -> None:
        # Reject bad input before it enters history, when the answer is knowable now.
        if self._missing is not None:
            raise self._missing
        if req.multitask == "reject" and (self._busy or self._inbox):
            raise ThreadBusyError(f"thread '{self._thread.thread_id}' has a run pending or "
                                  f"running, and this run's multitask strategy is 'reject'.")
        try:
            decoded = self._decode_input([req.input, req.context], "the input")
        except (GraphrunError, ValueError):
            if not self._thread.checkpoints and not self._count:
                return  # a thread that never started: the handler refuses it and closes
            raise
        value = decoded[0]
        if isinstance(value, Command) and value.resume is not None and not (
                self._busy or self._inbox):
            engine.validate_resume(self._spec, self._thread, value.resume,
                                   checkpoint=req.checkpoint_id)
        self._decoded[workflow.current_update_info().id] = decoded  # type: ignore[union-attr]

    @workflow.update
    async def update_state(self, values: Any, as_node: str | None = None,
                           checkpoint_id: str | None = None) -> str:
        """Write values as if `as_node` returned them; returns the new checkpoint id.

        The node's edges are applied here; its routing functions, if it has any,
        run in the `route_update` activity like all user code.
        """
        with self._handling_update(), _update_failure():
            # Decoded by the validator; replaying an accepted update decodes here.
            decoded = self._take_decoded(values, "update_state values")
            await workflow.wait_condition(lambda: not self._busy and not self._inbox)
            ckpt = await self._update(decoded, as_node, checkpoint_id, self._root())
            self._settle_after_update()
            return ckpt.id

    async def _update(self, values: Any, as_node: str | None, checkpoint_id: str | None,
                      t: _Target) -> engine.Checkpoint:
        """An `update_state` of the thread, or of a subgraph's thread in it."""
        ckpt = state.special_update(t.spec, t.thread, values, as_node, clock=self._now,
                                    checkpoint=checkpoint_id)
        if ckpt is None:
            ckpt = await self._update_as(values, as_node, checkpoint_id, t)
        elif as_node == state.COPY and isinstance(values, list) and values:
            # the copy, then the updates on top: (values, as_node, ...)
            if workflow.patched("graphrun-copy-updates-one-step"):
                ckpt = await self._updates_as(values, ckpt.id, t)  # one superstep
            else:
                for item in values:
                    ckpt = await self._update_as(item[0], item[1], ckpt.id, t)
        return ckpt

    async def _supersteps(self, steps: list[Any], checkpoint_id: str | None, t: _Target
                          ) -> str:
        """A `bulk_update_state`: one checkpoint per superstep; the last one's id."""
        for step in steps:
            values, as_node = step[0][0], step[0][1]
            ckpt = (state.special_update(t.spec, t.thread, values, as_node, clock=self._now,
                                         checkpoint=checkpoint_id)
                    if len(step) == 1 else None)
            if ckpt is None:
                ckpt = await self._updates_as(list(step), checkpoint_id, t)
            checkpoint_id = ckpt.id
        return str(checkpoint_id)

    @workflow.update
    async def bulk_update_state(self, supersteps: Any, checkpoint_id: str | None = None) -> str:
        """Several `update_state`s, one checkpoint per superstep: each superstep a list of
        `StateUpdate`s (values, as_node) applied as if those nodes ran in one step."""
        with self._handling_update(), _update_failure():
            steps = self._take_decoded(supersteps, "bulk_update_state values")
            state.check_supersteps(steps)
            await workflow.wait_condition(lambda: not self._busy and not self._inbox)
            last = await self._supersteps(steps, checkpoint_id, self._root())
            self._settle_after_update()
            return last

    @bulk_update_state.validator
    def _validate_bulk_update_state(self, supersteps: Any,
                                    checkpoint_id: str | None = None) -> None:
        self._decode_update(supersteps, "bulk_update_state values")

    def _settle_after_update(self) -> None:
        """A state update that leaves nothing to run (e.g. as `__end__` on a paused
        thread) ends the pause: the thread is done, as LangGraph's server says idle."""
        if (self._status in ("interrupted", "failed") and not self._busy and not self._inbox
                and not engine.is_paused(self._spec, self._thread)
                and workflow.patched("graphrun-status-after-update")):
            self._set_status("done")
        else:
            self._publish_details()
        self._changed()

    @contextlib.contextmanager
    def _handling_update(self) -> Iterator[None]:
        """An invoke or update_state handler is running: the thread stays open for it
        (the stream's polls are handlers too, and must not keep it open)."""
        self._handling += 1
        try:
            yield
        finally:
            self._handling -= 1

    @workflow.update
    async def update_subgraph_state(self, req: SubgraphUpdate) -> dict[str, Any]:
        """`update_state` (or `bulk_update_state`) on the thread of the subgraph at
        `req.checkpoint_ns`: a new checkpoint there, which a run from the config it
        answers goes on from (the subgraph's config, as its snapshot names it)."""
        with self._handling_update(), _update_failure():
            decoded = self._take_decoded(req.values, "update_state values")
            await workflow.wait_condition(lambda: not self._busy and not self._inbox)
            spec, thread, at, ns, parents = self._locate(req)
            target, at_id = _Target(spec, thread, ns), at.id if at is not None else None
            if req.bulk:
                state.check_supersteps(decoded)
                last = await self._supersteps(decoded, at_id, target)
            else:
                last = (await self._update(decoded, req.as_node, at_id, target)).id
            self._publish_details()
            self._changed()
            return state.checkpoint_config(self._thread.thread_id, ns, last, parents)

    @update_subgraph_state.validator
    def _validate_update_subgraph_state(self, req: SubgraphUpdate) -> None:
        self._decode_update(req.values, "update_state values")
        if not self._busy and not self._inbox:  # no subgraph there: refused before history
            self._locate(req)

    def _locate(self, req: SubgraphUpdate) -> Any:
        return state.locate(self._spec, self._thread, {
            "checkpoint_ns": req.checkpoint_ns, "checkpoint_id": req.checkpoint_id,
            "checkpoint_map": req.checkpoint_map})

    def _root(self) -> _Target:
        return _Target(self._spec, self._thread, "")

    async def _update_as(self, values: Any, as_node: str | None,
                         checkpoint_id: str | None, t: _Target) -> engine.Checkpoint:
        node, writes, written = await self._writes_as(values, as_node, checkpoint_id, t)
        return state.apply_update(t.spec, t.thread, node, writes, written,
                                  clock=self._now, checkpoint=checkpoint_id)

    async def _updates_as(self, items: list[Any], checkpoint_id: str | None,
                          t: _Target) -> engine.Checkpoint:
        """Several nodes' updates as one checkpoint, as if they ran in one step."""
        if len(items) == 1:
            return await self._update_as(items[0][0], items[0][1], checkpoint_id, t)
        updates = []
        for values, as_node, *_ in items:
            state.check_one_of_many(as_node)
            updates.append(await self._writes_as(values, as_node, checkpoint_id, t))
        return state.apply_updates(t.spec, t.thread, updates, clock=self._now,
                                   checkpoint=checkpoint_id)

    async def _writes_as(self, values: Any, as_node: str | None, checkpoint_id: str | None,
                         t: _Target) -> tuple[str, list[Any], Any]:
        """The writes of an update as `as_node`: its routing functions run in an activity."""
        node, update, current = state.resolve_update(
            t.spec, t.thread, values, as_node, checkpoint=checkpoint_id)
        if node in t.spec.branches:
            routed = await workflow.execute_activity(
                "route_update", UpdateCall(graph=self._req.graph, node=node,
                                           thread_id=self._thread.thread_id,
                                           values=serde.dumps(update),
                                           state=serde.dumps(current), checkpoint_ns=t.ns),
                result_type=NodeResult, start_to_close_timeout=DEFAULT_NODE_TIMEOUT,
                retry_policy=TemporalRetryPolicy(maximum_attempts=1),
                summary=f"update_state as {node}")
            writes = [(w[0], w[1]) for w in self._loads(routed.writes)]
            written = self._loads(routed.update)
        else:
            writes, written = node_writes(t.spec, node, update, current, None)
        return node, writes, written

    @update_state.validator
    def _validate_update_state(self, values: Any, as_node: str | None = None,
                               checkpoint_id: str | None = None) -> None:
        self._decode_update(values, "update_state values")

    def _decode_update(self, values: Any, what: str) -> None:
        """A validator's decoding, kept for its handler (see _take_decoded)."""
        if self._missing is not None:
            raise self._missing
        decoded = self._decode_input(values, what)
        self._decoded[workflow.current_update_info().id] = decoded  # type: ignore[union-attr]

    @workflow.update
    def cancel_run(self, run_id: str, action: str = "interrupt") -> str:
        """Stop a pending or running run ("interrupt" keeps what it wrote, "rollback"
        drops it); answers the run's status before."""
        item = next(i for i in self._runs_waiting() if i.run_id == run_id)
        self._cancel(item, action)
        return "running" if item is self._current else "pending"

    @cancel_run.validator
    def _validate_cancel_run(self, run_id: str, action: str = "interrupt") -> None:
        if action not in ("interrupt", "rollback"):
            raise ValueError(f"action must be 'interrupt' or 'rollback', not {action!r:.40}")
        if not run_id or not any(i.run_id == run_id and not i.cancel
                                 for i in self._runs_waiting()):
            raise RunNotFoundError(f"thread '{self._thread.thread_id}' has no pending or "
                                   f"running run {run_id!r:.80}.")

    @workflow.update
    def delete_run(self, run_id: str) -> None:
        """Forget a finished run's record."""
        self._runs = [r for r in self._runs if r["run_id"] != run_id]

    @delete_run.validator
    def _validate_delete_run(self, run_id: str) -> None:
        if any(i.run_id == run_id for i in self._runs_waiting()):
            raise ThreadBusyError(f"run {run_id!r:.80} is pending or running: cancel it first.")
        if not any(r["run_id"] == run_id for r in self._runs):
            raise RunNotFoundError(f"thread '{self._thread.thread_id}' has no run "
                                   f"{run_id!r:.80}.")

    @workflow.query
    def runs(self) -> list[dict[str, Any]]:
        """The thread's run records, newest last (the last MAX_RUNS_KEPT)."""
        return self._runs

    @workflow.signal
    def set_metadata(self, metadata: Any) -> None:
        """Merge into the thread's metadata (the memo's "metadata", which the Server API
        shows and filters on). Plain JSON, kept as given."""
        if not isinstance(metadata, dict):
            self._record_refusal(f"set_metadata needs a JSON object, got {metadata!r:.200}")
            return
        current = workflow.memo_value("metadata", default={}) or {}
        merged = {**current, **metadata}
        workflow.upsert_memo({"metadata": merged})
        if self._lives_now():
            self._changed(merged)

    @workflow.signal
    def set_ttl(self, ttl: Any) -> None:
        """Set the thread's TTL (`{"strategy": "delete", "ttl": minutes}`), counted from
        now; None removes it. Plain JSON; a bad one is refused and changes nothing."""
        try:
            given = None if ttl is None else lifetime.ThreadTTL.model_validate(ttl)
        except ValueError as exc:
            self._record_refusal(f"set_ttl refused: {exc}")
            return
        if not self._lives_now():
            self._record_refusal("set_ttl refused: this run of the thread closes when its "
                                 "graph finishes (it started before threads lived)")
            return
        self._ttl, self._expires_at, self._rearm = given, "", True
        self._refresh_ttl()
        # The API reads it there (refresh on read) without a query.
        workflow.upsert_memo({"ttl": None if self._ttl is None else self._ttl.model_dump()})

    @workflow.signal
    def touch(self) -> None:
        """The thread was read: its TTL starts again (the API's refresh on read)."""
        self._refresh_ttl()
        self._rearm = self._ttl is not None

    @workflow.update
    async def prune(self, strategy: str = "keep_latest") -> int:
        """Drop every checkpoint but the latest (`POST /threads/prune`'s keep_latest);
        answers how many were dropped."""
        with self._handling_update():
            await workflow.wait_condition(lambda: not self._busy and not self._inbox)
            dropped = len(self._thread.checkpoints) - 1
            self._thread.checkpoints = self._thread.checkpoints[-1:]
            self._changed()
            return max(dropped, 0)

    @prune.validator
    def _validate_prune(self, strategy: str = "keep_latest") -> None:
        if strategy != "keep_latest":
            raise ValueError(f"prune strategy must be 'keep_latest' (or delete the thread), "
                             f"not {strategy!r:.40}")

    @workflow.query
    def expires_at(self) -> str:
        """When the thread's TTL ends (ISO), or "" without one."""
        return self._expires_at

    @workflow.signal
    def resume(self, payload: Any) -> None:
        """`{"resume": value}` or `{"resume": {"<interrupt id>": value}}`, from anywhere."""
        if self._missing is not None:
            return  # the run is ending: its graph is not served here
        if not isinstance(payload, dict) or "resume" not in payload:
            self._record_refusal(f"resume signal needs {{\"resume\": <value>}}, got "
                                f"{payload!r:.200}")
            return
        try:
            value = self._decode_input(payload["resume"], "the resume value")
        except Exception as exc:  # a signal handler must never fail the workflow task
            self._record_refusal(f"resume signal refused: {type(exc).__name__}: {exc}")
            return
        self._enqueue(Command(resume=value), None, {}, from_signal=True)

    def _record_refusal(self, message: str) -> None:
        workflow.logger.warning(message)
        # The last few are enough to explain; a flood of bad signals must not grow state.
        self._rejected = [*self._rejected, message][-MAX_REFUSALS_KEPT:]
        self._publish_details()

    @workflow.query
    def get_state(self, checkpoint_id: str | None = None, subgraphs: bool = False,
                  subgraph: dict[str, Any] | None = None) -> dict[str, Any]:
        """`subgraph`: a subgraph's checkpoint_ns (and checkpoint_map) to read instead."""
        spec, thread, ckpt, ns, parents = state.locate(
            self._spec, self._thread, {**(subgraph or {}), "checkpoint_id": checkpoint_id})
        snap = state.snapshot(spec, thread, ckpt, ns, with_pending=checkpoint_id is None,
                              subgraphs=subgraphs, thread_id=self._thread.thread_id,
                              parents=parents)
        return {**serde.snapshot_to_json(snap), "status": self._status,
                "refused": list(self._rejected)}

    @workflow.query
    def get_state_history(self, limit: int | None = None, before: str | None = None,
                          subgraph: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        spec, thread, _, ns, parents = state.locate(self._spec, self._thread,
                                                    {**(subgraph or {}), "checkpoint_id": None})
        items = list(reversed(thread.checkpoints))
        if before is not None:
            ids = [c.id for c in items]
            items = items[ids.index(before) + 1:] if before in ids else []
        return [serde.snapshot_to_json(state.snapshot(
                    spec, thread, c, ns, with_pending=False,
                    thread_id=self._thread.thread_id, parents=parents))
                for c in (items[:limit] if limit else items)]

    @workflow.query
    def thread(self) -> dict[str, Any]:
        """The whole thread as typed JSON (checkpoints as changes; see serde)."""
        return serde.thread_to_json(self._thread)

    @workflow.query
    def task_state(self, task_id: str) -> Any:
        """The state a running Send task reads (typed JSON), for its node activity;
        None once the task has finished."""
        if task_id not in self._task_states:
            return None
        return {"state": serde.dumps(self._task_states[task_id])}

    @workflow.query
    def pending_interrupts(self) -> list[dict[str, Any]]:
        return [serde.interrupt_to_json(i)
                for i in engine.pending_interrupts(self._thread.head).values()]


def _ttl(given: dict[str, Any] | None) -> lifetime.ThreadTTL | None:
    """The TTL a client sent (it validated it); one that does not parse is none."""
    if not given:
        return None
    try:
        return lifetime.ThreadTTL.model_validate(given)
    except ValueError:
        return None


def _node_error(exc: ActivityError) -> dict[str, str]:
    """The user's error behind a failed activity: its type name and message."""
    cause = exc.cause
    if isinstance(cause, ApplicationError):
        return {"type": cause.type or "Exception", "message": cause.message}
    return {"type": type(cause).__name__, "message": str(cause)}


def _loads(data: Any, spec: GraphSpec, decode: Any = serde.loads) -> Any:
    """Decode into the graph's declared classes only: data never picks what is built.

    LangChain's message classes are imported on first use from the host, not the sandbox.
    """
    with workflow.unsafe.imports_passed_through():
        return decode(data, spec.types)


def _node_config(config: dict[str, Any]) -> dict[str, Any]:
    """The invocation's `configurable` for the node, without the thread id the call
    carries anyway; nothing at all when that is all there is."""
    configurable = {k: v for k, v in (config.get("configurable") or {}).items()
                    if k != "thread_id"}
    return serde.dumps({"configurable": configurable}) if configurable else {}


def _retry_policy(node: NodeSpec) -> TemporalRetryPolicy:
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


def _json(v: Any) -> str:
    import json

    return json.dumps(v, indent=2, ensure_ascii=False, default=str)[:4000]
