"""Assistants: each graph's default assistant (LangGraph's uuid5 of the graph id) and the
assistants users create, each an `AssistantRecord` workflow (workflows/records.py).

A user assistant's workflow holds its versions; its memo is the current version, so
reading and listing assistants needs no worker (describe and visibility); a change is
an update, a delete ends the workflow. Ids are UUIDs as on LangGraph's server: a name
that is not one is a graph id. Visibility is eventually consistent, so an assistant
just created or changed may take a moment to show in a search (never in a get).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from temporalio.client import WorkflowUpdateFailedError
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from graphrun import visibility
from graphrun.errors import GraphNotFoundError
from graphrun.server import auth, shapes
from graphrun.server.context import Conflict, NotFound, Server
from graphrun.workflows.records import (
    ASSISTANT_MEMO,
    ASSISTANT_WORKFLOW,
    GRAPH_NAME,
    AssistantChange,
    AssistantStart,
    assistant_workflow_id,
    current_assistant,
    presets,
)

router = APIRouter(tags=["assistants"])

# A default assistant is the graph's own and is stored nowhere: every API process makes
# it alike, so its created_at is one fixed time, not the process's start (which differs
# per replica and per restart). The Unix epoch: older than any assistant a user creates,
# as on LangGraph's server, where the system assistants are made first.
DEFAULT_CREATED_AT = datetime(1970, 1, 1, tzinfo=UTC).isoformat()

AssistantField = Literal["assistant_id", "graph_id", "name", "description", "config",
                         "context", "created_at", "updated_at", "metadata", "version"]


class AssistantNotFound(NotFound):
    """No assistant of that id (a UUID): 404."""


class AssistantCreate(shapes.RequestBody):
    graph_id: str
    assistant_id: str | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    name: str | None = None
    description: str | None = None
    if_exists: Literal["raise", "do_nothing"] = "raise"


class AssistantPatch(shapes.RequestBody):
    graph_id: str | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    name: str | None = None
    description: str | None = None


class AssistantCount(shapes.RequestBody):
    graph_id: str | None = None
    metadata: dict[str, Any] | None = None
    name: str | None = None


class AssistantSearch(AssistantCount):
    limit: int = 10
    offset: int = 0
    sort_by: Literal["assistant_id", "graph_id", "name", "created_at", "updated_at"] = (
        "created_at")
    sort_order: Literal["asc", "desc"] = "desc"
    select: list[AssistantField] | None = None


class VersionsQuery(shapes.RequestBody):
    metadata: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0


class LatestVersion(shapes.RequestBody):
    version: int


# -- reading: what the runs (and crons) call ---------------------------------------------

async def resolve(server: Server, assistant_id: str) -> dict[str, Any]:
    """The assistant `assistant_id` names, as LangGraph's server shows it (graph_id,
    config, context, metadata, version, ...): a graph id, a graph's default assistant
    or a user assistant, whose graph is served here.

    Raises GraphNotFoundError (422) for a name that is neither a UUID nor a graph id,
    or an assistant whose graph is not served; AssistantNotFound (404) for an unknown
    UUID. A run lays its own config and context over the assistant's with `run_presets`.
    """
    found = await lookup(server, assistant_id)
    if found["graph_id"] not in server.graphs:
        raise GraphNotFoundError(f"Assistant {assistant_id!r} runs graph "
                                 f"{found['graph_id']!r}, which is not served here. Graphs "
                                 f"served: {sorted(server.graphs)}.")
    return found


def run_presets(assistant: dict[str, Any], config: dict[str, Any] | None,
                context: dict[str, Any] | None
                ) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A run's (config, context): its own over its assistant's (LangGraph's merge)."""
    merged: tuple[dict[str, Any], dict[str, Any] | None] = presets(assistant, config, context)
    return merged


async def lookup(server: Server, assistant_id: str) -> dict[str, Any]:
    """Like `resolve`, without checking its graph is still served."""
    default = default_of(server, assistant_id)
    if default is not None:
        return default
    if not _is_uuid(assistant_id):
        raise GraphNotFoundError(f"Assistant {assistant_id!r} not found: an assistant is "
                                 f"named by its UUID or its graph's id; graphs served: "
                                 f"{sorted(server.graphs)}.")
    found = await _record(server, assistant_id)
    if found is None:
        raise AssistantNotFound(f"Assistant {assistant_id!r} not found.")
    return found


