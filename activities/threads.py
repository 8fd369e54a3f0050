"""The `delete_thread` activity: a thread whose TTL ended deletes itself.

A workflow cannot delete its own executions; this activity does it with the worker's
client, so the thread leaves nothing in history or visibility (see graphrun.lifetime).
"""

from __future__ import annotations

from temporalio import activity

from graphrun.lifetime import delete_executions


@activity.defn(name="delete_thread")
async def delete_thread(workflow_id: str) -> int:
    """Delete every execution of the thread's workflow id, this one's own run too; -1
    on a server that cannot delete (the workflow then ends by itself)."""
    return await delete_executions(activity.client(), workflow_id, terminate=False)
