"""One thread of a graph served on Temporal: `ThreadHandle`.

The protocol of a thread's workflow, written once: a run (started, reached while it
runs, or seeded from a thread whose workflow closed), its live stream, its cancel, its
state and updates. `RemoteGraph`'s methods, the CLI, the Server API and scheduled runs
all go through it (`RemoteGraph.thread(config)`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from temporalio.client import (
    WithStartWorkflowOperation,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from graphrun import callbacks, errors, relay_wire, serde, state, stream
from graphrun.bridge import is_langgraph_value
from graphrun.engine import stream_chunks
from graphrun.payloads import InvokeRequest, RunResult, SubgraphUpdate, ThreadResult
from graphrun.types import Command, StateSnapshot

if TYPE_CHECKING:
    from graphrun.client import GraphClient, RemoteGraph

log = logging.getLogger("graphrun")

# Seconds to wait for a thread record (workflows/thread_record.py) to become its thread.
RECORD_ADOPT_TIMEOUT = 30.0

# A workflow's refusal (an update's ApplicationError, a failed run's error) by type name.
ERRORS: dict[str, type[Exception]] = {
    "InvalidResumeError": errors.InvalidResumeError,
    "InvalidUpdateError": errors.InvalidUpdateError,
    "EmptyInputError": errors.EmptyInputError,
    "GraphRecursionError": errors.GraphRecursionError,
    "GraphNotFoundError": errors.GraphNotFoundError,
    "UndeclaredTypeError": errors.UndeclaredTypeError,
    "InputLimitError": errors.InputLimitError,
    "ThreadBusyError": errors.ThreadBusyError,
    "RunNotFoundError": errors.RunNotFoundError,
    "RuntimeError": RuntimeError,
    "ValueError": ValueError,
}


def as_graphrun_error(exc: BaseException) -> BaseException:
    """The graphrun error a workflow's refusal (an update's ApplicationError) stands for,
    by its type name; `exc` itself when it is no such refusal."""
    cause = exc.cause if isinstance(exc, WorkflowUpdateFailedError) else exc
    if isinstance(cause, ApplicationError):
        detail = cause.details[0] if cause.details else None
        if cause.type == "InvalidResumeError" and isinstance(detail, dict) and detail.get("answer"):
            return errors.ResumeValidationError.of(detail["answer"])  # pydantic's errors
        cls = ERRORS.get(cause.type or "", errors.GraphrunError)
        return cls(cause.message)
    return exc


def raise_failure(result: RunResult) -> None:
    """Raise the graphrun error of a run that failed, or whose state was too large to
    send back."""
    if result.error and result.error.get("type") == "PayloadTooLargeError":
        raise errors.InputLimitError(result.error.get("message", ""))
    if result.status == "failed" and result.error:
        e = result.error
        if e.get("error_type") == "StepTimeoutError":  # a TimeoutError, as in-process
            raise errors.StepTimeoutError(e.get("error_message", ""))
        if e.get("error_type") == "ParentCommand" and "command" in e:  # as in-process
            raise errors.ParentCommand(serde.loads(e["command"]))
        if e.get("type") == "NodeFailedError":
            raise errors.NodeFailedError(e.get("node", "?"), e.get("error_type", ""),
                                         e.get("error_message", ""))
        raise ERRORS.get(e.get("type", ""), errors.GraphrunError)(e.get("message", ""))


def thread_id_of(config: Mapping[str, Any] | None) -> str:
    tid = ((config or {}).get("configurable") or {}).get("thread_id")
    if not tid:
        raise ValueError('a thread_id is required: config={"configurable": {"thread_id": ...}}')
    return str(tid)


async def closed_runs(handle: WorkflowHandle[Any, Any]) -> list[dict[str, Any]]:
    """The run records a thread's completed workflow run hands on (none from versions
    before them)."""
    result: ThreadResult = await handle.result()
    return list(result.runs)


async def closed_thread(handle: WorkflowHandle[Any, Any]) -> dict[str, Any]:
    """The whole thread of a completed workflow run, from its query (a worker replays
    it): the run's result keeps only its last checkpoint, to keep history small."""
    try:
        thread: dict[str, Any] = await handle.query("thread")
        return thread
    except WorkflowQueryFailedError:  # a run of a version without that query
        result: ThreadResult = await handle.result()
        return result.thread


