"""Re-record the histories in histories/: `python -m tests.replay.record`.

Starts an in-memory dev server and a worker serving GRAPHS, runs each scenario to
completion through RemoteGraph, and saves every run's history as JSON. Only
re-record when the graphs change on purpose; see README.md.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError

from graphrun import Command, NodeFailedError
from graphrun.client import GraphClient
from graphrun.devserver import DevServer
from graphrun.payloads import ThreadResult
from graphrun.worker import create_worker
from tests.replay import graphs
from tests.replay.graphs import GRAPHS
from tests.settle import settled

HISTORIES = Path(__file__).parent / "histories"
INTERRUPT = "__interrupt__"


def _cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


async def _save(handle: WorkflowHandle[Any, Any], name: str) -> None:
    history = await handle.fetch_history()
    path = HISTORIES / f"{name}.json"
    # Re-indent compactly so the files stay small and diffable.
    path.write_text(json.dumps(json.loads(history.to_json()), indent=1) + "\n")
    print(f"  {path.relative_to(Path.cwd())}: {len(history.events)} events, "
          f"{path.stat().st_size} bytes")


async def _finish(gc: GraphClient, thread_id: str) -> WorkflowHandle[Any, Any]:
    handle = gc.client.get_workflow_handle(gc.workflow_id(thread_id), result_type=ThreadResult)
    # The thread's workflow stays open once it is done (histories recorded before threads
    # lived closed it): its history is complete once it says so.
    await settled(handle)
    return handle


def derive_bad_approval() -> None:
    """bad_approval.json = approval.json with the first activity's type renamed.

    The one edit makes the recorded commands differ from what GraphWorkflow
    schedules ("run_node"), so replaying it must raise NondeterminismError.
    """
    history = json.loads((HISTORIES / "approval.json").read_text())
    scheduled = next(e for e in history["events"]
                     if e["eventType"] == "EVENT_TYPE_ACTIVITY_TASK_SCHEDULED")
    attrs = scheduled["activityTaskScheduledEventAttributes"]
    assert attrs["activityType"]["name"] == "run_node", attrs["activityType"]
    attrs["activityType"]["name"] = "run_node_renamed"
    path = HISTORIES / "bad_approval.json"
    path.write_text(json.dumps(history, indent=1) + "\n")
    print(f"  {path.relative_to(Path.cwd())}: derived from approval.json")


async def record_approval(gc: GraphClient) -> None:
    await _approve_and_save(gc, "approval", 42)
    derive_bad_approval()


async def record_parallel(gc: GraphClient) -> None:
    await _answer_both(gc, "parallel", _cfg("parallel"))


async def record_max_concurrency(gc: GraphClient) -> None:
    """parallel with max_concurrency=1: its two questions are asked one activity at a time
    (the max-concurrency patch)."""
    await _answer_both(gc, "max_concurrency",
                       {**_cfg("max-concurrency"), "max_concurrency": 1})


async def _answer_both(gc: GraphClient, history: str, cfg: dict[str, Any]) -> None:
    """parallel's two questions, answered together by id."""
    g = gc.graph("parallel")
    out = await g.ainvoke({"answers": []}, cfg)
    ids = {i.value: i.id for i in out[INTERRUPT]}
    assert set(ids) == {"question a", "question b"}, out
    out = await g.ainvoke(Command(resume={ids["question a"]: "yes",
                                          ids["question b"]: "no"}), cfg)
    assert out.get("done") is True and sorted(out["answers"]) == ["a=yes", "b=no"], out
    await _save(await _finish(gc, cfg["configurable"]["thread_id"]), history)


async def record_flaky(gc: GraphClient) -> None:
    await _fail_then_fix(gc, "flaky", "FLAKY_BROKEN", "broken", ["broken ok", "steady ok"])


async def record_handled(gc: GraphClient) -> None:
    """handled: a node fails and its error handler, a node of its own run as its own
    activity, fails too; resumed, the handler runs again (not the node) and recovers."""
    await _fail_then_fix(gc, "handled", "HANDLER_BROKEN", "__error_handler__fails", [
        "recovered from fails: downstream service unavailable", "steady ok"])


