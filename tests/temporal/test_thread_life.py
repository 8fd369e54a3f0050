"""A thread lives until it is deleted or its TTL ends, whatever the namespace's retention.

Retention deletes closed executions: these tests delete every closed execution in the
namespace, exactly as it would, and find every thread still there, readable and
continued. They also cover a thread's TTL, its deletion and new life under the same id,
`prune`, and `migrate` for threads an earlier graphrun closed.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, TypedDict

import pytest
from temporalio import workflow
from temporalio.api.common.v1 import WorkflowExecution as Execution
from temporalio.api.workflowservice.v1 import DeleteWorkflowExecutionRequest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode
from temporalio.worker import Worker

from graphrun import START, Command, StateGraph, interrupt
from graphrun.activities import delete_thread, route_update, run_node, send_webhook
from graphrun.client import GRAPH_STATUS, GraphClient
from graphrun.lifetime import ThreadTTL
from graphrun.payloads import StartRequest
from graphrun.visibility import CREATED_AT, METADATA
from graphrun.worker import WORKFLOWS, _runner, create_worker
from graphrun.workflows import GraphWorkflow
from tests.settle import settled


class Order(TypedDict, total=False):
    item: str
    log: list[str]


def _ask(state: Order) -> dict:
    return {"log": [*state.get("log", []), f"{state['item']}:{interrupt('ok?')}"]}


def _build(name: str) -> Any:
    return (StateGraph(Order).add_node("ask", _ask).add_edge(START, "ask")
            .compile(name=name))


def _cfg(tid: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": tid}}


def _tid(label: str) -> str:
    return f"life-{label}-{uuid.uuid4().hex[:8]}"


async def _delete_closed_executions(client: Client) -> int:
    """What the namespace's retention does: every closed execution deleted."""
    closed = [(wf.id, wf.run_id) async for wf in
              client.list_workflows("ExecutionStatus != 'Running'")]
    for wid, run_id in closed:
        try:
            await client.workflow_service.delete_workflow_execution(
                DeleteWorkflowExecutionRequest(
                    namespace=client.namespace,
                    workflow_execution=Execution(workflow_id=wid, run_id=run_id or "")))
        except RPCError as exc:
            if exc.status != RPCStatusCode.NOT_FOUND:
                raise
    return len(closed)


