"""`graphrun dev`: server + worker in one command, persistent state, clean Ctrl-C."""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import Background, free_port, run_cli

pytestmark = pytest.mark.temporal


@pytest.mark.slow
def test_dev_serves_examples_persists_and_stops_on_ctrl_c(tmp_path) -> None:
    state_dir = tmp_path / "state"
    dev = Background.start("dev", "--no-ui", "--port", str(free_port()),
                           "--state-dir", str(state_dir), "--task-queue", "dev-test")
    try:
        line = dev.wait_for("Temporal dev server:")
        address = line.split("Temporal dev server:")[1].split()[0]
        served = dev.wait_for("serving:")
        assert "purchase" in served and "approval" in served
        dev.wait_for("ready")

        r = run_cli("invoke", "purchase", "--thread", "dev-order", "--json",
                    "--input", json.dumps({"item": "x", "amount": 1.0, "status": "pending"}),
                    env={"TEMPORAL_ADDRESS": address, "GRAPHRUN_TASK_QUEUE": "dev-test"})
        assert r.code == 0, r.err
        assert json.loads(r.out)["status"] == "interrupted"

        code, took = dev.interrupt(timeout=15)
        assert code == 0, dev.lines
        assert took < 8, took
        assert (state_dir / "temporal.db").is_file()
    finally:
        dev.kill()

    # Same state dir, new server: the paused thread is still there.
    dev = Background.start("dev", "--no-ui", "--port", str(free_port()),
                           "--state-dir", str(state_dir), "--task-queue", "dev-test",
                           "--graph", "examples.purchase:graph")
    try:
        line = dev.wait_for("Temporal dev server:")
        address = line.split("Temporal dev server:")[1].split()[0]
        dev.wait_for("ready")
        r = run_cli("state", "dev-order", "--address", address, "--task-queue", "dev-test")
        assert r.code == 0, r.err
        assert "status: interrupted" in r.out and "Approve this purchase?" in r.out
        code, _ = dev.interrupt(timeout=15)
        assert code == 0, dev.lines
    finally:
        dev.kill()
