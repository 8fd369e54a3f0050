"""Threads: a thread is one open workflow of its id; its state is read with queries.

Temporal is the only store. `POST /threads` starts a ThreadRecord of the thread's id
(workflows/thread_record.py) that stays open: its memo keeps the thread's `metadata`,
so the thread exists (get, patch, search, copy) before its first run, which turns it
into the thread's GraphWorkflow (continue-as-new, same chain). The thread's search
attributes (graphrun.visibility) say its status, graph, times and metadata: search and
count run on them. A thread lives until deleted, pruned or its TTL ends
(graphrun.lifetime); threads an earlier version closed are read and continued, and
`graphrun migrate` reopens them.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response
from pydantic import Field
from temporalio.client import (
    WorkflowExecution,
    WorkflowExecutionDescription,
    WorkflowExecutionStatus,
    WorkflowQueryFailedError,
)
from temporalio.common import (
    TypedSearchAttributes,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from graphrun import visibility
from graphrun.client import GRAPH_NAME, GRAPH_STATUS, GraphClient
from graphrun.lifetime import ThreadTTL
from graphrun.server import auth, shapes
from graphrun.server.context import Conflict, NotFound, Unavailable
from graphrun.types import StateSnapshot
from graphrun.visibility import CREATED_AT, UPDATED_AT

router = APIRouter(tags=["threads"])

THREAD_RECORD = "ThreadRecord"  # workflows/thread_record.py
GRAPH_WORKFLOW = "GraphWorkflow"
QUERY_TIMEOUT = 10.0  # seconds a thread's state query may take before a 503
LISTED_QUERY_TIMEOUT = 3.0  # ... for a thread a search lists (shown without its values)

SortBy = Literal["thread_id", "status", "created_at", "updated_at", "state_updated_at"]
Status = Literal["idle", "busy", "interrupted", "error"]


class ThreadCreate(shapes.RequestBody):
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    graph_id: str | None = None
    supersteps: list[Any] | None = None
    ttl: ThreadTTL | None = None


class ThreadPatch(shapes.RequestBody):
    metadata: dict[str, Any] = Field(default_factory=dict)
    ttl: ThreadTTL | None = None


class ThreadPrune(shapes.RequestBody):
    thread_ids: list[str]
    strategy: Literal["delete", "keep_latest"] = "delete"


class ThreadCount(shapes.RequestBody):
    metadata: dict[str, Any] | None = None
    values: dict[str, Any] | None = None
    status: Status | None = None


class ThreadSearch(ThreadCount):
    ids: list[str] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0)
    # LangGraph's server lists the newest threads first.
    sort_by: SortBy = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: list[str] | None = None
    # alias: path in the thread ("values.messages[-1]"), shown in `extracted`
    extract: dict[str, str] | None = Field(None, max_length=shapes.EXTRACT_PATHS)


class StateUpdate(shapes.RequestBody):
    values: Any = None
    as_node: str | None = None
    checkpoint_id: str | None = None
    checkpoint: dict[str, Any] | None = None


class HistoryQuery(shapes.RequestBody):
    limit: int = 10
    before: dict[str, Any] | str | None = None
    metadata: dict[str, Any] | None = None
    checkpoint: dict[str, Any] | None = None
    select: list[str] | None = None


# -- a thread's latest run ------------------------------------------------------------
async def describe(gc: GraphClient, thread_id: str) -> WorkflowExecutionDescription:
    """The thread's latest workflow run, or NotFound."""
    try:
        return await gc.client.get_workflow_handle(gc.workflow_id(thread_id)).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise thread_not_found(thread_id) from None
        raise


def thread_not_found(thread_id: str) -> NotFound:
    """A missing thread's 404, in LangGraph's server's words."""
    return NotFound(f"Thread with ID {thread_id} not found")


def is_record(run: WorkflowExecution) -> bool:
    """A thread created by the API that has not run yet."""
    return run.workflow_type == THREAD_RECORD


async def metadata_of(run: WorkflowExecution) -> dict[str, Any]:
    """The thread's metadata, kept in its latest run's memo. A run started without one
    (by a graphrun from before runs kept it) shows its graph, as a run through
    LangGraph's server stamps it."""
    try:
        kept = (await run.memo()).get("metadata")
    except Exception:  # a memo this API cannot decode (encrypted with keys it lacks)
        kept = None
    if isinstance(kept, dict):
        return dict(kept)
    graph_id = run.typed_search_attributes.get(GRAPH_NAME)
    return {"graph_id": graph_id, "assistant_id": shapes.assistant_id(graph_id)} if graph_id else {}


