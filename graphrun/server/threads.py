"""Threads: a thread is the workflows of its id; its state is read with queries.

Temporal is the only store. `POST /threads` starts a ThreadRecord of the thread's id
(workflows/thread_record.py): it completes at once, and its memo keeps the thread's
`metadata`, so the thread exists (get, patch, search, copy) before its first run. A
run then starts a GraphWorkflow of that id, which carries the metadata in its own
memo. What a thread is now is its latest run: its memo `metadata`, its GraphStatus
and GraphName, its start time as `created_at` (the first run's would take a scan of
every run of every thread listed).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field
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

from graphrun import errors
from graphrun.client import GRAPH_NAME, GRAPH_STATUS, GraphClient, ThreadInfo, _quote
from graphrun.lifetime import ThreadTTL
from graphrun.server import shapes
from graphrun.server.context import Conflict, NotFound, Unavailable
from graphrun.types import StateSnapshot
from graphrun.visibility import CREATED_AT, UPDATED_AT

router = APIRouter(tags=["threads"])

THREAD_RECORD = "ThreadRecord"  # workflows/thread_record.py
GRAPH_WORKFLOW = "GraphWorkflow"
THREAD_TYPES = f"WorkflowType IN ('{GRAPH_WORKFLOW}', '{THREAD_RECORD}')"
SEARCH_SCAN = 1_000  # threads a search ranks at most: visibility cannot sort by them
COUNT_SCAN = 10_000  # threads a count looks at, at most
BATCH = 100  # runs per visibility query
QUERY_TIMEOUT = 10.0  # seconds a thread's state query may take before a 503
LISTED_QUERY_TIMEOUT = 3.0  # ... for a thread a search lists (shown without its values)

SortBy = Literal["thread_id", "status", "created_at", "updated_at", "state_updated_at"]
Status = Literal["idle", "busy", "interrupted", "error"]


class ThreadCreate(BaseModel):
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"
    graph_id: str | None = None
    supersteps: list[Any] | None = None
    ttl: ThreadTTL | None = None


class ThreadPatch(BaseModel):
    metadata: dict[str, Any] = {}
    ttl: ThreadTTL | None = None


class ThreadPrune(BaseModel):
    thread_ids: list[str]
    strategy: Literal["delete", "keep_latest"] = "delete"


class ThreadCount(BaseModel):
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


# -- a thread's latest run ------------------------------------------------------------
async def describe(gc: GraphClient, thread_id: str) -> WorkflowExecutionDescription:
    """The thread's latest workflow run, or NotFound."""
    try:
        return await gc.client.get_workflow_handle(gc.workflow_id(thread_id)).describe()
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise NotFound(f"Thread {thread_id!r} not found.") from None
        raise


def _is_record(run: WorkflowExecution) -> bool:
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
    if _is_record(run):
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
    snap = None if _is_record(desc) else await _snapshot(server, thread_id, graph_id, listed)
    shown = shapes.thread(thread_id, graph_id=graph_id, status=_graph_status(desc),
                          created_at=_created_at(desc), updated_at=_updated_at(desc), snap=snap)
    return {**shown, "metadata": metadata}


