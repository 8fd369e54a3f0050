"""LangGraph's v3 streaming protocol (the `langchain_protocol` package), thread-centric:
what `client.threads.stream(...)` of langgraph-sdk and `RemoteGraph.astream_events(
version="v3")` speak.

Commands are JSON posted to `/threads/{id}/commands` and answered with a
CommandResponse or an ErrorResponse (a protocol error code, HTTP 200). A run that
`run.start` or `input.respond` starts is an ordinary background run of the thread, which
publishes the stream modes the channels are made of (RUN_MODES), so the classic endpoints
see it too. Events are read at `/threads/{id}/stream/events` (Server-Sent Events, or a
websocket whose first frame is a `subscription.subscribe` command), filtered by channel,
namespace and depth.

The API process keeps nothing of its own: the thread's live stream (temporalio's workflow
stream, which keeps the chunks of the thread's last two streamed runs) is read once per
thread and API process (a `Feed`), from what Temporal retains of it, and turned into
protocol events. An event's `seq` is made of where its stream item sits (the workflow
run's start, the item's offset, the event's index among the item's; see Origin), so every
API process gives every event the same `seq` and `event_id`: a reader that reconnects
with `since` to any process goes on where it was, with no gap and no repeat, and
`applied_through_seq` of `run.start` holds on every process. A reader without `since`
gets the thread's latest run from its start (a client opens its streams after `run.start`
has answered), then what comes next. (`timestamp` is when the process read the event:
Temporal keeps no time per item.)

Channels: values, updates, custom (and `custom:<name>`, named by the payload's `name`),
tasks as the graph streams them; lifecycle (started, then completed, interrupted or
failed, for the run at the root and for each subgraph namespace seen in `tasks`); input
(`input.requested` for each interrupt a run stops at); messages and tools, built from the
chat models' own content-block events and the tool runs the workers relay
(graphrun.relay). Not published:
checkpoints and debug (costly; no v3 client asks for them yet).

Nothing in a command chooses code: its method picks one of the handlers in COMMANDS.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
import dataclasses
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field, ValidationError
from starlette.requests import HTTPConnection
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowQueryFailedError
from temporalio.converter import DataConverter
from temporalio.service import RPCError, RPCStatusCode

from graphrun import errors, serde, stream
from graphrun.server import assistants, auth, runs, shapes
from graphrun.server.context import Conflict, NotFound
from graphrun.server.threads import describe, is_record, thread_config

log = logging.getLogger(__name__)
router = APIRouter(tags=["protocol"])

# What a run of a v3 session publishes: every channel is made of these. Chat models
# stream content-block events ('messages-tuple' with messages_v2: LangChain's own
# protocol events, from the worker); tool runs come from the nodes' relayed callbacks
# (callbacks="runs": graphrun.relay, in the stream's `events` mode).
RUN_MODES = ["values", "updates", "custom", "tasks", "messages-tuple"]
RUN_OPTIONS = {"messages_v2": True, "callbacks": "runs"}
KEEP = 20_000  # events a feed keeps for replay
LINGER = 30.0  # seconds a feed nobody reads stays: a reader back soon finds it caught up
KEEPALIVE = 15.0  # seconds between SSE comments on an idle stream
IDLE_POLL = 0.25  # seconds between looks for a thread's next workflow run
_DIRECT = {"values", "updates", "messages", "tools", "lifecycle", "tasks", "checkpoints"}


class ProtocolError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class EventStreamRequest(BaseModel):
    channels: list[str]
    namespaces: list[list[str]] | None = None
    depth: int | None = Field(None, ge=0)
    since: int | None = Field(None, ge=0)


# -- commands ---------------------------------------------------------------------------
@router.post("/threads/{thread_id}/commands")
async def command(thread_id: str, request: Request) -> JSONResponse:
    try:
        body = json.loads(await request.body())
    except ValueError:
        return JSONResponse(_error(None, "invalid_argument", "The command is not JSON."))
    return JSONResponse(await dispatch(request, thread_id, body))


async def dispatch(conn: HTTPConnection, thread_id: str, body: Any) -> dict[str, Any]:
    """One command's CommandResponse or ErrorResponse."""
    if not isinstance(body, dict) or not isinstance(body.get("method"), str):
        return _error(None, "invalid_argument", "A command is {id, method, params}.")
    cid, method = body.get("id"), body["method"]
    params = body.get("params") if body.get("params") is not None else {}
    handler = COMMANDS.get(method)
    if handler is None:
        return _error(cid, "unknown_command", f"Unknown command {method!r:.80}; this server "
                      f"answers {sorted(COMMANDS)}.")
    if not isinstance(params, dict):
        return _error(cid, "invalid_argument", f"{method}: params must be an object.")
    try:
        # The user's thread handler reads it first (a run may create it).
        await auth.thread(conn, thread_id, "read", missing_ok=True)
        result, seq = await handler(conn, thread_id, params)
    except ProtocolError as exc:
        return _error(cid, exc.code, str(exc))
    except auth.Denied as exc:
        return _error(cid, "permission_denied", f"{method}: {exc.detail}")
    except (errors.GraphNotFoundError, ValidationError, ValueError, Conflict,
            errors.ThreadBusyError, errors.InvalidResumeError) as exc:
        return _error(cid, "invalid_argument", f"{method}: {exc}")
    except NotFound as exc:
        return _error(cid, "no_such_run", f"{method}: {exc}")
    except (RPCError, RuntimeError) as exc:  # Temporal did not answer, a worker is down
        log.warning("command %s on thread %s failed", method, thread_id, exc_info=True)
        return _error(cid, "unknown_error", f"{method}: {type(exc).__name__}: {exc}")
    out: dict[str, Any] = {"type": "success", "id": cid, "result": result}
    if seq:  # the thread's events up to here came before this command's
        out["meta"] = {"applied_through_seq": seq}
    return out


