"""The time-skipping server fires a three-day timer in well under a second of wall time."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

from temporalio import workflow
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker


@workflow.defn
class SleepThreeDaysWorkflow:
    @workflow.run
    async def run(self) -> float:
        start = workflow.now()
        await workflow.sleep(timedelta(days=3))
        return (workflow.now() - start).total_seconds()


async def test_three_day_sleep_is_skipped(time_skipping_env: WorkflowEnvironment) -> None:
    task_queue = f"tq-{uuid.uuid4()}"
    client = time_skipping_env.client
    started = time.monotonic()

    async with Worker(client, task_queue=task_queue, workflows=[SleepThreeDaysWorkflow]):
        slept = await client.execute_workflow(
            SleepThreeDaysWorkflow.run, id=f"sleep-{task_queue}", task_queue=task_queue
        )

    assert slept >= timedelta(days=3).total_seconds()
    assert time.monotonic() - started < 5
