"""An API server (uvicorn, on a free port) over the session's dev server, with a worker
serving the examples' purchase and LangChain agent."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from examples import agent_approval, purchase


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


GRAPHS = {"purchase": purchase.graph, "agent": agent_approval.agent}


@pytest.fixture(scope="session")
async def api_url(temporal_client: Any) -> AsyncIterator[str]:
    import uvicorn

    from graphrun.client import GraphClient
    from graphrun.server import build_app
    from graphrun.worker import create_worker

    queue = f"server-{uuid.uuid4()}"
    worker = create_worker(temporal_client, GRAPHS, task_queue=queue)
    app = build_app(GraphClient(temporal_client, task_queue=queue),
                    {"purchase": purchase.graph, "agent": agent_approval.graph})
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))
    async with worker:
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
        server.should_exit = True
        await serving
