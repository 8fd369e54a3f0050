"""GraphWorkflow: one workflow per thread, driving the same engine as `graphrun.local`.

Deterministic by construction: the engine is pure, ids are hashes, the only
clock is `workflow.now()`. Node code never runs here; each task is the
`run_node` activity, which reports interrupts as its result. Reducers run here,
so they must be pure.

This class keeps what Temporal and clients see (the loop, the handlers, the patches);
each concern is a helper it owns: steps, state updates, run records and cancellation,
deadlines and the TTL, payload limits, visibility, the live stream.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from .cancellation import Cancellation
from .deadlines import InterruptDeadlines
from .handover import carried_request, final_result, next_run_version, version_moved
from .inputs import Inputs
from .live_stream import LiveStream
from .metadata_update import MetadataUpdate
from .payload_limits import PayloadLimits
from .relayed import RelayedRuns
from .run_records import RunRecords
from .snapshots import state_history, state_snapshot
from .steps import StepRunner
from .thread_state import Invocation, ThreadState
from .ttl import ThreadExpiry, delete_thread
from .updates import StateUpdates, Target, update_failure
from .visibility import Visibility

with workflow.unsafe.imports_passed_through():
    from graphrun import engine, lifetime, registry, serde, state
    from graphrun.checkpoint import checkpoint_config
    from graphrun.errors import (
        GraphNotFoundError,
        GraphrunError,
        RunNotFoundError,
        ThreadBusyError,
        UndeclaredTypeError,
    )
    from graphrun.payloads import (
        InvokeRequest,
        RunResult,
        StartRequest,
        SubgraphUpdate,
        ThreadResult,
    )
    from graphrun.types import Command

# A thread lives until it is deleted or its TTL ends (graphrun.lifetime); histories from
# before this patch closed the workflow once the graph finished.
LIVES = "graphrun-thread-lives"


@workflow.defn(name="GraphWorkflow")
class GraphWorkflow(MetadataUpdate):
    @workflow.init
    def __init__(self, req: StartRequest) -> None:
        self._req = req
        self._stream = LiveStream(req.stream)
        self._relayed = RelayedRuns(self._stream)
        self._state = st = ThreadState(req)
        self._records = RunRecords(req.runs)
        self._missing: GraphNotFoundError | None = None
        self._deleting = False  # its TTL ended: the thread deletes itself
        self._uncarried = -1  # invocations taken when the thread was too large to carry
        self._started_empty = False
        self._expiry = ThreadExpiry(req.ttl, req.expires_at)
        self._visibility = Visibility(st)
        try:
            graph = registry.lookup(req.graph)
        except GraphNotFoundError as exc:
            if req.thread or workflow.info().continued_run_id:
                # A thread with a past waits (its workflow task retries) for a worker
                # that serves its graph: a rolling deploy may not have reached this one.
                raise
            # A new thread of a graph this worker does not serve: refuse its invocation
            # and end the run at once, so nothing is left waiting (run() fails it).
            self._missing = exc
            return
        st.spec = graph.spec
        st.thread = engine.Thread(thread_id=req.thread_id)
        st.status = "done" if req.thread else "running"
        self._inputs = Inputs(req.graph, st.spec)
        self._deadlines = InterruptDeadlines(req.deadlines)
        self._limits = PayloadLimits(req.graph)
        self._steps = StepRunner(st, self._inputs, self._limits, self._stream,
                                 self._visibility, self._relayed)
        self._updates = StateUpdates(st, self._inputs)
        self._cancellation = Cancellation(st, self._records, self._stream, self._visibility)
        if req.thread:
            try:
                st.thread = self._inputs.loads(req.thread, serde.thread_from_json)
            except (UndeclaredTypeError, ValueError) as exc:
                # Whoever started this run wrote data we will not build: keep the thread
                # open and empty, and say why. Only an invocation can change it now.
                st.status = "failed"
                self._visibility.refuse(f"seeded thread refused: {type(exc).__name__}: {exc}")
        st.thread.max_history = req.max_history

    # -- the loop -------------------------------------------------------------------
    @workflow.run
    async def run(self, req: StartRequest) -> ThreadResult:
        if self._missing is not None:
            raise ApplicationError(str(self._missing), type="GraphNotFoundError",
                                   non_retryable=True)
        st = self._state
        # Update handlers of the first task run before this line. Started with no seed and
        # no accepted invocation (its first update was refused, even by the SDK's decoder):
        # nothing to keep, so close rather than stay open and empty.
        if (req.thread is None and not st.count
                and workflow.patched("graphrun-close-empty-start")):
            self._started_empty = True
        if self._lives_now():
            self._begin_life(req)
        while True:
            try:
                await workflow.wait_condition(
                    lambda: bool(st.inbox) or self._deleting or self._expiry.rearm
                    or (self._closes() and st.handling == 0) or self._carries_on_idle(),
                    timeout=self._next_timer())
            except TimeoutError:
                self._timer_fired()
                continue
            self._expiry.rearm = False
            if self._deleting and not st.inbox and st.handling == 0:
                await self._delete_thread()
                break
            if not st.inbox:
                if self._carries_on_idle():
                    await self._carry_on(req)
                    continue
                if self._closes() and st.handling == 0:
                    break
                continue
            item = st.inbox.pop(0)
            st.busy = True
            st.current = item
            before = list(st.thread.checkpoints), st.status
            try:
                # A task of its own, so that cancel_run (or a multitask) can stop it.
                st.processing = asyncio.ensure_future(self._process(item))
                result = await st.processing
            except asyncio.CancelledError:
                if not item.cancel:
                    raise  # the workflow itself is cancelled
                result = self._cancellation.cancelled(item, before)
            finally:
                st.busy = False
                st.current = st.processing = None
            result = self._relayed.finished(item, result)
            st.results[item.number] = self._limits.trimmed(result)
            self._records.finished(item, result)
            if item.webhook:
                await self._records.send_webhook(item, result, req.graph,
                                                 st.thread.thread_id)
            if item.delete_after:  # a stateless run's thread (on_completion "delete")
                self._deleting = True
            self._stream.end(item)
            self._deadlines.track(st.thread)
            self._expiry.refresh()
            if not st.inbox and (self._history_is_long() or version_moved()):
                await self._carry_on(req)
        # Polls still waiting return now; a reader then reads the closed run by query.
        self._stream.detach()
        return final_result(req, st.spec, st.thread, self._records.runs, self._limits)

    async def _process(self, item: Invocation) -> RunResult:
        if item.refusal is not None:
            return self._steps.refused(item, item.refusal)
        if item.after_seconds > 0:  # a run asked to start later (a durable timer)
            await workflow.sleep(item.after_seconds)
        self._records.set(item, "running")
        self._limits.choose_for(item)
        return await self._steps.run(item)

    async def _carry_on(self, req: StartRequest) -> None:
        """Continue as new with the thread, so its history stays short, or on the worker
        version the task queue now targets; a thread too large to carry stays in this
        run (its history grows, its version stays) until it changes."""
        st = self._state
        # Readers' polls return what they wait for and new ones go to the next run
        # (temporalio's recipe for streams across continue-as-new).
        self._stream.detach()
        await workflow.wait_condition(
            lambda: bool(st.inbox) or workflow.all_handlers_finished())
        carried = carried_request(
            req, st.thread, self._deadlines.deadlines, self._stream.carried(),
            self._records.runs, self._expiry.carried(req.ttl), self._expiry.expires_at)
        if not st.inbox and self._limits.oversized(carried, "the thread") is None:
            workflow.continue_as_new(carried, initial_versioning_behavior=next_run_version())
        self._uncarried = st.count
        # It stays in this run (new input, or a thread too large to carry over, whose
        # history grows): its stream takes polls again.
        self._stream.reattach()

    def _closes(self) -> bool:
        """The run ends: before lives, once the graph finished; now only a thread that
        never took anything (its first invocation refused before any checkpoint)."""
        st = self._state
        if not st.lives:
            return self._idle_and_finished()
        return (not self._req.keep and (st.count > 0 or self._started_empty)
                and not st.thread.checkpoints)

    def _idle_and_finished(self) -> bool:
        # Done, or every invocation so far was refused before the thread had a checkpoint
        # (nothing to keep, so the workflow need not stay open).
        st = self._state
        return st.status == "done" or ((st.count > 0 or self._started_empty)
                                       and not st.thread.checkpoints)

    def _carries_on_idle(self) -> bool:
        """Nothing to do and a long history (signals and updates on an idle thread grow
        it), or a new worker version to move to: continue as new while idle too. An
        idle thread is between runs, paused on an interrupt or finished, so a pinned
        thread moves versions here and never within a run."""
        st = self._state
        return (bool(st.lives) and st.idle() and st.handling == 0
                and self._uncarried != st.count
                and (self._history_is_long() or version_moved()))

    def _history_is_long(self) -> bool:
        info = workflow.info()
        return (info.is_continue_as_new_suggested()
                or info.get_current_history_length() > self._req.history_event_limit)

    def _next_timer(self) -> float | None:
        """Seconds to the first interrupt deadline or the TTL's end, whichever is first."""
        if self._state.inbox:
            return None
        waits = [w for w in (self._deadlines.seconds_to_next(), self._expiry.seconds_left())
                 if w is not None]
        return min(waits) if waits else None

    def _timer_fired(self) -> None:
        for iid, question in self._deadlines.expire(self._state.thread):
            if question.has_default:
                workflow.logger.info("interrupt %s timed out; resuming with its default", iid)
                self._state.enqueue(Command(resume={iid: question.default}), None, {},
                                    from_signal=True)
            else:
                self._visibility.set_status("failed")
                self._visibility.refuse(f"interrupt {iid} timed out with no default answer")
        if self._expiry.ended():
            self._deleting = True

    # -- a thread's life: open until deleted or its TTL ends ---------------------------
    def _lives_now(self) -> bool:
        """Whether this run keeps the thread open once its graph finishes (decided once:
        a history from before that closed it replays as it ran)."""
        lives = self._state.lives
        if lives is None:
            lives = self._state.lives = self._req.lives or workflow.patched(LIVES)
        return lives

    def _begin_life(self, req: StartRequest) -> None:
        """A new thread takes its life's id (its ids then never repeat those of a thread
        deleted before under the same id), and says when it was created."""
        thread = self._state.thread
        if req.thread is None and not thread.life:
            thread.life = workflow.info().first_execution_run_id
        if self._expiry.ttl is not None and not self._expiry.expires_at:
            self._expiry.refresh()
        self._visibility.stamp_creation()

    async def _delete_thread(self) -> None:
        """The TTL ended, or the stateless run did: the thread deletes itself."""
        workflow.logger.info("thread %s: its TTL ended, or its stateless run did; deleting it",
                             self._state.thread.thread_id)
        self._stream.detach()
        await delete_thread()

    def _changed(self, metadata: dict[str, Any] | None = None) -> None:
        """A state update or a metadata patch: the thread's TTL starts again, and its
        search attributes say when (and what metadata it now has)."""
        self._expiry.refresh()
        self._visibility.changed(metadata)

    # -- what a worker interceptor may read (graphrun.tracing, graphrun.metrics): no
    # handlers, no state ---------------------------------------------------------------
    def graph_and_thread(self) -> tuple[str, str]:
        """The graph this thread runs and the thread's id."""
        return self._req.graph, self._req.thread_id

    def invocations_taken(self) -> int:
        """How many invocations the thread has taken in (numbered 1, 2, ...)."""
        return self._state.count

    def current_invocation(self) -> tuple[int, str] | None:
        """The invocation being processed: its number and its run id ("" if none)."""
        current = self._state.current
        return None if current is None else (current.number, current.run_id)

    def result_of(self, number: int) -> RunResult | None:
        """The result of invocation `number`, once it has one."""
        return self._state.results.get(number)

    # -- invocations ----------------------------------------------------------------
    @workflow.update
    async def invoke(self, req: InvokeRequest) -> RunResult:
        """Run the graph with new input, None or a Command; answers when it next stops."""
        st = self._state
        refusal: Exception | None = None
        try:
            value, context = self._inputs.take([req.input, req.context], "the input")
        except (GraphrunError, ValueError) as exc:
            # Only on a thread that never started (see the validator): refused in turn,
            # so the workflow closes instead of staying open with nothing in it.
            value, context, refusal = None, None, exc
        self._cancellation.make_way(req.multitask)
        item = st.enqueue(value, req.checkpoint_id, dict(req.config),
                          stream=req.stream, interrupt_before=req.interrupt_before,
                          interrupt_after=req.interrupt_after, refusal=refusal,
                          context=context, stream_modes=tuple(req.stream_modes),
                          stream_to=req.stream_to)
        n = item.number
        item.run_id = workflow.current_update_info().id  # type: ignore[union-attr]
        item.webhook, item.after_seconds = req.webhook, req.after_seconds
        item.webhook_options = dict(req.webhook_options)
        item.delete_after = req.delete_after
        item.callbacks = req.callbacks
        item.messages_v2 = req.messages_v2
        item.subgraph_checkpoints = dict(req.subgraph_checkpoints)
        item.step_timeout = req.step_timeout
        item.durability = req.durability
        if req.run:  # a run the Server API made: it lists runs by their records
            self._records.add(item, req.run)
        with st.handling_update():
            await workflow.wait_condition(lambda: n in st.results)
        result = st.results.pop(n)
        if result.error is not None and result.status != "failed":
            raise ApplicationError(result.error["message"], result.error,
                                   type=result.error["type"], non_retryable=True)
        return result

    @invoke.validator
    def _validate_invoke(self, req: InvokeRequest) -> None:
        # Reject bad input before it enters history, when the answer is knowable now.
        if self._missing is not None:
            raise self._missing
        st = self._state
        if req.multitask == "reject" and not st.idle():
            raise ThreadBusyError(f"thread '{st.thread.thread_id}' has a run pending or "
                                  f"running, and this run's multitask strategy is 'reject'.")
        try:
            decoded = self._inputs.decode([req.input, req.context], "the input")
        except (GraphrunError, ValueError):
            if not st.thread.checkpoints and not st.count:
                return  # a thread that never started: the handler refuses it and closes
            raise
        value = decoded[0]
        if isinstance(value, Command) and value.resume is not None and st.idle():
            engine.validate_resume(st.spec, st.thread, value.resume,
                                   checkpoint=req.checkpoint_id)
        self._inputs.keep(decoded)

    @workflow.signal
    def resume(self, payload: Any) -> None:
        """`{"resume": value}` or `{"resume": {"<interrupt id>": value}}`, from anywhere."""
        if self._missing is not None:
            return  # the run is ending: its graph is not served here
        if not isinstance(payload, dict) or "resume" not in payload:
            self._visibility.refuse(f"resume signal needs {{\"resume\": <value>}}, got "
                                    f"{payload!r:.200}")
            return
        try:
            value = self._inputs.decode(payload["resume"], "the resume value")
        except Exception as exc:  # a signal handler must never fail the workflow task
            self._visibility.refuse(f"resume signal refused: {type(exc).__name__}: {exc}")
            return
        self._state.enqueue(Command(resume=value), None, {}, from_signal=True)

    # -- state updates ----------------------------------------------------------------
    @workflow.update
    async def update_state(self, values: Any, as_node: str | None = None,
                           checkpoint_id: str | None = None) -> str:
        """Write values as if `as_node` returned them; returns the new checkpoint id.

        The node's edges are applied here; its routing functions, if it has any,
        run in the `route_update` activity like all user code.
        """
        with self._state.handling_update(), update_failure():
            # Decoded by the validator; replaying an accepted update decodes here.
            decoded = self._inputs.take(values, "update_state values")
            await workflow.wait_condition(self._state.idle)
            ckpt = await self._updates.update(decoded, as_node, checkpoint_id,
                                              self._updates.root())
            self._settle_after_update()
            return ckpt.id

    @update_state.validator
    def _validate_update_state(self, values: Any, as_node: str | None = None,
                               checkpoint_id: str | None = None) -> None:
        self._decode_update(values, "update_state values")

    @workflow.update
    async def bulk_update_state(self, supersteps: Any, checkpoint_id: str | None = None) -> str:
        """Several `update_state`s, one checkpoint per superstep: each superstep a list of
        `StateUpdate`s (values, as_node) applied as if those nodes ran in one step."""
        with self._state.handling_update(), update_failure():
            steps = self._inputs.take(supersteps, "bulk_update_state values")
            state.check_supersteps(steps)
            await workflow.wait_condition(self._state.idle)
            last = await self._updates.supersteps(steps, checkpoint_id, self._updates.root())
            self._settle_after_update()
            return last

    @bulk_update_state.validator
    def _validate_bulk_update_state(self, supersteps: Any,
                                    checkpoint_id: str | None = None) -> None:
        self._decode_update(supersteps, "bulk_update_state values")

    @workflow.update
    async def update_subgraph_state(self, req: SubgraphUpdate) -> dict[str, Any]:
        """`update_state` (or `bulk_update_state`) on the thread of the subgraph at
        `req.checkpoint_ns`: a new checkpoint there, which a run from the config it
        answers goes on from (the subgraph's config, as its snapshot names it)."""
        with self._state.handling_update(), update_failure():
            decoded = self._inputs.take(req.values, "update_state values")
            await workflow.wait_condition(self._state.idle)
            spec, thread, at, ns, parents = self._updates.locate(req)
            target, at_id = Target(spec, thread, ns), at.id if at is not None else None
            if req.bulk:
                state.check_supersteps(decoded)
                last = await self._updates.supersteps(decoded, at_id, target)
            else:
                last = (await self._updates.update(decoded, req.as_node, at_id, target)).id
            self._visibility.publish_details()
            self._changed()
            return checkpoint_config(self._state.thread.thread_id, ns, last, parents)

    @update_subgraph_state.validator
    def _validate_update_subgraph_state(self, req: SubgraphUpdate) -> None:
        self._decode_update(req.values, "update_state values")
        if self._state.idle():  # no subgraph there: refused before history
            self._updates.locate(req)

    def _decode_update(self, values: Any, what: str) -> None:
        """A validator's decoding, kept for its handler."""
        if self._missing is not None:
            raise self._missing
        self._inputs.keep(self._inputs.decode(values, what))

    def _settle_after_update(self) -> None:
        """A state update that leaves nothing to run (e.g. as `__end__` on a paused
        thread) ends the pause: the thread is done, as LangGraph's server says idle."""
        st = self._state
        if (st.status in ("interrupted", "failed") and st.idle()
                and not engine.is_paused(st.spec, st.thread)
                and workflow.patched("graphrun-status-after-update")):
            self._visibility.set_status("done")
        else:
            self._visibility.publish_details()
        self._changed()

    @workflow.update
    async def prune(self, strategy: str = "keep_latest") -> int:
        """Drop every checkpoint but the latest (`POST /threads/prune`'s keep_latest);
        answers how many were dropped."""
        st = self._state
        with st.handling_update():
            await workflow.wait_condition(st.idle)
            dropped = len(st.thread.checkpoints) - 1
            st.thread.checkpoints = st.thread.checkpoints[-1:]
            self._changed()
            return max(dropped, 0)

    @prune.validator
    def _validate_prune(self, strategy: str = "keep_latest") -> None:
        if strategy != "keep_latest":
            raise ValueError(f"prune strategy must be 'keep_latest' (or delete the thread), "
                             f"not {strategy!r:.40}")

    # -- runs -------------------------------------------------------------------------
    @workflow.update
    def cancel_run(self, run_id: str, action: str = "interrupt") -> str:
        """Stop a pending or running run ("interrupt" keeps what it wrote, "rollback"
        drops it); answers the run's status before."""
        return self._cancellation.cancel_run(run_id, action)

    @cancel_run.validator
    def _validate_cancel_run(self, run_id: str, action: str = "interrupt") -> None:
        if action not in ("interrupt", "rollback"):
            raise ValueError(f"action must be 'interrupt' or 'rollback', not {action!r:.40}")
        if not self._cancellation.can_cancel(run_id):
            raise RunNotFoundError(f"thread '{self._state.thread.thread_id}' has no pending "
                                   f"or running run {run_id!r:.80}.")

    @workflow.update
    def delete_run(self, run_id: str) -> None:
        """Forget a finished run's record."""
        self._records.delete(run_id)

    @delete_run.validator
    def _validate_delete_run(self, run_id: str) -> None:
        if any(i.run_id == run_id for i in self._state.runs_waiting()):
            raise ThreadBusyError(f"run {run_id!r:.80} is pending or running: cancel it first.")
        if not self._records.has(run_id):
            raise RunNotFoundError(f"thread '{self._state.thread.thread_id}' has no run "
                                   f"{run_id!r:.80}.")

    @workflow.query
    def runs(self) -> list[dict[str, Any]]:
        """The thread's run records, newest last (the last MAX_RUNS_KEPT)."""
        return self._records.runs

    # -- callback events for a caller with handlers (graphrun.relay) ----------------------
    @workflow.signal
    def relayed_runs(self, entry: Any) -> None:
        """A node attempt that failed, and so has no result, sends its callback events."""
        if self._missing is None:
            self._relayed.signalled(self._state.current, entry)

    @workflow.query
    def relayed(self, run_id: str, offset: int = 0) -> dict[str, Any] | None:
        """The callback events of run `run_id` (graphrun.relay_wire entries), a page from
        `offset`, for a caller that did not read the run live; None once not kept."""
        return self._relayed.page(run_id, offset)

    # -- metadata and TTL ---------------------------------------------------------------
    @workflow.signal
    def set_metadata(self, metadata: Any) -> None:
        """Merge into the thread's metadata (the memo's "metadata", which the Server API
        shows and filters on). Plain JSON, kept as given."""
        if not isinstance(metadata, dict):
            self._visibility.refuse(f"set_metadata needs a JSON object, got {metadata!r:.200}")
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
            self._visibility.refuse(f"set_ttl refused: {exc}")
            return
        if not self._lives_now():
            self._visibility.refuse("set_ttl refused: this run of the thread closes when "
                                    "its graph finishes (it started before threads lived)")
            return
        self._expiry.replace(given)
        # The API reads it there (refresh on read) without a query.
        workflow.upsert_memo({"ttl": None if given is None else given.model_dump()})

    @workflow.signal
    def upgrade(self) -> None:
        """Wake the thread, so that, pinned to an earlier worker version and idle, it
        learns of the version its task queue now targets and moves there
        (`GraphClient.upgrade_threads`). Otherwise nothing."""

    @workflow.signal
    def touch(self) -> None:
        """The thread was read: its TTL starts again (the API's refresh on read)."""
        self._expiry.touch()

    @workflow.query
    def expires_at(self) -> str:
        """When the thread's TTL ends (ISO), or "" without one."""
        return self._expiry.expires_at

    # -- reads --------------------------------------------------------------------------
    @workflow.query
    def get_state(self, checkpoint_id: str | None = None, subgraphs: bool = False,
                  subgraph: dict[str, Any] | None = None) -> dict[str, Any]:
        """`subgraph`: a subgraph's checkpoint_ns (and checkpoint_map) to read instead."""
        return state_snapshot(self._state, checkpoint_id, subgraphs, subgraph)

    @workflow.query
    def get_state_history(self, limit: int | None = None, before: str | None = None,
                          subgraph: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return state_history(self._state, limit, before, subgraph)

    @workflow.query
    def thread(self) -> dict[str, Any]:
        """The whole thread as typed JSON (checkpoints as changes; see serde)."""
        return serde.thread_to_json(self._state.thread)

    @workflow.query
    def task_state(self, task_id: str) -> Any:
        """The state a running Send task reads (typed JSON), for its node activity;
        None once the task has finished."""
        return self._steps.task_state(task_id)

    @workflow.query
    def pending_interrupts(self) -> list[dict[str, Any]]:
        return [serde.interrupt_to_json(i)
                for i in engine.pending_interrupts(self._state.thread.head).values()]
