"""Faults against threads that live: closed executions deleted under load (what the
namespace's retention does), and an API process and a worker killed while threads wait.
Nothing is lost: every thread is read and continued afterwards.

GRAPHRUN_FAULT_THREADS sets the number of threads (default 60; a full run: 1000).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphrun import Command
from graphrun.client import GraphClient
from graphrun.worker import create_worker
from tests.temporal.test_thread_life import _build, _cfg, _delete_closed_executions

THREADS = int(os.environ.get("GRAPHRUN_FAULT_THREADS", "60"))
CONCURRENCY = 32
ROOT = Path(__file__).parents[2]


async def _each(items: list[Any], fn: Any) -> list[Any]:
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(item: Any) -> Any:
        async with gate:
            return await fn(item)

    return await asyncio.gather(*(one(i) for i in items))


@pytest.mark.slow
async def test_closed_executions_deleted_under_load(temporal_client: Any,
                                                    task_queue: str) -> None:
    name = f"faults-{uuid.uuid4().hex[:8]}"
    # A short history limit: threads continue as new often, leaving closed runs behind.
    gc = GraphClient(temporal_client, task_queue=task_queue, history_event_limit=40)
    g = gc.graph(name)
    run = uuid.uuid4().hex[:6]
    tids = [f"fault-{run}-{i}" for i in range(THREADS)]
    kinds = {tid: ("finished", "paused", "created")[i % 3] for i, tid in enumerate(tids)}
    stop = asyncio.Event()
    deleted = 0

    async def retention() -> None:
        nonlocal deleted
        while not stop.is_set():
            deleted += await _delete_closed_executions(temporal_client)
            await asyncio.sleep(0.2)

    async def make(tid: str) -> None:
        if kinds[tid] == "created":
            await gc.create_thread(tid, metadata={"kind": "created", "graph_id": name})
            return
        for round_ in range(3):  # a few rounds each: histories grow, continue as new
            await g.ainvoke({"item": f"r{round_}"}, _cfg(tid))
            if kinds[tid] == "paused" and round_ == 2:
                return
            await g.ainvoke(Command(resume=round_), _cfg(tid))

    async with create_worker(temporal_client, {name: _build(name)}, task_queue=task_queue):
        sweeper = asyncio.ensure_future(retention())
        try:
            await _each(tids, make)
        finally:
            stop.set()
            await sweeper
        deleted += await _delete_closed_executions(temporal_client)
        assert deleted > 0  # there were closed runs to lose

        async def check(tid: str) -> None:
            snap = await g.aget_state(_cfg(tid))
            if kinds[tid] == "finished":
                assert snap.values["log"] == ["r0:0", "r1:1", "r2:2"] and snap.next == ()
                out = await g.ainvoke({"item": "again"}, _cfg(tid))
            elif kinds[tid] == "paused":
                assert snap.values["log"] == ["r0:0", "r1:1"] and snap.next == ("ask",)
                out = {"__interrupt__": True}
            else:
                assert snap.values == {}
                out = await g.ainvoke({"item": "first"}, _cfg(tid))
            assert out["__interrupt__"], (tid, out)
            done = await g.ainvoke(Command(resume="ok"), _cfg(tid))
            assert done["log"][-1].endswith(":ok"), (tid, done)

        await _each(tids, check)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawn(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "graphrun.cli", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait()


async def _up(http: httpx.AsyncClient, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            raise AssertionError(proc.stderr.read().decode() if proc.stderr else "exited")
        try:
            if (await http.get("/ok")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError("the API did not start")


@pytest.mark.slow
async def test_api_and_worker_killed_while_threads_wait(dev_server: Any) -> None:
    queue = f"faults-{uuid.uuid4()}"
    conn = ["--address", dev_server.address, "--task-queue", queue]
    graph = ["--graph", "examples.purchase:graph"]
    port = _free_port()
    tag = uuid.uuid4().hex[:8]
    api, worker = _spawn("serve", *conn, *graph, "--port", str(port)), \
        _spawn("worker", *conn, *graph)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
        try:
            await _up(http, api)

            async def start(i: int) -> str:
                tid = (await http.post("/threads", json={"metadata": {"batch": tag}})
                       ).json()["thread_id"]
                r = await http.post(f"/threads/{tid}/runs/wait", json={
                    "assistant_id": "purchase",
                    "input": {"item": f"item {i}", "amount": i, "status": "pending"}})
                assert r.status_code == 200 and r.json()["__interrupt__"], r.text
                return str(tid)

            tids = await _each(list(range(THREADS)), start)
        finally:
            _kill(api)
            _kill(worker)
        # A new API process and a new worker: every waiting thread is found and answered.
        port = _free_port()
        api, worker = _spawn("serve", *conn, *graph, "--port", str(port)), \
            _spawn("worker", *conn, *graph)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
        try:
            await _up(http, api)
            want = {"metadata": {"batch": tag}, "status": "interrupted"}
            for _ in range(100):  # visibility lags a little
                if (await http.post("/threads/count", json=want)).json() == THREADS:
                    break
                await asyncio.sleep(0.1)
            assert (await http.post("/threads/count", json=want)).json() == THREADS

            async def answer(tid: str) -> None:
                r = await http.post(f"/threads/{tid}/runs/wait", json={
                    "assistant_id": "purchase", "command": {"resume": True}})
                assert r.status_code == 200 and r.json()["status"] == "charged", r.text

            await _each(tids, answer)
            done = {"metadata": {"batch": tag}, "status": "idle"}
            for _ in range(100):
                if (await http.post("/threads/count", json=done)).json() == THREADS:
                    break
                await asyncio.sleep(0.1)
            assert (await http.post("/threads/count", json=done)).json() == THREADS
        finally:
            _kill(api)
            _kill(worker)
