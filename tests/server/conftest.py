"""An API server (uvicorn, on a free port) over the session's dev server, with a worker
serving the examples' purchase and LangChain agent."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from typing_extensions import TypedDict

from examples import agent_approval, purchase
from graphrun import START, StateGraph


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _broken(state: dict) -> dict:
    raise ValueError("card declined")


class _Order(TypedDict):
    item: str


broken = (StateGraph(_Order).add_node("charge", _broken).add_edge(START, "charge")
          .compile(name="broken"))

GRAPHS = {"purchase": purchase.graph, "agent": agent_approval.agent, "broken": broken}


async def _polling(client: Any, queue: str) -> None:
    """Wait for the worker to poll its queue: until then Temporal refuses an update with
    "no poller seen" (the API would answer 503, as it should with no worker)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    for _ in range(200):
        found = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
            namespace=client.namespace, task_queue=TaskQueue(name=queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW))
        if found.pollers:
            return
        await asyncio.sleep(0.05)


@pytest.fixture(scope="session")
async def api_url(temporal_client: Any) -> AsyncIterator[str]:
    import uvicorn

    from graphrun.client import GraphClient
    from graphrun.server import build_app
    from graphrun.worker import create_worker

    queue = f"server-{uuid.uuid4()}"
    worker = create_worker(temporal_client, GRAPHS, task_queue=queue)
    app = build_app(GraphClient(temporal_client, task_queue=queue),
                    {"purchase": purchase.graph, "agent": agent_approval.graph,
                     "broken": broken})
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    async with worker:
        await _polling(temporal_client, queue)
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
        server.should_exit = True
        await serving
