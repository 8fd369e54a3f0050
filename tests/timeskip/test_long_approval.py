"""A purchase approval that waits for days, on the time-skipping test server."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any, TypedDict

from examples import purchase
from graphrun import START, Command, StateGraph, interrupt, registry
from graphrun.client import GraphClient
from graphrun.worker import create_worker


async def test_approval_resumed_after_two_days(time_skipping_env: Any) -> None:
    env = time_skipping_env
    queue = f"tq-{uuid.uuid4()}"
    thread = f"order-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread}}
    async with create_worker(env.client, {purchase.NAME: purchase.graph}, task_queue=queue):
        remote = GraphClient(env.client, task_queue=queue, search_attributes=False).graph(purchase.NAME)
        out = await remote.ainvoke({"item": "GPU", "amount": 96.0, "status": "pending"}, config)
        assert out["__interrupt__"][0].value["question"] == "Approve this purchase?"
        paused_at = await env.get_current_time()
        started = time.monotonic()
        await env.sleep(timedelta(days=2))
        assert await env.get_current_time() - paused_at >= timedelta(days=2)
        state = await remote.aget_state(config)
        assert state.next == ("request_approval",)
        final = await remote.ainvoke(Command(resume=True), config)
        assert final["status"] == "charged"
        assert time.monotonic() - started < 30  # two days passed in seconds of wall time


class Payment(TypedDict):
    amount: float
    status: str


def _deadline_graph(name: str, **interrupt_options: Any) -> Any:
    def approve(state: Payment) -> dict:
        ok = interrupt({"question": f"Pay {state['amount']}?"},
                       timeout=timedelta(days=3), **interrupt_options)
        return {"status": "paid" if ok else "declined"}

    return StateGraph(Payment).add_node("approve", approve).add_edge(START, "approve").compile(
        name=name)


async def _paused(env: Any, graph: Any) -> tuple[Any, dict, str]:
    queue = f"tq-{uuid.uuid4()}"
    registry.register(graph.name, graph)
    config = {"configurable": {"thread_id": f"pay-{uuid.uuid4().hex[:8]}"}}
    remote = GraphClient(env.client, task_queue=queue, search_attributes=False).graph(graph.name)
    return remote, config, queue


async def test_interrupt_deadline_resumes_with_its_default(time_skipping_env: Any) -> None:
    env = time_skipping_env
    graph = _deadline_graph(f"deadline-default-{uuid.uuid4().hex[:6]}", default=False)
    remote, config, queue = await _paused(env, graph)
    async with create_worker(env.client, {graph.name: graph}, task_queue=queue):
        out = await remote.ainvoke({"amount": 10.0, "status": "new"}, config)
        assert out["__interrupt__"]
        await env.sleep(timedelta(days=2))
        assert (await remote.aget_state(config)).next == ("approve",)  # not yet
        await env.sleep(timedelta(days=2))
        state = await remote.aget_state(config)
        assert state.next == () and state.values["status"] == "declined"


async def test_interrupt_deadline_without_default_marks_the_thread_failed(
        time_skipping_env: Any) -> None:
    env = time_skipping_env
    graph = _deadline_graph(f"deadline-fail-{uuid.uuid4().hex[:6]}")
    remote, config, queue = await _paused(env, graph)
    async with create_worker(env.client, {graph.name: graph}, task_queue=queue):
        await remote.ainvoke({"amount": 10.0, "status": "new"}, config)
        await env.sleep(timedelta(days=4))
        handle = env.client.get_workflow_handle(config["configurable"]["thread_id"])
        raw = await handle.query("get_state")
        assert raw["status"] == "failed"
        assert any("timed out" in r for r in raw["refused"])
        # The question is still pending: a late answer is still accepted.
        final = await remote.ainvoke(Command(resume=True), config)
        assert final["status"] == "paid"


async def test_a_thread_with_a_ttl_lives_for_days_then_goes(time_skipping_env: Any) -> None:
    """A thread with a 3-day TTL answered after two days (which starts it again) is
    deleted three days after that answer, not before."""
    from temporalio.client import WorkflowExecutionStatus
    from temporalio.service import RPCError, RPCStatusCode

    from graphrun.lifetime import ThreadTTL

    env = time_skipping_env
    queue = f"tq-{uuid.uuid4()}"
    thread = f"order-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread}}
    async with create_worker(env.client, {purchase.NAME: purchase.graph}, task_queue=queue):
        gc = GraphClient(env.client, task_queue=queue, search_attributes=False,
                         default_ttl=ThreadTTL(ttl=3 * 24 * 60))
        remote = gc.graph(purchase.NAME)
        await remote.ainvoke({"item": "GPU", "amount": 96.0, "status": "pending"}, config)
        await env.sleep(timedelta(days=2))
        assert (await remote.ainvoke(Command(resume=True), config))["status"] == "charged"
        await env.sleep(timedelta(days=2))
        assert (await remote.aget_state(config)).values["status"] == "charged"
        await env.sleep(timedelta(days=1, hours=1))
        # The test server cannot delete executions (a real one does: test_thread_life):
        # there the thread's workflow ends instead.
        handle = env.client.get_workflow_handle(thread)
        for _ in range(100):
            try:
                if (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED:
                    break
            except RPCError as exc:
                assert exc.status == RPCStatusCode.NOT_FOUND
                break
            await env.sleep(timedelta(minutes=1))
        else:
            raise AssertionError("the thread outlived its TTL")
