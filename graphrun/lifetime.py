"""How long a thread lives: its TTL, and its deletion.

A thread is one open workflow from its creation until it is deleted (by the Server
API, `GraphClient.delete_thread`, `POST /threads/prune`, or its TTL), whatever the
namespace's retention: only superseded runs (continued as new) ever close. Deleting a
thread deletes every execution of its workflow id, so nothing of it stays in history
or visibility.

`ThreadTTL` and `expiry` are pure (the workflows use them); `delete_executions` is a
client call (the API, the CLI and the `delete_thread` activity use it).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

STRATEGIES = ("delete",)


class ThreadTTL(BaseModel):
    """LangGraph's thread TTL: `{"strategy": "delete", "ttl": minutes}`. The thread is
    deleted once it has gone `ttl` minutes without a change (a run, a state update, a
    metadata patch; a read too when the API refreshes on read)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    strategy: str = "delete"
    ttl: float = Field(gt=0)

    def model_post_init(self, _: Any) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"ttl strategy must be one of {STRATEGIES}, not "
                             f"{self.strategy!r:.40}")


def expiry(ttl: ThreadTTL | None, now: datetime) -> str:
    """When a thread changed at `now` expires (ISO), or "" without a TTL."""
    return "" if ttl is None else (now + timedelta(minutes=ttl.ttl)).isoformat()


def seconds_left(expires_at: str, now: datetime) -> float | None:
    """Seconds until `expires_at` (at least a millisecond), or None without one."""
    if not expires_at:
        return None
    return max((datetime.fromisoformat(expires_at) - now).total_seconds(), 0.001)


async def delete_executions(client: Any, workflow_id: str, *, terminate: bool = True) -> int:
    """Delete every execution of `workflow_id` (the open one last, so a thread is never
    left as only its older runs); how many were deleted. An open execution is
    terminated and deleted at once; closed ones go in the background. On a server that
    cannot delete (the time-skipping one) the open execution is terminated instead, or
    with `terminate=False` nothing is done and -1 is answered."""
    from temporalio.api.common.v1 import WorkflowExecution as Execution
    from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError, RPCStatusCode

    async def delete(run_id: str) -> bool:
        try:
            await client.workflow_service.delete_workflow_execution(
                DeleteWorkflowExecutionRequest(
                    namespace=client.namespace,
                    workflow_execution=Execution(workflow_id=workflow_id, run_id=run_id)))
            return True
        except RPCError as exc:
            if exc.status == RPCStatusCode.UNIMPLEMENTED:
                raise _CannotDelete() from None
            if exc.status != RPCStatusCode.NOT_FOUND:  # gone already (visibility lags)
                raise
            return False

    quoted = "'" + workflow_id.replace("\\", "\\\\").replace("'", "\\'") + "'"
    try:
        runs = [(wf.run_id, wf.status) async for wf in
                client.list_workflows(f"WorkflowId = {quoted}")]
    except RPCError as exc:
        if exc.status != RPCStatusCode.UNIMPLEMENTED:
            raise
        runs = []  # a server without visibility (the time-skipping one): the latest run
    deleted = 0
    try:
        for run_id, _ in sorted(runs, key=lambda r: r[1] == WorkflowExecutionStatus.RUNNING):
            deleted += await delete(run_id)
        # The latest run, which visibility may not list yet.
        deleted += await delete("")
    except _CannotDelete:
        if not terminate:
            return -1
        await client.get_workflow_handle(workflow_id).terminate("thread deleted")
        return 1
    # Its externally stored payloads go with it (drivers that keep them per workflow).
    from graphrun.storage import delete_payloads

    await delete_payloads(client.data_converter.external_storage, client.namespace,
                          workflow_id)
    return deleted


class _CannotDelete(Exception):
    """The server has no DeleteWorkflowExecution (the time-skipping test server)."""
