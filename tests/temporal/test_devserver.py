"""The session dev server fixture: it answers, has graphrun's search attributes, runs workers."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import Client
from temporalio.worker import Worker

from graphrun.devserver import SEARCH_ATTRIBUTES, DevServer
from graphrun.namespace import KINDS  # KeywordList -> INDEXED_VALUE_TYPE_KEYWORD_LIST


@activity.defn
async def shout(text: str) -> str:
    return text.upper() + "!"


@workflow.defn
class ShoutWorkflow:
    @workflow.run
    async def run(self, text: str) -> str:
        return await workflow.execute_activity(
            shout, text, start_to_close_timeout=timedelta(seconds=10)
        )


async def test_dev_server_registers_search_attributes(
    dev_server: DevServer, temporal_client: Client
) -> None:
    assert dev_server.running
    assert dev_server.address.startswith("127.0.0.1:")
    assert dev_server.ui_url is None

    response = await temporal_client.operator_service.list_search_attributes(
        ListSearchAttributesRequest(namespace=temporal_client.namespace)
    )

    registered = {
        name: IndexedValueType.Name(kind) for name, kind in response.custom_attributes.items()
    }
    for name, kind in SEARCH_ATTRIBUTES.items():
        assert registered.get(name) == IndexedValueType.Name(KINDS[kind]), registered


async def test_worker_runs_workflow_and_activity(temporal_client: Client, task_queue: str) -> None:
    async with Worker(
        temporal_client,
        task_queue=task_queue,
        workflows=[ShoutWorkflow],
        activities=[shout],
    ):
        result = await temporal_client.execute_workflow(
            ShoutWorkflow.run,
            "hello",
            id=f"shout-{task_queue}",
            task_queue=task_queue,
            execution_timeout=timedelta(seconds=30),
        )

    assert result == "HELLO!"
