"""The cron activity: one firing of a cron is one ordinary graphrun run.

It runs the graph through graphrun's own client (the worker's connection), so the
run is a thread like any other: its workflow, its state, its status. A user
assistant's config and context are read at firing time, so a patched assistant
applies to the next firing, as on LangGraph's server.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from graphrun.client import GraphClient
from graphrun.errors import GraphrunError
from graphrun.workflows.records import (
    CRON_ACTIVITY,
    CronRunCall,
    CronRunRequest,
    CronRunResult,
    current_assistant,
    presets,
)


@activity.defn(name=CRON_ACTIVITY)
async def run_cron(call: CronRunCall) -> CronRunResult:
    request = call.request
    gc = GraphClient(activity.client(), task_queue=activity.info().task_queue,
                     id_prefix=request.id_prefix, search_attributes=request.search_attributes,
                     max_history=request.max_history,
                     history_event_limit=request.history_event_limit)
    graph_id, config, context = await _run_settings(gc, request)
    config["configurable"] = {**config.get("configurable", {}), "thread_id": call.thread_id}
    async with _heartbeating():
        outcome = await _invoke(gc, graph_id, request, config, context)
    if request.thread_id is None and request.on_run_completed == "delete":
        await _delete_thread(gc, call.thread_id)
    return outcome.model_copy(update={"thread_id": call.thread_id})


async def _run_settings(gc: GraphClient, request: CronRunRequest
                        ) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """The graph, config and context of this firing: a user assistant's current ones
    under the cron's own."""
    if not request.assistant_record:
        return request.graph_id, dict(request.config or {}), request.context
    assistant = await current_assistant(gc.client, request.assistant_record)
    if assistant is None:
        raise ApplicationError(f"Assistant {request.assistant_id!r} of cron "
                               f"{request.cron_id!r} no longer exists.",
                               type="AssistantNotFound", non_retryable=True)
    config, context = presets(assistant, request.config, request.context)
    return assistant["graph_id"], config, context


async def _invoke(gc: GraphClient, graph_id: str, request: CronRunRequest,
                  config: dict[str, Any], context: dict[str, Any] | None) -> CronRunResult:
    """Run until the graph ends or pauses (a pause is a run that succeeded, as in
    LangGraph); a failed run is an outcome, not the activity's failure."""
    options: dict[str, Any] = {}
    if context is not None:
        options["context"] = context
    if request.interrupt_before is not None:
        options["interrupt_before"] = request.interrupt_before
    if request.interrupt_after is not None:
        options["interrupt_after"] = request.interrupt_after
    # As a run the API starts: its record, what happens to a run already on the thread,
    # and the webhook told when it ends (the thread's workflow posts it).
    strategy = request.payload.get("multitask_strategy") or "enqueue"
    record = {"assistant_id": request.assistant_id, "thread_id": config["configurable"][
        "thread_id"], "metadata": {}, "multitask_strategy": strategy, "stream_mode": []}
    remote = gc.graph(graph_id)
    try:
        result = await remote.thread(remote.merged_config(config)).run(
            request.input, options, record=record,
            webhook=request.payload.get("webhook") or "",
            webhook_options=request.webhook_options,
            multitask="" if strategy == "enqueue" else strategy)
        remote.raise_failure(result)
    except GraphrunError as exc:  # the run failed (a node, a refused input): it is recorded
        return CronRunResult(thread_id="", status="error", error=f"{type(exc).__name__}: {exc}")
    return CronRunResult(thread_id="", status="success", interrupted=bool(result.interrupts))


@contextlib.asynccontextmanager
async def _heartbeating() -> AsyncIterator[None]:
    """Heartbeat while the run goes on, so a lost worker is noticed within the timeout."""
    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(5)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()


async def _delete_thread(gc: GraphClient, thread_id: str) -> None:
    from temporalio.api.common.v1 import WorkflowExecution
    from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest

    with contextlib.suppress(RPCError):  # nothing ran (a refused input): nothing to delete
        await gc.client.workflow_service.delete_workflow_execution(
            DeleteWorkflowExecutionRequest(
                namespace=gc.client.namespace,
                workflow_execution=WorkflowExecution(workflow_id=gc.workflow_id(thread_id))))
