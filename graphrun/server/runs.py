"""Runs: a run is one invocation of the thread's workflow, waited for or streamed.

`wait` answers what `invoke` returns (the values, `__interrupt__` at a pause, or
LangGraph's `{"__error__": ...}` for a failed node); `stream` answers Server-Sent
Events as LangGraph's server frames them (`metadata` first, then one event per
chunk named after its stream mode, `error` for a failure).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel

from graphrun.errors import NodeFailedError
from graphrun.server import shapes
from graphrun.server.threads import _cfg
from graphrun.types import Command, Send

router = APIRouter(tags=["runs"])

# Stream modes of the API -> graphrun's ('messages-tuple' is graphrun's 'messages').
MODES = {"values": "values", "updates": "updates", "custom": "custom", "debug": "debug",
         "tasks": "tasks", "checkpoints": "checkpoints", "messages-tuple": "messages"}
# Accepted, streaming no chunk of their own yet (the run goes on and ends as usual).
SILENT = {"events"}


class RunCommand(BaseModel):
    resume: Any = None
    update: Any = None
    goto: Any = None


class RunCreate(BaseModel):
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
    if_not_exists: Literal["create", "reject"] = "create"
    on_disconnect: Literal["cancel", "continue"] = "continue"
    on_completion: Literal["delete", "keep"] = "delete"
    after_seconds: int | None = None
    webhook: str | None = None
    feedback_keys: list[str] | None = None


def _refuse_unsupported(body: RunCreate) -> None:
    if body.multitask_strategy in ("interrupt", "rollback"):
        raise ValueError(f"multitask_strategy {body.multitask_strategy!r} is not supported "
                         f"yet; use 'enqueue' (runs on a thread take their turn).")
    if body.after_seconds or body.webhook:
        raise ValueError("after_seconds and webhook are not supported yet.")


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
    return out


def _config(body: RunCreate, thread_id: str) -> dict[str, Any]:
    config = dict(body.config or {})
    cid = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
    config["configurable"] = {**config.get("configurable", {}), **_cfg(thread_id, cid)[
        "configurable"]}
    return config


async def _wait(request: Request, thread_id: str, body: RunCreate) -> tuple[str, Any]:
    server = request.app.state.server
    _refuse_unsupported(body)
    remote = server.gc.graph(server.graph_of(body.assistant_id))
    run_id = str(uuid.uuid4())
    try:
        out = await remote.ainvoke(_input(body), _config(body, thread_id), **_options(body))
    except NodeFailedError as exc:
        return run_id, {"__error__": {"error": exc.error_type, "message": exc.error_message}}
    return run_id, shapes.jsonable(out)


@router.post("/threads/{thread_id}/runs/wait")
async def wait(thread_id: str, body: RunCreate, request: Request) -> Response:
    run_id, out = await _wait(request, thread_id, body)
    where = f"/threads/{thread_id}/runs/{run_id}"
    return JSONResponse(out, headers={"Content-Location": where, "Location": where})


@router.post("/runs/wait")
async def wait_stateless(body: RunCreate, request: Request) -> Response:
    thread_id = str(uuid.uuid4())
    try:
        _, out = await _wait(request, thread_id, body)
    finally:
        if body.on_completion == "delete":
            await _forget(request, thread_id)
    return JSONResponse(out)


def _event(name: str, data: Any, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data)}\n\n".encode()


async def _sse(request: Request, thread_id: str, body: RunCreate, run_id: str,
               stateless: bool = False) -> AsyncIterator[bytes]:
    server = request.app.state.server
    asked = [body.stream_mode] if isinstance(body.stream_mode, str) else body.stream_mode
    modes = [MODES[m] for m in asked if m in MODES]
    names = {v: k for k, v in MODES.items() if k in asked}
    remote = server.gc.graph(server.graph_of(body.assistant_id))
    n = 0
    yield _event("metadata", {"run_id": run_id, "attempt": 1}, n if body.stream_resumable
                 else None)
    try:
        async for item in remote.astream(_input(body), _config(body, thread_id),
                                         stream_mode=modes or ["values"], subgraphs=True,
                                         **_options(body)):
            ns, mode, chunk = item if len(item) == 3 else (item[0], modes[0], item[1])
            if not modes or (ns and not body.stream_subgraphs):
                continue
            name = names.get(mode, mode)
            name = "messages" if name == "messages-tuple" else name
            if ns:
                name = "|".join([name, *ns])
            n += 1
            yield _event(name, shapes.jsonable(chunk), n if body.stream_resumable else None)
    except NodeFailedError as exc:
        yield _event("error", {"error": exc.error_type, "message": exc.error_message})
    except Exception as exc:  # the stream is open: the failure goes in it, as LangGraph's
        yield _event("error", {"error": type(exc).__name__, "message": str(exc)})
    finally:
        if stateless and body.on_completion == "delete":
            await _forget(request, thread_id)


def _check_modes(body: RunCreate) -> None:
    _refuse_unsupported(body)
    asked = [body.stream_mode] if isinstance(body.stream_mode, str) else body.stream_mode
    unknown = [m for m in asked if m not in MODES and m not in SILENT]
    if unknown:
        raise ValueError(f"stream_mode {unknown} is not supported; use "
                         f"{sorted([*MODES, *SILENT])}.")


@router.post("/threads/{thread_id}/runs/stream")
async def stream(thread_id: str, body: RunCreate, request: Request) -> Response:
    _check_modes(body)
    request.app.state.server.graph_of(body.assistant_id)
    run_id = str(uuid.uuid4())
    where = f"/threads/{thread_id}/runs/{run_id}"
    return StreamingResponse(_sse(request, thread_id, body, run_id),
                             media_type="text/event-stream",
                             headers={"Content-Location": where,
                                      "Location": f"{where}/stream"})


@router.post("/runs/stream")
async def stream_stateless(body: RunCreate, request: Request) -> Response:
    _check_modes(body)
    request.app.state.server.graph_of(body.assistant_id)
    return StreamingResponse(_sse(request, str(uuid.uuid4()), body, str(uuid.uuid4()),
                                  stateless=True), media_type="text/event-stream")


async def _forget(request: Request, thread_id: str) -> None:
    from graphrun.server.threads import delete

    with contextlib.suppress(Exception):  # nothing ran (a refused input): nothing to forget
        await delete(thread_id, request)