class ThreadHandle:
    """A thread of `graph` at the place `config` names (its thread_id; a checkpoint_id
    to run or read from; a subgraph's checkpoint_ns)."""

    def __init__(self, graph: RemoteGraph, config: Mapping[str, Any] | None) -> None:
        self.graph = graph
        self.config: Mapping[str, Any] = config or {}
        self.thread_id = thread_id_of(config)
        self.gc: GraphClient = graph.gc
        self.workflow_id = self.gc.workflow_id(self.thread_id)
        self.workflow: WorkflowHandle[Any, Any] = self.gc.client.get_workflow_handle(
            self.workflow_id)

    @property
    def _configurable(self) -> Mapping[str, Any]:
        return self.config.get("configurable") or {}

    async def run(self, input: Any, options: Mapping[str, Any] | None = None, **kw: Any
                  ) -> RunResult:
        """One run on the thread, as `ainvoke`, the CLI and the Server API send it:
        `input` (a Command to resume), `options` the invocation's (stream_mode,
        interrupt_before, ...), `kw` how the run is sent (`run_id`, `record` of the
        Server API, `background`, `stream`, `stream_to`, `multitask`, `webhook`, ...).
        Its RunResult: values, interrupts, status.
        Sent again once a thread record that was still completing has closed (a thread
        the Server API created just before: its record takes no run).

        A caller that is cancelled while it waits (a cancelled `ainvoke`, an `astream`
        left early) cancels the run too: its node activities are asked to stop, and the
        thread stays at its last checkpoint (`ainvoke(None)` goes on from there)."""
        kw["run_id"] = kw.get("run_id") or uuid.uuid4().hex  # to name the run to cancel
        with self.gc.trace(self.graph.name, self.thread_id, input) as finish:
            try:
                try:
                    result = await self._run_once(input, options or {}, **kw)
                except _RecordOpen:
                    await self._adopt(kw.get("record"))
                    result = await self._run_once(input, options or {}, **kw)
            except (asyncio.CancelledError, WorkflowUpdateRPCTimeoutOrCancelledError) as exc:
                # temporalio reports a cancelled wait for an update as the latter
                task = asyncio.current_task()
                if not (isinstance(exc, asyncio.CancelledError)
                        or (task is not None and task.cancelling())):
                    raise
                if not kw.get("background"):
                    await asyncio.shield(self.cancel(kw["run_id"]))
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise asyncio.CancelledError() from exc
            finish(result)
            return result

    async def cancel(self, run_id: str) -> None:
        """Ask the thread to stop the run `run_id` (keeping what it wrote), if it still
        runs or waits its turn; nothing if it is over."""
        with contextlib.suppress(RPCError, WorkflowUpdateFailedError):
            await self.workflow.execute_update("cancel_run", args=[run_id, "interrupt"])

    async def _adopt(self, record: Mapping[str, Any] | None = None) -> None:
        """The thread is a record made before its first run (`POST /threads`): ask it to
        become this graph's thread (it continues as new as its GraphWorkflow), and wait
        until it has. A record of an earlier version completes by itself instead."""
        handle = self.workflow
        with contextlib.suppress(RPCError):  # closed already: the call goes on as usual
            await handle.signal("adopt", args=[self.graph.start_request(self.thread_id, None),
                                               self._memo({}, record)["metadata"]])
        deadline = asyncio.get_running_loop().time() + RECORD_ADOPT_TIMEOUT
        while asyncio.get_running_loop().time() < deadline:
            try:
                desc = await handle.describe()
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
                return
            if (desc.workflow_type != "ThreadRecord"
                    or desc.status != WorkflowExecutionStatus.RUNNING):
                return
            await asyncio.sleep(0.02)

    async def _run_once(self, input: Any, options: Mapping[str, Any], *,
                        stream: bool = False, stream_to: str = "",
                        accepted: Callable[[str], None] | None = None,
                        run_id: str | None = None, record: Mapping[str, Any] | None = None,
                        multitask: str = "", background: bool = False, webhook: str = "",
                        after_seconds: float = 0,
                        webhook_options: Mapping[str, Any] | None = None,
                        thread_metadata: Mapping[str, Any] | None = None,
                        delete_after: bool = False) -> RunResult:
        """Invoke the thread and wait for the run to stop. `accepted` is told the workflow
        run id once the workflow has taken the invocation (a live reader starts then).

        `run_id` names the run (the invoke update's id: join and cancel find it by it),
        `record` is kept as the run's record (the Server API's run fields), `multitask`
        says what happens to runs already on the thread (InvokeRequest.multitask), and
        `background` returns a "running" RunResult as soon as the workflow took the run;
        the run is POSTed to `webhook` when it ends, and starts `after_seconds` late.
        A thread the run starts has `thread_metadata` (an owner an auth handler stamped);
        `delete_after`: the thread is deleted once the run has ended (a stateless run)."""
        config = self.config
        checkpoint_id, subgraph_checkpoints = state.run_from(config)
        if options.get("control") is not None:
            raise TypeError("control= (a RunControl) drains runs in this process: a thread on "
                            "Temporal keeps running in its workflow. Cancel the caller (the "
                            "run stops at its last checkpoint) or use the Server API's cancel.")
        if is_langgraph_value(input):  # LangGraph's Command, from code ported as is
            from graphrun.bridge.run import to_graphrun

            input = to_graphrun(input)
        tid = self.thread_id
        configurable = {k: v for k, v in (config.get("configurable") or {}).items()
                        if k not in ("checkpoint_id", "checkpoint_ns", "checkpoint_map",
                                     callbacks.NODE_FINISHED)}  # a callback: the caller's
        req = InvokeRequest(input=self.graph.encode(input, "the input"),
                            checkpoint_id=checkpoint_id,
                            subgraph_checkpoints=subgraph_checkpoints,
                            step_timeout=self.graph.step_timeout,
                            durability=options.get("durability"),
                            config={"configurable": serde.dumps(configurable),
                                    **{k: config[k] for k in ("recursion_limit",
                                                              "max_concurrency")
                                       if config and k in config}},
                            stream=stream, stream_to=stream_to,
                            stream_modes=_names(options.get("stream_mode")) or [],
                            interrupt_before=_names(options.get("interrupt_before")),
                            interrupt_after=_names(options.get("interrupt_after")),
                            context=self.graph.encode(options.get("context"), "the context"),
                            run=dict(record or {}), multitask=multitask, webhook=webhook,
                            webhook_options=dict(webhook_options or {}),
                            delete_after=delete_after,
                            after_seconds=after_seconds,
                            callbacks=options.get("callbacks") or "",
                            messages_v2=bool(options.get("messages_v2")))
        if background:
            accepted = accepted or (lambda _: None)
        try:
            if input is None or isinstance(input, Command):
                # Usually answers a paused, running thread: one call.
                try:
                    update = await self.workflow.start_update(
                        "invoke", req, id=run_id, result_type=RunResult,
                        wait_for_stage=(WorkflowUpdateStage.ACCEPTED if accepted
                                        else WorkflowUpdateStage.COMPLETED))
                    if accepted:
                        accepted(update.workflow_run_id or "")
                    if background:
                        return await _taken(update)
                    result: RunResult = await update.result()
                    return result
                except RPCError as exc:
                    if exc.status != RPCStatusCode.NOT_FOUND:
                        raise
            else:
                # New input: one call starts a new thread or reaches a running one; only
                # a thread whose run finished is refused, and is then seeded below.
                try:
                    started: RunResult = await self._start_with(
                        "invoke", [req], RunResult, None,
                        WorkflowIDReusePolicy.REJECT_DUPLICATE, accepted,
                        update_id=run_id, memo=self._memo(thread_metadata or {}, record),
                        background=background)
                    return started
                except WorkflowAlreadyStartedError:
                    pass
            finished, metadata = await self._prior()
            if finished is None and (input is None or isinstance(input, Command)):
                # Never started: there is nothing to continue, so start no workflow.
                raise (errors.EmptyInputError if input is None else errors.InvalidResumeError)(
                    f"thread '{tid}' was never started: invoke it with the graph's input "
                    f"first.")
            if finished is not None and input is None and req.checkpoint_id is None:
                done = await self._finished_result(finished)
                if done is not None:
                    return done  # read without fetching the whole thread
            seed, runs = (await closed_thread(finished), await closed_runs(finished)
                          ) if finished is not None else (None, [])
            seeded: RunResult = await self._start_with(
                "invoke", [req], RunResult, seed, WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                accepted, update_id=run_id, memo=self._memo(metadata, record), runs=runs,
                background=background)
            return seeded
        except WorkflowUpdateFailedError as exc:
            if _unhandled(exc):
                raise _RecordOpen() from exc
            raise as_graphrun_error(exc) from exc

    def _memo(self, metadata: Mapping[str, Any], record: Mapping[str, Any] | None
              ) -> dict[str, Any]:
        """The memo a new workflow run of the thread starts with: the thread's metadata
        so far, stamped with its graph (and the assistant of its first run)."""
        stamped = {"graph_id": self.graph.name, **dict(metadata)}
        if record and record.get("assistant_id"):
            stamped.setdefault("assistant_id", record["assistant_id"])
        return {"metadata": stamped}

    async def _start_with(self, update: str, args: list[Any], result_type: type,
                          seed: dict[str, Any] | None, reuse: WorkflowIDReusePolicy,
                          accepted: Callable[[str], None] | None = None, *,
                          update_id: str | None = None, memo: dict[str, Any] | None = None,
                          runs: list[dict[str, Any]] | None = None,
                          background: bool = False) -> Any:
        """Send `update`, starting the thread's workflow (seeded) if none is running."""
        if seed is None and self.gc.default_ttl is not None:
            memo = {**(memo or {}), "ttl": self.gc.default_ttl.model_dump()}
        op: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
            "GraphWorkflow", self.graph.start_request(self.thread_id, seed, runs),
            id=self.workflow_id, task_queue=self.gc.task_queue, memo=memo,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING, id_reuse_policy=reuse,
            search_attributes=self.gc.thread_attributes(
                self.graph.name, "running", (memo or {}).get("metadata")))
        try:
            if accepted is None:
                return await self.gc.client.execute_update_with_start_workflow(
                    update, args=args, id=update_id, start_workflow_operation=op,
                    result_type=result_type)
            handle = await self.gc.client.start_update_with_start_workflow(
                update, args=args, id=update_id, start_workflow_operation=op,
                result_type=result_type, wait_for_stage=WorkflowUpdateStage.ACCEPTED)
            accepted(handle.workflow_run_id or "")
            if background:
                return await _taken(handle)
            return await handle.result()
        except WorkflowAlreadyStartedError:
            with contextlib.suppress(WorkflowAlreadyStartedError):
                await op.workflow_handle()  # the start's own copy of the error: consume it
            raise
        except RPCError as exc:
            if "StartDeduped" not in str(exc) or update_id is None:
                raise
            # A retry of this very call (under load) found the workflow its first attempt
            # started: the update, named, goes to that workflow (at most once, by its id).
            with contextlib.suppress(RPCError):
                await op.workflow_handle()
            if accepted is None:
                return await self.workflow.execute_update(update, args=args, id=update_id,
                                                          result_type=result_type)
            started = await self.workflow.start_update(
                update, args=args, id=update_id, result_type=result_type,
                wait_for_stage=WorkflowUpdateStage.ACCEPTED)
            accepted(started.workflow_run_id or "")
            if background:
                return await _taken(started)
            return await started.result()


    async def _prior(self) -> tuple[WorkflowHandle[Any, Any] | None, dict[str, Any]]:
        """The thread's last workflow run if it is a GraphWorkflow that completed (its
        state seeds the next run), and the thread's metadata (the memo's, whatever the
        run: a thread created by the Server API before its first run has only that)."""
        handle = self.gc.client.get_workflow_handle(self.workflow_id, result_type=ThreadResult)
        try:
            desc = await handle.describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return None, {}
            raise
        metadata = (await desc.memo()).get("metadata") or {}
        done = (desc.status == WorkflowExecutionStatus.COMPLETED
                and desc.workflow_type == "GraphWorkflow")
        return (handle if done else None), dict(metadata) if isinstance(metadata, dict) else {}

    async def _finished_result(self, handle: WorkflowHandle[Any, Any]) -> RunResult | None:
        """`invoke(None)` on a finished thread with nothing left to run: its final state,
        as in-process and in LangGraph, and no new run. None when there is something to
        run (what an `update_state` after the end scheduled)."""
        snap = await handle.query("get_state", args=[None, False, None])
        if snap.get("next"):
            return None
        if not ((snap.get("config") or {}).get("configurable") or {}).get("checkpoint_id"):
            # Its only run was refused before it made a checkpoint.
            raise errors.EmptyInputError(f"thread '{self.thread_id}' was never started: invoke it with "
                                         f"the graph's input first.")
        return RunResult(status="done", values=snap.get("values"))


    async def live(self, input: Any, options: Mapping[str, Any],
                   decode: Callable[[Any], Any] | None = None) -> AsyncIterator[Any]:
        """Each event of the run as it is published, then the run's RunResult. Events
        are decoded into the graph's declared types, or by `decode` (the CLI: plain JSON)."""
        decode = decode or (lambda data: serde.loads(data, self.graph.types))
        start_run, start = await self.stream_end()
        stream_id = uuid.uuid4().hex
        taken: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def accepted(run_id: str) -> None:
            if not taken.done():
                taken.set_result(run_id)

        run = asyncio.create_task(self.run(input, options, stream=True, stream_to=stream_id,
                                           accepted=accepted))
        try:
            waits: list[asyncio.Future[Any]] = [taken, run]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if taken.done():
                run_id = taken.result()
                handle = self.gc.client.get_workflow_handle(self.workflow_id, run_id=run_id or None)
                offset = start if run_id == start_run else 0  # a new run's log starts at 0
                async for _, event in stream.follow(self.gc.client, handle, run,
                                                    from_offset=offset, stream_id=stream_id,
                                                    decode=decode):
                    yield event
            result = await run
        finally:
            if not run.done():
                run.cancel()
        for event in decode(result.events) or []:  # a run the workflow did not stream live
            yield tuple(event)
        yield result

    async def relayed(self, result: RunResult, run_id: str) -> list[Any]:
        """The callback events of run `run_id` (which ended with `result`), kept by the
        workflow run that ran it (graphrun.relay_wire), decoded into the graph's types;
        [] when none are kept (a worker from before, or no handler was asked for). An
        event a class of which this process cannot build is left out."""
        if not result.relayed_in:
            return []
        handle = self.gc.client.get_workflow_handle(self.workflow_id,
                                                    run_id=result.relayed_in)
        entries: list[Any] = []
        offset: int | None = 0
        while offset is not None:
            try:
                page = await handle.query("relayed", args=[run_id, offset])
            except (RPCError, WorkflowQueryFailedError) as exc:
                log.warning("thread %s: callback events of run %s not read: %s",
                            self.thread_id, run_id, exc)
                break
            if not isinstance(page, dict) or not isinstance(page.get("entries"), list):
                break
            entries += page["entries"]
            offset = page.get("next") if isinstance(page.get("next"), int) else None
        events = []
        for entry in entries:
            for event in relay_wire.expand(entry) if isinstance(entry, dict) else ():
                try:
                    events.append(serde.loads(event, self.graph.types))
                except (errors.UndeclaredTypeError, ValueError):
                    continue
        return events

    async def stream_end(self) -> tuple[str | None, int]:
        """The running workflow's run id and the end of its live stream (0 if none)."""
        handle = self.workflow
        try:
            desc = await handle.describe()
            if desc.status != WorkflowExecutionStatus.RUNNING:
                return None, 0
            end = await handle.query("__temporal_workflow_stream_offset", result_type=int)
            return desc.run_id, int(end)
        except (RPCError, WorkflowQueryFailedError):
            return None, 0

    async def join(self, *, from_offset: int = 0, stream_mode: str | Sequence[str] = "updates",
                   subgraphs: bool = False) -> AsyncIterator[tuple[int, Any]]:
        """Read a thread's live stream from `from_offset`: (offset, chunk) pairs, until
        the streamed run in progress there stops. A reader that lost its connection
        passes the last offset it saw + 1 and goes on with no gap and no repeat."""
        async for offset, event in stream.read(
                self.gc.client, self.workflow, from_offset=from_offset, stream_id=None,
                decode=lambda data: serde.loads(data, self.graph.types)):
            for chunk in stream_chunks([event], stream_mode, subgraphs):
                yield offset, chunk

    async def state(self, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state at the config's checkpoint (its latest when none is named)."""
        cid = self._configurable.get("checkpoint_id")
        try:
            data = await self.workflow.query("get_state",
                                             args=[cid, subgraphs, _subgraph(self.config)])
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return StateSnapshot(values={}, next=(), config={"configurable": {
                    "thread_id": self.thread_id}}, metadata=None, created_at=None, parent_config=None,
                    tasks=())
            raise
        snapshot: StateSnapshot = serde.snapshot_from_json(data, self.graph.types)
        return snapshot

    async def history(self, *, limit: int | None = None,
                      before: Mapping[str, Any] | None = None) -> AsyncIterator[StateSnapshot]:
        """The thread's checkpoints, newest first (`before` a config: older than its)."""
        bid = ((before or {}).get("configurable") or {}).get("checkpoint_id")
        types = self.graph.types
        for item in await self.workflow.query("get_state_history",
                                              args=[limit, bid, _subgraph(self.config)]):
            yield serde.snapshot_from_json(item, types)

    async def update(self, values: Any, as_node: str | None = None) -> dict[str, Any]:
        """Write `values` as `as_node` did (LangGraph's update_state); the new config."""
        cid = self._configurable.get("checkpoint_id")
        return await self._update("update_state",
                                  [self.graph.encode(values, "update_state values"), as_node, cid])

    async def bulk_update(self, supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
        """Apply `StateUpdate`s, one checkpoint per superstep (LangGraph's)."""
        cid = self._configurable.get("checkpoint_id")
        steps = [list(step) for step in supersteps]
        return await self._update("bulk_update_state",
                                  [self.graph.encode(steps, "bulk_update_state values"), cid])


    async def _update(self, update: str, args: list[Any]) -> dict[str, Any]:
        c = self._configurable
        if c.get("checkpoint_ns"):  # a subgraph's own thread: it answers the new config
            bulk = update == "bulk_update_state"
            update, args = "update_subgraph_state", [SubgraphUpdate(
                values=args[0], as_node=None if bulk else args[1], bulk=bulk,
                checkpoint_ns=c["checkpoint_ns"], checkpoint_id=c.get("checkpoint_id"),
                checkpoint_map={k: str(v) for k, v in (c.get("checkpoint_map") or {}).items()
                                if v})]
        with self.gc.trace(self.graph.name, self.thread_id, {"values": args[0]}, what=update):
            try:
                return await self._update_once(update, args)
            except _RecordOpen:
                await self._adopt()
                return await self._update_once(update, args)

    async def _update_once(self, update: str, args: list[Any]) -> dict[str, Any]:
        answer: type = dict if update == "update_subgraph_state" else str
        try:
            try:
                new_id = await self.workflow.execute_update(update, args=args,
                                                            result_type=answer)
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
                # The thread's run finished (or it never started): as in LangGraph, the
                # update applies to its last state, in a new run seeded with it.
                finished, metadata = await self._prior()
                seed, runs = (await closed_thread(finished), await closed_runs(finished)
                              ) if finished is not None else (None, [])
                new_id = await self._start_with(update, args, answer, seed,
                                                WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                                                memo=self._memo(metadata, None), runs=runs)
        except WorkflowUpdateFailedError as exc:
            if _unhandled(exc):
                raise _RecordOpen() from exc
            raise as_graphrun_error(exc) from exc
        if isinstance(new_id, dict):
            return new_id
        return {"configurable": {"thread_id": self.thread_id, "checkpoint_ns": "", "checkpoint_id": new_id}}


class _RecordOpen(Exception):
    """The update reached a workflow of the thread's id that has no such handler: the
    thread record made by `POST /threads`, not yet adopted by its first run."""


def _unhandled(exc: WorkflowUpdateFailedError) -> bool:
    cause = exc.cause
    return isinstance(cause, ApplicationError) and "expected but not found" in cause.message


async def _taken(update: WorkflowUpdateHandle[Any]) -> RunResult:
    """A background run the workflow took; a refused one (its validator said no) raises.
    Temporal answers a refusal with the outcome already known, which temporalio keeps on
    the handle (no public accessor): its result is then read without a wait."""
    if getattr(update, "_known_outcome", None) is not None:
        await update.result()
    return RunResult(status="running")


def _names(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _subgraph(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A subgraph's address in a config (its checkpoint_ns and checkpoint_map), if any."""
    c = (config or {}).get("configurable") or {}
    if not c.get("checkpoint_ns"):
        return None
    return {"checkpoint_ns": c["checkpoint_ns"], "checkpoint_map": c.get("checkpoint_map")}
