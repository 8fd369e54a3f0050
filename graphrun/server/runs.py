"""Runs: a run is one `invoke` update of the thread's workflow, its id the update's id.

The workflow keeps each run's record (the `runs` query) and answers `cancel_run`;
Temporal keeps the update's outcome, so any API process can join a run another one
created. `wait` answers what `invoke` returns (the values, `__interrupt__` at a pause,
LangGraph's `{"__error__": ...}` for a failed node); `stream` answers Server-Sent
Events as LangGraph's server frames them (`metadata` first, then one event per chunk
named after its stream mode, `error` for a failure), each with its offset in the
thread's live stream as its `id` when resumable, so `Last-Event-ID` goes on from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from temporalio.client import (
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowUpdateFailedError,
)
from temporalio.service import RPCError, RPCStatusCode

from graphrun import serde, stream
from graphrun.payloads import RunResult, ThreadResult
from graphrun.server import assistants, auth, metrics, shapes, sse
from graphrun.server.context import Conflict, NotFound
from graphrun.server.threads import (
    checkpoint_of,
    describe,
    metadata_of,
    thread_config,
    thread_not_found,
)
from graphrun.types import Command, Send

router = APIRouter(tags=["runs"])

# Stream modes of the API -> graphrun's ('messages-tuple' is graphrun's 'messages').
MODES = {"values": "values", "updates": "updates", "custom": "custom", "debug": "debug",
         "tasks": "tasks", "checkpoints": "checkpoints", "messages-tuple": "messages",
         "events": stream.EVENTS}


class RunCommand(shapes.RequestBody):
    resume: Any = None
    update: Any = None
    goto: Any = None


class RunCreate(shapes.RequestBody):
    assistant_id: str
    input: Any = None
    command: RunCommand | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    stream_mode: str | list[str] = "values"
    stream_subgraphs: bool = False
    stream_resumable: bool = False
    interrupt_before: list[str] | Literal["*"] | None = None
    interrupt_after: list[str] | Literal["*"] | None = None
    checkpoint_id: str | None = None
    checkpoint: dict[str, Any] | None = None
    multitask_strategy: Literal["reject", "enqueue", "interrupt", "rollback"] = "enqueue"
    if_not_exists: Literal["create", "reject"] = "reject"
    on_disconnect: Literal["cancel", "continue"] = "continue"
    on_completion: Literal["delete", "keep"] = "delete"
    after_seconds: int | None = None
    webhook: str | None = None
    feedback_keys: list[str] | None = None
    # Every superstep's checkpoint is in the thread's workflow history before the next
    # step starts ("sync"; "async" asks for less). "exit" (or checkpoint_during false):
    # the thread keeps only the checkpoint the run stops at, as LangGraph's.
    durability: Literal["sync", "async", "exit"] | None = None
    checkpoint_during: bool | None = None
    strict_resume: bool | None = None
    langsmith_tracer: dict[str, Any] | None = None


def _refuse_unsupported(body: RunCreate) -> None:
    if body.feedback_keys:
        raise ValueError("feedback_keys: this server makes no LangSmith feedback URLs; "
                         "leave it out (a run's trace is in the worker's LangSmith project).")
    if body.langsmith_tracer:
        raise ValueError("langsmith_tracer: runs are traced by the worker, to its LangSmith "
                         "project (graphrun.tracing); leave it out.")
    if body.strict_resume is False:  # /info says strict_resume: always strict here
        raise ValueError("strict_resume: a resume with nothing to answer is always refused "
                         "here (/info reports strict_resume); leave it out or set it true.")
    if body.after_seconds is not None and body.after_seconds < 0:
        raise ValueError("after_seconds must be 0 or more.")


def _input(body: RunCreate) -> Any:
    if body.command is None:
        return body.input
    c = body.command
    goto = c.goto
    if isinstance(goto, dict):
        goto = [goto]
    if isinstance(goto, list):
        goto = [Send(g["node"], g.get("input")) if isinstance(g, dict) else g for g in goto]
    return Command(resume=c.resume, update=c.update, goto=goto or ())


def _options(body: RunCreate) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if body.context is not None:
        out["context"] = body.context
    if body.interrupt_before is not None:
        out["interrupt_before"] = body.interrupt_before
    if body.interrupt_after is not None:
        out["interrupt_after"] = body.interrupt_after
    if body.durability == "exit" or (body.durability is None
                                     and body.checkpoint_during is False):
        out["durability"] = "exit"
    return out


def _config(body: RunCreate, thread_id: str) -> dict[str, Any]:
    config = dict(body.config or {})
    at = checkpoint_of(body.checkpoint_id, body.checkpoint)  # a subgraph's too
    config["configurable"] = {**config.get("configurable", {}),
                              **thread_config(thread_id, at)["configurable"]}
    return config


# A background run streams these when it names none (LangGraph: "the union of all"; the
# costly modes, messages, debug and checkpoints, only when asked for).
BACKGROUND_MODES = ["values", "updates", "custom"]


class NewRun:
    """One run about to be sent: its thread, id, assistant, and the body as graphrun's
    call (the assistant's config and context under the run's own)."""

    def __init__(self, request: Request, thread_id: str, body: RunCreate,
                 assistant: dict[str, Any]) -> None:
        _refuse_unsupported(body)
        self.server = request.app.state.server
        self.thread_id = thread_id
        config, context = assistants.run_presets(assistant, body.config, body.context)
        self.body = body.model_copy(update={"config": config, "context": context})
        self.assistant_id = assistant["assistant_id"]
        self.assistant_metadata = dict(assistant.get("metadata") or {})
        self.config_metadata = dict((body.config or {}).get("metadata") or {})  # the request's
        self.run_id = str(uuid.uuid4())
        self.graph = self.server.servable(assistant["graph_id"])
        self.remote = self.server.gc.graph(self.graph)
        self.where = f"/threads/{thread_id}/runs/{self.run_id}"
        # langgraph.json's http.configurable_headers: the request headers the run carries
        self.headers = request.app.state.http.headers.of(request.headers)
        self.conn = request  # its user (graphrun.server.auth)
        self.thread_metadata: dict[str, Any] | None = None  # a new thread's (auth.run)
        self.delete_after = False  # a stateless background run's thread goes with it
        # A stateless run's thread is new; any other is described once (`existing`).
        self.stateless = request.url.path.startswith("/runs")
        self._described = False
        self._existing: WorkflowExecutionDescription | None = None

    @classmethod
    async def of(cls, request: Request, thread_id: str, body: RunCreate) -> NewRun:
        server = request.app.state.server
        return cls(request, thread_id, body, await assistants.resolve(server, body.assistant_id))

    @property
    def modes(self) -> list[str]:
        asked = self.body.stream_mode
        return [asked] if isinstance(asked, str) else list(asked)

    async def send(self, *, background: bool, modes: list[str] | None = None,
                   also: Sequence[str] = (), **live_options: Any) -> RunResult:
        """Send the run; `background` answers once the workflow has taken it. `modes`:
        the stream modes to publish live (a streamed or background run), and `also`
        graphrun's own besides (the v3 protocol's checkpoint refs); `live_options`
        (`callbacks`, `messages_v2`) override how the nodes' events are published."""
        b = self.body
        policy = self.conn.app.state.webhooks  # langgraph.json's webhooks
        if b.webhook:
            await policy.check(b.webhook)
        user = await auth.run(self.conn, self)  # may stamp the run's metadata; 404
        options = _options(b)
        live = modes is not None
        if modes is not None:
            options["stream_mode"] = [*([MODES[m] for m in modes if m in MODES]
                                        or ["values"]), *also]
            if "events" in modes:  # astream_events: the nodes' runs, streamed, relayed
                options["callbacks"] = "stream"
            options.update(live_options)
        self.metadata = await self.run_metadata()
        record = {"assistant_id": self.assistant_id, "thread_id": self.thread_id,
                  "stream_mode": modes or [],
                  "metadata": self.metadata, "multitask_strategy": b.multitask_strategy}
        config = _config(b, self.thread_id)
        # As LangGraph's server: nodes find the run's assistant, graph and id here (and
        # Runtime.server_info is built from them).
        config["configurable"] = {"assistant_id": self.assistant_id, "graph_id": self.graph,
                                  "run_id": self.run_id, **config["configurable"],
                                  **self.headers, **user}
        result: RunResult = await self.remote.thread(config).run(
            _input(b), options, stream=live,
            stream_to=self.run_id if live else "", run_id=self.run_id, record=record,
            multitask="" if b.multitask_strategy == "enqueue" else b.multitask_strategy,
            background=background, webhook=b.webhook or "", after_seconds=b.after_seconds or 0,
            webhook_options=policy.sent_with() if b.webhook else {},
            thread_metadata=self.thread_metadata, delete_after=self.delete_after)
        if not (result.error and result.status != "failed"):  # taken, not refused
            metrics.run_started(self.conn.app, self.graph)
        return result

    async def check_thread(self) -> None:
        """`if_not_exists="reject"` (LangGraph's default): the thread must exist."""
        if self.body.if_not_exists == "reject" and await self.existing() is None:
            raise thread_not_found(self.thread_id)

    async def existing(self) -> WorkflowExecutionDescription | None:
        """The thread's latest workflow run before this run, None if the run makes it."""
        if not self._described and not self.stateless:
            with contextlib.suppress(NotFound):
                self._existing = await describe(self.server.gc, self.thread_id)
        self._described = True
        return self._existing

    async def run_metadata(self) -> dict[str, Any]:
        """The run's metadata as LangGraph's server merges it: its assistant's, its
        thread's (with this run's graph and assistant, if the thread exists), its config's
        and its own (as an auth handler left it), `assistant_id` always the run's."""
        desc = await self.existing()
        thread = {**await metadata_of(desc), "graph_id": self.graph,
                  "assistant_id": self.assistant_id} if desc is not None else {}
        return {**self.assistant_metadata, **thread, **self.config_metadata,
                **(self.body.metadata or {}), "assistant_id": self.assistant_id}


