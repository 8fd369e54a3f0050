"""A thread paused before its worker process dies resumes on a new worker process."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from graphrun import Command
from graphrun.client import GraphClient


def _start_worker(address: str, queue: str, journal: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.temporal.restart_worker", address, queue, str(journal)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


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
