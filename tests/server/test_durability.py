"""The API and the worker as real processes (`graphrun serve`, `graphrun worker`, one
langgraph.json) on the session's dev server, driven through LangGraph's SDK:

* a purchase paused at its approval survives SIGKILL of both the API and the worker:
  started again (the API on a new port), they answer it and the thread finishes;
* two API processes serve one thread: it pauses through the first, is found by
  status, read and answered through the second, and read back through the first.

Nothing is kept by an API process, so nothing is lost with one.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from tests.server.conftest import _free_port

ROOT = Path(__file__).parents[2]
PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
QUESTION = {"question": "Approve this purchase?", "item": "GPU rental, 8 hours",
            "amount": 96.0}
CHARGED = {**PURCHASE, "status": "charged"}


class _Proc:
    """A `graphrun` command in a process of its own, its output in a file."""

    def __init__(self, log: Path, *args: str, env: dict[str, str]) -> None:
        self.log = log
        self.url = ""
        with open(log, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "graphrun.cli", *args],
                                         cwd=ROOT, env=env, stdout=out,
                                         stderr=subprocess.STDOUT)

    @classmethod
    def api(cls, tmp: Path, config: Path, env: dict[str, str]) -> _Proc:
        port = _free_port()
        proc = cls(tmp / f"api-{port}.log", "serve", "--config", str(config), "--port",
                   str(port), env=env)
        proc.url = f"http://127.0.0.1:{port}"
        return proc

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def sigkill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    async def ready(self, timeout: float = 30) -> None:
        """The worker printed `ready`, or the API answers /ok."""
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient() as http:
            while time.monotonic() < deadline:
                assert self.proc.poll() is None, f"exited: {self.output()}"
                if self.url:
                    try:
                        if (await http.get(f"{self.url}/ok")).status_code == 200:
                            return
                    except httpx.TransportError:
                        pass
                elif "ready" in self.output():
                    return
                await asyncio.sleep(0.05)
        raise AssertionError(f"not ready within {timeout}s: {self.output()}")


def _env(address: str, queue: str) -> dict[str, str]:
    # None of the developer's own Temporal settings, keys or API key.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEMPORAL_", "GRAPHRUN_"))}
    return {**env, "TEMPORAL_ADDRESS": address, "GRAPHRUN_TASK_QUEUE": queue}


async def _interrupted(client: Any, graph_id: str, thread_id: str) -> dict[str, Any]:
    """The thread as a search by status finds it (visibility may lag a moment)."""
    for _ in range(100):
        found = await client.threads.search(status="interrupted",
                                            metadata={"graph_id": graph_id}, limit=100)
        mine = [t for t in found if t["thread_id"] == thread_id]
        if mine:
            return mine[0]
        await asyncio.sleep(0.05)
    raise AssertionError(f"thread {thread_id} not listed as interrupted: {found}")


@pytest.mark.slow
async def test_kill_9_mid_approval_and_two_apis_on_one_thread(dev_server: Any,
                                                              tmp_path: Path) -> None:
    graph_id = f"durable_{uuid.uuid4().hex[:8]}"  # a search by graph finds only ours
    config = tmp_path / "langgraph.json"
    config.write_text(json.dumps({"graphs": {
        graph_id: f"{ROOT / 'examples' / 'purchase.py'}:graph"}}))
    env = _env(dev_server.address, f"durable-{uuid.uuid4()}")
    procs: list[_Proc] = []

    def start_worker(n: int) -> _Proc:
        procs.append(_Proc(tmp_path / f"worker-{n}.log", "worker", "--config", str(config),
                           env=env))
        return procs[-1]

    def start_api() -> _Proc:
        procs.append(_Proc.api(tmp_path, config, env))
        return procs[-1]

    try:
        # -- kill -9 the API and the worker while the approval waits --------------------
        worker, api = start_worker(1), start_api()
        await asyncio.gather(worker.ready(), api.ready())
        client = get_client(url=api.url, api_key=None)
        tid = (await client.threads.create())["thread_id"]
        out = await client.runs.wait(tid, graph_id, input=PURCHASE)
        assert [i["value"] for i in out["__interrupt__"]] == [QUESTION]
        api.sigkill()
        worker.sigkill()

        worker = start_worker(2)
        api_1, api_2 = start_api(), start_api()  # api_2: the second API of the next part
        await asyncio.gather(worker.ready(), api_1.ready(), api_2.ready())
        client = get_client(url=api_1.url, api_key=None)
        state = await client.threads.get_state(tid)
        assert state["next"] == ["request_approval"]
        assert [i["value"] for i in state["interrupts"]] == [QUESTION]
        done = await asyncio.wait_for(
            client.runs.wait(tid, graph_id, command={"resume": True}), 60)
        assert done == CHARGED
        final = await client.threads.get_state(tid)
        assert final["values"] == CHARGED and final["next"] == []

        # -- two API processes, one thread ---------------------------------------------
        one = get_client(url=api_1.url, api_key=None)
        two = get_client(url=api_2.url, api_key=None)
        tid = (await one.threads.create())["thread_id"]
        out = await one.runs.wait(tid, graph_id, input=PURCHASE)
        interrupt_id = out["__interrupt__"][0]["id"]
        listed = await _interrupted(two, graph_id, tid)
        assert [q for qs in listed["interrupts"].values() for q in qs] == [
            {"id": interrupt_id, "value": QUESTION}]
        state = await two.threads.get_state(tid)
        assert state["next"] == ["request_approval"]
        assert state["interrupts"] == [{"id": interrupt_id, "value": QUESTION}]
        assert state["values"] == PURCHASE
        done = await two.runs.wait(tid, graph_id, command={"resume": {interrupt_id: True}})
        assert done == CHARGED
        final = await one.threads.get_state(tid)
        assert final["values"] == CHARGED and final["next"] == []
        assert (await one.threads.get(tid))["status"] == "idle"
    finally:
        for p in procs:
            p.sigkill()