def _output(result: RunResult, remote: Any) -> Any:
    """A finished run's answer as `wait` and `join` give it."""
    if result.status == "failed" and result.error:
        e = result.error
        return {"__error__": {"error": e.get("error_type") or e.get("type"),
                              "message": e.get("error_message") or e.get("message")}}
    if result.error:  # refused: the same error an invoke raises
        remote.raise_failure(RunResult(status="failed", error={
            k: v for k, v in result.error.items() if k != "node"}))
    out = serde.loads(result.values, remote.types) if result.values is not None else {}
    if result.interrupts:
        out = {**(out or {}), "__interrupt__": [
            serde.interrupt_from_json(i) for i in result.interrupts]}
    return shapes.jsonable(out)


async def _wait(request: Request, thread_id: str, body: RunCreate) -> tuple[str, Any]:
    run = await NewRun.of(request, thread_id, body)
    await run.check_thread()
    result = await run.send(background=False)
    return run.run_id, _output(result, run.remote)


@router.post("/threads/{thread_id}/runs/wait")
async def wait(thread_id: str, body: RunCreate, request: Request) -> Response:
    run_id, out = await _wait(request, thread_id, body)
    where = f"/threads/{thread_id}/runs/{run_id}"
    return JSONResponse(out, headers={"Content-Location": where,
                                      "Location": f"{where}/join"})


