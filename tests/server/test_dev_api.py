"""`graphrun dev --config langgraph.json`: the dev server, a worker and the HTTP API, with
CORS for a browser app on localhost."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
from langgraph_sdk import get_client
from temporalio.client import Client

from tests.server.conftest import _free_port, _polling

ROOT = Path(__file__).parents[2]


async def test_dev_serves_the_api(tmp_path: Path) -> None:
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"graphs": {"purchase": "examples.purchase:graph"}}))
    api_port, temporal_port = _free_port(), _free_port()
    dev = subprocess.Popen(
        [sys.executable, "-m", "graphrun.cli", "dev", "--no-ui", "--port", str(temporal_port),
         "--state-dir", str(tmp_path / "state"), "--config", str(config),
         "--api-port", str(api_port)],
        cwd=ROOT, env={**os.environ, "GRAPHRUN_API_KEY": "", "GRAPHRUN_TASK_QUEUE": "graphrun"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{api_port}"
    try:
        async with httpx.AsyncClient(base_url=url) as http:
            for _ in range(600):
                assert dev.poll() is None, "graphrun dev exited"
                try:
                    if (await http.get("/ok")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.05)
            pre = await http.options("/threads/search", headers={
                "Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"})
            assert pre.headers["access-control-allow-origin"] == "http://localhost:3000"
        temporal = await Client.connect(f"127.0.0.1:{temporal_port}")
        await _polling(temporal, "graphrun")
        client = get_client(url=url)
        assert [a["graph_id"] for a in await client.assistants.search()] == ["purchase"]
        tid = (await client.threads.create())["thread_id"]
        out = await client.runs.wait(tid, "purchase", input={
            "item": "pen", "amount": 3.0, "status": "pending"})
        assert out["__interrupt__"][0]["value"]["question"] == "Approve this purchase?"
    finally:
        dev.terminate()
        dev.wait(timeout=30)
