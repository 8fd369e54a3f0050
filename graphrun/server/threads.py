"""Threads: a thread is the workflow of its id; its state is read with queries.

A thread exists on Temporal from its first run (or state update) on: that run binds
it to its graph. `POST /threads` checks the id is free and answers the new thread
without starting anything, so an API process keeps nothing (LangGraph's server keeps
a row); its `metadata` is not kept (threads are found by `graph_id` and `status`).
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from graphrun.client import GRAPH_NAME, GRAPH_STATUS, GraphClient
from graphrun.server import shapes
from graphrun.server.context import Conflict, NotFound

router = APIRouter(tags=["threads"])


class ThreadCreate(BaseModel):
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    graph_id: str | None = None


class ThreadSearch(BaseModel):
    metadata: dict[str, Any] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None
    ids: list[str] | None = None
    limit: int = 10
    offset: int = 0


class StateUpdate(BaseModel):
    values: Any = None
    as_node: str | None = None
    checkpoint_id: str | None = None
    checkpoint: dict[str, Any] | None = None


class HistoryQuery(BaseModel):
    limit: int = 10
    before: dict[str, Any] | str | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None


async def describe(gc: GraphClient, thread_id: str) -> Any:
    """The thread's latest workflow run, or NotFound."""
    try:
        return await gc.client.get_workflow_handle(gc.workflow_id(thread_id)).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise NotFound(f"Thread {thread_id!r} not found.") from None
        raise


async def read(server: Any, thread_id: str, *, listed: bool = False) -> dict[str, Any]:
    """The thread as LangGraph's server shows it. Its values and questions come from a
    query, which needs a worker: a thread `listed` by a search whose worker is down is
    shown without them rather than failing the whole search."""
    desc = await describe(server.gc, thread_id)
    attrs = desc.typed_search_attributes
    graph_id = attrs.get(GRAPH_NAME)
    status = attrs.get(GRAPH_STATUS)
    if status == "running" and desc.status != WorkflowExecutionStatus.RUNNING:
        status = "done"
    try:
        snap = await server.gc.graph(graph_id or "").aget_state(_cfg(thread_id))
    except RPCError:
        if not listed:
            raise
        snap = None
    return shapes.thread(thread_id, graph_id=graph_id, status=status,
                         created_at=desc.start_time, updated_at=desc.close_time or
                         desc.execution_time, snap=snap)


async def _remote(server: Any, thread_id: str) -> Any:
    """The RemoteGraph of an existing thread (its graph decodes its state), or NotFound."""
    desc = await describe(server.gc, thread_id)
    return server.gc.graph(desc.typed_search_attributes.get(GRAPH_NAME) or "")


def _cfg(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread_id}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


@router.post("/threads")
async def create(body: ThreadCreate, request: Request) -> dict[str, Any]:
    server = request.app.state.server
    thread_id = body.thread_id or str(uuid.uuid4())
    try:
        found = await read(server, thread_id)
    except NotFound:
        graph_id = body.graph_id or (body.metadata or {}).get("graph_id")
        return shapes.thread(thread_id, graph_id=graph_id, status=None, created_at=None,
                             updated_at=None, snap=None)
    if body.if_exists == "do_nothing":
        return found
    raise Conflict(f"Thread {thread_id!r} already exists.")


@router.get("/threads/{thread_id}")
async def get(thread_id: str, request: Request) -> dict[str, Any]:
    return await read(request.app.state.server, thread_id)


@router.delete("/threads/{thread_id}", status_code=204)
async def delete(thread_id: str, request: Request) -> Response:
    server = request.app.state.server
    await describe(server.gc, thread_id)
    from temporalio.api.common.v1 import WorkflowExecution
    from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest

    await server.gc.client.workflow_service.delete_workflow_execution(
        DeleteWorkflowExecutionRequest(
            namespace=server.gc.client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=server.gc.workflow_id(thread_id))))
    return Response(status_code=204)


class ThreadCount(BaseModel):
    metadata: dict[str, Any] | None = None
    status: Literal["idle", "busy", "interrupted", "error"] | None = None