def _error(cid: Any, code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "id": cid, "error": code, "message": message}


async def _run_start(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                     ) -> tuple[dict[str, Any], int]:
    """Start a run; on a thread that waits at an interrupt, the input is its answer (so
    RemoteGraph sends Command(resume=x) as input x)."""
    assistant_id = params.get("assistant_id")
    if not isinstance(assistant_id, str) or not assistant_id:
        raise ProtocolError("invalid_argument", "run.start needs an assistant_id.")
    server = conn.app.state.server
    assistant = await assistants.resolve(server, assistant_id)
    input, cmd = params.get("input"), None
    if await _pending(server, thread_id):
        input, cmd = None, runs.RunCommand(resume=input)
    body = runs.RunCreate(assistant_id=assistant_id, input=input, command=cmd,
                          config=params.get("config"), metadata=params.get("metadata"),
                          stream_mode=RUN_MODES, if_not_exists="create")
    return await _start(conn, thread_id, body, assistant)


async def _input_respond(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                         ) -> tuple[dict[str, Any], int]:
    """Resume the thread with answers to its interrupts, by interrupt id."""
    entries = params.get("responses", [params])
    if not isinstance(entries, list) or not entries:
        raise ProtocolError("invalid_argument", "input.respond needs an interrupt_id and "
                            "a response, or responses: [{interrupt_id, response}, ...].")
    server = conn.app.state.server
    pending = {i.id for i in await _pending(server, thread_id)}
    resume: dict[str, Any] = {}
    for e in entries:
        iid = e.get("interrupt_id") if isinstance(e, dict) else None
        if not isinstance(iid, str) or iid not in pending:
            raise ProtocolError("no_such_interrupt", f"Thread {thread_id!r} does not wait "
                                f"at interrupt {iid!r:.80}; it waits at {sorted(pending)}.")
        resume[iid] = e.get("response")
    records = await runs.run_records(server, thread_id)
    assistant_id = (records[-1].get("assistant_id") if records else None) or (
        await runs.thread_graph(server, thread_id)).name
    body = runs.RunCreate(
        assistant_id=assistant_id, config=params.get("config"),
        metadata=params.get("metadata"), stream_mode=RUN_MODES,
        command=runs.RunCommand(resume=resume, update=params.get("update"),
                                goto=params.get("goto")))
    return await _start(conn, thread_id, body, await assistants.resolve(server, assistant_id))


async def _start(conn: HTTPConnection, thread_id: str, body: runs.RunCreate,
                 assistant: dict[str, Any]) -> tuple[dict[str, Any], int]:
    # Read before the run is sent: its events come after this, wherever they are read.
    seq = await _applied_through(conn, thread_id)
    run = runs.NewRun(conn, thread_id, body, assistant)  # type: ignore[arg-type]
    await run.send(background=True, modes=RUN_MODES, **RUN_OPTIONS)
    return {"run_id": run.run_id}, seq


async def _state_get(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                     ) -> tuple[dict[str, Any], int]:
    if params.get("namespace"):
        raise ProtocolError("no_such_namespace", "state.get reads the root namespace ([]).")
    remote = await runs.thread_graph(conn.app.state.server, thread_id)
    snap = await remote.aget_state(thread_config(thread_id))
    values = shapes.jsonable(dict(snap.values or {}))
    keys = params.get("keys")
    if isinstance(keys, list):
        values = {k: v for k, v in values.items() if k in keys}
    out: dict[str, Any] = {"values": values}
    if (ref := shapes.checkpoint(snap.config)) is not None:
        out["checkpoint"] = {"id": ref["checkpoint_id"]}
    return out, 0


def _unsupported(what: str) -> Callable[..., Awaitable[tuple[dict[str, Any], int]]]:
    async def refuse(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                     ) -> tuple[dict[str, Any], int]:
        raise ProtocolError("not_supported", what)

    return refuse