def _graph_of(run: WorkflowExecution, metadata: Mapping[str, Any]) -> str | None:
    graph_id = run.typed_search_attributes.get(GRAPH_NAME) or metadata.get("graph_id")
    return graph_id if isinstance(graph_id, str) else None


def _graph_status(run: WorkflowExecution) -> str:
    """graphrun's GraphStatus of the thread (shapes.THREAD_STATUS maps it)."""
    if is_record(run):
        return "done"
    status = run.typed_search_attributes.get(GRAPH_STATUS) or "done"
    # The run closed before it said so (terminated, timed out): nothing runs.
    if status == "running" and run.status != WorkflowExecutionStatus.RUNNING:
        return "done"
    return status


def _created_at(run: WorkflowExecution) -> datetime:
    """When the thread was created: its index says (continue-as-new keeps it); a run
    started before threads kept it, its start."""
    created: datetime | None = run.typed_search_attributes.get(CREATED_AT)
    return created or run.start_time


def _updated_at(run: WorkflowExecution) -> datetime:
    updated: datetime | None = run.typed_search_attributes.get(UPDATED_AT)
    return updated or run.close_time or run.execution_time or run.start_time


async def _touch(server: Any, run: WorkflowExecution) -> None:
    """A read of a thread with a TTL starts its TTL again (LangGraph's refresh on read),
    unless the server was told not to (langgraph.json `checkpointer.ttl.refresh_on_read`)."""
    if not getattr(server, "refresh_on_read", True) or run.status != \
            WorkflowExecutionStatus.RUNNING:
        return
    try:
        ttl = (await run.memo()).get("ttl")
    except Exception:  # a memo this API cannot decode
        return
    if ttl:
        with contextlib.suppress(RPCError):  # deleted meanwhile
            await server.gc.client.get_workflow_handle(run.id).signal("touch")


