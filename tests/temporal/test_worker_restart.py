"""Worker processes die: a paused thread resumes on a new one, and a node cut off
mid-run runs again there."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from graphrun import Command
from graphrun.client import GraphClient


def _start_worker(address: str, queue: str, journal: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.temporal.restart_worker", address, queue, str(journal)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.slow
async def test_paused_thread_resumes_on_a_new_worker_process(dev_server: Any,
                                                             temporal_client: Any,
                                                             tmp_path: Path) -> None:
    queue = f"restart-{uuid.uuid4()}"
    journal = tmp_path / "journal.txt"
    config = {"configurable": {"thread_id": f"order-{uuid.uuid4().hex[:8]}"}}
    remote = GraphClient(temporal_client, task_queue=queue).graph("journal")

    first = _start_worker(dev_server.address, queue, journal)
    try:
        out = await remote.ainvoke({"order": "A-1", "status": "new"}, config)
        assert out["__interrupt__"][0].value == {"question": "Approve A-1?"}
    finally:
        first.kill()
        first.wait()

    second = _start_worker(dev_server.address, queue, journal)
    try:
        final = await remote.ainvoke(Command(resume=True), config)
    finally:
        second.kill()
        second.wait()

    assert final["status"] == "done after approved"
    lines = [line.split() for line in journal.read_text().splitlines()]
    assert [name for name, _ in lines] == ["prepare", "approve", "approve", "finish"]
    # prepare ran once, in the first process; the resume ran in the second one.
    assert lines[0][1] == str(first.pid) and lines[-1][1] == str(second.pid)


@pytest.mark.slow
async def test_a_node_whose_worker_dies_runs_again_on_a_new_worker(dev_server: Any,
                                                                   temporal_client: Any,
                                                                   tmp_path: Path) -> None:
    """The worker is killed 1 s into a 4 s node without a RetryPolicy: that is not the
    node's error, so Temporal runs it again on the next worker and the thread finishes
    on its own; the nodes before and after it run once."""
    queue = f"crash-{uuid.uuid4()}"
    journal = tmp_path / "journal.txt"
    config = {"configurable": {"thread_id": f"crash-{uuid.uuid4().hex[:8]}"}}
    remote = GraphClient(temporal_client, task_queue=queue).graph("crashy")

    first = _start_worker(dev_server.address, queue, journal)
    run = asyncio.ensure_future(remote.ainvoke({"order": "C-1", "status": "new"}, config))
    try:
        for _ in range(100):
            if journal.exists() and "slow-start" in journal.read_text():
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)
    finally:
        first.kill()  # SIGKILL: no shutdown, no goodbye to the server
        first.wait()
    second = _start_worker(dev_server.address, queue, journal)
    try:
        final = await asyncio.wait_for(run, timeout=60)
    finally:
        second.kill()
        second.wait()

    assert final["status"] == "done after slow"
    lines = [line.split() for line in journal.read_text().splitlines()]
    assert [name for name, _ in lines] == ["first", "slow-start", "slow-start", "slow-end",
                                           "last"]
    assert lines[0][1] == lines[1][1] == str(first.pid)
    assert {pid for _, pid in lines[2:]} == {str(second.pid)}
