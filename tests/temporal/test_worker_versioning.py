"""Worker Versioning: a graph change shipped as a new worker version while threads wait.

Two `graphrun worker` processes of one Worker Deployment serve two versions of the graph
(tests/temporal/versioned_graph.py) on one task queue. Pinned threads run each run on the
version it started on and move to the deployment's current version between runs; new
threads start on the current version; `graphrun upgrade-threads` moves paused ones."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from temporalio.api.enums.v1 import RoutingConfigUpdateState
from temporalio.api.workflowservice.v1 import (
    DescribeWorkerDeploymentRequest,
    SetWorkerDeploymentCurrentVersionRequest,
)
from temporalio.client import Client

from graphrun.client import GraphClient
from graphrun.types import Command
from tests.cli.helpers import Background, run_cli, usage_errors

pytestmark = pytest.mark.temporal

GRAPHS = "tests.temporal.versioned_graph"


def _worker(address: str, queue: str, deployment: str, build: str, *flags: str) -> Background:
    bg = Background.start("worker", "--graph", f"{GRAPHS}:{build}", "--address", address,
                          "--task-queue", queue, "--build-id", build, *flags,
                          env={"GRAPHRUN_DEPLOYMENT_NAME": deployment})
    bg.wait_for("ready")
    return bg


async def _make_current(client: Client, deployment: str, build: str) -> None:
    """`temporal worker deployment set-current-version`, once the version's worker polled,
    and until the task queue routes to it."""
    request = SetWorkerDeploymentCurrentVersionRequest(
        namespace=client.namespace, deployment_name=deployment, build_id=build)
    for _ in range(100):
        try:
            await client.workflow_service.set_worker_deployment_current_version(request)
            break
        except Exception:  # the version is not known until its worker's first poll
            await asyncio.sleep(0.1)
    else:
        await client.workflow_service.set_worker_deployment_current_version(request)
    describe = DescribeWorkerDeploymentRequest(namespace=client.namespace,
                                               deployment_name=deployment)
    for _ in range(150):
        info = (await client.workflow_service.describe_worker_deployment(describe)
                ).worker_deployment_info
        if info.routing_config_update_state == RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_COMPLETED:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{deployment}:{build} never became the routed version")


async def _build_of(client: Client, thread: str) -> str:
    desc = await client.get_workflow_handle(thread).describe()
    return desc.raw_description.workflow_execution_info.versioning_info \
        .deployment_version.build_id


async def _moves_to(client: Client, thread: str, build: str) -> None:
    for _ in range(100):
        if await _build_of(client, thread) == build:
            return
        await asyncio.sleep(0.1)
    assert await _build_of(client, thread) == build


@pytest.mark.slow
async def test_graph_change_shipped_as_new_version(dev_server: Any,
                                                   temporal_client: Client) -> None:
    queue, deployment = f"ver-{uuid.uuid4()}", f"dep-{uuid.uuid4().hex[:8]}"
    old = _worker(dev_server.address, queue, deployment, "v1")
    new: Background | None = None
    try:
        assert any(f"version: {deployment}:v1 (Worker Versioning, pinned)" in line
                   for line in old.lines), old.lines
        await _make_current(temporal_client, deployment, "v1")
        gc = GraphClient(temporal_client, task_queue=queue)
        remote = gc.graph("versioned")

        def cfg(thread: str) -> dict[str, Any]:
            return {"configurable": {"thread_id": thread}}

        waiting = [f"t{i}-{uuid.uuid4().hex[:6]}" for i in range(3)]
        for t in waiting:  # three approvals asked by v1's graph
            out = await remote.ainvoke({"order": t}, cfg(t))
            assert out["__interrupt__"][0].value == {"question": f"approve {t}?"}
            assert await _build_of(temporal_client, t) == "v1"

        new = _worker(dev_server.address, queue, deployment, "v2")
        await _make_current(temporal_client, deployment, "v2")

        # A new thread starts on v2: v2's graph, its receipt node too.
        fresh = f"new-{uuid.uuid4().hex[:6]}"
        await remote.ainvoke({"order": fresh}, cfg(fresh))
        assert await _build_of(temporal_client, fresh) == "v2"
        done = await remote.ainvoke(Command(resume="yes"), cfg(fresh))
        assert done == {"order": fresh, "status": "approved, charged by v2",
                        "receipt": f"receipt for {fresh}"}

        # A paused thread resumed before any upgrade: its run stays on v1, the version its
        # question came from (v1's graph answers), then the thread moves to v2.
        first = waiting.pop(0)
        done = await remote.ainvoke(Command(resume="yes"), cfg(first))
        assert done == {"order": first, "status": "approved, charged by v1"}
        await _moves_to(temporal_client, first, "v2")
        state = await remote.aget_state(cfg(first))
        assert state.values == done and state.next == ()

        # `graphrun upgrade-threads` wakes the rest: paused, they move to v2 at once and
        # their interrupted node resumes there, with v2's graph after it.
        r = run_cli("upgrade-threads", "--address", dev_server.address,
                    "--deployment-name", deployment)
        assert r.code == 0, r
        assert f"{len(waiting)} thread(s) woken" in r.out, r.out
        for t in waiting:
            await _moves_to(temporal_client, t, "v2")
            paused = await remote.aget_state(cfg(t))
            assert paused.next == ("ask",)
            assert paused.tasks[0].interrupts[0].value == {"question": f"approve {t}?"}
        answers = await asyncio.gather(*(remote.ainvoke(Command(resume=a), cfg(t))
                                         for t, a in zip(waiting, ["yes", "no"], strict=True)))
        assert answers == [
            {"order": waiting[0], "status": "approved, charged by v2",
             "receipt": f"receipt for {waiting[0]}"},
            {"order": waiting[1], "status": "rejected, charged by v2",
             "receipt": f"receipt for {waiting[1]}"}]
        # Nothing is left on v1 (visibility lags a write by a moment), and a second
        # upgrade wakes nobody.
        query = (f"TemporalWorkerDeploymentVersion = '{deployment}:v1' "
                 f"AND ExecutionStatus = 'Running'")
        for _ in range(100):
            if not [w async for w in temporal_client.list_workflows(query)]:
                break
            await asyncio.sleep(0.1)
        assert [w.id async for w in temporal_client.list_workflows(query)] == []
        again = await gc.upgrade_threads(deployment)
        assert again == []

        # Rolling back is the same move the other way: v1 current again, every thread
        # (all idle now) moves back, and its next run is v1's graph.
        await _make_current(temporal_client, deployment, "v1")
        back = await gc.upgrade_threads(deployment)
        assert sorted(back) == sorted([first, *waiting, fresh])
        await _moves_to(temporal_client, fresh, "v1")
        await remote.ainvoke({"order": fresh}, cfg(fresh))
        done = await remote.ainvoke(Command(resume="yes"), cfg(fresh))
        assert done["status"] == "approved, charged by v1"
    finally:
        for bg in (old, new):
            if bg is not None:
                bg.kill()


def test_versioning_flags_are_checked(dev_server: Any, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from graphrun.cli import main

    base = ["worker", "--graph", f"{GRAPHS}:v1", "--address", dev_server.address]
    usage_errors(monkeypatch, capsys, base, [
        (["--build-id", "v1"], {}, "needs both --deployment-name and --build-id"),
        (["--deployment-name", "d"], {}, "needs both --deployment-name and --build-id"),
        (["--deployment-name", "d", "--build-id", "v1", "--versioning-behavior", "sticky"],
         {}, "'sticky': one of pinned, auto-upgrade"),
        ([], {"GRAPHRUN_BUILD_ID": "it's"}, "GRAPHRUN_BUILD_ID: \"it's\": a non-empty name"),
    ])
    code = main(["upgrade-threads", "--address", dev_server.address,
                 "--deployment-name", f"none-{uuid.uuid4().hex[:6]}"])
    err = capsys.readouterr().err
    assert code == 1 and "no Worker Deployment" in err, err


def test_auto_upgrade_maps_to_temporal() -> None:
    import argparse

    from temporalio.common import VersioningBehavior

    from graphrun.cli import _worker_options, build_parser

    args = build_parser().parse_args(["worker", "--graph", "m:g", "--deployment-name", "d",
                                      "--build-id", "b2", "--versioning-behavior",
                                      "auto-upgrade"])
    assert isinstance(args, argparse.Namespace)
    config = _worker_options(args)["deployment_config"]
    assert (config.version.deployment_name, config.version.build_id) == ("d", "b2")
    assert config.use_worker_versioning
    assert config.default_versioning_behavior == VersioningBehavior.AUTO_UPGRADE