async def read(server: Any, thread_id: str, *, listed: bool = False,
               metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """The thread as LangGraph's server shows it. Its values and questions come from a
    query, which needs a worker: a thread `listed` by a search whose worker is down is
    shown without them rather than failing the whole search. `metadata`: what a patch
    just set, which a running workflow takes in by signal a moment later."""
    desc = await describe(server.gc, thread_id)
    if metadata is None:
        metadata = await metadata_of(desc)
    if not listed:
        await _touch(server, desc)
    graph_id = _graph_of(desc, metadata)
    snap = None if is_record(desc) else await _snapshot(server, thread_id, graph_id, listed)
    shown = shapes.thread(thread_id, graph_id=graph_id, status=_graph_status(desc),
                          created_at=_created_at(desc), updated_at=_updated_at(desc), snap=snap)
    return {**shown, "metadata": metadata}


async def _snapshot(server: Any, thread_id: str, graph_id: str | None, listed: bool
                    ) -> StateSnapshot | None:
    """The thread's state, by query. A worker that went away is waited for by Temporal
    for about half a minute: a listed thread gives up sooner, so a search stays quick."""
    try:
        snap: StateSnapshot = await asyncio.wait_for(
            server.gc.graph(graph_id or "").aget_state(thread_config(thread_id)),
            LISTED_QUERY_TIMEOUT if listed else QUERY_TIMEOUT)
        return snap
    except (RPCError, TimeoutError, WorkflowQueryFailedError) as exc:
        if listed:  # one thread's state that cannot be read does not fail a search
            return None
        if isinstance(exc, TimeoutError):
            raise Unavailable(f"No worker answered thread {thread_id!r}'s query within "
                              f"{QUERY_TIMEOUT:.0f}s: is a worker serving graph "
                              f"{graph_id!r} running?") from None
        raise


def thread_config(thread_id: str, checkpoint: str | dict[str, Any] | None = None
                  ) -> dict[str, Any]:
    """A thread's config: at a checkpoint id, or at a checkpoint as the API names it (a
    subgraph's with its `checkpoint_ns` and `checkpoint_map`)."""
    conf: dict[str, Any] = {"thread_id": thread_id}
    given = checkpoint if isinstance(checkpoint, dict) else {"checkpoint_id": checkpoint}
    for key in ("checkpoint_id", "checkpoint_ns", "checkpoint_map"):
        if given.get(key):
            conf[key] = given[key]
    return {"configurable": conf}


def checkpoint_of(checkpoint_id: str | None, checkpoint: dict[str, Any] | None
                  ) -> dict[str, Any]:
    """A body's `checkpoint` (a dict), with its `checkpoint_id` field over it."""
    return {**(checkpoint or {}), **({"checkpoint_id": checkpoint_id} if checkpoint_id
                                     else {})}


# -- starting runs that carry a thread's metadata ------------------------------------
def _attributes(gc: GraphClient, graph_id: str | None, status: str,
                metadata: Mapping[str, Any] | None = None) -> TypedSearchAttributes | None:
    return gc.thread_attributes(graph_id, status, metadata)


async def _thread_of(gc: GraphClient, run: WorkflowExecution) -> dict[str, Any] | None:
    """The whole thread of a run (its `thread` query). A run that closed other than
    completed starts its thread afresh (as RemoteGraph does): no seed."""
    if run.status not in (WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.COMPLETED):
        return None
    handle = gc.client.get_workflow_handle(run.id, run_id=run.run_id)
    thread: dict[str, Any] | None = await handle.query("thread")
    return thread


def _needs_graph(run: WorkflowExecution, metadata: Mapping[str, Any]) -> str:
    graph_id = _graph_of(run, metadata)
    if graph_id is None:
        raise ValueError(f"thread {run.id!r} has no graph yet: run it first, or create "
                         f"it with metadata graph_id.")
    return graph_id


# -- routes -----------------------------------------------------------------------------
@router.post("/threads")
async def create(body: ThreadCreate, request: Request) -> dict[str, Any]:
    server = request.app.state.server
    if body.supersteps:
        raise ValueError("supersteps are not supported yet: create the thread, then "
                         "update its state.")
    thread_id = body.thread_id or str(uuid.uuid4())
    metadata = dict(body.metadata or {})
    if body.graph_id:
        metadata.setdefault("graph_id", body.graph_id)
    metadata, owned = await auth.thread_create(request, thread_id, metadata, body.if_exists)
    try:
        # Refused if any run of this id exists: the id is taken, whatever ran there.
        created = await server.gc.create_thread(thread_id, metadata=metadata, ttl=body.ttl)
    except WorkflowAlreadyStartedError:
        await auth.thread_matches(request, thread_id, owned, status=409)
        if body.if_exists == "do_nothing":
            return await read(server, thread_id)
        raise Conflict(f"Thread {thread_id!r} already exists.") from None
    if created is None:
        return await read(server, thread_id)
    # What was just written, as a read would show it, without a round trip to read it.
    graph_id = metadata.get("graph_id")
    shown = shapes.thread(thread_id, graph_id=graph_id if isinstance(graph_id, str) else None,
                          status="done", created_at=created, updated_at=created, snap=None)
    return {**shown, "metadata": metadata}


@router.get("/threads/{thread_id}")
async def get(thread_id: str, request: Request) -> dict[str, Any]:
    await auth.thread(request, thread_id, "read")
    return await read(request.app.state.server, thread_id)


@router.patch("/threads/{thread_id}")
async def patch(thread_id: str, body: ThreadPatch, request: Request) -> dict[str, Any]:
    """Merge `metadata` into the thread's (and set its `ttl`, if given)."""
    server = request.app.state.server
    await auth.thread_patch(request, thread_id, body)
    for _ in range(3):  # a run may start or end meanwhile: then look again
        desc = await describe(server.gc, thread_id)
        merged = {**await metadata_of(desc), **body.metadata}
        try:
            await _set_metadata(server.gc, thread_id, desc, body.metadata)
            if body.ttl is not None:
                await server.gc.client.get_workflow_handle(desc.id).signal(
                    "set_ttl", body.ttl.model_dump())
        except WorkflowAlreadyStartedError:
            continue
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
            continue
        return await read(server, thread_id, metadata=merged)
    raise Conflict(f"Thread {thread_id!r} kept changing; try again.")


async def _set_metadata(gc: GraphClient, thread_id: str, run: WorkflowExecutionDescription,
                        change: dict[str, Any]) -> None:
    """The open thread (or record) takes the change by update (a read after it sees
    it); a thread an earlier version closed is reopened first (`graphrun migrate`
    reopens them all)."""
    if run.status != WorkflowExecutionStatus.RUNNING:
        await gc.reopen(thread_id)
    await gc.client.get_workflow_handle(run.id).execute_update("update_metadata", change)


@router.post("/threads/{thread_id}/copy")
async def copy(thread_id: str, request: Request) -> dict[str, Any]:
    """A new thread with the same state history and metadata."""
    server = request.app.state.server
    gc = server.gc
    await auth.thread(request, thread_id, "read", status=409)  # LangGraph's answer: 409
    source = await describe(gc, thread_id)
    metadata = await metadata_of(source)
    new_id = str(uuid.uuid4())
    await auth.event(request, "threads", "create", {"thread_id": auth.as_id(new_id)})
    if is_record(source):
        await gc.create_thread(new_id, metadata=metadata)
        return await read(server, new_id)
    graph_id = _needs_graph(source, metadata)
    seed = await _thread_of(gc, source)  # its state history; its runs stay its own
    if seed is not None:
        seed = {**seed, "thread_id": new_id}  # its snapshots' configs name the thread
    await gc.client.start_workflow(
        GRAPH_WORKFLOW, gc.graph(graph_id).start_request(new_id, seed), id=gc.workflow_id(new_id),
        task_queue=gc.task_queue, memo={"metadata": metadata},
        search_attributes=_attributes(gc, graph_id, "done", metadata),
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
    return await read(server, new_id)


@router.delete("/threads/{thread_id}", status_code=204)
async def delete(thread_id: str, request: Request) -> Response:
    """Every run of the thread: its record and finished runs too, or a search would
    find the thread again in them. Temporal deletes in the background: a closed run
    goes once its close is visible (`history.transferProcessorEnsureCloseBeforeDelete`),
    about half a minute later on a stock dev server."""
    gc = request.app.state.server.gc
    await auth.thread(request, thread_id, "delete")
    await describe(gc, thread_id)  # 404 for a thread that is not there
    await gc.delete_thread(thread_id)
    return Response(status_code=204)


@router.post("/threads/prune")
async def prune(body: ThreadPrune, request: Request) -> dict[str, int]:
    """`delete`: the threads go, as DELETE each; `keep_latest`: each keeps only its
    latest checkpoint. Threads not found are skipped; the count is of those pruned."""
    gc = request.app.state.server.gc
    await auth.thread_prune(request, body.thread_ids)
    sem = asyncio.Semaphore(16)

    async def one(thread_id: str) -> bool:
        async with sem:
            if body.strategy == "delete":
                return bool(await gc.delete_thread(thread_id))
            try:
                run = await describe(gc, thread_id)
            except NotFound:
                return False
            if is_record(run) or run.status != WorkflowExecutionStatus.RUNNING:
                return True  # nothing but its latest state to keep
            await gc.client.get_workflow_handle(run.id).execute_update(
                "prune", "keep_latest")
            return True

    done = await asyncio.gather(*(one(t) for t in dict.fromkeys(body.thread_ids)))
    return {"pruned_count": sum(done)}


# -- search and count ---------------------------------------------------------------------
# Temporal's visibility answers both, exact at any count: filters are search attributes
# (graphrun.visibility), a page comes from its counts, and only the page's threads are
# read (values by query, only when asked for).
READS_AT_ONCE = 16  # threads of a page read at a time


def _query(server: Any, body: ThreadCount, ids: Sequence[str] | None = None,
           authorized: Mapping[str, Any] | None = None) -> str:
    if body.values:
        raise ValueError("threads cannot be filtered by values: filter by metadata, status "
                         "or ids.")
    gc = server.gc
    base = visibility.THREADS
    if gc.id_prefix:
        base += f" AND {visibility.prefixed(gc.id_prefix)}"
    return visibility.where(
        status=shapes.GRAPH_STATUS.get(body.status) if body.status else None,
        metadata=body.metadata or {}, base=base,
        ids=[gc.workflow_id(i) for i in dict.fromkeys(ids)] if ids else None,
        auth=authorized)  # an authorization handler's filter (graphrun.server.auth)


@router.post("/threads/search")
async def search(body: ThreadSearch, request: Request) -> list[dict[str, Any]]:
    server = request.app.state.server
    authorized = await auth.thread_search(request, body)
    rows = await visibility.page(server.gc.client, _query(server, body, body.ids, authorized),
                                 body.sort_by, body.sort_order, body.offset, body.limit)
    # A thread continuing as new (a record adopted by its first run) is two open runs in
    # visibility for a moment: it is shown once.
    rows = list({r.id: r for r in rows[::-1]}.values())[::-1]
    paths = {alias: shapes.extract_path(p) for alias, p in (body.extract or {}).items()}
    wants_state = not body.select or bool({"values", "interrupts", "error"} & {
        *body.select, *(str(p[0]) for p in paths.values())})
    gate = asyncio.Semaphore(READS_AT_ONCE)

    async def shown(run: WorkflowExecution) -> dict[str, Any] | None:
        async with gate:
            return await _shown(server, run, wants_state)

    found = await asyncio.gather(*(shown(r) for r in rows))
    # Visibility lags a status change by a moment: each thread shows what it is now, and
    # one that no longer matches the filter is left out.
    return [{**_select(t, body.select), **({"extracted": shapes.extract(t, paths)}
                                           if paths else {})}
            for t in found if t is not None
            and (body.status is None or t["status"] == body.status)]


async def _shown(server: Any, run: WorkflowExecution, wants_state: bool
                 ) -> dict[str, Any] | None:
    tid = run.id[len(server.gc.id_prefix):]
    if wants_state:
        with contextlib.suppress(NotFound):  # deleted since it was listed
            return await read(server, tid, listed=True)
        return None
    metadata = await metadata_of(run)
    shown = shapes.thread(tid, graph_id=_graph_of(run, metadata), status=_graph_status(run),
                          created_at=_created_at(run), updated_at=_updated_at(run), snap=None)
    return {**shown, "metadata": metadata}


def _select(thread: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    return {k: v for k, v in thread.items() if k in fields} if fields else thread


@router.post("/threads/count")
async def count(body: ThreadCount, request: Request) -> int:
    server = request.app.state.server
    authorized = await auth.thread_search(request, body, count=True)
    return await visibility.count(server.gc.client, _query(server, body, None, authorized))


# GET's `select` query parameter: the state's fields to show (shapes.select_state)
Selected = Annotated[list[str] | None, Query()]


# -- state ---------------------------------------------------------------------------------
def _empty(thread_id: str) -> StateSnapshot:
    """The state of a thread that has not run yet."""
    return StateSnapshot(values={}, next=(), config=thread_config(thread_id), metadata=None,
                         created_at=None, parent_config=None, tasks=())


@router.get("/threads/{thread_id}/state")
async def state(thread_id: str, request: Request, subgraphs: bool = False,
                select: Selected = None) -> dict[str, Any]:
    return shapes.select_state(await _state(request, thread_id, None, subgraphs), select)


class StateAt(shapes.RequestBody):
    checkpoint: dict[str, Any] | None = None
    subgraphs: bool = False
    select: list[str] | None = None


@router.post("/threads/{thread_id}/state/checkpoint")
async def state_at_checkpoint(thread_id: str, body: StateAt, request: Request
                              ) -> dict[str, Any]:
    return shapes.select_state(
        await _state(request, thread_id, body.checkpoint, body.subgraphs), body.select)


@router.get("/threads/{thread_id}/state/{checkpoint_id}")
async def state_at(thread_id: str, checkpoint_id: str, request: Request,
                   subgraphs: bool = False, select: Selected = None
                   ) -> dict[str, Any]:
    return shapes.select_state(await _state(request, thread_id, checkpoint_id, subgraphs),
                               select)


async def _state(request: Request, thread_id: str, checkpoint: str | dict[str, Any] | None,
                 subgraphs: bool = False) -> dict[str, Any]:
    server = request.app.state.server
    await auth.thread(request, thread_id, "read")
    run = await describe(server.gc, thread_id)
    if is_record(run):
        return shapes.state(_empty(thread_id))
    remote = server.gc.graph(_graph_of(run, {}) or "")
    return shapes.state(await remote.aget_state(thread_config(thread_id, checkpoint),
                                                subgraphs=subgraphs))


@router.post("/threads/{thread_id}/state")
async def update_state(thread_id: str, body: StateUpdate, request: Request
                       ) -> dict[str, Any]:
    server = request.app.state.server
    await auth.thread(request, thread_id, "update")
    await auth.thread(request, thread_id, "read")
    run = await describe(server.gc, thread_id)
    # A thread not run yet takes its first state from its graph, which it must name.
    graph_id = _needs_graph(run, await metadata_of(run)) if is_record(run) else (
        _graph_of(run, {}) or "")
    remote = server.gc.graph(graph_id)
    config = await remote.aupdate_state(
        thread_config(thread_id, checkpoint_of(body.checkpoint_id, body.checkpoint)), body.values,
        body.as_node)
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
    server = request.app.state.server
    await auth.thread(request, thread_id, "read")
    run = await describe(server.gc, thread_id)
    if is_record(run):
        return []
    remote = server.gc.graph(_graph_of(run, {}) or "")
    before = q.before.get("checkpoint_id") if isinstance(q.before, dict) else q.before
    out = []
    async for snap in remote.aget_state_history(
            thread_config(thread_id, q.checkpoint), limit=None if q.metadata else q.limit,
            before=thread_config(thread_id, before) if before else None):
        if q.metadata and any((snap.metadata or {}).get(k) != v for k, v in q.metadata.items()):
            continue
        out.append(shapes.select_state(shapes.state(snap), q.select))
        if len(out) >= q.limit:
            break
    return out