async def _fail_then_fix(gc: GraphClient, name: str, broken: str, failing: str,
                         log: list[str]) -> None:
    """`name` run while graphs.<broken> makes node `failing` fail, then resumed fixed."""
    g, cfg = gc.graph(name), _cfg(name)
    setattr(graphs, broken, True)
    try:
        await g.ainvoke({"log": []}, cfg)
        raise AssertionError(f"{name}: expected NodeFailedError")
    except NodeFailedError as exc:
        assert exc.node == failing, exc
    setattr(graphs, broken, False)
    out = await g.ainvoke(None, cfg)
    assert sorted(out["log"]) == log, out
    await _save(await _finish(gc, name), name)


async def record_looping(gc: GraphClient) -> None:
    g, cfg = gc.graph("looping"), _cfg("looping")
    wid = gc.workflow_id("looping")
    out = await g.ainvoke({"rounds": 0}, cfg)
    first_run = (await gc.client.get_workflow_handle(wid).describe()).run_id
    answer, extra = 1, 2  # keep going for a couple of rounds after the first continue-as-new
    while True:
        assert INTERRUPT in out, out
        out = await g.ainvoke(Command(resume=answer), cfg)
        current = (await gc.client.get_workflow_handle(wid).describe()).run_id
        if current != first_run:
            extra -= 1
            if extra == 0:
                break
        answer += 1
        assert answer < 50, "looping: no continue-as-new happened"
    out = await g.ainvoke(Command(resume=0), cfg)
    assert INTERRUPT not in out and out["last"] == 0, out
    last = await _finish(gc, "looping")
    await _save(gc.client.get_workflow_handle(wid, run_id=first_run), "looping_first_run")
    await _save(last, "looping_last_run")


async def record_signals(gc: GraphClient) -> None:
    """approval answered by signals: a refused one, update_state while paused, a good one."""
    g, cfg = gc.graph("approval"), _cfg("approval-signals")
    out = await g.ainvoke({"amount": 7}, cfg)
    assert INTERRUPT in out, out
    handle = gc.client.get_workflow_handle("approval-signals")
    await handle.signal("resume", {"wrong": True})
    await g.aupdate_state(cfg, {"amount": 70})
    await gc.resume("approval-signals", True)
    last = await _finish(gc, "approval-signals")
    final = await g.aget_state(cfg)
    assert final.values == {"amount": 70, "approved": True, "charged": True}, final
    await _save(last, "approval_signals")


async def record_deadline(gc: GraphClient) -> None:
    g, cfg = gc.graph("deadline"), _cfg("deadline")
    out = await g.ainvoke({}, cfg)
    assert INTERRUPT in out, out
    await _finish(gc, "deadline")  # the 1 s timer answers with the default
    assert (await g.aget_state(cfg)).values == {"decision": False}
    await _save(gc.client.get_workflow_handle("deadline"), "deadline")


async def record_routed_update(gc: GraphClient) -> None:
    """update_state as a node with a routing function (the route_update activity)."""
    g, cfg = gc.graph("routed"), _cfg("routed-update")
    out = await g.ainvoke({}, cfg)
    assert INTERRUPT in out, out
    await g.aupdate_state(cfg, {"x": 42}, as_node="ask")
    out = await g.ainvoke(None, cfg)
    assert out == {"x": 42, "path": "big"}, out
    await _save(await _finish(gc, "routed-update"), "routed_update")


async def record_refused_attack(gc: GraphClient) -> None:
    """approval under attack: a signal and an update naming os:system, then a real answer."""
    g, cfg = gc.graph("approval"), _cfg("approval-attack")
    out = await g.ainvoke({"amount": 9}, cfg)
    assert INTERRUPT in out, out
    handle = gc.client.get_workflow_handle("approval-attack")
    attack = {"__gr": "enum", "cls": "os:system", "v": "true"}
    await handle.signal("resume", {"resume": attack})
    deep: Any = "deep"
    for _ in range(70):  # past the default depth limit (64)
        deep = [deep]
    await handle.signal("resume", {"resume": deep})
    try:
        await handle.execute_update("update_state", args=[attack, None, None])
        raise AssertionError("update_state naming os:system was accepted")
    except WorkflowUpdateFailedError:
        pass
    await gc.resume("approval-attack", True)
    last = await _finish(gc, "approval-attack")
    state = await last.query("get_state")
    assert len(state["refused"]) == 2 and state["values"]["charged"] is True, state
    await _save(last, "refused_attack")


