"""`graphrun serve --config langgraph.json` and `graphrun worker --config` as processes:
an API key guards every route but /ok, and a thread paused through one API process is
answered through another (the API keeps nothing)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_client

from tests.server.conftest import _free_port, _polling

ROOT = Path(__file__).parents[2]


def _start(*args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "graphrun.cli", *args], cwd=ROOT,
                            env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


async def _up(url: str, proc: subprocess.Popen[bytes]) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(300):
            assert proc.poll() is None, "the API process exited"
            try:
                if (await http.get(f"{url}/ok")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)
    raise AssertionError("the API did not come up")


async def test_serve_and_worker_from_langgraph_json(dev_server: Any, temporal_client: Any,
                                                    tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(
        "from examples.agent_approval import agent  # LangChain's own object\n")
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"graphs": {"invoices": "./agents.py:agent"},
                                  "env": {"GRAPHRUN_EXAMPLE_FLAG": "1"}}))
    queue = f"serve-{uuid.uuid4()}"
    conn = {"TEMPORAL_ADDRESS": dev_server.address, "GRAPHRUN_TASK_QUEUE": queue}
    worker = _start("worker", "--config", str(config), env=conn)
    procs = [worker]
    try:
        await _polling(temporal_client, queue)
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        keyed = {**conn, "GRAPHRUN_API_KEY": "old-key,new-key"}
        api = _start("serve", "--config", str(config), "--port", str(port), env=keyed)
        procs.append(api)
        await _up(url, api)
        async with httpx.AsyncClient(base_url=url) as http:
            assert (await http.post("/assistants/search", json={})).status_code == 401
            ok = await http.post("/assistants/search", json={},
                                 headers={"Authorization": "Bearer new-key"})
            assert [a["graph_id"] for a in ok.json()] == ["invoices"]
        client = get_client(url=url, api_key="old-key")
        tid = (await client.threads.create())["thread_id"]
        out = await client.runs.wait(tid, "invoices", input={
            "messages": [{"role": "user", "content": "Pay INV-7 from ACME, 1200 EUR"}]})
        assert out["__interrupt__"][0]["value"]["action_requests"][0]["name"] == "pay_invoice"

        api.kill()  # the API process dies while the question waits
        api.wait()
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        api = _start("serve", "--config", str(config), "--port", str(port), env=keyed)
        procs.append(api)
        await _up(url, api)
        client = get_client(url=url, api_key="new-key")
        paused = await client.threads.search(status="interrupted",
                                             metadata={"graph_id": "invoices"}, limit=100)
        assert tid in [t["thread_id"] for t in paused]
        done = await client.runs.wait(tid, "invoices", command={
            "resume": {"decisions": [{"type": "approve"}]}})
        assert done["messages"][-1]["content"].endswith("Paid INV-7: 1200.00 EUR")
    finally:
        for p in procs:
            p.kill()
            p.wait()


async def test_temporal_unreachable_is_a_503_not_a_hang() -> None:
    """The API's Temporal went away: a clear 503 within seconds, for reads and runs."""
    import socket
    import time

    import httpx
    from temporalio.client import Client

    from examples import purchase
    from graphrun.client import GraphClient, data_converter
    from graphrun.server import build_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here
    client = await Client.connect(f"127.0.0.1:{port}", data_converter=data_converter,
                                  lazy=True)
    app = build_app(GraphClient(client), {"purchase": purchase.graph})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://api", timeout=60) as http:
        started = time.monotonic()
        answer = await http.get("/threads/t-1")
        assert answer.status_code == 503
        assert "Temporal did not answer" in answer.json()["detail"]
        assert time.monotonic() - started < 30
