"""Crons: each is a Temporal Schedule whose action starts a `CronRun` workflow
(workflows/records.py); each firing is one ordinary graphrun run, on the cron's
thread or, for a stateless cron, on a new thread.

The schedule keeps everything: its action's argument is the cron (its payload as
created and patched, and the run it makes), its memo what a search filters on, its
state whether it is enabled. The API keeps nothing. Firings are at most once: one
that fails to start its run is not retried (a retry could run the input twice).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from temporalio.client import (
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleHandle,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
    ScheduleUpdate,
    ScheduleUpdateInput,
)
from temporalio.service import RPCError, RPCStatusCode

from graphrun.server import assistants, auth, shapes, threads
from graphrun.server.context import NotFound, Server
from graphrun.server.webhooks import WebhookPolicy
from graphrun.workflows.records import (
    CRON_MEMO,
    CRON_WORKFLOW,
    CronRunRequest,
    assistant_workflow_id,
    cron_run_workflow_id,
    cron_schedule_id,
)

router = APIRouter(tags=["crons"])

Nodes = list[str] | Literal["*"] | None
CronField = Literal["cron_id", "assistant_id", "thread_id", "end_time", "schedule", "timezone",
                    "created_at", "updated_at", "user_id", "payload", "next_run_date",
                    "metadata", "now", "on_run_completed", "enabled"]


class CronUpdate(shapes.RequestBody):
    """`PATCH /runs/crons/{id}`: what changes (an explicit null end_time clears it)."""

    schedule: str | None = None
    end_time: datetime | None = None
    input: Any = None
    metadata: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    context: dict[str, Any] | None = None
    webhook: str | None = None
    interrupt_before: Nodes = None
    interrupt_after: Nodes = None
    on_run_completed: Literal["delete", "keep"] | None = None
    enabled: bool | None = None
    timezone: str | None = None
    stream_mode: str | list[str] | None = None
    stream_subgraphs: bool | None = None
    stream_resumable: bool | None = None
    durability: Literal["sync", "async", "exit"] | None = None


class CronCreate(CronUpdate):
    assistant_id: str
    schedule: str
    checkpoint_during: bool | None = None
    multitask_strategy: Literal["reject", "enqueue", "interrupt", "rollback"] | None = None


class CronCount(shapes.RequestBody):
    assistant_id: str | None = None
    thread_id: str | None = None
    metadata: dict[str, Any] | None = None


class CronSearch(CronCount):
    enabled: bool | None = None
    limit: int = 10
    offset: int = 0
    sort_by: Literal["cron_id", "assistant_id", "thread_id", "created_at", "updated_at",
                     "next_run_date", "end_time"] = "created_at"
    sort_order: Literal["asc", "desc"] = "desc"
    select: list[CronField] | None = None


async def _check_webhook(request: Request, body: CronCreate) -> None:
    if body.webhook:  # each firing's run is POSTed to it (langgraph.json's webhooks)
        await request.app.state.webhooks.check(body.webhook)


# -- the schedule --------------------------------------------------------------------------

def schedule_of(server: Server, cron_id: str) -> ScheduleHandle:
    """The Temporal Schedule that runs cron `cron_id`."""
    return server.gc.client.get_schedule_handle(cron_schedule_id(server.gc.id_prefix, cron_id))


def _run_request(server: Server, cron_id: str, thread_id: str | None, body: CronCreate,
                 assistant: dict[str, Any], created_at: str,
                 server_webhooks: WebhookPolicy) -> CronRunRequest:
    """What each firing runs. A user assistant is named, not copied: its config and
    context are read at each firing, so a patched assistant applies from then on."""
    gc = server.gc
    user = not assistants.is_default(server, assistant["assistant_id"])
    return CronRunRequest(
        cron_id=cron_id, assistant_id=assistant["assistant_id"], graph_id=assistant["graph_id"],
        assistant_record=(assistant_workflow_id(gc.id_prefix, assistant["assistant_id"])
                          if user else ""),
        thread_id=thread_id, input=body.input, config=body.config, context=body.context,
        interrupt_before=body.interrupt_before, interrupt_after=body.interrupt_after,
        on_run_completed=body.on_run_completed or "delete",
        payload=body.model_dump(mode="json", exclude_none=True), created_at=created_at,
        webhook_options=server_webhooks.sent_with() if body.webhook else {},
        id_prefix=gc.id_prefix, search_attributes=gc.search_attributes,
        max_history=gc.max_history, history_event_limit=gc.history_event_limit)


def _schedule(server: Server, run: CronRunRequest, body: CronCreate) -> Schedule:
    return Schedule(
        action=ScheduleActionStartWorkflow(
            CRON_WORKFLOW, run, id=cron_run_workflow_id(server.gc.id_prefix, run.cron_id),
            task_queue=server.gc.task_queue),
        spec=ScheduleSpec(cron_expressions=[body.schedule], time_zone_name=body.timezone,
                          end_at=body.end_time),
        # Firings are independent runs; on one thread they take their turn there.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.ALLOW_ALL),
        state=ScheduleState(paused=body.enabled is False))


def _refused(exc: RPCError, what: str) -> Exception:
    """Temporal's refusal of a schedule (a bad cron string or timezone) is the caller's 422."""
    if exc.status == RPCStatusCode.INVALID_ARGUMENT:
        return ValueError(f"{what}: {exc.message}")
    if exc.status == RPCStatusCode.NOT_FOUND:
        return NotFound(what)
    return exc


async def _request_of(server: Server, action: Any) -> CronRunRequest:
    if not isinstance(action, ScheduleActionStartWorkflow) or action.workflow != CRON_WORKFLOW:
        raise NotFound("Not a graphrun cron.")
    decoded = await server.gc.client.data_converter.decode(list(action.args), [CronRunRequest])
    found: CronRunRequest = decoded[0]
    return found


async def read_cron(server: Server, handle: ScheduleHandle) -> dict[str, Any]:
    """The cron as LangGraph's server shows it (langgraph-sdk's `Cron`)."""
    try:
        desc = await handle.describe()
    except RPCError as exc:
        raise _refused(exc, f"Cron {handle.id!r} not found.") from None
    run = await _request_of(server, desc.schedule.action)
    payload = run.payload
    paused = desc.schedule.state.paused
    upcoming = desc.info.next_action_times
    updated = desc.info.last_updated_at or desc.info.created_at
    return {"cron_id": run.cron_id, "assistant_id": run.assistant_id, "thread_id": run.thread_id,
            "on_run_completed": None if run.thread_id else run.on_run_completed,
            "end_time": payload.get("end_time"), "schedule": payload["schedule"],
            "timezone": payload.get("timezone"), "created_at": run.created_at,
            "updated_at": updated.isoformat(), "payload": payload, "user_id": None,
            "next_run_date": upcoming[0].isoformat() if upcoming and not paused else None,
            "metadata": payload.get("metadata") or {}, "enabled": not paused}


# -- routes ------------------------------------------------------------------------------

async def _create(request: Request, body: CronCreate, thread_id: str | None
                  ) -> dict[str, Any]:
    server: Server = request.app.state.server
    await _check_webhook(request, body)
    assistant = await assistants.resolve(server, body.assistant_id)
    if thread_id is not None:
        await threads.describe(server.gc, thread_id)  # NotFound: 404, as LangGraph's server
    cron_id = str(uuid.uuid4())
    await auth.cron_create(request, cron_id, thread_id, body)  # may stamp its metadata
    run = _run_request(server, cron_id, thread_id, body, assistant,
                       datetime.now(UTC).isoformat(), request.app.state.webhooks)
    memo = {CRON_MEMO: {"cron_id": cron_id, "assistant_id": run.assistant_id,
                        "thread_id": thread_id, "task_queue": server.gc.task_queue}}
    try:
        handle = await server.gc.client.create_schedule(
            cron_schedule_id(server.gc.id_prefix, cron_id), _schedule(server, run, body),
            memo=memo)
    except RPCError as exc:
        raise _refused(exc, f"Temporal refused schedule {body.schedule!r}") from None
    return await read_cron(server, handle)


@router.post("/runs/crons")
async def create(body: CronCreate, request: Request) -> dict[str, Any]:
    """A stateless cron: each firing runs on a new thread (deleted after its run unless
    `on_run_completed` is 'keep')."""
    return await _create(request, body, None)


@router.post("/threads/{thread_id}/runs/crons")
async def create_for_thread(thread_id: str, body: CronCreate, request: Request
                            ) -> dict[str, Any]:
    return await _create(request, body, thread_id)


@router.patch("/runs/crons/{cron_id}")
async def update(cron_id: str, body: CronUpdate, request: Request) -> dict[str, Any]:
    server: Server = request.app.state.server
    await auth.cron_update(request, cron_id, body)
    handle = schedule_of(server, cron_id)

    async def change(current: ScheduleUpdateInput) -> ScheduleUpdate:
        old = await _request_of(server, current.description.schedule.action)
        new = CronCreate.model_validate(_patched(old.payload, body))
        await _check_webhook(request, new)
        assistant = await assistants.resolve(server, new.assistant_id)
        run = _run_request(server, old.cron_id, old.thread_id, new, assistant, old.created_at,
                           request.app.state.webhooks)
        return ScheduleUpdate(schedule=_schedule(server, run, new))

    try:
        await handle.update(change)
    except RPCError as exc:
        raise _refused(exc, f"Cron {cron_id!r} not found.") from None
    return await read_cron(server, handle)


def _patched(payload: dict[str, Any], body: CronUpdate) -> dict[str, Any]:
    """The payload with the fields the patch sent; an explicit null clears a field, and
    metadata is merged (as an assistant's or a thread's)."""
    given = body.model_dump(mode="json", include=body.model_fields_set)
    if given.get("metadata") is not None:
        given["metadata"] = {**payload.get("metadata", {}), **given["metadata"]}
    merged = {**payload, **given}
    return {k: v for k, v in merged.items() if v is not None}


@router.get("/runs/crons/{cron_id}")
async def get(cron_id: str, request: Request) -> dict[str, Any]:
    server: Server = request.app.state.server
    await auth.cron(request, cron_id, "read")
    return await read_cron(server, schedule_of(server, cron_id))


@router.delete("/runs/crons/{cron_id}", status_code=204)
async def delete(cron_id: str, request: Request) -> Response:
    await auth.cron(request, cron_id, "delete")
    try:
        await schedule_of(request.app.state.server, cron_id).delete()
    except RPCError as exc:
        raise _refused(exc, f"Cron {cron_id!r} not found.") from None
    return Response(status_code=204)


async def _found(server: Server, q: CronCount, enabled: bool | None = None
                 ) -> list[dict[str, Any]]:
    """The crons of this deployment (its task queue) that match, each described."""
    want_assistant = _assistant_key(server, q.assistant_id)
    handles = []
    async for listed in await server.gc.client.list_schedules():
        memo = await listed.memo_value(CRON_MEMO, None)
        if (isinstance(memo, dict) and memo.get("task_queue") == server.gc.task_queue
                and want_assistant in (None, memo.get("assistant_id"))
                and q.thread_id in (None, memo.get("thread_id"))):
            handles.append(server.gc.client.get_schedule_handle(listed.id))
    crons = await asyncio.gather(*(_read_if_there(server, h) for h in handles))
    return [c for c in crons if c is not None
            and assistants.contains(c["metadata"], q.metadata or {})
            and enabled in (None, c["enabled"])]


def _assistant_key(server: Server, assistant_id: str | None) -> str | None:
    """A filter's assistant as crons record it: a graph id means its default assistant."""
    if assistant_id is None:
        return None
    default = assistants.default_of(server, assistant_id)
    return default["assistant_id"] if default else assistant_id


async def _read_if_there(server: Server, handle: ScheduleHandle) -> dict[str, Any] | None:
    try:
        return await read_cron(server, handle)
    except NotFound:  # deleted since it was listed
        return None


@router.post("/runs/crons/search")
async def search(body: CronSearch, request: Request) -> list[dict[str, Any]]:
    keep = await auth.cron_filter(request, body)
    found = await keep(await _found(request.app.state.server, body, body.enabled))
    found.sort(key=lambda c: str(c.get(body.sort_by) or ""),
               reverse=body.sort_order == "desc")
    page = found[body.offset:body.offset + body.limit]
    if body.select:
        now = datetime.now(UTC).isoformat()
        page = [{k: now if k == "now" else c.get(k) for k in body.select} for c in page]
    return page


@router.post("/runs/crons/count")
async def count(body: CronCount, request: Request) -> int:
    keep = await auth.cron_filter(request, body, count=True)
    return len(await keep(await _found(request.app.state.server, body)))
