"""`graphrun dev` keeps large payloads in files beside its state; the other commands read
them through GRAPHRUN_PAYLOAD_DIR, and say so when it is missing."""

from __future__ import annotations

import json

import pytest

from tests.cli.helpers import Background, free_port, run_cli
from tests.cli.large_graph import SIZE

pytestmark = pytest.mark.temporal

INPUT = json.dumps({"blob": "", "answers": []})


def _start(state_dir, *extra: str) -> tuple[Background, str]:
    dev = Background.start("dev", "--no-ui", "--port", str(free_port()), "--state-dir",
                           str(state_dir), "--task-queue", "dev-large",
                           "--graph", "tests.cli.large_graph:graph", *extra)
    line = dev.wait_for("Temporal dev server:")
    return dev, line.split("Temporal dev server:")[1].split()[0]


@pytest.mark.slow
def test_dev_stores_large_payloads_beside_its_state(tmp_path) -> None:
    state_dir = tmp_path / "state"
    payloads = state_dir.resolve() / "payloads"
    dev, address = _start(state_dir)
    try:
        assert str(payloads) in dev.wait_for("large payloads")
        assert dev.wait_for("export GRAPHRUN_PAYLOAD_DIR=").endswith(str(payloads))
        dev.wait_for("ready")
        env = {"TEMPORAL_ADDRESS": address, "GRAPHRUN_TASK_QUEUE": "dev-large",
               "GRAPHRUN_PAYLOAD_DIR": str(payloads)}

        r = run_cli("invoke", "large", "--thread", "big", "--json", "--input", INPUT, env=env)
        assert r.code == 0, r.err
        out = json.loads(r.out)
        assert out["status"] == "interrupted" and len(out["values"]["blob"]) == SIZE
        assert any(payloads.rglob("sha256/*/*"))

        # Without the directory, a command cannot read the thread, and says why.
        r = run_cli("state", "big", "--json", env={**env, "GRAPHRUN_PAYLOAD_DIR": ""})
        assert r.code == 1 and "GRAPHRUN_PAYLOAD_DIR is not set" in r.err, r.err

        r = run_cli("invoke", "large", "--thread", "big", "--json", "--resume", "yes", env=env)
        assert r.code == 0, r.err
        out = json.loads(r.out)
        assert out["values"]["answers"] == ["yes"] and len(out["values"]["blob"]) == SIZE
        code, _ = dev.interrupt(timeout=15)
        assert code == 0, dev.lines
    finally:
        dev.kill()


@pytest.mark.slow
def test_dev_without_payload_store_keeps_payloads_in_history(tmp_path) -> None:
    dev, address = _start(tmp_path / "state", "--no-payload-store")
    try:
        assert "in history" in dev.wait_for("large payloads")
        dev.wait_for("ready")
        env = {"TEMPORAL_ADDRESS": address, "GRAPHRUN_TASK_QUEUE": "dev-large"}
        # A 3 MB state cannot pass through history: the run fails, the command says so.
        r = run_cli("invoke", "large", "--thread", "big", "--json", "--input", INPUT,
                    env=env, timeout=60)
        assert r.code == 1 and "TooLarge" in r.err, (r.out, r.err)
        assert not (tmp_path / "state" / "payloads").exists()
        code, _ = dev.interrupt(timeout=15)
        assert code == 0, dev.lines
    finally:
        dev.kill()
