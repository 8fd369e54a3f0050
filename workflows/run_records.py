"""The thread's run records (the Server API lists runs by them, the `runs` query reads
them), and the webhook a finished run is posted to."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy as TemporalRetryPolicy
from temporalio.exceptions import ActivityError

from .thread_state import Invocation, now

with workflow.unsafe.imports_passed_through():
    from graphrun.payloads import RunResult, WebhookCall

MAX_RUNS_KEPT = 100  # run records a thread keeps (the `runs` query)
# A run record's status once its invocation has ended (RunResult.status -> record).
RUN_OUTCOME = {"done": "success", "interrupted": "success", "failed": "error",
               "cancelled": "interrupted", "running": "error"}


class RunRecords:
    def __init__(self, carried: list[dict[str, Any]]) -> None:
        self.runs: list[dict[str, Any]] = [dict(r) for r in carried]

    def add(self, item: Invocation, record: dict[str, Any]) -> None:
        at = now()
        # The workflow run that took it: its update's outcome is found there (join).
        self.runs = [*self.runs, {**record, "run_id": item.run_id, "status": "pending",
                                  "created_at": at, "updated_at": at,
                                  "workflow_run_id": workflow.info().run_id}
                     ][-MAX_RUNS_KEPT:]

    def set(self, item: Invocation, status: str, error: dict[str, Any] | None = None) -> None:
        for r in self.runs:
            if r["run_id"] == item.run_id and item.run_id:
                r.update(status=status, updated_at=now())
                if error:
                    r["error"] = error

    def finished(self, item: Invocation, result: RunResult) -> None:
        self.set(item, "error" if result.error is not None and result.status != "failed"
                 else RUN_OUTCOME.get(result.status, "error"), result.error)

    def cancelled(self, item: Invocation, action: str) -> None:
        if action == "rollback":  # as LangGraph: a rolled-back run is deleted
            self.delete(item.run_id)
        else:
            self.set(item, "interrupted")

    def delete(self, run_id: str) -> None:
        self.runs = [r for r in self.runs if r["run_id"] != run_id]

    def has(self, run_id: str) -> bool:
        return any(r["run_id"] == run_id for r in self.runs)

    async def send_webhook(self, item: Invocation, result: RunResult, graph: str,
                           thread_id: str) -> None:
        """POST the finished run to its webhook (an activity: the network is not here).
        A webhook that keeps failing is logged; the thread goes on."""
        record = next((r for r in self.runs if r["run_id"] == item.run_id), {})
        try:
            await workflow.execute_activity(
                "send_webhook", WebhookCall(url=item.webhook, graph=graph,
                                            thread_id=thread_id, run=record,
                                            values=result.values, error=result.error,
                                            options=item.webhook_options),
                start_to_close_timeout=timedelta(seconds=30), summary="webhook",
                retry_policy=TemporalRetryPolicy(maximum_attempts=3))
        except ActivityError as exc:
            workflow.logger.warning("webhook of run %s failed: %s", item.run_id, exc.cause)