async def record_empty_start(gc: GraphClient) -> None:
    """A first update refused by the SDK's own decoder: the started workflow closes."""
    from temporalio.client import WithStartWorkflowOperation
    from temporalio.common import WorkflowIDConflictPolicy
    from temporalio.converter import DataConverter

    deep: Any = "deep"
    for _ in range(300):  # deeper than Temporal's JSON decoder reads
        deep = [deep]
    plain = Client(**{**gc.client.config(), "data_converter": DataConverter.default})
    op: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        "GraphWorkflow", {"graph": "approval", "thread_id": "empty-start"}, id="empty-start",
        task_queue=gc.task_queue, id_conflict_policy=WorkflowIDConflictPolicy.FAIL)
    try:
        await plain.execute_update_with_start_workflow("invoke", {"input": {"amount": deep}},
                                                       start_workflow_operation=op)
        raise AssertionError("a 300-deep input was accepted")
    except WorkflowUpdateFailedError:
        pass
    await _save(await _finish(gc, "empty-start"), "empty_start")


async def record_copy_fork(gc: GraphClient) -> None:
    """parallel, paused at a and b: a __copy__ fork answering both in one step, run on."""
    from graphrun import StateUpdate

    g, cfg = gc.graph("parallel"), _cfg("copy-fork")
    out = await g.ainvoke({"answers": []}, cfg)
    assert len(out[INTERRUPT]) == 2, out
    head = await g.aget_state(cfg)
    fork = await g.aupdate_state(head.config, [StateUpdate({"answers": ["a=x"]}, "a"),
                                               StateUpdate({"answers": ["b=y"]}, "b")],
                                 as_node="__copy__")
    assert (await g.aget_state(fork)).next == ("c",)
    out = await g.ainvoke(None, fork)
    assert out == {"answers": ["a=x", "b=y"], "done": True}, out
    await _save(await _finish(gc, "copy-fork"), "copy_fork")


async def record_subgraph_fork(gc: GraphClient) -> None:
    """subgraph, paused in its review subgraph: time travel inside it. Its own checkpoint
    updated as `check` (routed in the route_update activity, by the subgraph's namespace),
    run from there (InvokeRequest.subgraph_checkpoints), answered, and finished."""
    g, cfg = gc.graph("subgraph"), _cfg("subgraph-fork")
    out = await g.ainvoke({"amount": 50}, cfg)
    assert out[INTERRUPT][0].value == {"amount": 50}, out
    sub = (await g.aget_state(cfg, subgraphs=True)).tasks[0].state
    fork = await g.aupdate_state(sub.config, {"amount": 500}, as_node="check")
    assert (await g.aget_state(fork)).next == ("reject",)
    out = await g.ainvoke(None, fork)
    assert out["notes"][-1] == "rejected" and INTERRUPT not in out, out
    out = await g.ainvoke({"amount": 20}, cfg)
    sub = (await g.aget_state(cfg, subgraphs=True)).tasks[0].state
    out = await g.ainvoke(None, sub.config)  # a replay there asks again
    assert out[INTERRUPT][0].value == {"amount": 20}, out
    out = await g.ainvoke(Command(resume="ok"), cfg)
    assert out["notes"][-2:] == ["answer:ok", "approved"], out
    await _save(await _finish(gc, "subgraph-fork"), "subgraph_fork")


async def record_step_timeout(gc: GraphClient) -> None:
    """slow, with RemoteGraph.step_timeout: its wait step runs past it (a timer, the
    activity cancelled, StepTimeoutError), then the thread goes on without the limit."""
    from graphrun.errors import StepTimeoutError

    g, cfg = gc.graph("slow"), _cfg("step-timeout")
    g.step_timeout = 1
    try:
        await g.ainvoke({"seconds": 3, "done": []}, cfg)
        raise AssertionError("the step did not time out")
    except StepTimeoutError:
        pass
    assert (await g.aget_state(cfg)).next == ("wait",)
    g.step_timeout = None
    out = await g.ainvoke(None, cfg)
    assert out["done"] == ["first", "wait"], out
    await _save(await _finish(gc, "step-timeout"), "step_timeout")