def default_of(server: Server, assistant_id: str) -> dict[str, Any] | None:
    """The graph's default assistant `assistant_id` names (its id or its graph id), or None."""
    try:
        graph_id = server.graph_of(assistant_id)
    except GraphNotFoundError:
        return None
    return shapes.assistant(graph_id, DEFAULT_CREATED_AT)


def _unknown_graph(server: Server, graph_id: str) -> GraphNotFoundError:
    return GraphNotFoundError(f"Graph {graph_id!r} not found. Graphs served: "
                              f"{sorted(server.graphs)}.")


def is_default(server: Server, assistant_id: str) -> bool:
    return default_of(server, assistant_id) is not None


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _workflow_id(server: Server, assistant_id: str) -> str:
    workflow_id: str = assistant_workflow_id(server.gc.id_prefix, assistant_id)
    return workflow_id


async def _record(server: Server, assistant_id: str) -> dict[str, Any] | None:
    """A user assistant's current version, from its workflow's memo; None if none runs."""
    found: dict[str, Any] | None = await current_assistant(
        server.gc.client, _workflow_id(server, assistant_id))
    return found


async def _user_assistants(server: Server, graph_id: str | None,
                           metadata: dict[str, Any] | None = None,
                           authorized: Any = None) -> list[dict[str, Any]]:
    """The user assistants of this deployment (its task queue) that visibility finds by
    graph and metadata (each one's memo still decides: records from before the metadata
    index have none)."""
    gc = server.gc
    clauses = [f"WorkflowType = '{ASSISTANT_WORKFLOW}'", "ExecutionStatus = 'Running'",
               f"TaskQueue = {_literal(gc.task_queue)}"]
    if graph_id and gc.search_attributes:
        clauses.append(f"GraphName = {_literal(graph_id)}")
    if metadata and gc.search_attributes:
        # Records from before the metadata index have none: listed, and their memo decides.
        wanted = " AND ".join(f"GraphMetadata = {_literal(e)}"
                              for e in visibility.filter_entries(metadata))
        clauses.append(f"(({wanted}) OR GraphMetadata IS NULL)")
    if authorized and gc.search_attributes:  # an authorization handler's filter
        clauses.append(visibility.auth_clause(authorized))
    prefix = _workflow_id(server, "")
    found = []
    async for wf in gc.client.list_workflows(" AND ".join(clauses)):
        memo = await wf.memo_value(ASSISTANT_MEMO, None)
        if wf.id.startswith(prefix) and isinstance(memo, dict) and auth.matches(
                memo.get("metadata"), authorized):
            found.append(memo)
    return found


def _literal(value: str) -> str:
    """A string literal of Temporal's list filter."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


# -- search and count ---------------------------------------------------------------------

def contains(have: Any, want: Any) -> bool:
    """JSON containment (Postgres' @>, what LangGraph's server filters metadata by)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and contains(have[k], v)
                                              for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and all(any(contains(h, w) for h in have)
                                              for w in want)
    return bool(have == want)


def _matches(a: dict[str, Any], q: AssistantCount) -> bool:
    return (q.graph_id in (None, a["graph_id"])
            and contains(a.get("metadata") or {}, q.metadata or {})
            and (not q.name or q.name.lower() in (a.get("name") or "").lower()))


async def _found(server: Server, q: AssistantCount, authorized: Any = None
                 ) -> list[dict[str, Any]]:
    defaults = [shapes.assistant(g, DEFAULT_CREATED_AT) for g in sorted(server.graphs)]
    defaults = [a for a in defaults if auth.matches(a["metadata"], authorized)]
    users = await _user_assistants(server, q.graph_id, q.metadata, authorized)
    return [a for a in [*defaults, *users] if _matches(a, q)]