async def _gone(client: Client, wid: str, timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        try:
            await client.get_workflow_handle(wid).describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return
            raise
        await asyncio.sleep(0.1)
    raise AssertionError(f"{wid} still exists")


@pytest.fixture
async def life(temporal_client: Client, task_queue: str) -> Any:
    name = f"life-{uuid.uuid4().hex[:8]}"
    async with create_worker(temporal_client, {name: _build(name)}, task_queue=task_queue):
        yield GraphClient(temporal_client, task_queue=task_queue), name


async def test_threads_survive_retention_and_go_on(life: Any) -> None:
    gc, name = life
    g = gc.graph(name)
    finished, paused, created = _tid("done"), _tid("paused"), _tid("created")
    await g.ainvoke({"item": "a"}, _cfg(finished))
    await g.ainvoke(Command(resume=1), _cfg(finished))
    first = await g.ainvoke({"item": "b"}, _cfg(paused))
    await gc.create_thread(created, metadata={"owner": "ops", "graph_id": name})

    # The history of a long-lived thread is short: some of its runs closed.
    assert await _delete_closed_executions(gc.client) >= 0
    for tid in (finished, paused, created):
        desc = await gc.client.get_workflow_handle(tid).describe()
        assert desc.status == WorkflowExecutionStatus.RUNNING, tid

    snap = await g.aget_state(_cfg(finished))
    assert snap.values["log"] == ["a:1"] and snap.next == ()
    # LangGraph goes on from the last checkpoint: new input on a finished thread.
    again = await g.ainvoke({"item": "c"}, _cfg(finished))
    assert again["__interrupt__"]
    assert (await g.ainvoke(Command(resume=2), _cfg(finished)))["log"] == ["a:1", "c:2"]

    assert (await g.ainvoke(Command(resume=3), _cfg(paused)))["log"] == ["b:3"]
    assert first["__interrupt__"][0].id != again["__interrupt__"][0].id

    # The created thread becomes the graph's thread on its first run, metadata kept.
    out = await g.ainvoke({"item": "d"}, _cfg(created))
    assert out["__interrupt__"]
    desc = await gc.client.get_workflow_handle(created).describe()
    assert desc.workflow_type == "GraphWorkflow"
    assert (await desc.memo())["metadata"]["owner"] == "ops"
    assert "owner:ops" in desc.typed_search_attributes.get(METADATA)
    assert desc.typed_search_attributes.get(CREATED_AT) is not None
    assert (await g.ainvoke(Command(resume=4), _cfg(created)))["log"] == ["d:4"]


async def test_a_thread_deleted_and_made_again_asks_with_new_ids(life: Any) -> None:
    gc, name = life
    g, tid = gc.graph(name), _tid("again")
    before = (await g.ainvoke({"item": "x"}, _cfg(tid)))["__interrupt__"][0]
    old_ckpt = (await g.aget_state(_cfg(tid))).config["configurable"]["checkpoint_id"]
    assert await gc.delete_thread(tid) >= 1
    await _gone(gc.client, tid)
    assert await gc.delete_thread(tid) == 0
    after = (await g.ainvoke({"item": "x"}, _cfg(tid)))["__interrupt__"][0]
    new_ckpt = (await g.aget_state(_cfg(tid))).config["configurable"]["checkpoint_id"]
    assert before.value == after.value
    assert before.id != after.id and old_ckpt != new_ckpt
    # An answer to the old question does not answer the new one.
    with pytest.raises(RuntimeError, match="not pending"):
        await g.ainvoke(Command(resume={before.id: True}), _cfg(tid))


async def test_ttl_deletes_the_thread_on_time(life: Any) -> None:
    gc, name = life
    g, tid, made = gc.graph(name), _tid("ttl"), _tid("ttl-record")
    await g.ainvoke({"item": "x"}, _cfg(tid))
    handle = gc.client.get_workflow_handle(tid)
    await handle.signal("set_ttl", {"strategy": "delete", "ttl": 0.03})  # 1.8 s
    await gc.create_thread(made, ttl=ThreadTTL(ttl=0.03))
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    assert await handle.query("expires_at")
    await asyncio.sleep(1.0)
    await handle.describe()  # not yet
    await _gone(gc.client, tid)
    await _gone(gc.client, made)
    took = loop.time() - t0
    assert 1.5 < took < 15, took
    assert [wf async for wf in gc.client.list_workflows(f"WorkflowId = '{tid}'")] == []


async def test_a_bad_ttl_is_refused_and_changes_nothing(life: Any) -> None:
    gc, name = life
    g, tid = gc.graph(name), _tid("badttl")
    await g.ainvoke({"item": "x"}, _cfg(tid))
    handle = gc.client.get_workflow_handle(tid)
    await handle.signal("set_ttl", {"strategy": "archive", "ttl": 1})
    await handle.signal("set_ttl", {"ttl": -1})
    state = await handle.query("get_state", args=[None, False, None])
    assert len(state["refused"]) == 2 and "set_ttl refused" in state["refused"][0]
    assert await handle.query("expires_at") == ""


async def test_prune_keeps_the_latest_checkpoint(life: Any) -> None:
    gc, name = life
    g, tid = gc.graph(name), _tid("prune")
    await g.ainvoke({"item": "x"}, _cfg(tid))
    await g.ainvoke(Command(resume=1), _cfg(tid))
    history = [s async for s in g.aget_state_history(_cfg(tid))]
    assert len(history) > 1
    handle = gc.client.get_workflow_handle(tid)
    assert await handle.execute_update("prune", "keep_latest") == len(history) - 1
    [left] = [s async for s in g.aget_state_history(_cfg(tid))]
    assert left.values == history[0].values
    assert (await g.ainvoke({"item": "y"}, _cfg(tid)))["__interrupt__"]


@workflow.defn(name="GraphWorkflow")
class _EarlierGraphWorkflow(GraphWorkflow):
    """GraphWorkflow as graphrun before threads lived: it closes once the graph ends."""

    @workflow.run
    async def run(self, req: StartRequest) -> Any:
        return await super().run(req)

    def _lives_now(self) -> bool:
        return False


async def test_migrate_reopens_threads_an_earlier_version_closed(
        temporal_client: Client, task_queue: str) -> None:
    name = f"life-{uuid.uuid4().hex[:8]}"
    graph = _build(name)
    old_queue = f"{task_queue}-old"
    tid = _tid("legacy")
    old = GraphClient(temporal_client, task_queue=old_queue)
    async with create_worker(temporal_client, {name: graph}, task_queue=task_queue), \
            Worker(old.client, task_queue=old_queue,
                   workflows=[_EarlierGraphWorkflow,
                              *(w for w in WORKFLOWS if w is not GraphWorkflow)],
                   activities=[run_node, route_update, send_webhook, delete_thread],
                   workflow_runner=_runner()):
        await old.graph(name).ainvoke({"item": "x"}, _cfg(tid))
        await old.graph(name).ainvoke(Command(resume=1), _cfg(tid))
        closed = temporal_client.get_workflow_handle(tid)
        await closed.result()
        assert (await closed.describe()).status == WorkflowExecutionStatus.COMPLETED

        gc = GraphClient(temporal_client, task_queue=task_queue)
        reopened: list[str] = []
        for _ in range(100):  # visibility shows the run closed a moment later
            reopened += await gc.migrate()
            if tid in reopened:
                break
            await asyncio.sleep(0.05)
        assert tid in reopened
        assert tid not in await gc.migrate()  # again: nothing to do
        desc = await closed.describe()
        assert desc.status == WorkflowExecutionStatus.RUNNING
        await settled(closed, "done")
        assert desc.typed_search_attributes.get(GRAPH_STATUS) == "done"
        # Retention may come now: the thread is in its open run.
        await _delete_closed_executions(temporal_client)
        snap = await gc.graph(name).aget_state(_cfg(tid))
        assert snap.values["log"] == ["x:1"]
        out = await gc.graph(name).ainvoke({"item": "y"}, _cfg(tid))
        assert out["__interrupt__"]