async def record_cancel_kept(gc: GraphClient) -> None:
    """race, cancelled while `wait` runs and after `quick` finished: quick's writes are
    kept (pending), and the thread goes on without running it again."""
    g, cfg = gc.graph("race"), _cfg("cancel-kept")
    call = asyncio.ensure_future(g.ainvoke({"seconds": 2}, cfg))
    await asyncio.sleep(1)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    for _ in range(100):
        state = await g.aget_state(cfg)
        if state.next == ("wait",):
            break
        await asyncio.sleep(0.1)
    assert state.next == ("wait",) and state.values["done"] == ["quick"], state
    await asyncio.sleep(2)  # the cancelled activity ends before the thread goes on
    out = await g.ainvoke(None, cfg)
    assert sorted(out["done"]) == ["quick", "wait"], out
    await _save(await _finish(gc, "cancel-kept"), "cancel_kept")


async def record_bulk_update(gc: GraphClient) -> None:
    """parallel, paused at a and b: bulk_update_state answers a, then b, one checkpoint
    per superstep, and the thread runs on."""
    from graphrun import StateUpdate

    g, cfg = gc.graph("parallel"), _cfg("bulk-update")
    out = await g.ainvoke({"answers": []}, cfg)
    assert len(out[INTERRUPT]) == 2, out
    await g.abulk_update_state(cfg, [[StateUpdate({"answers": ["a=x"]}, "a")],
                                     [StateUpdate({"answers": ["b=y"]}, "b")]])
    out = await g.ainvoke(None, cfg)
    assert out["answers"] == ["a=x", "b=y"], out
    await _save(await _finish(gc, "bulk-update"), "bulk_update")


async def record_streamed(gc: GraphClient) -> None:
    """streamed, read live with astream: the activity's publish signals, the reader's poll
    updates, the end markers; paused, then resumed by a second streamed run."""
    g, cfg = gc.graph("streamed"), _cfg("streamed")
    chunks = [c async for c in g.astream({"said": 0}, cfg, stream_mode=["custom", "updates"])]
    assert ("custom", {"line": 2}) in chunks and chunks[-1][0] == "updates", chunks
    chunks = [c async for c in g.astream(Command(resume="yes"), cfg)]
    assert chunks == [{"ask": {"answer": "yes"}}], chunks
    await _save(await _finish(gc, "streamed"), "streamed")


async def record_relayed(gc: GraphClient) -> None:
    """streamed, read by callers with LangChain handlers: astream_events v2 (its nodes'
    callback events relayed, streamed: NodeCall.callbacks), then the resume through a
    v3 run stream (content-block messages asked of the nodes: NodeCall.messages_v2)."""
    g, cfg = gc.graph("streamed"), _cfg("relayed")
    events = [e async for e in g.astream_events({"said": 0}, cfg, version="v2")]
    assert any(e["event"] == "on_chain_start" and e["name"] == "talk" for e in events), [
        (e["event"], e["name"]) for e in events]
    run = await g.astream_events(Command(resume="yes"), cfg, version="v3")
    out = await run.output()
    assert out["answer"] == "yes", out
    await _save(await _finish(gc, "relayed"), "relayed")


async def record_told(gc: GraphClient) -> None:
    """Callers with a LangChain handler that do not stream (graphrun.relay): the nodes'
    callback events come back batched with their results, a failed node's by the
    `relayed_runs` signal, and the runs pause and resume (RunResult.relayed_in names
    where the `relayed` query finds them). told.json: approval, paused and approved;
    told_flaky.json: flaky, failed and run again."""
    from langchain_core.callbacks import BaseCallbackHandler

    class Heard(BaseCallbackHandler):
        def __init__(self) -> None:
            self.starts: list[str] = []

        def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
            self.starts.append(kwargs.get("name") or "")

    heard = Heard()
    g, cfg = gc.graph("approval"), {**_cfg("told"), "callbacks": [heard]}
    out = await g.ainvoke({"amount": 7}, cfg)
    assert INTERRUPT in out, out
    out = await g.ainvoke(Command(resume=True), cfg)
    assert out.get("charged") is True, out
    assert heard.starts.count("request_approval") == 2, heard.starts
    await _save(await _finish(gc, "told"), "told")
    g, cfg = gc.graph("flaky"), {**_cfg("told-flaky"), "callbacks": [heard]}
    graphs.FLAKY_BROKEN = True
    try:
        await g.ainvoke({"log": []}, cfg)
        raise AssertionError("told_flaky: expected NodeFailedError")
    except NodeFailedError:
        pass
    assert "broken" in heard.starts, heard.starts  # from the failed attempt's signal
    graphs.FLAKY_BROKEN = False
    await g.ainvoke(None, cfg)
    await _save(await _finish(gc, "told-flaky"), "told_flaky")


