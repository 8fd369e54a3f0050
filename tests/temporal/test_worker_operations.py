"""`graphrun worker` as a platform runs it: tuning flags (and their GRAPHRUN_* variables),
health and readiness probes, and a SIGTERM that drains running nodes while a SIGKILLed
neighbour's nodes run again elsewhere. Real worker processes on the session dev server."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphrun.client import GraphClient
from tests.cli.helpers import REPO, Background, free_port, usage_errors

pytestmark = pytest.mark.temporal

GRAPH = "tests.temporal.drain_graph:graph"


def _worker(address: str, queue: str, journal: Path, *flags: str,
            env: dict[str, str] | None = None) -> Background:
    bg = Background.start("worker", "--graph", GRAPH, "--address", address,
                          "--task-queue", queue, *flags,
                          env={"DRAIN_JOURNAL": str(journal), **(env or {})})
    bg.wait_for("ready")
    return bg


async def _get(port: int, path: str) -> httpx.Response:
    """GET on the worker's probe port, once it listens (it opens as the worker starts,
    just after the worker prints "ready")."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
        for _ in range(100):
            try:
                return await http.get(path)
            except httpx.ConnectError:
                await asyncio.sleep(0.05)
        return await http.get(path)


def _journal(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()] if path.exists() else []


def test_bad_worker_options_are_usage_errors(dev_server: Any, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:

    base = ("worker", "--graph", GRAPH, "--address", dev_server.address)
    usage_errors(monkeypatch, capsys, base, [
        (["--node-threads", "0"], {}, "--node-threads: 0: at least 1"),
        (["--resource-tuner", "2,0.5"], {}, "each fraction in (0, 1]"),
        (["--health-bind", "8081"], {}, "expected HOST:PORT"),
        (["--graceful-shutdown", "soon"], {}, "'soon' is not a number of seconds"),
        (["--resource-tuner", "0.8,0.8", "--max-concurrent-nodes", "4"], {},
         "--resource-tuner decides the slots"),
        ([], {"GRAPHRUN_NODE_THREADS": "none"}, "GRAPHRUN_NODE_THREADS: 'none' is not a whole"),
    ])


async def test_probes_and_flags_from_the_environment(dev_server: Any, tmp_path: Path) -> None:
    port = free_port()
    bg = _worker(dev_server.address, f"ops-{uuid.uuid4()}", tmp_path / "journal.txt",
                 "--resource-tuner", "0.9,0.9",
                 env={"GRAPHRUN_HEALTH_BIND": f"127.0.0.1:{port}",
                      "GRAPHRUN_NODE_THREADS": "3", "GRAPHRUN_GRACEFUL_SHUTDOWN": "5"})
    try:
        assert "on SIGTERM: running nodes get 5 s to finish" in bg.lines
        assert "sync nodes: 3 threads" in bg.lines
        assert "slots: Temporal's resource-based tuner" in bg.lines
        alive = await _get(port, "/healthz")
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            ready = await http.get("/readyz")
            assert (alive.status_code, alive.text) == (200, "ok\n")
            assert (ready.status_code, ready.text) == (200, "ready\n")
            assert (await http.get("/nope")).status_code == 404
            assert (await http.post("/readyz")).status_code == 405
        code, took = bg.interrupt()  # idle: stops at once, whatever the grace
        assert code == 0 and took < 5, bg.lines
    finally:
        bg.kill()


@pytest.mark.slow
async def test_sigterm_drains_its_nodes_and_a_killed_workers_run_again(
        dev_server: Any, temporal_client: Any, tmp_path: Path) -> None:
    """Two workers take four 4 s nodes each. One gets SIGTERM with a 30 s grace: it stops
    taking work, answers 503 on /readyz, lets its four nodes finish (each ran once) and
    exits 0. The other is SIGKILLed: its four nodes run again on a third worker. Every
    thread finishes."""
    queue = f"drain-{uuid.uuid4()}"
    journal = tmp_path / "journal.txt"
    port = free_port()
    flags = ("--max-concurrent-nodes", "4", "--node-threads", "4")
    draining = _worker(dev_server.address, queue, journal, *flags,
                       "--graceful-shutdown", "30", "--health-bind", f"127.0.0.1:{port}")
    killed = _worker(dev_server.address, queue, journal, *flags)
    remote = GraphClient(temporal_client, task_queue=queue).graph("drain")
    orders = [f"o{i}-{uuid.uuid4().hex[:6]}" for i in range(8)]
    runs = [asyncio.ensure_future(remote.ainvoke(
        {"order": o, "status": "new"}, {"configurable": {"thread_id": o}})) for o in orders]
    third: Background | None = None
    try:
        for _ in range(400):  # every node started: four on each worker (four slots each)
            if len([e for e in _journal(journal) if e[0] == "start"]) == 8:
                break
            await asyncio.sleep(0.05)
        started = {order: pid for what, order, pid in _journal(journal) if what == "start"}
        on_draining = {o for o, pid in started.items() if pid == str(draining.proc.pid)}
        on_killed = {o for o, pid in started.items() if pid == str(killed.proc.pid)}
        assert len(on_draining) == len(on_killed) == 4, started

        draining.proc.send_signal(signal.SIGTERM)
        killed.kill()
        draining.wait_for("draining: running nodes have 30 s to finish")
        ready = await _get(port, "/readyz")
        assert (ready.status_code, ready.text) == (503, "draining: the worker is shutting "
                                                        "down\n")
        third = _worker(dev_server.address, queue, journal, *flags)
        finals = await asyncio.wait_for(asyncio.gather(*runs), timeout=60)
        assert all(f["status"] == "worked" for f in finals)
        assert draining.proc.wait(timeout=30) == 0
        draining.wait_for("worker stopped")
    finally:
        for bg in (draining, killed, third):
            if bg is not None:
                bg.kill()

    entries = _journal(journal)
    for order in on_draining:  # drained: ran once, to its end, on the terminated worker
        assert [(w, p) for w, o, p in entries if o == order] == [
            ("start", str(draining.proc.pid)), ("end", str(draining.proc.pid))], entries
    assert third is not None
    for order in on_killed:  # cut off: ran again, to its end, on the third worker
        assert [(w, p) for w, o, p in entries if o == order] == [
            ("start", str(killed.proc.pid)), ("start", str(third.proc.pid)),
            ("end", str(third.proc.pid))], entries


def test_worker_help_lists_the_options() -> None:
    out = subprocess.run([sys.executable, "-m", "graphrun.cli", "worker", "--help"],
                         cwd=REPO, capture_output=True, text=True, timeout=30).stdout
    for flag in ("--max-cached-workflows", "--max-concurrent-nodes",
                 "--max-concurrent-workflow-tasks", "--resource-tuner", "--node-threads",
                 "--graceful-shutdown", "--health-bind", "GRAPHRUN_NODE_THREADS"):
        assert flag in out, flag