@router.post("/runs/wait")
async def wait_stateless(body: RunCreate, request: Request) -> Response:
    thread_id = str(uuid.uuid4())
    body = body.model_copy(update={"if_not_exists": "create"})
    try:
        _, out = await _wait(request, thread_id, body)
    finally:
        if body.on_completion == "delete":
            await _forget(request, thread_id)
    return JSONResponse(out)


def _events(server: Any, thread_id: str, run_id: str, remote: Any, modes: list[str],
            subgraphs: bool, *, from_offset: int = 0, ids: bool = False,
            record: dict[str, Any] | None = None, input: Any = None
            ) -> AsyncIterator[bytes]:
    """The run's SSE events, read until the run's outcome is in."""
    asked = {MODES[m]: m for m in modes if m in MODES}
    return sse.events(server.gc, thread_id, run_id, remote.types, asked, subgraphs,
                      outcome=run_outcome(server, thread_id, run_id, record),
                      from_offset=from_offset, ids=ids, graph=remote.name, input=input)


async def run_records(server: Any, thread_id: str, desc: Any = None) -> list[dict[str, Any]]:
    """The thread's run records: from its workflow, or from its last run's result."""
    desc = desc or await describe(server.gc, thread_id)
    handle = server.gc.client.get_workflow_handle(server.gc.workflow_id(thread_id),
                                                  result_type=ThreadResult)
    if desc.workflow_type != "GraphWorkflow":
        return []
    if desc.status == WorkflowExecutionStatus.RUNNING:
        return list(await handle.query("runs"))
    if desc.status == WorkflowExecutionStatus.COMPLETED:
        return list((await handle.result()).runs)
    return []


