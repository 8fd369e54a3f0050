"""Data never names code: attacks through every entry point run nothing on the worker.

The worker is a separate process (tests/temporal/security_worker.py). Each attack
is a tagged value naming `os:system`, `subprocess.*`, `builtins:eval/exec` or a
class the graph never declared, under every class tag, with arguments that would
create a marker file. The marker never appears, the refusal is recorded or the
update rejected, the thread stays usable, and a legitimate answer finishes it.
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.converter import DataConverter
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import ActivityEnvironment

from graphrun import Command, registry
from graphrun.activities import run_node
from graphrun.checkpoint import Task
from graphrun.client import GraphClient
from graphrun.devserver import temporal_cli_path
from graphrun.errors import InputLimitError
from graphrun.payloads import NodeCall, StartRequest
from graphrun.serde import TAG, dumps
from tests.unit.test_serde import all_attacks

ROOT = Path(__file__).parents[2]
INPUT = {"item": "GPU rental", "amount": 96.0, "scores": [], "status": "new"}


@pytest.fixture(scope="module")
def queue(dev_server: Any) -> Iterator[str]:
    """The task queue of a worker process of its own, serving `approval`."""
    name = f"security-{uuid.uuid4()}"
    proc = subprocess.Popen([sys.executable, "-m", "tests.temporal.security_worker",
                             dev_server.address, name], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield name
    finally:
        proc.kill()
        proc.wait()


async def _paused(temporal_client: Any, queue: str) -> tuple[Any, str]:
    remote = GraphClient(temporal_client, task_queue=queue).graph("approval")
    tid = f"sec-{uuid.uuid4().hex[:10]}"
    out = await remote.ainvoke(INPUT, {"configurable": {"thread_id": tid}})
    assert out["__interrupt__"][0].value["question"] == "Approve GPU rental?"
    return remote, tid


async def _state_when(temporal_client: Any, tid: str, ready: Any) -> dict[str, Any]:
    handle = temporal_client.get_workflow_handle(tid)
    for _ in range(100):
        state: dict[str, Any] = await handle.query("get_state")
        if ready(state):
            return state
        await asyncio.sleep(0.1)
    raise AssertionError(f"thread {tid} never reached the expected state: {state}")


def _signal_with_cli(address: str, tid: str, payload: Any) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:  # large ones pass ARG_MAX
        json.dump(payload, f)
        f.flush()
        subprocess.run([temporal_cli_path(), "workflow", "signal", "--address", address,
                        "--workflow-id", tid, "--name", "resume", "--input-file", f.name],
                       check=True, capture_output=True, timeout=60)


async def test_signals_from_the_temporal_cli_run_no_code(dev_server: Any, temporal_client: Any,
                                                         queue: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    attacks = all_attacks(marker)
    _, tid = await _paused(temporal_client, queue)
    for payload in attacks:
        _signal_with_cli(dev_server.address, tid, {"resume": payload})
    last = attacks[-1]["cls"]
    state = await _state_when(temporal_client, tid,
                              lambda s: s["refused"] and last in s["refused"][-1])
    assert all("UndeclaredTypeError" in r for r in state["refused"]), state["refused"]
    assert state["status"] == "interrupted" and state["next"] == ["approve"]
    assert not marker.exists()

    _signal_with_cli(dev_server.address, tid, {"resume": True})
    state = await _state_when(temporal_client, tid, lambda s: s["status"] == "done")
    assert state["values"]["status"] == "approved"
    assert not marker.exists()


async def test_updates_naming_code_are_rejected_by_the_validator(temporal_client: Any,
                                                                 queue: str,
                                                                 tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    remote, tid = await _paused(temporal_client, queue)
    handle = temporal_client.get_workflow_handle(tid)  # a plain client: raw JSON on the wire
    for payload in all_attacks(marker):
        command = {TAG: "command", "graph": None, "update": None, "goto": [], "resume": payload}
        for name, args in (("invoke", [{"input": command}]), ("invoke", [{"input": payload}]),
                           ("update_state", [payload, None, None])):
            with pytest.raises(WorkflowUpdateFailedError) as err:
                await handle.execute_update(name, args=args)
            assert isinstance(err.value.cause, ApplicationError)
            assert err.value.cause.type == "UndeclaredTypeError", err.value.cause
    assert not marker.exists()
    # Rejected by validators: none of them entered history.
    accepted = [e async for e in handle.fetch_history_events()
                if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED]
    assert len(accepted) == 1  # the invocation that started the thread

    # A dict that merely looks like a tag, sent by graphrun's client, stays a dict.
    config = {"configurable": {"thread_id": tid}}
    out = await remote.ainvoke(Command(resume={"look": all_attacks(marker)[0]}), config)
    assert out["status"].startswith("rejected: {'look': {'__gr': 'enum', 'cls': 'os:system'")
    assert not marker.exists()


async def test_a_hand_started_workflow_with_a_seeded_thread_runs_no_code(
        temporal_client: Any, queue: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"

    async def start(payload: Any) -> str:
        tid = f"seeded-{uuid.uuid4().hex[:10]}"
        seed = {"thread_id": tid, "seq": 1, "checkpoints": [{
            "id": "c0", "step": 0, "source": "input", "channel_values": {"item": payload},
            "channel_versions": {}, "versions_seen": {}, "parent_id": None,
            "created_at": "2026-01-01T00:00:00+00:00"}]}
        await temporal_client.start_workflow(
            "GraphWorkflow", StartRequest(graph="approval", thread_id=tid, thread=seed),
            id=tid, task_queue=queue)
        state = await _state_when(temporal_client, tid, lambda s: s["refused"])
        assert "seeded thread refused" in state["refused"][0]
        assert "UndeclaredTypeError" in state["refused"][0]
        assert state["status"] == "failed" and state["values"] == {}
        return tid

    tids = await asyncio.gather(*(start(p) for p in all_attacks(marker)))
    assert not marker.exists()
    # Still usable: new input runs the graph, and an answer finishes it.
    remote = GraphClient(temporal_client, task_queue=queue).graph("approval")
    config = {"configurable": {"thread_id": tids[0]}}
    out = await remote.ainvoke(INPUT, config)
    assert out["__interrupt__"]
    assert (await remote.ainvoke(Command(resume=True), config))["status"] == "approved"


async def test_activity_inputs_naming_code_are_refused(tmp_path: Path) -> None:
    from tests.temporal.security_worker import graph

    marker = tmp_path / "pwned"
    registry.register("approval", graph)
    task = dumps(Task(id="t", name="approve", path=("pull", "approve"),
                      triggers=("branch:to:approve",), input=dict(INPUT), ns="approve:t",
                      step=1))
    env = ActivityEnvironment()
    for payload in all_attacks(marker):
        for field in ({"task": payload}, {"resume": [payload]}, {"nested": payload},
                      {"config": {"configurable": payload}}, {"resume_map": payload}):
            call = NodeCall(graph="approval", node="approve", task_id="t", step=1,
                            thread_id="x", **{"task": task, **field})
            with pytest.raises(ApplicationError) as err:
                await env.run(run_node, call)
            assert err.value.type == "UndeclaredTypeError" and err.value.non_retryable
    assert not marker.exists()


# -- limits on what enters history ---------------------------------------------------
def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


async def test_too_large_or_too_deep_input_is_refused_before_it_is_written(
        temporal_client: Any, queue: str) -> None:
    remote = GraphClient(temporal_client, task_queue=queue).graph("approval")
    for bad, match in ((dict(INPUT, item=_nested(200)), "nested 201 levels deep"),
                       (dict(INPUT, item="x" * 2_000_000), "bytes as JSON")):
        tid = f"big-{uuid.uuid4().hex[:10]}"
        with pytest.raises(InputLimitError, match=match):
            await remote.ainvoke(bad, {"configurable": {"thread_id": tid}})
        with pytest.raises(RPCError) as err:  # nothing was started
            await temporal_client.get_workflow_handle(tid).describe()
        assert err.value.status == RPCStatusCode.NOT_FOUND


async def test_the_worker_refuses_what_passes_its_own_limits(dev_server: Any,
                                                            temporal_client: Any,
                                                            queue: str) -> None:
    # The worker's limits (32 levels, 200 kB) are below the client's defaults.
    remote, tid = await _paused(temporal_client, queue)
    handle = temporal_client.get_workflow_handle(tid)
    for value, match in ((_nested(40), "nested"), ("x" * 300_000, "bytes as JSON")):
        with pytest.raises(InputLimitError, match=match):
            await remote.ainvoke(Command(resume=value), {"configurable": {"thread_id": tid}})
        with pytest.raises(WorkflowUpdateFailedError) as err:
            await handle.execute_update("invoke", {"input": dumps(Command(resume=value))})
        assert err.value.cause.type == "InputLimitError" and match in err.value.cause.message
        _signal_with_cli(dev_server.address, tid, {"resume": value})
        state = await _state_when(temporal_client, tid,
                                  lambda s, m=match: s["refused"] and m in s["refused"][-1])
        assert "InputLimitError" in state["refused"][-1]
    state = await _state_when(temporal_client, tid, lambda s: True)
    assert state["status"] == "interrupted"
    out = await remote.ainvoke(Command(resume=True), {"configurable": {"thread_id": tid}})
    assert out["status"] == "approved"


async def test_a_refused_first_input_leaves_no_workflow_open(temporal_client: Any,
                                                             queue: str) -> None:
    # A raw update-with-start whose input the worker refuses: the workflow closes.
    from temporalio.client import WithStartWorkflowOperation
    from temporalio.common import WorkflowIDConflictPolicy

    tid = f"raw-{uuid.uuid4().hex[:10]}"
    op = WithStartWorkflowOperation("GraphWorkflow", StartRequest(graph="approval",
                                                                  thread_id=tid),
                                    id=tid, task_queue=queue,
                                    id_conflict_policy=WorkflowIDConflictPolicy.FAIL)
    with pytest.raises(WorkflowUpdateFailedError) as err:
        await temporal_client.execute_update_with_start_workflow(
            "invoke", {"input": {"item": _nested(40)}}, start_workflow_operation=op)
    assert err.value.cause.type == "InputLimitError"
    result = await temporal_client.get_workflow_handle(tid).result()
    assert result["thread"]["checkpoints"] == []


async def test_input_the_sdk_cannot_decode_leaves_no_workflow_open(temporal_client: Any,
                                                                   queue: str) -> None:
    # Deeper than Temporal's JSON decoder goes: the update is rejected before any graphrun
    # code sees it, and the workflow it started closes.
    from temporalio.client import WithStartWorkflowOperation
    from temporalio.common import WorkflowIDConflictPolicy

    tid = f"raw-{uuid.uuid4().hex[:10]}"
    op = WithStartWorkflowOperation("GraphWorkflow", {"graph": "approval", "thread_id": tid},
                                    id=tid, task_queue=queue,
                                    id_conflict_policy=WorkflowIDConflictPolicy.FAIL)
    plain = Client(**{**temporal_client.config(), "data_converter": DataConverter.default})
    with pytest.raises(WorkflowUpdateFailedError):  # the stdlib json writes it; few read it
        await plain.execute_update_with_start_workflow(
            "invoke", {"input": {"item": _nested(300)}}, start_workflow_operation=op)
    result = await temporal_client.get_workflow_handle(tid).result()
    assert result["thread"]["checkpoints"] == []


# -- values are not silently changed ----------------------------------------------
async def test_nan_and_infinities_round_trip(temporal_client: Any, queue: str) -> None:
    remote = GraphClient(temporal_client, task_queue=queue).graph("approval")
    config = {"configurable": {"thread_id": f"nan-{uuid.uuid4().hex[:10]}"}}
    out = await remote.ainvoke(dict(INPUT, amount=math.nan, scores=[math.inf, -math.inf]),
                               config)
    assert math.isnan(out["amount"]) and out["scores"] == [math.inf, -math.inf]
    assert math.isnan(out["__interrupt__"][0].value["amount"])
    snap = await remote.aget_state(config)
    assert math.isnan(snap.values["amount"]) and snap.values["scores"] == [math.inf, -math.inf]
    final = await remote.ainvoke(Command(resume=True), config)
    assert math.isnan(final["amount"]) and final["scores"] == [math.inf, -math.inf]
    assert final["status"] == "approved"