async def _approve_and_save(gc: GraphClient, name: str, amount: int) -> None:
    """One approval thread, paused and approved, saved as histories/<name>.json."""
    thread = name.replace("_", "-")
    g, cfg = gc.graph("approval"), _cfg(thread)
    out = await g.ainvoke({"amount": amount}, cfg)
    assert INTERRUPT in out, out
    out = await g.ainvoke(Command(resume=True), cfg)
    assert out.get("charged") is True, out
    await _save(await _finish(gc, thread), name)


async def record_approval_compact(gc: GraphClient) -> None:
    """approval as the workflow now writes it: compact node calls and results, liveness
    heartbeats and retries of lost workers, a result with the last checkpoint only."""
    await _approve_and_save(gc, "approval_compact", 7)


async def record_approval_status(gc: GraphClient) -> None:
    """approval started by a client that sets GraphStatus/GraphName at the start: the
    workflow upserts only the values that change."""
    await _approve_and_save(gc, "approval_status", 9)


async def record_functional(gc: GraphClient) -> None:
    """an @entrypoint: each @task call an activity, the entrypoint run again between
    rounds of calls, an interrupt in between."""
    g, cfg = gc.graph("functional"), _cfg("functional")
    out = await g.ainvoke(["pen", "ink"], cfg)
    assert INTERRUPT in out, out
    out = await g.ainvoke(Command(resume=True), cfg)
    assert out == {"total": 6, "receipt": "settled 6"}, out
    await _save(await _finish(gc, "functional"), "functional")


async def record_approval_stored(gc: GraphClient) -> None:
    """approval on a worker with external payload storage: each invocation records the
    marker that lifts the payload size check (replay it with storage on too)."""
    import tempfile

    from graphrun.client import data_converter

    with tempfile.TemporaryDirectory() as payloads:
        client = await Client.connect(gc.client.service_client.config.target_host,
                                      data_converter=data_converter(external_storage=payloads))
        queue = "replay-record-stored"
        async with create_worker(client, GRAPHS, task_queue=queue):
            await _approve_and_save(GraphClient(client, task_queue=queue), "approval_stored", 8)


async def record_agent(gc: GraphClient) -> None:
    """create_agent + HumanInTheLoopMiddleware (LangGraph's object, bridged): a model
    turn, the approval, two tool calls as Send tasks, a model turn."""
    g, cfg = gc.graph("agent"), _cfg("agent")
    from examples.agent_approval import REQUEST

    out = await g.ainvoke(REQUEST, cfg)
    assert INTERRUPT in out, out
    out = await g.ainvoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg)
    assert out["messages"][-1].content.endswith("Paid INV-7: 1200.00 EUR"), out
    await _save(await _finish(gc, "agent"), "agent")