async def _record(server: Any, thread_id: str, run_id: str) -> dict[str, Any]:
    for r in await run_records(server, thread_id):
        if r.get("run_id") == run_id:
            return r
    raise NotFound(f"Run {run_id!r} not found on thread {thread_id!r}.")


async def run_outcome(server: Any, thread_id: str, run_id: str,
                      record: dict[str, Any] | None = None) -> RunResult | None:
    """Wait for the run to end: its update's result (None if Temporal no longer has it)."""
    record = record or await _record(server, thread_id, run_id)
    handle = server.gc.client.get_workflow_handle(
        server.gc.workflow_id(thread_id)).get_update_handle(
        run_id, workflow_run_id=record.get("workflow_run_id"), result_type=RunResult)
    try:
        result: RunResult = await handle.result()
        return result
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        return RunResult(status="refused", error={"type": getattr(cause, "type", "") or
                                                  type(cause).__name__, "message": str(cause)})
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            return None
        raise


def _check_modes(body: RunCreate) -> None:
    asked = [body.stream_mode] if isinstance(body.stream_mode, str) else body.stream_mode
    unknown = [m for m in asked if m not in MODES]
    if unknown:
        raise ValueError(f"stream_mode {unknown} is not supported; use {sorted(MODES)}.")


async def _start_stream(request: Request, thread_id: str, body: RunCreate,
                        stateless: bool = False) -> Response:
    _check_modes(body)
    run = await NewRun.of(request, thread_id, body)
    await run.check_thread()
    await run.send(background=True, modes=run.modes)

    async def events() -> AsyncIterator[bytes]:
        ids = body.stream_resumable
        finished = False
        try:
            yield sse.event("metadata", {"run_id": run.run_id, "attempt": 1}, -1 if ids else None)
            async for event in _events(run.server, thread_id, run.run_id, run.remote,
                                       run.modes, body.stream_subgraphs, ids=ids,
                                       input=body.input):
                yield event
            finished = True
        finally:
            if not finished and body.on_disconnect == "cancel":
                await _cancel_quietly(run.server, thread_id, run.run_id)
            if stateless and body.on_completion == "delete":
                await _forget(request, thread_id)

    headers = {} if stateless else {"Content-Location": run.where,
                                    "Location": f"{run.where}/stream"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


@router.post("/threads/{thread_id}/runs/stream")
async def stream_run(thread_id: str, body: RunCreate, request: Request) -> Response:
    return await _start_stream(request, thread_id, body)


@router.post("/runs/stream")
async def stream_stateless(body: RunCreate, request: Request) -> Response:
    body = body.model_copy(update={"if_not_exists": "create"})
    return await _start_stream(request, str(uuid.uuid4()), body, stateless=True)


@router.post("/threads/{thread_id}/runs")
async def create(thread_id: str, body: RunCreate, request: Request) -> Response:
    """A background run: answered as soon as the thread's workflow has taken it."""
    return await _create(request, thread_id, body)


async def _create(request: Request, thread_id: str, body: RunCreate,
                  stateless: bool = False) -> Response:
    _check_modes(body)
    run = await NewRun.of(request, thread_id, body)
    await run.check_thread()
    # A stateless run's thread is deleted by its workflow once the run has ended, unless
    # on_completion says "keep" (as LangGraph's server).
    run.delete_after = stateless and body.on_completion == "delete"
    modes = run.modes if "stream_mode" in body.model_fields_set else BACKGROUND_MODES
    await run.send(background=True, modes=modes)
    # As LangGraph answers a new run: pending (it may have run already; `get` says).
    now = datetime.now(UTC).isoformat()
    return JSONResponse(shapes.run({
        "run_id": run.run_id, "assistant_id": run.assistant_id, "status": "pending",
        "created_at": now, "updated_at": now, "metadata": run.metadata,
        "multitask_strategy": body.multitask_strategy}, thread_id),
        headers={"Content-Location": run.where})


@router.post("/runs")
async def create_stateless(body: RunCreate, request: Request) -> Response:
    body = body.model_copy(update={"if_not_exists": "create"})
    return await _create(request, str(uuid.uuid4()), body, stateless=True)


@router.post("/runs/batch")
async def create_batch(bodies: list[RunCreate], request: Request) -> list[dict[str, Any]]:
    """Stateless background runs, one per body, each on a thread of its own."""
    for body in bodies:
        _check_modes(body)
    made = await asyncio.gather(*(create_stateless(b, request) for b in bodies))
    return [json.loads(bytes(r.body)) for r in made]


class RunsCancel(shapes.RequestBody):
    thread_id: str | None = None
    run_ids: list[str] | None = None
    status: Literal["pending", "running", "all"] | None = None


@router.post("/runs/cancel", status_code=204)
async def cancel_many(body: RunsCancel, request: Request,
                      action: Literal["interrupt", "rollback"] = "interrupt") -> Response:
    """Cancel the runs `run_ids` of `thread_id`, or every run with `status` (a thread runs
    them while its GraphStatus is running, which visibility finds at any count)."""
    server = request.app.state.server
    owned = await auth.event(request, "threads", "update", {
        "thread_id": auth.as_id(body.thread_id), "action": action,
        "metadata": {"run_ids": body.run_ids, "status": body.status}})
    if body.thread_id:
        await auth.thread_matches(request, body.thread_id, owned)
    if body.status is not None:
        if body.thread_id or body.run_ids:
            raise ValueError("When providing a 'status', 'thread_id' and 'run_ids' must be "
                             "omitted: it cancels every run with that status.")
        wanted = ("pending", "running") if body.status == "all" else (body.status,)
        threads = [run.id[len(server.gc.id_prefix):] async for run in
                   server.gc.client.list_workflows(_busy_threads(
                       server, auth.visibility_filter(owned)))]
        chosen: dict[str, set[str] | None] = {t: None for t in threads}
    else:
        if not body.thread_id or not body.run_ids:
            raise ValueError("Give 'thread_id' and 'run_ids', or a 'status'.")
        wanted = ("pending", "running")
        chosen = {body.thread_id: set(body.run_ids)}

    async def on(thread_id: str, ids: set[str] | None) -> None:
        records = await run_records(server, thread_id)
        if ids is not None and (missing := ids - {r.get("run_id") for r in records}):
            raise NotFound(f"Runs {sorted(missing)} not found on thread {thread_id!r}.")
        for r in records:
            if (ids is None or r.get("run_id") in ids) and r.get("status") in wanted:
                await _cancel_quietly(server, thread_id, r["run_id"], action)

    await asyncio.gather(*(on(t, ids) for t, ids in chosen.items()))
    return Response(status_code=204)


def _busy_threads(server: Any, owned: Any = None) -> str:
    from graphrun import visibility
    from graphrun.server.shapes import GRAPH_STATUS

    base = visibility.THREADS
    if server.gc.id_prefix:
        base += f" AND {visibility.prefixed(server.gc.id_prefix)}"
    return visibility.where(status=GRAPH_STATUS["busy"], metadata={}, base=base, auth=owned)


@router.get("/threads/{thread_id}/runs")
async def list_runs(thread_id: str, request: Request, limit: int = 10, offset: int = 0,
                    status: str | None = None) -> list[dict[str, Any]]:
    await auth.thread(request, thread_id, "read")
    records = await run_records(request.app.state.server, thread_id)
    rows = [r for r in reversed(records) if status is None or r.get("status") == status]
    return [shapes.run(r, thread_id) for r in rows[offset:offset + limit]]


@router.get("/threads/{thread_id}/runs/{run_id}")
async def get_run(thread_id: str, run_id: str, request: Request) -> dict[str, Any]:
    await auth.thread(request, thread_id, "read")
    return shapes.run(await _record(request.app.state.server, thread_id, run_id), thread_id)


@router.get("/threads/{thread_id}/runs/{run_id}/join")
async def join(thread_id: str, run_id: str, request: Request) -> Response:
    """Wait for the run to end; answers the thread's state then, as `wait` does."""
    server = request.app.state.server
    await auth.thread(request, thread_id, "read")
    result = await run_outcome(server, thread_id, run_id)
    remote = await thread_graph(server, thread_id)
    if result is None or result.status == "cancelled":
        snap = await remote.aget_state(thread_config(thread_id))
        out = dict(snap.values or {})
        interrupts = [i for t in snap.tasks for i in t.interrupts]
        if interrupts:
            out["__interrupt__"] = interrupts
        return JSONResponse(shapes.jsonable(out))
    return JSONResponse(_output(result, remote))


async def thread_graph(server: Any, thread_id: str, desc: Any = None) -> Any:
    """The thread's graph, by its workflow's description (`desc`, when one is at hand)."""
    from graphrun.client import GRAPH_NAME

    desc = desc or await describe(server.gc, thread_id)
    return server.gc.graph(desc.typed_search_attributes.get(GRAPH_NAME) or "")


@router.get("/threads/{thread_id}/runs/{run_id}/stream")
async def join_stream(thread_id: str, run_id: str, request: Request,
                      stream_mode: Annotated[list[str] | None, Query()] = None,
                      cancel_on_disconnect: bool = False) -> Response:
    """The run's events from now, or after `Last-Event-ID` (an event id this API gave)."""
    server = request.app.state.server
    await auth.thread(request, thread_id, "read")
    record = await _record(server, thread_id, run_id)
    remote = await thread_graph(server, thread_id)
    last = request.headers.get("last-event-id")
    try:
        from_offset = int(last) + 1 if last is not None else None
    except ValueError:
        raise ValueError(f"Last-Event-ID must be an event id this API sent, not {last!r:.40}"
                         ) from None
    if from_offset is None:  # "from now on": the end of the log as it stands
        end = await remote.thread(thread_id).stream_end()
        from_offset = end[1] if record.get("status") in ("pending", "running") else 0
    modes = stream_mode or record.get("stream_mode") or [*MODES]  # default: the run's own

    async def events() -> AsyncIterator[bytes]:
        finished = False
        try:
            async for event in _events(server, thread_id, run_id, remote, modes, True,
                                       record=record,
                                       from_offset=from_offset, ids=True):
                yield event
            finished = True
        finally:
            if not finished and cancel_on_disconnect:
                await _cancel_quietly(server, thread_id, run_id)

    return StreamingResponse(events(), media_type="text/event-stream")


THREAD_POLL = 0.5  # seconds between looks for a thread's next run, while it has none


@router.get("/threads/{thread_id}/stream")
async def join_thread(thread_id: str, request: Request,
                      stream_mode: Annotated[list[str] | None, Query()] = None) -> Response:
    """The thread's live stream: the events of each of its runs, one run after another,
    from now or after `Last-Event-ID`, until the client leaves. `stream_mode` `run_modes`
    (the default) gives each run's own modes."""
    server = request.app.state.server
    await auth.thread(request, thread_id, "read")
    remote = await thread_graph(server, thread_id)
    last = request.headers.get("last-event-id")
    try:
        start = int(last) + 1 if last is not None else None
    except ValueError:
        raise ValueError(f"Last-Event-ID must be an event id this API sent, not {last!r:.40}"
                         ) from None
    if start is None:
        start = (await remote.thread(thread_id).stream_end())[1]
    asked = [m for m in stream_mode or () if m != "run_modes"]
    unknown = [m for m in asked if m not in MODES]
    if unknown:
        raise ValueError(f"stream_mode {unknown} is not supported; use run_modes or "
                         f"{sorted(MODES)}.")

    # Runs over before the join are not streamed; every later one is, even one that ends
    # between two looks.
    done = {r["run_id"] for r in await run_records(server, thread_id)
            if r.get("status") not in ("pending", "running")}

    async def events() -> AsyncIterator[bytes]:
        nonlocal remote
        while True:
            fresh = [r for r in await run_records(server, thread_id) if r["run_id"] not in done]
            if not fresh:
                await asyncio.sleep(THREAD_POLL)
                continue
            if not remote.name:  # a thread made by POST /threads: its first run's graph
                remote = await thread_graph(server, thread_id)
            record = fresh[0]
            modes = asked or record.get("stream_mode") or [*MODES]
            async for event in _events(server, thread_id, record["run_id"], remote, modes,
                                       True, record=record, from_offset=start, ids=True):
                yield event
            done.add(record["run_id"])

    return StreamingResponse(events(), media_type="text/event-stream")


@router.post("/threads/{thread_id}/runs/{run_id}/cancel")
async def cancel(thread_id: str, run_id: str, request: Request, wait: bool = False,
                 action: Literal["interrupt", "rollback"] = "interrupt") -> Response:
    server = request.app.state.server
    await auth.thread(request, thread_id, "update", {
        "thread_id": auth.as_id(thread_id), "action": action,
        "metadata": {"run_ids": [auth.as_id(run_id)], "status": None}})
    record = await _record(server, thread_id, run_id)
    if record.get("status") not in ("pending", "running"):
        raise Conflict(f"Run {run_id!r} is {record.get('status')}: only a pending or "
                       f"running run can be cancelled.")
    handle = server.gc.client.get_workflow_handle(server.gc.workflow_id(thread_id))
    try:
        await handle.execute_update("cancel_run", args=[run_id, action])
    except WorkflowUpdateFailedError as exc:
        raise Conflict(f"Run {run_id!r} could not be cancelled: {exc.cause}") from exc
    if wait:
        await run_outcome(server, thread_id, run_id, record)
        return Response(status_code=204)
    return Response(status_code=202)


async def _cancel_quietly(server: Any, thread_id: str, run_id: str,
                         action: str = "interrupt") -> None:
    """Stop a run if it is still pending or running (a streaming client left with
    `on_disconnect="cancel"`; a bulk cancel)."""
    handle = server.gc.client.get_workflow_handle(server.gc.workflow_id(thread_id))
    with contextlib.suppress(Exception):
        await handle.execute_update("cancel_run", args=[run_id, action])


@router.delete("/threads/{thread_id}/runs/{run_id}", status_code=204)
async def delete_run(thread_id: str, run_id: str, request: Request) -> Response:
    server = request.app.state.server
    await auth.thread(request, thread_id, "delete", {"run_id": auth.as_id(run_id),
                                                     "thread_id": auth.as_id(thread_id)})
    await _record(server, thread_id, run_id)
    handle = server.gc.client.get_workflow_handle(server.gc.workflow_id(thread_id))
    try:
        await handle.execute_update("delete_run", args=[run_id])
    except WorkflowUpdateFailedError as exc:
        raise Conflict(str(exc.cause)) from exc
    except RPCError as exc:  # the thread's workflow has closed: its records stay as they are
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        raise Conflict(f"Thread {thread_id!r} has no workflow running; its run records "
                       f"are kept with its last run.") from exc
    return Response(status_code=204)


async def _forget(request: Request, thread_id: str) -> None:
    from graphrun.server.threads import delete

    with contextlib.suppress(Exception):  # nothing ran (a refused input): nothing to forget
        await delete(thread_id, request)