@router.post("/assistants/search")
async def search(body: AssistantSearch, request: Request) -> Response:
    authorized = await auth.assistant_search(request, body)
    found = await _found(request.app.state.server, body, authorized)
    found.sort(key=lambda a: str(a.get(body.sort_by) or ""),
               reverse=body.sort_order == "desc")
    page = found[body.offset:body.offset + body.limit]
    if body.select:
        page = [{k: a.get(k) for k in body.select} for a in page]
    more = body.offset + body.limit < len(found)
    return JSONResponse(page, headers={"X-Pagination-Next": str(body.offset + body.limit)}
                        if more else None)


@router.post("/assistants/count")
async def count(body: AssistantCount, request: Request) -> int:
    authorized = await auth.assistant_search(request, body, count=True)
    return len(await _found(request.app.state.server, body, authorized))


# -- one assistant ---------------------------------------------------------------------

@router.post("/assistants")
async def create(body: AssistantCreate, request: Request) -> dict[str, Any]:
    server: Server = request.app.state.server
    if body.graph_id not in server.graphs:
        raise _unknown_graph(server, body.graph_id)
    assistant_id = body.assistant_id or str(uuid.uuid4())
    if not _is_uuid(assistant_id):
        raise ValueError(f"assistant_id must be a UUID, got {assistant_id!r}.")
    owned = await auth.assistant_write(request, assistant_id, "create", body)
    existing = default_of(server, assistant_id)
    if existing is not None:
        return _existing(body, existing, owned)
    assistant = _first_version(assistant_id, body)
    try:
        await _start_record(server, assistant)
    except WorkflowAlreadyStartedError:
        existing = await _record(server, assistant_id)
        if existing is None:  # deleted meanwhile
            raise Conflict(f"Assistant {assistant_id!r} is being deleted; retry.") from None
        return _existing(body, existing, owned)
    await _settled(server, assistant_id, assistant)
    return assistant


SETTLE_SECONDS = 3.0


async def _settled(server: Server, assistant_id: str, now: dict[str, Any] | None) -> None:
    """Wait (a moment, boundedly) until visibility shows the assistant as it is `now`
    (None: gone), so a search right after a write finds what was written, as on
    LangGraph's server. Assistants change rarely; threads do not wait so."""
    gc = server.gc
    if not gc.search_attributes:
        return
    clauses = [f"WorkflowId = {_literal(_workflow_id(server, assistant_id))}",
               "ExecutionStatus = 'Running'"]
    if now is not None:
        clauses.append(f"GraphName = {_literal(now['graph_id'])}")
        clauses += [f"GraphMetadata = {_literal(e)}"
                    for e in visibility.metadata_entries(now.get("metadata") or {})]
    query, want = " AND ".join(clauses), 0 if now is None else 1
    deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS
    while await visibility.count(gc.client, query) != want:
        if asyncio.get_running_loop().time() > deadline:
            return  # visibility is slow today: the write stands, searches catch up
        await asyncio.sleep(0.02)


def _existing(body: AssistantCreate, existing: dict[str, Any], owned: Any = None
              ) -> dict[str, Any]:
    if body.if_exists == "do_nothing" and auth.matches(existing.get("metadata"), owned):
        return existing
    raise Conflict(f"Assistant {existing['assistant_id']!r} already exists.")


def _first_version(assistant_id: str, body: AssistantCreate) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat()
    return {"assistant_id": assistant_id, "graph_id": body.graph_id,
            "name": body.name or "Untitled", "description": body.description,
            "config": body.config or {}, "context": body.context or {},
            "metadata": body.metadata or {}, "version": 1, "created_at": now,
            "updated_at": now}


async def _start_record(server: Server, assistant: dict[str, Any]) -> None:
    """Start its workflow with the memo and graph already set, so it is readable and
    listed before any worker picks it up."""
    gc = server.gc
    version = {k: v for k, v in assistant.items() if k != "updated_at"}
    await gc.client.start_workflow(
        ASSISTANT_WORKFLOW,
        AssistantStart(versions=[version], created_at=assistant["created_at"],
                       search_attributes=gc.search_attributes),
        id=_workflow_id(server, assistant["assistant_id"]), task_queue=gc.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.FAIL,
        id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,  # a deleted id may return
        memo={ASSISTANT_MEMO: assistant},
        search_attributes=_attributes(gc, assistant))