async def record_runs(gc: GraphClient) -> None:
    """slow, as the Server API runs it: named runs with records, metadata set by signal,
    a background run cancelled while it runs, a queued one cancelled with "rollback", a
    record deleted, a last run with multitask "interrupt"."""
    g, cfg = gc.graph("slow"), _cfg("runs")
    handle = gc.client.get_workflow_handle(gc.workflow_id("runs"))
    record = {"assistant_id": "slow", "metadata": {"by": "replay"}}
    out = await g.thread(cfg).run({"seconds": 30}, {"interrupt_after": ["first"]},
                                  run_id="run-0", record=record)
    assert out.status == "interrupted", out
    await handle.signal("set_metadata", {"owner": "ops"})
    await g.thread(cfg).run(None, {}, run_id="run-1", record=record, background=True)
    while (await handle.query("runs"))[-1]["status"] != "running":
        await asyncio.sleep(0.05)
    await g.thread(cfg).run({"seconds": 0}, {}, run_id="run-2", record=record, background=True)
    await handle.execute_update("cancel_run", args=["run-2", "rollback"])
    await handle.execute_update("cancel_run", args=["run-1", "interrupt"])
    await handle.execute_update("delete_run", args=["run-0"])
    await g.thread(cfg).run(None, {}, run_id="run-3", record=record, background=True)
    out = await g.thread(cfg).run({"seconds": 0, "done": ["i"]}, {}, run_id="run-4",
                                  record=record, multitask="interrupt")
    assert out.status == "done", out
    runs = {r["run_id"]: r["status"] for r in await handle.query("runs")}
    assert runs == {"run-1": "interrupted", "run-3": "interrupted", "run-4": "success"}, runs
    await _save(await _finish(gc, "runs"), "runs")


async def record_server_records(gc: GraphClient) -> None:
    """The Server API's own workflows, through the API: a thread created before its first
    run (ThreadRecord), a user assistant patched, set back and deleted (AssistantRecord),
    a cron fired once on a thread (CronRun)."""
    import httpx

    from graphrun.server import build_app
    from graphrun.workflows.records import assistant_workflow_id

    app = build_app(gc, GRAPHS)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://api") as http:
        r = await http.post("/threads", json={"thread_id": "record", "metadata": {"a": 1}})
        assert r.status_code == 200, r.text
        await _save(gc.client.get_workflow_handle(gc.workflow_id("record")), "thread_record")
        a = (await http.post("/assistants", json={
            "assistant_id": "00000000-0000-4000-8000-000000000001", "graph_id": "approval",
            "config": {"recursion_limit": 5}})).json()
        aid = a["assistant_id"]
        assert (await http.patch(f"/assistants/{aid}", json={"metadata": {"v": 2}})
                ).status_code == 200
        assert (await http.post(f"/assistants/{aid}/latest", json={"version": 1})
                ).status_code == 200
        assert (await http.delete(f"/assistants/{aid}")).status_code == 204
        handle = gc.client.get_workflow_handle(assistant_workflow_id(gc.id_prefix, aid))
        await handle.result()
        await _save(handle, "assistant_record")
        await http.post("/threads", json={"thread_id": "cron-thread"})
        cron = (await http.post("/threads/cron-thread/runs/crons", json={
            "assistant_id": "approval", "schedule": "0 0 1 1 *",
            "input": {"amount": 3}})).json()
        schedule = gc.client.get_schedule_handle(
            f"{gc.id_prefix}graphrun-cron-{cron['cron_id']}")
        await schedule.trigger()
        async for wf in gc.client.list_workflows("WorkflowType = 'CronRun'"):
            fired = gc.client.get_workflow_handle(wf.id, run_id=wf.run_id)
            break
        else:
            for _ in range(100):
                await asyncio.sleep(0.1)
                found = [wf async for wf in gc.client.list_workflows(
                    "WorkflowType = 'CronRun'")]
                if found:
                    fired = gc.client.get_workflow_handle(found[0].id, run_id=found[0].run_id)
                    break
        await fired.result()
        await _save(fired, "cron_run")
        await http.delete(f"/runs/crons/{cron['cron_id']}")


async def record_resolved(gc: GraphClient) -> None:
    """approval paused, then update_state as __end__: nothing left to run, the thread is
    done (the status-after-update patch) and its workflow closes."""
    g, cfg = gc.graph("approval"), _cfg("resolved")
    out = await g.ainvoke({"amount": 5}, cfg)
    assert INTERRUPT in out, out
    await g.aupdate_state(cfg, None, as_node="__end__")
    await _save(await _finish(gc, "resolved"), "resolved")