async def _snapshot(server: Any, thread_id: str, graph_id: str | None, listed: bool
                    ) -> StateSnapshot | None:
    """The thread's state, by query. A worker that went away is waited for by Temporal
    for about half a minute: a listed thread gives up sooner, so a search stays quick."""
    try:
        snap: StateSnapshot = await asyncio.wait_for(
            server.gc.graph(graph_id or "").aget_state(_cfg(thread_id)),
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


def _cfg(thread_id: str, checkpoint: str | dict[str, Any] | None = None) -> dict[str, Any]:
    """A thread's config: at a checkpoint id, or at a checkpoint as the API names it (a
    subgraph's with its `checkpoint_ns` and `checkpoint_map`)."""
    conf: dict[str, Any] = {"thread_id": thread_id}
    given = checkpoint if isinstance(checkpoint, dict) else {"checkpoint_id": checkpoint}
    for key in ("checkpoint_id", "checkpoint_ns", "checkpoint_map"):
        if given.get(key):
            conf[key] = given[key]
    return {"configurable": conf}


def _checkpoint(checkpoint_id: str | None, checkpoint: dict[str, Any] | None
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
    try:
        # Refused if any run of this id exists: the id is taken, whatever ran there.
        await server.gc.create_thread(thread_id, metadata=metadata, ttl=body.ttl)
    except WorkflowAlreadyStartedError:
        if body.if_exists == "do_nothing":
            return await read(server, thread_id)
        raise Conflict(f"Thread {thread_id!r} already exists.") from None
    return await read(server, thread_id)


@router.get("/threads/{thread_id}")
async def get(thread_id: str, request: Request) -> dict[str, Any]:
    return await read(request.app.state.server, thread_id)


@router.patch("/threads/{thread_id}")
async def patch(thread_id: str, body: ThreadPatch, request: Request) -> dict[str, Any]:
    """Merge `metadata` into the thread's: the running workflow by signal, a closed one
    by a new run of it (seeded with its thread) whose memo holds the merged metadata."""
    server = request.app.state.server
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
    """The open thread (or record) takes the change by signal; a thread an earlier
    version closed is reopened first (`graphrun migrate` reopens them all)."""
    if run.status != WorkflowExecutionStatus.RUNNING:
        await gc.reopen(thread_id)
    await gc.client.get_workflow_handle(run.id).signal("set_metadata", change)


@router.post("/threads/{thread_id}/copy")
async def copy(thread_id: str, request: Request) -> dict[str, Any]:
    """A new thread with the same state history and metadata."""
    server = request.app.state.server
    gc = server.gc
    source = await describe(gc, thread_id)
    metadata = await metadata_of(source)
    new_id = str(uuid.uuid4())
    if _is_record(source):
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
    await describe(gc, thread_id)  # 404 for a thread that is not there
    await gc.delete_thread(thread_id)
    return Response(status_code=204)


@router.post("/threads/prune")
async def prune(body: ThreadPrune, request: Request) -> dict[str, int]:
    """`delete`: the threads go, as DELETE each; `keep_latest`: each keeps only its
    latest checkpoint. Threads not found are skipped; the count is of those pruned."""
    gc = request.app.state.server.gc
    sem = asyncio.Semaphore(16)

    async def one(thread_id: str) -> bool:
        async with sem:
            if body.strategy == "delete":
                return bool(await gc.delete_thread(thread_id))
            try:
                run = await describe(gc, thread_id)
            except NotFound:
                return False
            if _is_record(run) or run.status != WorkflowExecutionStatus.RUNNING:
                return True  # nothing but its latest state to keep
            await gc.client.get_workflow_handle(run.id).execute_update(
                "prune", "keep_latest")
            return True

    done = await asyncio.gather(*(one(t) for t in dict.fromkeys(body.thread_ids)))
    return {"pruned_count": sum(done)}


# -- search and count ---------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Listed:
    """What a search filters and sorts a thread by: its latest run, as listed."""

    thread_id: str
    status: str  # LangGraph's
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]


async def _listed(gc: GraphClient, run: WorkflowExecution) -> _Listed:
    wid = run.id
    return _Listed(thread_id=wid[len(gc.id_prefix):] if wid.startswith(gc.id_prefix) else wid,
                   status=shapes.THREAD_STATUS.get(_graph_status(run), "idle"),
                   created_at=run.start_time, updated_at=_updated_at(run),
                   metadata=await metadata_of(run))


async def _latest_runs(gc: GraphClient, rows: Sequence[ThreadInfo]
                       ) -> list[WorkflowExecution]:
    """The listed runs themselves (their memo and times), a batch of run ids a query."""
    run_ids = [r.run_id for r in rows if r.run_id]
    runs: list[WorkflowExecution] = []
    for i in range(0, len(run_ids), BATCH):
        batch = ", ".join(_quote(r) for r in run_ids[i:i + BATCH])
        runs += [run async for run in gc.client.list_workflows(f"RunId IN ({batch})")]
    return runs


async def _described(gc: GraphClient, thread_ids: Sequence[str]) -> list[WorkflowExecution]:
    """The latest runs of the threads named (unknown ones left out)."""
    async def one(thread_id: str) -> WorkflowExecution | None:
        with contextlib.suppress(NotFound):
            return await describe(gc, thread_id)
        return None

    found = await asyncio.gather(*(one(t) for t in dict.fromkeys(thread_ids)))
    return [run for run in found if run is not None and run.workflow_type in
            (GRAPH_WORKFLOW, THREAD_RECORD)]


async def _matching(server: Any, body: ThreadCount, ids: Sequence[str] | None, scan: int
                    ) -> list[_Listed]:
    """The threads a search or count names. Visibility narrows them by graph and status
    (the latest run's, as `list_threads` keeps them); the metadata filter applies to
    each one's memo here."""
    if body.values:
        raise ValueError("threads cannot be filtered by values yet.")
    gc = server.gc
    if ids:
        runs = await _described(gc, ids)
    else:
        rows = await gc.list_threads(
            status=shapes.GRAPH_STATUS.get(body.status) if body.status else None,
            graph=_graph_filter(server, body.metadata), limit=scan)
        runs = await _latest_runs(gc, rows)
    threads = [await _listed(gc, run) for run in runs]
    return [t for t in threads if (body.status is None or t.status == body.status)
            and contains(t.metadata, body.metadata or {})]


def _graph_filter(server: Any, metadata: dict[str, Any] | None) -> str | None:
    """The graph a metadata filter names, for visibility to narrow by (GraphName)."""
    metadata = metadata or {}
    graph_id = metadata.get("graph_id")
    if graph_id is None and isinstance(metadata.get("assistant_id"), str):
        with contextlib.suppress(errors.GraphNotFoundError):  # no match then, not an error
            graph_id = server.graph_of(metadata["assistant_id"])
    return graph_id if isinstance(graph_id, str) else None


def contains(have: Any, want: Any) -> bool:
    """JSON containment (Postgres `@>`), as LangGraph's server matches metadata."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(
            k in have and contains(have[k], v) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and all(any(contains(h, w) for h in have)
                                              for w in want)
    if isinstance(want, bool) or isinstance(have, bool):
        return have is want
    return bool(have == want)


_SORT_KEYS: dict[str, Callable[[_Listed], Any]] = {
    "thread_id": lambda t: t.thread_id, "status": lambda t: t.status,
    "created_at": lambda t: t.created_at, "updated_at": lambda t: t.updated_at,
    "state_updated_at": lambda t: t.updated_at}


@router.post("/threads/search")
async def search(body: ThreadSearch, request: Request) -> list[dict[str, Any]]:
    server = request.app.state.server
    found = await _matching(server, body, body.ids, max(SEARCH_SCAN, body.offset + body.limit))
    found.sort(key=_SORT_KEYS[body.sort_by], reverse=body.sort_order == "desc")
    page = found[body.offset:body.offset + body.limit]
    shown = await asyncio.gather(*(_shown(server, t.thread_id) for t in page))
    return [_select(t, body.select) for t in shown if t is not None]


async def _shown(server: Any, thread_id: str) -> dict[str, Any] | None:
    with contextlib.suppress(NotFound):  # deleted since it was listed
        return await read(server, thread_id, listed=True)
    return None


def _select(thread: dict[str, Any], fields: list[str] | None) -> dict[str, Any]:
    return {k: v for k, v in thread.items() if k in fields} if fields else thread


@router.post("/threads/count")
async def count(body: ThreadCount, request: Request) -> int:
    server = request.app.state.server
    metadata = body.metadata or {}
    if (set(metadata) <= {"graph_id"} and isinstance(metadata.get("graph_id", ""), str)
            and body.status is None and not body.values):
        # Visibility alone answers it: no memo to read, no status to correct.
        rows = await server.gc.list_threads(graph=_graph_filter(server, metadata),
                                            limit=COUNT_SCAN)
        return len(rows)
    return len(await _matching(server, body, None, COUNT_SCAN))


# -- state ---------------------------------------------------------------------------------
def _empty(thread_id: str) -> StateSnapshot:
    """The state of a thread that has not run yet."""
    return StateSnapshot(values={}, next=(), config=_cfg(thread_id), metadata=None,
                         created_at=None, parent_config=None, tasks=())


@router.get("/threads/{thread_id}/state")
async def state(thread_id: str, request: Request, subgraphs: bool = False
                ) -> dict[str, Any]:
    return await _state(request, thread_id, None, subgraphs)


class StateAt(BaseModel):
    checkpoint: dict[str, Any] | None = None
    subgraphs: bool = False


@router.post("/threads/{thread_id}/state/checkpoint")
async def state_at_checkpoint(thread_id: str, body: StateAt, request: Request
                              ) -> dict[str, Any]:
    return await _state(request, thread_id, body.checkpoint, body.subgraphs)


@router.get("/threads/{thread_id}/state/{checkpoint_id}")
async def state_at(thread_id: str, checkpoint_id: str, request: Request,
                   subgraphs: bool = False) -> dict[str, Any]:
    return await _state(request, thread_id, checkpoint_id, subgraphs)


async def _state(request: Request, thread_id: str, checkpoint: str | dict[str, Any] | None,
                 subgraphs: bool = False) -> dict[str, Any]:
    server = request.app.state.server
    run = await describe(server.gc, thread_id)
    if _is_record(run):
        return shapes.state(_empty(thread_id))
    remote = server.gc.graph(_graph_of(run, {}) or "")
    return shapes.state(await remote.aget_state(_cfg(thread_id, checkpoint),
                                                subgraphs=subgraphs))


@router.post("/threads/{thread_id}/state")
async def update_state(thread_id: str, body: StateUpdate, request: Request
                       ) -> dict[str, Any]:
    server = request.app.state.server
    run = await describe(server.gc, thread_id)
    # A thread not run yet takes its first state from its graph, which it must name.
    graph_id = _needs_graph(run, await metadata_of(run)) if _is_record(run) else (
        _graph_of(run, {}) or "")
    remote = server.gc.graph(graph_id)
    config = await remote.aupdate_state(
        _cfg(thread_id, _checkpoint(body.checkpoint_id, body.checkpoint)), body.values,
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
    run = await describe(server.gc, thread_id)
    if _is_record(run):
        return []
    remote = server.gc.graph(_graph_of(run, {}) or "")
    before = q.before.get("checkpoint_id") if isinstance(q.before, dict) else q.before
    out = []
    async for snap in remote.aget_state_history(
            _cfg(thread_id, q.checkpoint), limit=None if q.metadata else q.limit,
            before=_cfg(thread_id, before) if before else None):
        if q.metadata and any((snap.metadata or {}).get(k) != v for k, v in q.metadata.items()):
            continue
        out.append(shapes.state(snap))
        if len(out) >= q.limit:
            break
    return out