def _attributes(gc: Any, assistant: dict[str, Any]) -> TypedSearchAttributes | None:
    """An assistant's graph, times and metadata entries (graphrun.visibility)."""
    if not gc.search_attributes:
        return None
    created = visibility.stamp(datetime.fromisoformat(assistant["created_at"]))
    return TypedSearchAttributes([
        SearchAttributePair(GRAPH_NAME, assistant["graph_id"]),
        SearchAttributePair(visibility.CREATED_AT, created),
        SearchAttributePair(visibility.UPDATED_AT, created),
        SearchAttributePair(visibility.METADATA, visibility.metadata_entries(
            assistant.get("metadata") or {}))])


@router.get("/assistants/{assistant_id}")
async def get(assistant_id: str, request: Request) -> dict[str, Any]:
    await auth.assistant(request, assistant_id, "read")
    return await lookup(request.app.state.server, assistant_id)


@router.patch("/assistants/{assistant_id}")
async def patch(assistant_id: str, body: AssistantPatch, request: Request) -> dict[str, Any]:
    server: Server = request.app.state.server
    if body.graph_id is not None and body.graph_id not in server.graphs:
        raise _unknown_graph(server, body.graph_id)
    await _user_assistant(server, assistant_id)
    await auth.assistant_write(request, assistant_id, "update", body)
    change = AssistantChange(**body.model_dump(exclude_none=True))
    updated: dict[str, Any] = await _update(server, assistant_id, "patch", change)
    return updated


@router.post("/assistants/{assistant_id}/latest")
async def set_latest(assistant_id: str, body: LatestVersion, request: Request
                     ) -> dict[str, Any]:
    server: Server = request.app.state.server
    await _user_assistant(server, assistant_id)
    await auth.assistant(request, assistant_id, "update", {
        "assistant_id": auth.as_id(assistant_id), "version": body.version})
    updated: dict[str, Any] = await _update(server, assistant_id, "set_latest", body.version)
    return updated


@router.delete("/assistants/{assistant_id}", status_code=204)
async def delete(assistant_id: str, request: Request, delete_threads: bool = False
                 ) -> Response:
    server: Server = request.app.state.server
    if delete_threads:
        raise ValueError("delete_threads is not supported: threads do not record the "
                         "assistant they ran with.")
    await auth.assistant(request, assistant_id, "delete")
    await _user_assistant(server, assistant_id)
    await _update(server, assistant_id, "delete", None)
    return Response(status_code=204)


@router.post("/assistants/{assistant_id}/versions")
async def versions(assistant_id: str, body: VersionsQuery, request: Request
                   ) -> list[dict[str, Any]]:
    server: Server = request.app.state.server
    await auth.assistant(request, assistant_id, "read")
    found = await lookup(server, assistant_id)
    if is_default(server, assistant_id):
        listed = [found]
    else:
        handle = server.gc.client.get_workflow_handle(_workflow_id(server, found["assistant_id"]))
        listed = await handle.query("versions", result_type=list[dict[str, Any]])
    listed = [v for v in listed if contains(v.get("metadata") or {}, body.metadata or {})]
    listed.sort(key=lambda v: v["version"], reverse=True)
    return listed[body.offset:body.offset + body.limit]


async def _user_assistant(server: Server, assistant_id: str) -> dict[str, Any]:
    """A user assistant (404 if unknown); a graph's default assistant is not stored
    and cannot change (409)."""
    found = await lookup(server, assistant_id)
    if is_default(server, assistant_id):
        raise Conflict(f"Assistant {assistant_id!r} is graph {found['graph_id']!r}'s default "
                       f"assistant, which cannot be changed or deleted; create an assistant "
                       f"of that graph instead (POST /assistants).")
    return found