async def record_thread_lives(gc: GraphClient) -> None:
    """approval on a thread that lives: done, invoked again with new input, answered,
    its metadata patched, a TTL set and refreshed, its history pruned to the latest."""
    g, cfg = gc.graph("approval"), _cfg("lives")
    handle = gc.client.get_workflow_handle(gc.workflow_id("lives"))
    for amount in (7, 8):
        out = await g.ainvoke({"amount": amount}, cfg)
        assert INTERRUPT in out, out
        await g.ainvoke(Command(resume=True), cfg)
    await handle.signal("set_metadata", {"owner": "ops"})
    await handle.signal("set_ttl", {"strategy": "delete", "ttl": 60 * 24})
    await handle.signal("touch")
    assert await handle.execute_update("prune", "keep_latest") > 0
    assert (await handle.describe()).status.name == "RUNNING"
    await _save(handle, "thread_lives")


async def record_record_adopted(gc: GraphClient) -> None:
    """A thread made before its first run (a ThreadRecord that stays open), whose first
    run turns it into the thread's GraphWorkflow by continue-as-new."""
    from graphrun.lifetime import ThreadTTL

    await gc.create_thread("adopted", metadata={"graph_id": "approval", "k": 1},
                           ttl=ThreadTTL(ttl=60 * 24))
    record = gc.client.get_workflow_handle(gc.workflow_id("adopted"))
    first = (await record.describe()).run_id
    out = await gc.graph("approval").ainvoke({"amount": 3}, _cfg("adopted"))
    assert INTERRUPT in out, out
    await _save(gc.client.get_workflow_handle(gc.workflow_id("adopted"), run_id=first),
                "record_adopted")
    await _save(gc.client.get_workflow_handle(gc.workflow_id("adopted")), "adopted_thread")


async def record_lives_declared(gc: GraphClient) -> None:
    """A thread record and a thread whose starts say they live (StartRequest.lives): no
    patch marker in either; the record adopted by its first run, the thread done, run
    again and answered, open throughout."""
    await gc.create_thread("declared-record", metadata={"graph_id": "approval"})
    record = gc.client.get_workflow_handle(gc.workflow_id("declared-record"))
    first = (await record.describe()).run_id
    out = await gc.graph("approval").ainvoke({"amount": 4}, _cfg("declared-record"))
    assert INTERRUPT in out, out
    await _save(gc.client.get_workflow_handle(gc.workflow_id("declared-record"), run_id=first),
                "record_lives_declared")
    g, cfg = gc.graph("approval"), _cfg("declared")
    for amount in (5, 6):
        out = await g.ainvoke({"amount": amount}, cfg)
        assert INTERRUPT in out, out
        await g.ainvoke(Command(resume=True), cfg)
    handle = gc.client.get_workflow_handle(gc.workflow_id("declared"))
    assert (await handle.describe()).status.name == "RUNNING"
    await _save(handle, "lives_declared")


