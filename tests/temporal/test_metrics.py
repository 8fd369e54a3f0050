"""Metrics: Temporal's SDK metrics and graphrun's own, scraped from the Prometheus
endpoint of a worker (in-process through `prometheus_runtime`, and `graphrun worker
--metrics-bind`)."""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request
import uuid
from typing import Any, TypedDict

import pytest
from temporalio.client import Client

from graphrun import START, Command, NodeFailedError, StateGraph, interrupt, registry
from graphrun.client import GraphClient, data_converter
from graphrun.metrics import prometheus_runtime, waiting_reporter
from graphrun.worker import create_worker
from tests.cli.helpers import Background, free_port


class State(TypedDict, total=False):
    item: str
    status: str


def _approve(state: State) -> dict:
    return {"status": "approved" if interrupt({"question": "Approve?"}) else "rejected"}


def _broken(state: State) -> dict:
    raise KeyError("no such vendor")


def _graphs() -> dict[str, Any]:
    suffix = uuid.uuid4().hex[:8]
    approval = (StateGraph(State).add_node("approve", _approve).add_edge(START, "approve")
                .compile(name=f"approval-{suffix}"))
    broken = (StateGraph(State).add_node("charge", _broken).add_edge(START, "charge")
              .compile(name=f"broken-{suffix}"))
    graphs = {approval.name: approval, broken.name: broken}
    for name, graph in graphs.items():
        registry.register(name, graph)
    return graphs


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())


def value(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample `name{...labels...}` (other labels ignored), or None."""
    for line in text.splitlines():
        if not line.startswith(name + "{") and line.split(" ")[0] != name:
            continue
        found = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


async def until(port: int, check: Any, timeout: float = 15.0) -> str:
    deadline = time.monotonic() + timeout
    while True:
        text = await asyncio.to_thread(scrape, port)
        if check(text):
            return text
        if time.monotonic() > deadline:
            raise AssertionError(f"metrics never matched; last scrape:\n{text[-3000:]}")
        await asyncio.sleep(0.2)


async def test_graphrun_and_temporal_metrics_after_an_approval(dev_server: Any,
                                                               task_queue: str) -> None:
    port = free_port()
    client = await Client.connect(dev_server.address, data_converter=data_converter,
                                  runtime=prometheus_runtime(f"127.0.0.1:{port}"))
    graphs = _graphs()
    approval, broken = list(graphs)
    gc = GraphClient(client, task_queue=task_queue, tracing=None)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    async with create_worker(client, graphs, task_queue=task_queue, tracing=None), \
            waiting_reporter(client, graphs, every=0.2):
        out = await gc.graph(approval).ainvoke({"item": "GPU"}, config)
        assert "__interrupt__" in out
        await until(port, lambda t: value(t, "graphrun_interrupts_waiting", graph=approval) == 1)
        out = await gc.graph(approval).ainvoke(Command(resume=True), config)
        assert out["status"] == "approved"
        with pytest.raises(NodeFailedError):
            await gc.graph(broken).ainvoke({"item": "GPU"},
                                           {"configurable": {"thread_id": uuid.uuid4().hex}})
        text = await until(port, lambda t: value(
            t, "graphrun_interrupts_waiting", graph=approval) == 0 and value(
            t, "graphrun_runs", graph=approval, status="done") == 1)
    assert value(text, "graphrun_runs", graph=approval, status="interrupted") == 1
    assert value(text, "graphrun_runs", graph=broken, status="failed") == 1
    assert value(text, "graphrun_interrupts", graph=approval) == 1
    assert value(text, "graphrun_node_failures", graph=broken, node="charge",
                 error_type="KeyError") == 1
    # A histogram per node and outcome: the question, the answer, the failure.
    assert value(text, "graphrun_node_duration_count", graph=approval, node="approve",
                 outcome="interrupted") == 1
    assert value(text, "graphrun_node_duration_count", graph=approval, node="approve",
                 outcome="ok") == 1
    assert value(text, "graphrun_node_duration_count", graph=broken, node="charge",
                 outcome="error") == 1
    assert value(text, "graphrun_node_duration_bucket", graph=approval, node="approve",
                 outcome="ok", le="+Inf") == 1
    # Temporal's own, from the same endpoint, labelled with the task queue.
    assert value(text, "temporal_activity_execution_latency_count",
                 task_queue=task_queue, activity_type="run_node") >= 2
    assert value(text, "temporal_activity_execution_failed", task_queue=task_queue,
                 activity_type="run_node") == 1


async def test_graphrun_worker_metrics_bind(dev_server: Any, temporal_client: Client) -> None:
    """The command's flag: Prometheus text with graphrun's and Temporal's metrics."""
    port, tq = free_port(), f"metrics-{uuid.uuid4()}"
    worker = Background.start("worker", "--graph", "examples.purchase:graph",
                              "--address", dev_server.address, "--task-queue", tq,
                              "--metrics-bind", f"127.0.0.1:{port}", "--tracing", "off")
    try:
        assert "metrics: http://127.0.0.1:" in worker.wait_for("metrics:")
        worker.wait_for("ready")
        remote = GraphClient(temporal_client, task_queue=tq, tracing=None).graph("purchase")
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        await remote.ainvoke({"item": "GPU", "amount": 96.0, "status": "pending"}, config)
        out = await remote.ainvoke(Command(resume=True), config)
        assert out["status"] == "charged"
        text = await until(port, lambda t: value(t, "graphrun_runs", graph="purchase",
                                                 status="done") == 1)
        assert value(text, "graphrun_runs", graph="purchase", status="interrupted") == 1
        assert value(text, "graphrun_node_duration_count", node="charge_card") == 1
        assert "graphrun_interrupts_waiting" in text
        assert value(text, "temporal_activity_execution_latency_count", task_queue=tq,
                     activity_type="run_node") == 3
        assert value(text, "temporal_request", operation="CountWorkflowExecutions") is not None
        code, _ = worker.interrupt()
        assert code == 0
    finally:
        worker.kill()