async def _update(server: Server, assistant_id: str, update: str, arg: Any) -> Any:
    handle = server.gc.client.get_workflow_handle(_workflow_id(server, assistant_id))
    try:
        if arg is None:
            result = await handle.execute_update(update)
        else:
            result = await handle.execute_update(update, arg, result_type=dict)
        await _settled(server, assistant_id, None if update == "delete" else result)
        return result
    except RPCError as exc:  # it ended between our look and the update
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise AssistantNotFound(f"Assistant {assistant_id!r} not found.") from None
        raise
    except WorkflowUpdateFailedError as exc:
        cause = exc.cause
        if isinstance(cause, ApplicationError) and cause.type in ("VersionNotFound",
                                                                  "AssistantDeleted"):
            raise NotFound(cause.message) from None
        raise


# -- its graph ----------------------------------------------------------------------------

async def _graph(request: Request, assistant_id: str) -> tuple[str, Any]:
    server: Server = request.app.state.server
    await auth.assistant(request, assistant_id, "read")
    graph_id = server.servable((await resolve(server, assistant_id))["graph_id"])
    return graph_id, server.graphs[graph_id]


def _schemas(graph_id: str, graph: Any) -> dict[str, Any]:
    return {"graph_id": graph_id, "input_schema": graph.get_input_jsonschema(),
            "output_schema": graph.get_output_jsonschema(),
            "state_schema": graph.get_output_jsonschema(), "config_schema": None,
            "context_schema": graph.get_context_jsonschema()}


@router.get("/assistants/{assistant_id}/schemas")
async def schemas(assistant_id: str, request: Request) -> dict[str, Any]:
    return _schemas(*await _graph(request, assistant_id))


@router.get("/assistants/{assistant_id}/graph")
async def graph(assistant_id: str, request: Request, xray: int | bool = False
                ) -> dict[str, Any]:
    _, compiled = await _graph(request, assistant_id)
    try:  # LangChain's Graph, as LangGraph's server answers (needs langchain-core)
        drawn: dict[str, Any] = compiled.get_graph(xray=xray).to_json()
        return drawn
    except ImportError:
        return _drawing(compiled.spec)


def _drawing(spec: Any) -> dict[str, Any]:
    """The graph's nodes and edges in LangChain's `Graph.to_json` shape (what Studio draws)."""
    start, end = "__start__", "__end__"
    names = [n for n in spec.nodes if n != start]
    edges = [{"source": s, "target": t}
             for s, targets in spec.edges.items() for t in targets]
    for source, branches in spec.branches.items():
        for branch in branches:
            targets = list(dict.fromkeys(branch.path_map.values())) if branch.path_map else [
                *names, end]
            edges += [{"source": source, "target": t, "conditional": True} for t in targets]
    ends = [end] if any(e["target"] == end for e in edges) else []
    nodes = [{"id": start, "type": "schema", "data": start},
             *({"id": n, "type": "runnable", "data": {"id": ["graphrun", "node", n], "name": n}}
               for n in names),
             *({"id": e, "type": "schema", "data": e} for e in ends)]
    return {"nodes": nodes, "edges": edges}


@router.get("/assistants/{assistant_id}/subgraphs")
async def subgraphs(assistant_id: str, request: Request, recurse: bool = False
                    ) -> dict[str, Any]:
    _, compiled = await _graph(request, assistant_id)
    return _subgraph_schemas(compiled, "", recurse)


@router.get("/assistants/{assistant_id}/subgraphs/{namespace}")
async def subgraphs_of(assistant_id: str, namespace: str, request: Request,
                       recurse: bool = False) -> dict[str, Any]:
    _, compiled = await _graph(request, assistant_id)
    found = _subgraph_schemas(compiled, "", recurse)
    return {ns: s for ns, s in found.items() if ns == namespace or ns.startswith(
        namespace + "|")}


def _subgraph_schemas(compiled: Any, prefix: str, recurse: bool) -> dict[str, Any]:
    """The schemas of the graphs its nodes are (or call), by namespace (`a|b` nested)."""
    out: dict[str, Any] = {}
    for name, node in compiled.spec.nodes.items():
        sub = node.fn if node.is_subgraph else node.calls_graph
        if sub is None or not hasattr(sub, "get_input_jsonschema"):
            continue
        ns = f"{prefix}{name}"
        out[ns] = _schemas(getattr(sub.spec, "name", name), sub)
        if recurse:
            out.update(_subgraph_schemas(sub, ns + "|", recurse))
    return out