async def record_stateless_webhook(gc: GraphClient) -> None:
    """slow, as a stateless background run of the Server API: its webhook sent with header
    templates and allowed fields, and its thread deleted once the run has ended
    (delete_after). Recorded on a worker whose delete_thread cannot delete (as on the
    time-skipping server: the run then ends by itself), so the history is left to save."""
    import os
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from temporalio import activity

    import graphrun.worker

    got: list[dict[str, str]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            got.append(dict(self.headers))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    @activity.defn(name="delete_thread")
    async def cannot_delete(workflow_id: str) -> int:
        return -1

    hook = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    os.environ["LG_WEBHOOK_TOKEN"] = "replay"
    real, graphrun.worker.delete_thread = graphrun.worker.delete_thread, cannot_delete
    queue = "replay-record-stateless"
    try:
        async with create_worker(gc.client, GRAPHS, task_queue=queue):
            own = GraphClient(gc.client, task_queue=queue)
            g, cfg = own.graph("slow"), _cfg("stateless")
            out = await g.thread(cfg).run({"seconds": 0}, {}, run_id="run-0",
                                          record={"assistant_id": "slow"},
                                          webhook=f"http://127.0.0.1:{hook.server_address[1]}/done",
                                          webhook_options={
                                              "headers": {"X-Token": "${{ env.LG_WEBHOOK_TOKEN }}"},
                                              "env_prefix": "LG_WEBHOOK_",
                                              "allowed_fields": ["run_id", "status"]},
                                          delete_after=True)
            assert out.status == "done", out
            handle = own.client.get_workflow_handle(own.workflow_id("stateless"))
            await handle.result()  # ended once its thread was (not) deleted
            assert [h.get("X-Token") for h in got] == ["replay"], got
            await _save(handle, "stateless_webhook")
    finally:
        graphrun.worker.delete_thread = real
        hook.shutdown()


async def _make_current(client: Client, deployment: str, build: str) -> None:
    from temporalio.api.enums.v1 import RoutingConfigUpdateState
    from temporalio.api.workflowservice.v1 import (
        DescribeWorkerDeploymentRequest,
        SetWorkerDeploymentCurrentVersionRequest,
    )

    request = SetWorkerDeploymentCurrentVersionRequest(
        namespace=client.namespace, deployment_name=deployment, build_id=build)
    for _ in range(100):  # the version exists once its worker polled
        try:
            await client.workflow_service.set_worker_deployment_current_version(request)
            break
        except Exception:
            await asyncio.sleep(0.1)
    done = RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_COMPLETED
    for _ in range(100):
        info = (await client.workflow_service.describe_worker_deployment(
            DescribeWorkerDeploymentRequest(namespace=client.namespace,
                                            deployment_name=deployment))
                ).worker_deployment_info
        if info.routing_config_update_state == done:
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(f"{deployment}:{build} never became current")


async def record_version_moved(gc: GraphClient) -> None:
    """approval on a pinned thread of Worker Deployment version v1, paused; v2 becomes
    current; `upgrade_threads` wakes it and it continues as new onto v2. Saved: the v1
    run, which ends in that continue-as-new."""
    from graphrun.worker import deployment_config

    queue, deployment = "replay-record-versioned", "replay-record"
    own = GraphClient(gc.client, task_queue=queue)
    g, cfg = own.graph("approval"), _cfg("moved")
    async with create_worker(gc.client, GRAPHS, task_queue=queue,
                             deployment_config=deployment_config(deployment, "v1")):
        await _make_current(gc.client, deployment, "v1")
        out = await g.ainvoke({"amount": 9}, cfg)
        assert INTERRUPT in out, out
        first = await gc.client.get_workflow_handle(own.workflow_id("moved")).describe()
        async with create_worker(gc.client, GRAPHS, task_queue=queue,
                                 deployment_config=deployment_config(deployment, "v2")):
            await _make_current(gc.client, deployment, "v2")
            assert await own.upgrade_threads(deployment) == [own.workflow_id("moved")]
            v1_run = gc.client.get_workflow_handle(first.id, run_id=first.run_id)
            for _ in range(100):
                if (await v1_run.describe()).status.name == "CONTINUED_AS_NEW":
                    break
                await asyncio.sleep(0.1)
            out = await g.ainvoke(Command(resume=True), cfg)
            assert out.get("charged") is True, out
            await _save(v1_run, "version_moved")


RECORDERS = ["approval", "parallel", "flaky", "looping", "signals", "deadline",
             "routed_update", "refused_attack", "empty_start", "copy_fork",
             "approval_compact", "approval_stored", "approval_status", "functional", "bulk_update",
             "streamed", "agent", "runs", "server_records",
             "resolved", "relayed", "subgraph_fork", "max_concurrency",
             "step_timeout", "cancel_kept", "thread_lives", "record_adopted",
             "stateless_webhook", "lives_declared", "version_moved", "told",
             "handled"]


async def main(names: list[str]) -> None:
    HISTORIES.mkdir(exist_ok=True)
    async with DevServer(ui=False) as srv:
        client = await Client.connect(srv.address)
        queue = "replay-record"  # fixed, with fixed thread ids, so re-records diff cleanly
        async with create_worker(client, GRAPHS, task_queue=queue):
            gc = GraphClient(client, task_queue=queue)
            for name in names:
                if name == "looping":
                    gc_ = GraphClient(client, task_queue=queue, history_event_limit=30)
                    await record_looping(gc_)
                else:
                    await globals()[f"record_{name}"](gc)


if __name__ == "__main__":
    # Names record just those (a new history); none re-records every one.
    chosen = sys.argv[1:] or RECORDERS
    unknown = set(chosen) - set(RECORDERS)
    if unknown:
        raise SystemExit(f"unknown scenario(s) {sorted(unknown)}; known: {RECORDERS}")
    asyncio.run(main(chosen))
