"""LangGraph's v3 streaming protocol (the `langchain_protocol` package), thread-centric:
what `client.threads.stream(...)` of langgraph-sdk (Python and JS) and
`RemoteGraph.astream_events(version="v3")` speak.

Commands are JSON posted to `/threads/{id}/commands` (or sent on the event websocket)
and answered with a CommandResponse or an ErrorResponse (a protocol error code, HTTP
200), in the shapes of `langchain_protocol`:

    run.start              a run (on a thread waiting at interrupts: its answer; a
                           `config.configurable.checkpoint_id` forks from there)
    input.respond          a run answering interrupts by id
    input.inject           a run taking the message as input ({"messages": [message]}),
                           queued behind a run under way
    state.get              the thread's values and checkpoint
    state.listCheckpoints  its checkpoints, newest first (`limit`, default 10; `before`)
    state.fork             a run from one of its checkpoints: {run_id, thread_id}
    agent.getTree          the namespaces of a run (the latest by default) and their
                           status, as its lifecycle events tell them

A run a command starts is an ordinary background run of the thread, which publishes the
stream modes the channels are made of (RUN_MODES), so the classic endpoints see it too;
its answer's `applied_through_seq` is the seq just before its events. LangGraph's own
server (langgraph-api 0.16) answers `unknown_command` to state.get, input.inject,
state.listCheckpoints and state.fork, and agent.getTree only on a websocket whose run
it started; graphrun answers them all on both transports, the API process keeping
nothing (see graphrun.server.feeds). The subscription commands are the event stream's
own: opening it (or the websocket's first frame) subscribes, closing it unsubscribes,
reopening it with `since` reconnects.

Events are read at `/threads/{id}/stream/events` (Server-Sent Events, or a websocket
whose first frame is a `subscription.subscribe` command), filtered by channel, namespace
and depth: graphrun.server.feeds makes them.

Nothing in a command chooses code: its method picks one of the handlers in COMMANDS.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import APIRouter, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError
from starlette.requests import HTTPConnection
from temporalio.client import WorkflowQueryFailedError
from temporalio.service import RPCError

from graphrun import errors
from graphrun.engine.events import CHECKPOINT_REFS
from graphrun.server import assistants, auth, runs, shapes
from graphrun.server.context import Conflict, NotFound
from graphrun.server.feeds import (
    EventStreamRequest,
    applied_through,
    close,
    hub,
    pending_interrupts,
)
from graphrun.server.threads import HistoryQuery, describe, is_record, thread_config

__all__ = ["COMMANDS", "EventStreamRequest", "close", "dispatch", "router"]

log = logging.getLogger(__name__)
router = APIRouter(tags=["protocol"])

# What a run of a v3 session publishes: every channel is made of these. Chat models
# stream content-block events ('messages-tuple' with messages_v2: LangChain's own
# protocol events, from the worker); tool runs come from the nodes' relayed callbacks
# (callbacks="runs": graphrun.relay, in the stream's `events` mode); checkpoints are
# their ids and steps only (CHECKPOINT_REFS: the state is the values channel's).
RUN_MODES = ["values", "updates", "custom", "tasks", "messages-tuple"]
RUN_OPTIONS = {"messages_v2": True, "callbacks": "runs"}
Answer = tuple[dict[str, Any], int]  # a command's result, and its applied_through_seq


class ProtocolError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


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
    except (RPCError, RuntimeError, WorkflowQueryFailedError) as exc:
        # Temporal did not answer, a worker is down, a query failed
        log.warning("command %s on thread %s failed", method, thread_id, exc_info=True)
        return _error(cid, "unknown_error", f"{method}: {type(exc).__name__}: {exc}")
    out: dict[str, Any] = {"type": "success", "id": cid, "result": result}
    if seq:  # the thread's events up to here came before this command's
        out["meta"] = {"applied_through_seq": seq}
    return out


def _error(cid: Any, code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "id": cid, "error": code, "message": message}


async def _run_start(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                     ) -> Answer:
    """Start a run; on a thread that waits at an interrupt, an input is its answer (so
    RemoteGraph sends Command(resume=x) as input x). A `config.configurable.checkpoint_id`
    runs from that checkpoint (the JS SDK's `forkFrom`)."""
    assistant_id = params.get("assistant_id")
    if not isinstance(assistant_id, str) or not assistant_id:
        raise ProtocolError("invalid_argument", "run.start needs an assistant_id.")
    server = conn.app.state.server
    assistant = await assistants.resolve(server, assistant_id)
    input, cmd = params.get("input"), None
    if input is not None and await pending_interrupts(server, thread_id):
        input, cmd = None, runs.RunCommand(resume=input)
    body = runs.RunCreate(assistant_id=assistant_id, input=input, command=cmd,
                          config=params.get("config"), metadata=params.get("metadata"),
                          stream_mode=RUN_MODES, if_not_exists="create")
    return await _start(conn, thread_id, body, assistant)


async def _input_respond(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                         ) -> Answer:
    """Resume the thread with answers to its interrupts, by interrupt id."""
    entries = params.get("responses", [params])
    if not isinstance(entries, list) or not entries:
        raise ProtocolError("invalid_argument", "input.respond needs an interrupt_id and "
                            "a response, or responses: [{interrupt_id, response}, ...].")
    server = conn.app.state.server
    pending = {i.id for i in await pending_interrupts(server, thread_id)}
    resume: dict[str, Any] = {}
    for e in entries:
        iid = e.get("interrupt_id") if isinstance(e, dict) else None
        if not isinstance(iid, str) or iid not in pending:
            raise ProtocolError("no_such_interrupt", f"Thread {thread_id!r} does not wait "
                                f"at interrupt {iid!r:.80}; it waits at {sorted(pending)}.")
        resume[iid] = e.get("response")
    assistant_id = await _thread_assistant(server, thread_id)
    body = runs.RunCreate(
        assistant_id=assistant_id, config=params.get("config"),
        metadata=params.get("metadata"), stream_mode=RUN_MODES,
        command=runs.RunCommand(resume=resume, update=params.get("update"),
                                goto=params.get("goto")))
    return await _start(conn, thread_id, body, await assistants.resolve(server, assistant_id))


async def _input_inject(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                        ) -> Answer:
    """A user's or system's message for the agent: a run of the thread's graph that takes
    it as input, queued behind a run under way (LangGraph's server: run.start's "inject
    input into the running graph" is its multitask strategy, enqueue by default)."""
    _root_only(params, "input.inject")
    message = params.get("message")
    if not (isinstance(message, dict) and message.get("role") in ("user", "system")
            and isinstance(message.get("content"), str)):
        raise ProtocolError("invalid_argument", "input.inject needs a message: {role: "
                            "'user' | 'system', content: str, name?: str}.")
    server = conn.app.state.server
    desc = await describe(server.gc, thread_id)  # no such thread: no_such_run
    if paused := await pending_interrupts(server, thread_id, desc):
        raise ProtocolError("invalid_argument", f"Thread {thread_id!r} waits at interrupts "
                            f"{sorted(i.id for i in paused)}: answer them with "
                            f"input.respond (a new input would drop them).")
    assistant_id = await _thread_assistant(server, thread_id, desc)
    assistant = await assistants.resolve(server, assistant_id)
    graph = server.graphs.get(server.servable(assistant["graph_id"]))
    if graph is not None and "messages" not in (
            graph.get_input_jsonschema().get("properties") or {}):
        raise ProtocolError("invalid_argument", f"input.inject: graph "
                            f"{assistant['graph_id']!r} takes no `messages` input.")
    body = runs.RunCreate(assistant_id=assistant_id, input={"messages": [message]},
                          stream_mode=RUN_MODES, multitask_strategy="enqueue")
    _, seq = await _start(conn, thread_id, body, assistant)
    return {}, seq


async def _start(conn: HTTPConnection, thread_id: str, body: runs.RunCreate,
                 assistant: dict[str, Any]) -> Answer:
    # Read before the run is sent: its events come after this, wherever they are read.
    seq = await applied_through(conn, thread_id)
    run = runs.NewRun(conn, thread_id, body, assistant)  # type: ignore[arg-type]
    await run.send(background=True, modes=RUN_MODES, also=(CHECKPOINT_REFS,), **RUN_OPTIONS)
    return {"run_id": run.run_id}, seq


async def _thread_assistant(server: Any, thread_id: str, desc: Any = None) -> str:
    """The assistant of the thread's last run (else its graph's); `desc`, if given, describes the
    thread's workflow."""
    records = await runs.run_records(server, thread_id, desc)
    return str((records[-1].get("assistant_id") if records else None) or (
        await runs.thread_graph(server, thread_id, desc)).name)


def _root_only(params: dict[str, Any], method: str) -> None:
    if params.get("namespace"):
        raise ProtocolError("no_such_namespace", f"{method} reads the root namespace ([]).")


async def _state_get(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                     ) -> Answer:
    _root_only(params, "state.get")
    server = conn.app.state.server
    desc = await describe(server.gc, thread_id)
    if is_record(desc):
        return {"values": {}}, 0  # made by the API, not run yet (as GET .../state)
    remote = await runs.thread_graph(server, thread_id, desc)
    snap = await remote.aget_state(thread_config(thread_id))
    values = shapes.jsonable(dict(snap.values or {}))
    keys = params.get("keys")
    if isinstance(keys, list):
        values = {k: v for k, v in values.items() if k in keys}
    out: dict[str, Any] = {"values": values}
    if (ref := shapes.checkpoint(snap.config)) is not None:
        out["checkpoint"] = {"id": ref["checkpoint_id"]}
    return out, 0


async def _list_checkpoints(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                            ) -> Answer:
    """The thread's checkpoints, newest first: CheckpointSummary {id, timestamp, step,
    node_name (the node whose writes made a loop step's), metadata}."""
    _root_only(params, "state.listCheckpoints")
    # without a limit, as many as POST /threads/{id}/history gives
    limit, before = params.get("limit", HistoryQuery().limit), params.get("before")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ProtocolError("invalid_argument", "state.listCheckpoints: limit must be a "
                            "positive integer.")
    if before is not None and not isinstance(before, str):
        raise ProtocolError("invalid_argument", "state.listCheckpoints: before must be a "
                            "checkpoint id.")
    server = conn.app.state.server
    desc = await describe(server.gc, thread_id)
    if is_record(desc):
        return {"checkpoints": []}, 0  # made by the API, not run yet
    remote = await runs.thread_graph(server, thread_id, desc)
    if before is not None:
        await _checkpoint(remote, thread_id, before)
    snaps = [s async for s in remote.aget_state_history(  # one more: the last one's parent
        thread_config(thread_id), limit=limit + 1,
        before=thread_config(thread_id, before) if before else None)]
    out = []
    for snap, parent in zip(snaps[:limit], [*snaps[1:], None], strict=False):
        metadata = shapes.jsonable(dict(snap.metadata or {}))
        summary: dict[str, Any] = {
            "id": snap.config["configurable"]["checkpoint_id"],
            "timestamp": snap.created_at, "step": metadata.get("step", -1),
            "metadata": metadata}
        if metadata.get("source") == "loop" and parent is not None and len(parent.next) == 1:
            summary["node_name"] = parent.next[0]
        out.append(summary)
    return {"checkpoints": out}, 0


async def _state_fork(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                      ) -> Answer:
    """A run of the thread from one of its checkpoints, as a run with a checkpoint_id
    (LangGraph's time travel: with no input it runs what was next there)."""
    checkpoint_id = params.get("checkpoint_id")
    if not isinstance(checkpoint_id, str) or not checkpoint_id:
        raise ProtocolError("invalid_argument", "state.fork needs a checkpoint_id.")
    config = params.get("config")
    if config is not None and not isinstance(config, dict):
        raise ProtocolError("invalid_argument", "state.fork: config must be an object.")
    server = conn.app.state.server
    desc = await describe(server.gc, thread_id)
    if is_record(desc):
        raise ProtocolError("no_such_checkpoint", f"Thread {thread_id!r} has no "
                            f"checkpoint {checkpoint_id!r:.80}: it has not run yet.")
    await _checkpoint(await runs.thread_graph(server, thread_id, desc), thread_id,
                      checkpoint_id)
    assistant_id = await _thread_assistant(server, thread_id, desc)
    body = runs.RunCreate(assistant_id=assistant_id, input=params.get("input"),
                          config=config, checkpoint_id=checkpoint_id, stream_mode=RUN_MODES)
    started, seq = await _start(conn, thread_id, body,
                                await assistants.resolve(server, assistant_id))
    return {**started, "thread_id": thread_id}, seq


async def _checkpoint(remote: Any, thread_id: str, checkpoint_id: str) -> None:
    """no_such_checkpoint unless the thread has it."""
    try:
        snap = await remote.aget_state(thread_config(thread_id, checkpoint_id))
    except WorkflowQueryFailedError:  # the thread says it has no such checkpoint
        snap = None
    found = shapes.checkpoint(snap.config if snap is not None else None)
    if found is None or found["checkpoint_id"] != checkpoint_id:
        raise ProtocolError("no_such_checkpoint", f"Thread {thread_id!r} has no checkpoint "
                            f"{checkpoint_id!r:.80}.")


async def _agent_tree(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                      ) -> Answer:
    """The namespaces of run `run_id` (default: the thread's latest) as its lifecycle
    events left them: AgentTreeNode {namespace, status, graph_name, children}."""
    run_id = params.get("run_id")
    if run_id is not None and not isinstance(run_id, str):
        raise ProtocolError("invalid_argument", "agent.getTree: run_id must be a string.")
    server = conn.app.state.server
    await describe(server.gc, thread_id)
    feed = hub(conn).feed(thread_id)
    async with feed.using():
        await feed.ready()
        tree = feed.tree(run_id)
    if tree is None and run_id is not None:  # taken, but none of its events read yet
        record = next((r for r in await runs.run_records(server, thread_id)
                       if r.get("run_id") == run_id), None)
        if record is not None:
            tree = {"namespace": [], "status": "started",
                    "graph_name": str(record.get("assistant_id") or "root")}
    if tree is None:
        raise ProtocolError("no_such_run", f"Thread {thread_id!r} has no run "
                            f"{run_id!r:.80} with events." if run_id else
                            f"Thread {thread_id!r} has no run with events yet.")
    return {"tree": tree}, 0


def _unsupported(what: str) -> Callable[..., Awaitable[Answer]]:
    async def refuse(conn: HTTPConnection, thread_id: str, params: dict[str, Any]
                     ) -> Answer:
        raise ProtocolError("not_supported", what)

    return refuse


COMMANDS: dict[str, Callable[..., Awaitable[Answer]]] = {
    "run.start": _run_start,
    "input.respond": _input_respond,
    "input.inject": _input_inject,
    "state.get": _state_get,
    "state.listCheckpoints": _list_checkpoints,
    "state.fork": _state_fork,
    "agent.getTree": _agent_tree,
    "subscription.subscribe": _unsupported(
        "Subscribe by opening POST /threads/{id}/stream/events (or its websocket, whose "
        "first frame is this command)."),
    "subscription.unsubscribe": _unsupported("Close the event stream to unsubscribe."),
    "subscription.reconnect": _unsupported(
        "Reopen the event stream with `since` (the last seq seen)."),
}


# -- event streams ----------------------------------------------------------------------
@router.post("/threads/{thread_id}/stream/events")
async def events(thread_id: str, body: EventStreamRequest, request: Request
                 ) -> StreamingResponse:
    if (why := body.unknown_channels()) is not None:
        raise HTTPException(400, why)  # as LangGraph's server: no stream that stays silent
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
        if (why := body.unknown_channels()) is not None:
            raise ProtocolError("invalid_argument", f"subscription.subscribe: {why}")
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