COMMANDS: dict[str, Callable[..., Awaitable[tuple[dict[str, Any], int]]]] = {
    "run.start": _run_start,
    "input.respond": _input_respond,
    "state.get": _state_get,
    "subscription.subscribe": _unsupported(
        "Subscribe by opening POST /threads/{id}/stream/events (or its websocket, whose "
        "first frame is this command)."),
    "subscription.unsubscribe": _unsupported("Close the event stream to unsubscribe."),
    "subscription.reconnect": _unsupported(
        "Reopen the event stream with `since` (the last seq seen)."),
    "agent.getTree": _unsupported("Use GET /assistants/{id}/graph."),
    "input.inject": _unsupported("input.inject is not supported."),
    "state.listCheckpoints": _unsupported("Use POST /threads/{id}/history."),
    "state.fork": _unsupported("Start a run with a checkpoint_id (POST /threads/{id}/runs)."),
}


async def _pending(server: Any, thread_id: str) -> list[Any]:
    """The interrupts the thread waits at (none for a thread that does not exist, or
    that the API created and that has not run yet: its record has no state)."""
    from graphrun.client import GRAPH_NAME

    try:
        desc = await describe(server.gc, thread_id)
    except NotFound:
        return []
    if is_record(desc):
        return []
    remote = server.gc.graph(desc.typed_search_attributes.get(GRAPH_NAME) or "")
    snap = await remote.aget_state(thread_config(thread_id))
    return [i for t in snap.tasks for i in t.interrupts]