@router.post("/threads/count")
async def count(body: ThreadCount, request: Request) -> int:
    server = request.app.state.server
    rows = await server.gc.list_threads(
        status=shapes.GRAPH_STATUS.get(body.status) if body.status else None,
        graph=_graph_filter(server, body.metadata), limit=10_000)
    return len(rows)


def _graph_filter(server: Any, metadata: dict[str, Any] | None) -> str | None:
    """The graph a thread filter names; the only metadata threads keep is their graph."""
    metadata = metadata or {}
    unknown = set(metadata) - {"graph_id", "assistant_id"}
    if unknown:
        raise ValueError(f"threads can be filtered by metadata graph_id and assistant_id "
                         f"only, not {sorted(unknown)}.")
    graph_id: str | None = metadata.get("graph_id")
    if graph_id is None and metadata.get("assistant_id"):
        graph_id = server.graph_of(metadata["assistant_id"])
    return graph_id


@router.post("/threads/search")
async def search(body: ThreadSearch, request: Request) -> list[dict[str, Any]]:
    server = request.app.state.server
    graph_id = _graph_filter(server, body.metadata)
    rows = await server.gc.list_threads(
        status=shapes.GRAPH_STATUS.get(body.status) if body.status else None,
        graph=graph_id, limit=body.offset + body.limit if not body.ids else 1000)
    ids = [r.thread_id for r in rows if not body.ids or r.thread_id in body.ids]
    return [await read(server, t, listed=True) for t in ids[body.offset:body.offset + body.limit]]


@router.get("/threads/{thread_id}/state")
async def state(thread_id: str, request: Request, subgraphs: bool = False
                ) -> dict[str, Any]:
    return await _state(request, thread_id, None)


class StateAt(BaseModel):
    checkpoint: dict[str, Any] | None = None
    subgraphs: bool = False


@router.post("/threads/{thread_id}/state/checkpoint")
async def state_at_checkpoint(thread_id: str, body: StateAt, request: Request
                              ) -> dict[str, Any]:
    return await _state(request, thread_id, (body.checkpoint or {}).get("checkpoint_id"))


@router.get("/threads/{thread_id}/state/{checkpoint_id}")
async def state_at(thread_id: str, checkpoint_id: str, request: Request) -> dict[str, Any]:
    return await _state(request, thread_id, checkpoint_id)


async def _state(request: Request, thread_id: str, checkpoint_id: str | None
                 ) -> dict[str, Any]:
    remote = await _remote(request.app.state.server, thread_id)
    return shapes.state(await remote.aget_state(_cfg(thread_id, checkpoint_id)))


@router.post("/threads/{thread_id}/state")
async def update_state(thread_id: str, body: StateUpdate, request: Request
                       ) -> dict[str, Any]:
    remote = await _remote(request.app.state.server, thread_id)
    cid = body.checkpoint_id or (body.checkpoint or {}).get("checkpoint_id")
    config = await remote.aupdate_state(_cfg(thread_id, cid), body.values, body.as_node)
    return {"checkpoint": shapes.checkpoint(config)}


@router.get("/threads/{thread_id}/history")
async def history_get(thread_id: str, request: Request, limit: int = 10,
                      before: str | None = None) -> list[dict[str, Any]]:
    return await _history(request, thread_id, HistoryQuery(limit=limit, before=before))


@router.post("/threads/{thread_id}/history")
async def history(thread_id: str, body: HistoryQuery, request: Request
                  ) -> list[dict[str, Any]]:
    return await _history(request, thread_id, body)


async def _history(request: Request, thread_id: str, q: HistoryQuery) -> list[dict[str, Any]]:
    remote = await _remote(request.app.state.server, thread_id)
    before = q.before.get("checkpoint_id") if isinstance(q.before, dict) else q.before
    out = []
    async for snap in remote.aget_state_history(
            _cfg(thread_id), limit=None if q.metadata else q.limit,
            before=_cfg(thread_id, before) if before else None):
        if q.metadata and any((snap.metadata or {}).get(k) != v for k, v in q.metadata.items()):
            continue
        out.append(shapes.state(snap))
        if len(out) >= q.limit:
            break
    return out