# -- event streams ----------------------------------------------------------------------
@router.post("/threads/{thread_id}/stream/events")
async def events(thread_id: str, body: EventStreamRequest, request: Request
                 ) -> StreamingResponse:
    await auth.thread(request, thread_id, "read")
    await describe(request.app.state.server.gc, thread_id)  # 404: no such thread (yet)
    feed = hub(request).feed(thread_id)

    async def sse() -> AsyncIterator[bytes]:
        async with feed.using():
            try:
                async for ev in feed.read(body):
                    if ev is None:
                        yield b": keepalive\n\n"
                    else:
                        yield (f"id: {ev['seq']}\nevent: {ev['method']}\n"
                               f"data: {json.dumps(ev)}\n\n").encode()
            except Exception as exc:  # the stream could not be read: say so, then end
                log.warning("thread %s event stream failed", thread_id, exc_info=True)
                yield f"data: {json.dumps(_error(None, 'unknown_error', str(exc)))}\n\n".encode()

    return StreamingResponse(sse(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store"})


@router.websocket("/threads/{thread_id}/stream/events")
async def events_ws(websocket: WebSocket, thread_id: str) -> None:
    """The same events over a websocket. Its first frame subscribes; later frames are
    commands, answered in order between the events."""
    if not _authorized(websocket):
        await websocket.close(code=4401)  # 4000 + the HTTP status a browser can't read
        return
    await websocket.accept()
    try:
        await auth.thread(websocket, thread_id, "read")
        await describe(websocket.app.state.server.gc, thread_id)
        first = await websocket.receive_json()
        if not isinstance(first, dict) or first.get("method") != "subscription.subscribe":
            raise ProtocolError("invalid_argument", "The first frame must be a "
                                "subscription.subscribe command.")
        try:
            body = EventStreamRequest.model_validate(first.get("params") or {})
        except ValidationError as exc:
            raise ProtocolError("invalid_argument", f"subscription.subscribe: {exc}") from None
    except NotFound as exc:
        await websocket.close(code=4404, reason=str(exc)[:120])
        return
    except auth.Denied as exc:
        await websocket.close(code=4000 + exc.status, reason=str(exc.detail)[:120])
        return
    except (ProtocolError, ValueError) as exc:
        code = getattr(exc, "code", "invalid_argument")
        await websocket.send_json(_error(None, code, str(exc)))
        await websocket.close(code=4400)
        return
    except WebSocketDisconnect:
        return
    await websocket.send_json({"type": "success", "id": first.get("id"),
                               "result": {"subscription_id": "1"}})
    feed = hub(websocket).feed(thread_id)
    lock = asyncio.Lock()  # one frame at a time: events and command answers

    async def commands() -> None:
        while True:
            frame = await websocket.receive_json()
            answer = await dispatch(websocket, thread_id, frame)
            async with lock:
                await websocket.send_json(answer)

    listener = asyncio.ensure_future(commands())
    try:
        async with feed.using():
            async for ev in feed.read(body, until=listener):
                if ev is not None:
                    async with lock:
                        await websocket.send_text(json.dumps(ev))
    except WebSocketDisconnect:
        pass
    finally:
        listener.cancel()
    with contextlib.suppress(Exception):
        await websocket.close()


def _authorized(websocket: WebSocket) -> bool:
    """The API keys the HTTP middleware checks (it does not see websockets)."""
    keys = getattr(websocket.app.state, "api_keys", ())
    if not keys:
        return True
    given = websocket.headers.get("x-api-key") or ""
    bearer = websocket.headers.get("authorization", "")
    if bearer.lower().startswith("bearer "):
        given = given or bearer[7:]
    return any(hmac.compare_digest(given.encode(), k.encode()) for k in keys)


def _channel(ev: dict[str, Any]) -> str:
    method = ev["method"]
    if method == "custom":
        data = ev["params"]["data"]
        name = data.get("name") if isinstance(data, dict) else None
        return f"custom:{name}" if isinstance(name, str) and name else "custom"
    return "input" if method == "input.requested" else method


def _prefix(ns: list[str], prefix: list[str]) -> bool:
    """`ns` under `prefix`; a prefix segment without `:` matches any task of that node."""
    return len(prefix) <= len(ns) and all(
        n == p or (":" not in p and n.partition(":")[0] == p) for n, p in zip(ns, prefix, strict=False))


def matches(ev: dict[str, Any], req: EventStreamRequest) -> bool:
    channel = _channel(ev)
    if channel not in req.channels and not (
            channel.startswith("custom:") and "custom" in req.channels):
        return False
    prefixes = req.namespaces if req.namespaces else ([[]] if req.depth is not None else [])
    ns = ev["params"]["namespace"]
    return not prefixes or any(
        _prefix(ns, p) and (req.depth is None or len(ns) - len(p) <= req.depth)
        for p in prefixes)


# -- event numbers: the same on every API process ---------------------------------------
# An event's seq says where the stream item it came from sits in Temporal, so every API
# process gives the same event the same number:
#     seq = (start - EPOCH_MS) * PER_MS + (offset - first) * PER_ITEM + index
# `start` is when the workflow run that published the item started (ms), `offset - first`
# the item's place among that run's own items (continue-as-new carries the log on, with
# its offsets: the items before `first` are an earlier run's, numbered as that run
# numbered them), `index` the event's place among the item's events. A workflow run
# starts after the one before it stopped publishing, so seqs grow across runs while a
# run publishes fewer than PER_MS / PER_ITEM items per ms of its life (10,000 a second);
# they stay below 2**53, a JavaScript number, until 2052.
EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
PER_MS = 10_000
PER_ITEM = 1_000  # events one item may make


@dataclasses.dataclass(frozen=True)
class Origin:
    """What numbering a workflow run's stream items takes: facts of its start, which
    never change (so every process reads the same, and keeps them)."""

    start_ms: int  # when the workflow run started
    first: int  # the offset of its first own item: the items before it were carried on
    previous: str  # the workflow run whose log it carries on ("": a log of its own)

    def seq(self, offset: int, index: int) -> int:
        return (self.start_ms - EPOCH_MS) * PER_MS + (offset - self.first) * PER_ITEM + index


async def _read_origin(client: Any, workflow_id: str, run_id: str) -> Origin:
    """A workflow run's Origin, from its first history event: its start time, and the
    stream state its input carried (GraphWorkflow's StartRequest.stream)."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    try:
        event = await anext(aiter(handle.fetch_history_events(page_size=1)), None)
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        event = None
    if event is None:  # gone (retention): for good
        raise NotFound(f"Workflow run {run_id!r} is gone.")
    started = event.workflow_execution_started_event_attributes
    payloads = list(started.input.payloads)
    req = (await client.data_converter.decode(payloads[:1]))[0] if payloads else None
    carried = req.get("stream") if isinstance(req, dict) else None
    if not isinstance(carried, dict):
        return Origin(event.event_time.ToMilliseconds(), 0, "")
    first = int(carried.get("base_offset") or 0) + len(carried.get("log") or [])
    return Origin(event.event_time.ToMilliseconds(), first, started.continued_execution_run_id)


async def _latest(server: Any, thread_id: str) -> str | None:
    """The thread's latest workflow run's id; None for none, or for a record the API made
    (no stream: its first run will have one)."""
    try:
        desc = await describe(server.gc, thread_id)
    except NotFound:
        return None
    return None if is_record(desc) else desc.run_id


async def _position(server: Any, thread_id: str) -> tuple[str | None, int]:
    """The thread's latest workflow run (running or closed: a closed one's stream is read
    by query) and the end of its live stream; None while it has none."""
    wf_run = await _latest(server, thread_id)
    if wf_run is None:
        return None, 0
    handle = server.gc.client.get_workflow_handle(server.gc.workflow_id(thread_id),
                                                  run_id=wf_run)
    try:
        end = await handle.query("__temporal_workflow_stream_offset", result_type=int)
    except (RPCError, WorkflowQueryFailedError):
        return wf_run, 0
    return wf_run, int(end)


async def _applied_through(conn: HTTPConnection, thread_id: str) -> int:
    """The seq just before the thread's next event: where its stream ends now (0 for a
    thread with no stream yet). Durable, so any process may serve the reader."""
    wf_run, end = await _position(conn.app.state.server, thread_id)
    if wf_run is None:
        return 0
    try:
        origin = await hub(conn).origin(thread_id, wf_run)
    except NotFound:  # the run ended and went meanwhile: no promise then
        return 0
    return origin.seq(max(end, origin.first), 0) - 1


def _wire_data(wire: Any) -> Any:
    """A stream item as a poll query answers it (base64 of the item's Payload)."""
    payload = Payload()
    payload.ParseFromString(base64.b64decode(wire.data))
    return DataConverter.default.payload_converter.from_payload(payload)


# -- a thread's events ------------------------------------------------------------------
class Hub:
    """The feeds of this API process, by thread, and the workflow runs' Origins read."""

    ORIGINS_KEPT = 4096

    def __init__(self, server: Any) -> None:
        self.server = server
        self.feeds: dict[str, Feed] = {}
        self._origins: dict[str, asyncio.Future[Origin]] = {}

    def feed(self, thread_id: str) -> Feed:
        if thread_id not in self.feeds:
            self.feeds[thread_id] = Feed(self, thread_id)
        return self.feeds[thread_id]

    async def origin(self, thread_id: str, run_id: str) -> Origin:
        """A workflow run's Origin, read once (concurrent askers share the read); NotFound
        is kept too (a run gone stays gone), other failures are asked again."""
        found = self._origins.get(run_id)
        if found is None or (found.done() and (found.cancelled() or not isinstance(
                found.exception() or NotFound(), NotFound))):
            if len(self._origins) >= self.ORIGINS_KEPT:
                del self._origins[next(iter(self._origins))]
            found = self._origins[run_id] = asyncio.ensure_future(_read_origin(
                self.server.gc.client, self.server.gc.workflow_id(thread_id), run_id))
        return await asyncio.shield(found)


def close(app: Any) -> None:
    """Stop every feed of this process (the app is shutting down)."""
    found = getattr(app.state, "protocol_hub", None)
    for feed in list(found.feeds.values()) if found is not None else []:
        feed.stop()


def hub(conn: HTTPConnection) -> Hub:
    state = conn.app.state
    if getattr(state, "protocol_hub", None) is None:
        state.protocol_hub = Hub(state.server)
    return state.protocol_hub  # type: ignore[no-any-return]


def _seq(ev: dict[str, Any]) -> int:
    return int(ev["seq"])


class Feed:
    """One thread's protocol events, made from its live stream: what Temporal retains of
    it first (the last two streamed runs, from their starts), then what comes, across
    runs and workflow runs, for as long as someone reads. Every process reads the same
    items from the same starts, so makes the same events with the same seqs."""

    def __init__(self, owner: Hub, thread_id: str) -> None:
        self.owner, self.server, self.thread_id = owner, owner.server, thread_id
        self.events: list[dict[str, Any]] = []  # by seq, the last KEEP
        self.latest: str | None = None  # the latest run seen, and its first event's seq
        self.latest_first = 0
        self.ended: set[str] = set()
        self.asked: set[str] = set()  # the interrupts the last run to end stopped at
        self.runs: dict[str, _Run] = {}  # runs under way
        self.seen: dict[str, int] = {}  # task id -> last sequence number read
        self.wf_run: str | None = None  # the workflow run read, and its next offset
        self.offset = 0
        self.users = 0
        self._changed = asyncio.Event()
        self._began: asyncio.Future[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._remote: Any = None

    @contextlib.asynccontextmanager
    async def using(self) -> AsyncIterator[None]:
        self.users += 1
        try:
            yield
        finally:
            self.users -= 1
            if not self.users:
                asyncio.get_running_loop().call_later(LINGER, self._close_if_unused)

    def _close_if_unused(self) -> None:
        if self.users or self.owner.feeds.get(self.thread_id) is not self:
            return
        del self.owner.feeds[self.thread_id]
        self.stop()

    def stop(self) -> None:
        """Stop reading the thread's stream."""
        if self._reader is not None:
            self._reader.cancel()

    async def ready(self) -> None:
        """Begin reading (once; again if it could not begin): caught up with the stream
        as it stands."""
        began = self._began
        if began is None or (began.done() and not began.cancelled() and began.exception()):
            self._began = began = asyncio.ensure_future(self._begin())
        await asyncio.shield(began)

    async def _begin(self) -> None:
        self.wf_run, end = await _position(self.server, self.thread_id)
        if self.wf_run is not None:
            try:
                await self._catch_up(end)
            except Exception:  # no worker answers the query: the live read catches up
                log.warning("thread %s: its stream could not be read at once",
                            self.thread_id, exc_info=True)
            await self._announce_pause(end)
        self._reader = asyncio.ensure_future(self._follow())

    async def _catch_up(self, end: int) -> None:
        """The retained items up to `end`, by the stream's poll query (answered at once;
        an offset before the retained ones reads from the first retained)."""
        from temporalio.contrib.workflow_streams import PollInput, PollResult

        handle = self._handle()
        while self.offset < end:
            batch = await handle.query("__temporal_workflow_stream_poll", PollInput(
                topics=[stream.STREAM_TOPIC], from_offset=self.offset), result_type=PollResult)
            for wire in batch.items:
                await self._take(wire.offset, _wire_data(wire))
            if batch.next_offset <= self.offset:
                return
            self.offset = batch.next_offset

    async def _announce_pause(self, end: int) -> None:
        """A thread that waits at interrupts its stream does not show (a run that was not
        streamed stopped there) says so at once, numbered just before the stream's end:
        every process that begins there says it alike."""
        if self.runs:
            return  # a run is under way: its end will say
        try:
            paused = await _pending(self.server, self.thread_id)
            records = await runs.run_records(self.server, self.thread_id) if paused else []
            origin = await self.owner.origin(self.thread_id, self.wf_run or "")
        except Exception:  # no worker answers: the questions come with the next run
            log.warning("thread %s: its interrupts could not be read", self.thread_id,
                        exc_info=True)
            return
        if not paused or {i.id for i in paused} == self.asked:
            return
        rid = records[-1]["run_id"] if records else "paused"
        out: Out = [("lifecycle", (), {"event": "started"}),
                    *self._closing(_Run(""), "interrupted", None, paused)]
        first = origin.seq(max(end, origin.first), 0) - len(out)
        self.latest, self.latest_first = rid, first
        self.ended.add(rid)
        for k, (method, ns, data) in enumerate(out):
            self.emit(first + k, f"{rid}:paused:{k}", method, ns, data)

    def _handle(self, wf_run: str | None = None) -> Any:
        return self.server.gc.client.get_workflow_handle(
            self.server.gc.workflow_id(self.thread_id), run_id=wf_run or self.wf_run)

    async def _follow(self) -> None:
        """Read the stream live: the workflow run read, then each one after it (continued
        as new, or started when a closed thread runs again)."""
        while True:
            try:
                if self.wf_run is not None:
                    await self._subscribe()  # until the run has closed and been read
                await self._move_on(wait=True)
            except asyncio.CancelledError:
                raise
            except Exception:  # continued as new; or Temporal or a worker away a while
                with contextlib.suppress(Exception):
                    if await self._move_on(wait=False):
                        continue
                log.warning("reading thread %s's live stream failed", self.thread_id,
                            exc_info=True)
                await asyncio.sleep(1.0)

    async def _subscribe(self) -> None:
        from temporalio.contrib.workflow_streams import WorkflowStreamClient

        # Without a client the subscription does not follow continue-as-new at the same
        # offset: it fails, and _move_on finds where the next run's log goes on.
        async for item in WorkflowStreamClient(self._handle()).subscribe(
                [stream.STREAM_TOPIC], from_offset=self.offset,
                poll_cooldown=stream.POLL_COOLDOWN):
            await self._take(item.offset, item.data)

    async def _move_on(self, wait: bool) -> bool:
        """Go on to the thread's next workflow run: where its log carries on the one read,
        or from its start (False: there is none yet)."""
        while (latest := await _latest(self.server, self.thread_id)) in (None, self.wf_run):
            if not wait:
                return False
            await asyncio.sleep(IDLE_POLL)
        assert latest is not None
        if not await self._carries(latest, self.wf_run):
            self.offset, self.seen = 0, {}
        self.wf_run = latest
        return True

    async def _carries(self, wf_run: str, earlier: str | None) -> bool:
        """Whether `wf_run`'s log carries on `earlier`'s (continue-as-new, with offsets)."""
        while earlier is not None:
            try:
                origin = await self.owner.origin(self.thread_id, wf_run)
            except NotFound:
                return False
            if origin.previous in ("", earlier):
                return origin.previous == earlier
            wf_run = origin.previous
        return False

    async def _origin_at(self, offset: int) -> Origin | None:
        """The Origin of the item at `offset` of the run read: the run's, or that of the
        run before it that published it (None if Temporal no longer has that run)."""
        wf_run = self.wf_run
        while wf_run:
            try:
                origin = await self.owner.origin(self.thread_id, wf_run)
            except NotFound:
                return None
            if offset >= origin.first:
                return origin
            wf_run = origin.previous
        return None

    async def read(self, req: EventStreamRequest, until: asyncio.Future[Any] | None = None
                   ) -> AsyncIterator[dict[str, Any] | None]:
        """The events `req` asks for, from its `since`; None when idle for KEEPALIVE."""
        await self.ready()
        if req.since is not None:
            after = req.since
        else:  # the latest run, even one just ended: a client opens its streams after
            after = self.latest_first - 1 if self.latest is not None else 0  # run.start
        while until is None or not until.done():
            changed = self._changed
            while (i := bisect.bisect_right(self.events, after, key=_seq)) < len(self.events):
                ev = self.events[i]
                after = ev["seq"]
                if matches(ev, req):
                    yield ev
            waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(changed.wait())]
            if until is not None:
                waits.append(until)
            try:
                done, _ = await asyncio.wait(waits, timeout=KEEPALIVE,
                                             return_when=asyncio.FIRST_COMPLETED)
            finally:  # also when the reader goes away meanwhile
                waits[0].cancel()
            if not done:
                yield None
        if until is not None and until.exception() is not None:
            raise until.exception()  # type: ignore[misc]

    def emit(self, seq: int, event_id: str, method: str, ns: Any, data: Any) -> None:
        if self.events and seq <= self.events[-1]["seq"]:
            # Beyond what the numbering holds (see PER_MS): kept in order, numbered here.
            log.warning("thread %s: event %s numbered out of order", self.thread_id, event_id)
            seq = self.events[-1]["seq"] + 1
        self.events.append({
            "type": "event", "method": method, "seq": seq, "event_id": event_id,
            "params": {"namespace": list(ns), "timestamp": int(time.time() * 1000),
                       "data": data}})
        if len(self.events) > KEEP:
            del self.events[:len(self.events) - KEEP]
        self._changed.set()
        self._changed = asyncio.Event()

    # -- runs ---------------------------------------------------------------------------
    async def _take(self, offset: int, data: Any) -> None:
        """One stream item's events, numbered by where the item sits. What needs Temporal
        is asked first; the feed's state then changes with the events, in one go."""
        rid = data.get("id") if isinstance(data, dict) else None
        origin = None
        if isinstance(rid, str) and rid not in self.ended:
            # None: its workflow run is gone (retention), so it cannot be numbered as
            # others numbered it; only an old run's replay misses it.
            origin = await self._origin_at(offset)
        if origin is None or not isinstance(rid, str):
            self.offset = max(self.offset, offset + 1)
            return  # not a run's; or a run read before (continue-as-new carries its log)
        graph = await self._graph()
        ending = await self._outcome(rid) if data.get("end") else None
        out: list[tuple[str, str, Any, Any]] = []  # (event id, method, namespace, data)
        if rid not in self.runs:
            self.runs[rid] = _Run(graph.name)
            self.latest, self.latest_first = rid, origin.seq(offset, 0)
            named = {"graph_name": graph.name} if graph.name else {}
            out.append((f"{rid}:start", "lifecycle", (), {"event": "started", **named}))
        if ending is not None:
            self.ended.add(rid)
            ends = self._closing(self.runs.pop(rid), *ending)
            out += [(f"{rid}:end:{k}", *e) for k, e in enumerate(ends)]
        elif not stream.repeated(data, self.seen):
            chunk = tuple(serde.loads(data["e"], graph.types))
            ns, mode, payload = chunk if len(chunk) == 3 else ((), *chunk)
            made = self.runs[rid].convert(tuple(ns), mode, payload)
            out += [(f"{rid}:{offset}:{k}", *e) for k, e in enumerate(made)]
        for k, (event_id, method, ns, payload) in enumerate(out):
            self.emit(origin.seq(offset, k), event_id, method, ns, payload)
        self.offset = max(self.offset, offset + 1)

    async def _outcome(self, rid: str) -> tuple[str, Any, list[Any]]:
        """How run `rid` ended: its update's result (durable); for a run with no record
        (the Python client's), the thread as it stands."""
        result = None
        with contextlib.suppress(NotFound):
            result = await runs.run_outcome(self.server, self.thread_id, rid)
        if result is not None:
            types = (await self._graph()).types
            return (result.status, result.error,
                    [serde.interrupt_from_json(i, types) for i in result.interrupts])
        paused = await _pending(self.server, self.thread_id)
        return ("interrupted" if paused else "done"), None, paused

    def _closing(self, run: _Run, status: str, error: Any, paused: list[Any]) -> Out:
        """The events that end a run: its subgraphs', then its own."""
        self.asked = {i.id for i in paused}
        out = run.close_children("interrupted" if paused or status == "interrupted" else (
            "completed" if status == "done" and not error else "failed"))
        graph = {"graph_name": run.graph} if run.graph else {}
        if paused or status == "interrupted":
            out.append(("lifecycle", (), {"event": "interrupted", **graph}))
            for i in paused:
                value = shapes.jsonable(i.value)
                out.append(("input.requested", (), {"interrupt_id": i.id, "payload": value,
                                                     "value": value}))
        elif status == "done" and not error:
            out.append(("lifecycle", (), {"event": "completed", **graph}))
        else:
            why = "cancelled" if status == "cancelled" else (
                (error or {}).get("message") or (error or {}).get("error_message")
                or status)
            out.append(("lifecycle", (), {"event": "failed", "error": str(why), **graph}))
        return out

    async def _graph(self) -> Any:
        if self._remote is None:
            self._remote = await runs.thread_graph(self.server, self.thread_id)
        return self._remote


Out = list[tuple[str, Any, Any]]  # (method, namespace, data) of events to emit


class _Run:
    """One run's chunks as protocol events: the messages and tool calls under way, and
    the subgraph namespaces seen."""

    def __init__(self, graph: str) -> None:
        self.graph = graph
        self.children: dict[tuple[str, ...], str] = {}  # namespace -> its parent task id
        self.messages: dict[str, str] = {}  # chat model run id -> its message's id
        self.tools: dict[str, dict[str, Any]] = {}  # tool run id -> its call

    def convert(self, ns: tuple[str, ...], mode: str, payload: Any) -> Out:
        if mode in ("values", "updates", "custom"):
            return [(mode, ns, shapes.jsonable(payload))]
        if mode == "tasks" and isinstance(payload, dict):
            return self._tasks(ns, shapes.jsonable(payload))
        if mode == "messages" and isinstance(payload, (list, tuple)) and len(payload) == 2:
            return self._message(ns, *payload)
        if mode == stream.EVENTS and isinstance(payload, dict):
            kind = payload.get("kind")
            if kind in ("tool_start", "tool_end", "tool_error"):
                return self._tool(kind, payload)
        return []

    # A subgraph's namespace starts on its first task and ends with its parent's task,
    # as LangGraph's LifecycleTransformer has it.
    def _tasks(self, ns: tuple[str, ...], data: dict[str, Any]) -> Out:
        out: Out = []
        if "result" not in data and ns and ns not in self.children:
            name, _, parent_task = ns[-1].partition(":")
            self.children[ns] = parent_task
            # An agent (LangChain's create_agent) is named by its lc_agent_name.
            name = (data.get("metadata") or {}).get("lc_agent_name") or name
            out.append(("lifecycle", ns, {"event": "started", "graph_name": name}))
        out.append(("tasks", ns, data))
        if "result" in data:
            status = ("interrupted" if data.get("interrupts") else
                      "failed" if data.get("error") else "completed")
            for child, parent_task in list(self.children.items()):
                if child[:-1] == ns and parent_task == data.get("id"):
                    del self.children[child]
                    out.append(("lifecycle", child, {"event": status, **(
                        {"error": str(data["error"])} if status == "failed" else {})}))
        return out

    def close_children(self, status: str) -> Out:
        out: Out = [("lifecycle", ns, {"event": status}) for ns in self.children]
        self.children.clear()
        return out

    # -- messages: the chat model's own content-block events (StreamMessagesV2) ----------
    def _message(self, ns: tuple[str, ...], payload: Any, meta: Any) -> Out:
        """What chat models said: each protocol event as the model streamed it, naming
        its message (a client routes concurrent messages by it), or the message of a
        model that did not stream, replayed whole as LangChain replays it. Messages a
        node returned are state (the values channel), not sent here."""
        from langchain_core.messages import BaseMessage

        from graphrun._lc_private import message_to_events

        meta = meta if isinstance(meta, dict) else {}
        node = {"langgraph_node": meta["langgraph_node"]} if meta.get("langgraph_node") else {}
        if isinstance(payload, dict) and "event" in payload:
            rid = str(meta.get("run_id", ""))
            event = shapes.jsonable(payload)
            if event["event"] == "message-start":
                self.messages[rid] = str(event.get("id") or event.get("message_id")
                                         or f"run-{rid}")
                event["metadata"] = {**(event.get("metadata") or {}), "run_id": rid, **node}
            mid = self.messages.get(rid)
            if mid is None:
                return []
            if event["event"] in ("message-finish", "error"):
                del self.messages[rid]
            return [("messages", ns, {**event, "message_id": mid})]
        if not isinstance(payload, BaseMessage) or not meta.get("run_id"):
            return []  # what a node returned is the values channel's: this one is models'
        rid = str(meta["run_id"])
        mid = payload.id or f"run-{rid}"
        out: Out = []
        for k, event in enumerate(message_to_events(payload, message_id=mid)):
            event = shapes.jsonable(event)
            if k == 0:
                event["metadata"] = {**(event.get("metadata") or {}), "run_id": rid, **node}
            out.append(("messages", ns, {**event, "message_id": mid}))
        return out

    # -- tools: each tool run, by the id of the call it answers ---------------------------
    def _tool(self, kind: str, p: dict[str, Any]) -> Out:
        rid = str(p.get("run_id"))
        if kind == "tool_start":
            name = p.get("name") or (p.get("serialized") or {}).get("name") or ""
            # A tool a node calls itself with plain arguments answers no call: its run
            # names it.
            call = {"ns": _graph_ns(p.get("metadata") or {}),
                    "id": p.get("tool_call_id") or rid}
            self.tools[rid] = call
            data = {"event": "tool-started", "tool_call_id": call["id"], "tool_name": name}
            if p.get("inputs") is not None:
                data["input"] = shapes.jsonable(p["inputs"])
            return [("tools", call["ns"], data)]
        answered = self.tools.pop(rid, None)
        if answered is None:
            return []
        if kind == "tool_end":
            return [("tools", answered["ns"], {
                "event": "tool-finished", "tool_call_id": answered["id"],
                "output": shapes.jsonable(p.get("output"))})]
        error = p.get("error") or {}
        if error.get("type") == "GraphInterrupt":  # paused, not failed: it runs again
            return []
        return [("tools", answered["ns"], {"event": "tool-error", "tool_call_id": answered["id"],
                                            "message": str(error.get("message", error))})]


def _graph_ns(metadata: dict[str, Any]) -> tuple[str, ...]:
    """The namespace of the graph a task runs in (its checkpoint namespace without the
    task's own segment, and one more per enclosing @task call), as LangGraph names it."""
    ns = str(metadata.get("langgraph_checkpoint_ns") or "")
    if not ns:
        return ()
    parts = ns.split("|")
    path, drop = metadata.get("langgraph_path") or (), 1
    while isinstance(path, (list, tuple)) and len(path) == 4 and (
            path[0] == "__pregel_push" and path[-1] is True):
        drop, path = drop + 1, path[1]
    return tuple(parts[:-drop]) if drop < len(parts) else ()
