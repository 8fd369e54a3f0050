"""Threads on a real Temporal dev server: strict resume, signals, the CLI, search
attributes, failures, isolation, continue-as-new and typed values across the wire."""

from __future__ import annotations

import asyncio
import contextlib
import json
import operator
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError

import graphrun.errors as gerrors
from graphrun import END, START, Command, RetryPolicy, StateGraph, interrupt, registry
from graphrun.client import GRAPH_NAME, GRAPH_STATUS, GraphClient, RemoteGraph
from graphrun.devserver import temporal_cli_path

# -- helpers ----------------------------------------------------------------------------

_lock = threading.Lock()
CALLS: Counter[str] = Counter()


def _count(key: str) -> int:
    with _lock:
        CALLS[key] += 1
        return CALLS[key]


def _tid(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def _cfg(tid: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": tid}}


def _serve(temporal_client: Any, graph_worker: str, builder: StateGraph,
           **gc_kw: Any) -> tuple[RemoteGraph, str]:
    name = f"threads-{uuid.uuid4().hex[:12]}"
    registry.register(name, builder.compile(name=name))
    gc = GraphClient(temporal_client, task_queue=graph_worker, **gc_kw)
    return gc.graph(name), name


async def _poll(fn: Callable[[], Awaitable[Any]], ok: Callable[[Any], bool],
                timeout: float = 10.0, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        await asyncio.sleep(interval)


def _fingerprint(snap: Any) -> tuple[Any, ...]:
    return (snap.values, snap.next, sorted(i.id for i in snap.interrupts),
            snap.config["configurable"].get("checkpoint_id"))


def _helpful(exc: BaseException) -> bool:
    msg = str(exc).lower()
    return "pending" in msg or "interrupt id" in msg


# -- graphs -----------------------------------------------------------------------------

class AskState(TypedDict, total=False):
    topic: str
    answer: Any
    log: Annotated[list, operator.add]


def _ask_graph() -> StateGraph:
    def prepare(state: AskState) -> dict:
        return {"log": ["prepared"]}

    def approve(state: AskState) -> dict:
        answer = interrupt(f"approve {state['topic']}?")
        return {"answer": answer, "log": ["approved"]}

    return (StateGraph(AskState).add_node("prepare", prepare).add_node("approve", approve)
            .add_edge(START, "prepare").add_edge("prepare", "approve")
            .add_edge("approve", END))


def _parallel_ask_graph() -> StateGraph:
    def a(state: AskState) -> dict:
        return {"log": [f"a:{interrupt('question a')}"]}

    def b(state: AskState) -> dict:
        return {"log": [f"b:{interrupt('question b')}"]}

    return (StateGraph(AskState).add_node("a", a).add_node("b", b)
            .add_edge(START, "a").add_edge(START, "b"))


# -- 1. strict resume -------------------------------------------------------------------

async def test_resume_on_finished_thread_is_refused(temporal_client, graph_worker):
    def done(state: AskState) -> dict:
        return {"answer": "ok"}

    graph, _ = _serve(temporal_client, graph_worker,
                      StateGraph(AskState).add_node("done", done).add_edge(START, "done"))
    cfg = _cfg(_tid())
    out = await graph.ainvoke({"topic": "x"}, cfg)
    assert out["answer"] == "ok"
    with pytest.raises(gerrors.InvalidResumeError) as info:
        await graph.ainvoke(Command(resume=True), cfg)
    assert "nothing to resume" in str(info.value) or _helpful(info.value)
    snap = await graph.aget_state(cfg)
    assert snap.values == {"topic": "x", "answer": "ok", "log": []} and snap.next == ()


async def test_resume_map_with_unknown_id_changes_nothing(temporal_client, graph_worker):
    graph, _ = _serve(temporal_client, graph_worker, _ask_graph())
    cfg = _cfg(_tid())
    out = await graph.ainvoke({"topic": "car"}, cfg)
    assert [i.value for i in out["__interrupt__"]] == ["approve car?"]
    before = await graph.aget_state(cfg)
    assert before.next == ("approve",)
    unknown = uuid.uuid4().hex
    assert unknown not in {i.id for i in before.interrupts}
    with pytest.raises(gerrors.InvalidResumeError) as info:
        await graph.ainvoke(Command(resume={unknown: True}), cfg)
    assert _helpful(info.value), str(info.value)
    assert unknown in str(info.value)
    after = await graph.aget_state(cfg)
    assert _fingerprint(after) == _fingerprint(before)
    # The thread still answers a correct resume.
    final = await graph.ainvoke(Command(resume={before.interrupts[0].id: "yes"}), cfg)
    assert final["answer"] == "yes" and final["log"] == ["prepared", "approved"]


async def test_single_value_for_two_pending_interrupts_is_refused(temporal_client,
                                                                  graph_worker):
    graph, _ = _serve(temporal_client, graph_worker, _parallel_ask_graph())
    cfg = _cfg(_tid())
    out = await graph.ainvoke({"topic": "p"}, cfg)
    assert sorted(i.value for i in out["__interrupt__"]) == ["question a", "question b"]
    before = await graph.aget_state(cfg)
    assert len(before.interrupts) == 2
    with pytest.raises(gerrors.InvalidResumeError) as info:
        await graph.ainvoke(Command(resume=True), cfg)
    assert _helpful(info.value), str(info.value)
    after = await graph.aget_state(cfg)
    assert _fingerprint(after) == _fingerprint(before)
    ids = {i.value: i.id for i in before.interrupts}
    final = await graph.ainvoke(
        Command(resume={ids["question a"]: 1, ids["question b"]: 2}), cfg)
    assert sorted(final["log"]) == ["a:1", "b:2"]


# -- 2. signal resume -------------------------------------------------------------------

async def test_signal_resume_and_bad_signals(temporal_client, graph_worker):
    graph, _ = _serve(temporal_client, graph_worker, _ask_graph())
    gc = graph.gc
    tid = _tid()
    cfg = _cfg(tid)
    await graph.ainvoke({"topic": "boat"}, cfg)
    before = await graph.aget_state(cfg)
    handle = gc.client.get_workflow_handle(gc.workflow_id(tid))

    await handle.signal("resume", {"wrong": 1})
    await gc.resume(tid, True, interrupt_id="0" * 32)
    raw = await _poll(lambda: handle.query("get_state"), lambda r: len(r["refused"]) >= 2)
    assert len(raw["refused"]) == 2, raw["refused"]
    assert "resume" in raw["refused"][0]
    assert "0" * 32 in raw["refused"][1] and "InvalidResumeError" in raw["refused"][1]
    assert raw["status"] == "interrupted"
    after = await graph.aget_state(cfg)
    assert _fingerprint(after) == _fingerprint(before)
    desc = await handle.describe()
    assert desc.typed_search_attributes.get(GRAPH_STATUS) == "interrupted"

    await gc.resume(tid, True)
    snap = await _poll(lambda: graph.aget_state(cfg), lambda s: s.next == ())
    assert snap.next == ()
    assert snap.values == {"topic": "boat", "answer": True, "log": ["prepared", "approved"]}


# -- 3. resume from outside Python ------------------------------------------------------

async def test_resume_with_temporal_cli(temporal_client, graph_worker, dev_server):
    graph, _ = _serve(temporal_client, graph_worker, _ask_graph())
    tid = _tid("cli")
    cfg = _cfg(tid)
    await graph.ainvoke({"topic": "shell"}, cfg)
    proc = await asyncio.to_thread(subprocess.run, [
        temporal_cli_path(), "workflow", "signal", "--address", dev_server.address,
        "--workflow-id", tid, "--name", "resume", "--input", '{"resume": true}'],
        capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    snap = await _poll(lambda: graph.aget_state(cfg), lambda s: s.next == ())
    assert snap.next == ()
    assert snap.values == {"topic": "shell", "answer": True, "log": ["prepared", "approved"]}


# -- 4. search attributes and queries ---------------------------------------------------

async def test_search_attributes_and_queries(temporal_client, graph_worker):
    graph, name = _serve(temporal_client, graph_worker, _ask_graph())
    gc = graph.gc
    tid = _tid()
    cfg = _cfg(tid)
    await graph.ainvoke({"topic": "house"}, cfg)
    handle = gc.client.get_workflow_handle(gc.workflow_id(tid))
    desc = await handle.describe()
    assert desc.typed_search_attributes.get(GRAPH_STATUS) == "interrupted"
    assert desc.typed_search_attributes.get(GRAPH_NAME) == name

    threads = await _poll(lambda: gc.list_threads(status="interrupted", graph=name),
                          lambda ts: any(t.thread_id == tid for t in ts), timeout=5)
    found = [t for t in threads if t.thread_id == tid]
    assert found and found[0].graph == name and found[0].status == "interrupted"
    assert found[0].workflow_status == "RUNNING"

    pending = await handle.query("pending_interrupts")
    assert [p["value"] for p in pending] == ["approve house?"]
    snap = await graph.aget_state(cfg)
    assert pending[0]["id"] == snap.interrupts[0].id

    await graph.ainvoke(Command(resume="ok"), cfg)
    # The thread lives on, open, until it is deleted: its status says it is done.
    desc = await _poll(handle.describe,
                       lambda d: d.typed_search_attributes.get(GRAPH_STATUS) == "done")
    assert desc.status == WorkflowExecutionStatus.RUNNING
    final = await graph.aget_state(cfg)
    assert final.next == () and final.values["answer"] == "ok"
    assert await handle.query("pending_interrupts") == []
    # The start set running, the name and the times: only the changes are upserted
    # (each one is a visibility write on the server), with when they happened.
    upserts = [e.upsert_workflow_search_attributes_event_attributes.search_attributes
               for e in (await handle.fetch_history()).events
               if e.HasField("upsert_workflow_search_attributes_event_attributes")]
    fields = [{k: json.loads(v.data) for k, v in u.indexed_fields.items()} for u in upserts]
    # (the SDK's own TemporalChangeVersion upsert names the patches the run took)
    fields = [f for f in fields if "TemporalChangeVersion" not in f]
    assert [f["GraphStatus"] for f in fields] == ["interrupted", "running", "done"]
    assert [sorted(f) for f in fields] == [["GraphStatus", "GraphUpdatedAt"]] * 3
    times = [f["GraphUpdatedAt"] for f in fields]
    assert times == sorted(times)


# -- 5. failure without loss ------------------------------------------------------------

BROKEN = True


class CountState(TypedDict, total=False):
    key: str
    log: Annotated[list, operator.add]


async def test_failed_node_keeps_thread_and_sibling_writes(temporal_client, graph_worker):
    global BROKEN

    def a(state: CountState) -> dict:
        _count(f"a:{state['key']}")
        return {"log": ["a"]}

    def b(state: CountState) -> dict:
        _count(f"b:{state['key']}")
        if BROKEN:
            raise RuntimeError("b is broken")
        return {"log": ["b"]}

    builder = (StateGraph(CountState).add_node("a", a).add_node("b", b)
               .add_edge(START, "a").add_edge(START, "b"))
    graph, _ = _serve(temporal_client, graph_worker, builder)
    key = uuid.uuid4().hex
    tid = _tid()
    cfg = _cfg(tid)
    BROKEN = True
    try:
        with pytest.raises(gerrors.NodeFailedError) as info:
            await graph.ainvoke({"key": key}, cfg)
        assert info.value.node == "b"
        assert info.value.error_type == "RuntimeError"
        assert "b is broken" in info.value.error_message
        assert CALLS[f"b:{key}"] == 1  # no retry policy: one attempt

        handle = graph.gc.client.get_workflow_handle(tid)
        desc = await handle.describe()
        assert desc.typed_search_attributes.get(GRAPH_STATUS) == "failed"
        assert desc.status == WorkflowExecutionStatus.RUNNING

        snap = await graph.aget_state(cfg)
        errs = {t.name: t.error for t in snap.tasks}
        assert errs.get("b") is not None, snap.tasks
        assert "RuntimeError" in str(errs["b"]) and "b is broken" in str(errs["b"])

        BROKEN = False  # deploy the fix
        out = await graph.ainvoke(None, cfg)
    finally:
        BROKEN = True
    assert sorted(out["log"]) == ["a", "b"]
    assert CALLS[f"a:{key}"] == 1
    assert CALLS[f"b:{key}"] == 2
    final = await graph.aget_state(cfg)
    assert final.next == () and all(t.error is None for t in final.tasks)


class Flaky(Exception):
    pass


async def test_retry_policy_retries_until_success(temporal_client, graph_worker):
    def flaky(state: CountState) -> dict:
        n = _count(f"flaky:{state['key']}")
        if n < 3:
            raise Flaky(f"attempt {n}")
        return {"log": [f"ok after {n}"]}

    builder = (StateGraph(CountState)
               .add_node("flaky", flaky,
                         retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01))
               .add_edge(START, "flaky"))
    graph, _ = _serve(temporal_client, graph_worker, builder)
    key = uuid.uuid4().hex
    out = await graph.ainvoke({"key": key}, _cfg(_tid()))
    assert out["log"] == ["ok after 3"]
    assert CALLS[f"flaky:{key}"] == 3


# -- 6. isolation -----------------------------------------------------------------------

async def test_identical_threads_are_isolated(temporal_client, graph_worker):
    marker = uuid.uuid4().hex

    def prepare(state: AskState) -> dict:
        _count(f"prepare:{marker}")
        return {"log": ["prepared"]}

    def approve(state: AskState) -> dict:
        return {"answer": interrupt("approve?"), "log": ["approved"]}

    builder = (StateGraph(AskState).add_node("prepare", prepare).add_node("approve", approve)
               .add_edge(START, "prepare").add_edge("prepare", "approve"))
    graph, _ = _serve(temporal_client, graph_worker, builder)
    cfgs = [_cfg(_tid("iso")) for _ in range(20)]
    outs = await asyncio.gather(*(graph.ainvoke({"topic": "same"}, c) for c in cfgs))
    ids = [o["__interrupt__"][0].id for o in outs]
    assert all(len(o["__interrupt__"]) == 1 for o in outs)
    assert len(set(ids)) == 20
    assert CALLS[f"prepare:{marker}"] == 20
    finals = await asyncio.gather(*(graph.ainvoke(Command(resume=i), c)
                                    for i, c in enumerate(cfgs)))
    assert [f["answer"] for f in finals] == list(range(20))
    assert all(f["log"] == ["prepared", "approved"] and "__interrupt__" not in f
               for f in finals)
    assert CALLS[f"prepare:{marker}"] == 20


# -- 7. continue-as-new -----------------------------------------------------------------

class LoopState(TypedDict, total=False):
    nums: Annotated[list, operator.add]
    done: bool


def _loop_graph() -> StateGraph:
    def ask(state: LoopState) -> dict:
        n = interrupt(f"number #{len(state.get('nums') or [])}?")
        if n == 0:
            return {"done": True}
        return {"nums": [n]}

    return (StateGraph(LoopState).add_node("ask", ask).add_edge(START, "ask")
            .add_conditional_edges("ask", lambda s: END if s.get("done") else "ask"))


async def test_continue_as_new_keeps_the_thread(temporal_client, graph_worker):
    graph, _ = _serve(temporal_client, graph_worker, _loop_graph(), history_event_limit=40)
    client = graph.gc.client
    tid = _tid("can")
    cfg = _cfg(tid)
    out = await graph.ainvoke({"nums": []}, cfg)
    assert out["__interrupt__"][0].value == "number #0?"
    first_run_id = (await client.get_workflow_handle(tid).describe()).run_id
    for n in range(1, 9):
        out = await graph.ainvoke(Command(resume=n), cfg)
        assert out["__interrupt__"][0].value == f"number #{n}?"
        assert out["nums"] == list(range(1, n + 1))

    desc = await client.get_workflow_handle(tid).describe()
    assert desc.run_id != first_run_id
    assert desc.status == WorkflowExecutionStatus.RUNNING
    first = await client.get_workflow_handle(tid, run_id=first_run_id).describe()
    assert first.status == WorkflowExecutionStatus.CONTINUED_AS_NEW
    hist = await client.get_workflow_handle(tid).fetch_history()
    assert len(hist.events) < 80

    snap = await graph.aget_state(cfg)
    assert snap.values["nums"] == list(range(1, 9))
    assert snap.next == ("ask",)
    assert [i.value for i in snap.interrupts] == ["number #8?"]
    history = [s async for s in graph.aget_state_history(cfg)]
    assert len(history) >= 10  # input, start, and one checkpoint per answered round
    assert history[0].config["configurable"]["checkpoint_id"] == \
        snap.config["configurable"]["checkpoint_id"]
    assert history[-1].values.get("nums") in (None, [])
    seen = [s.values.get("nums") for s in history if s.values.get("nums")]
    assert list(range(1, 9)) in seen and [1] in seen

    final = await graph.ainvoke(Command(resume=0), cfg)
    assert final["nums"] == list(range(1, 9)) and final["done"] is True


# -- 8. types across the boundary -------------------------------------------------------

class Item(BaseModel):
    name: str
    qty: int
    tags: list[str] = []


class ItemState(TypedDict, total=False):
    item: Item
    note: str


async def test_pydantic_state_comes_back_typed(temporal_client, graph_worker):
    def bump(state: ItemState) -> dict:
        item = state["item"]
        assert isinstance(item, Item), type(item)  # typed inside the activity too
        return {"item": item.model_copy(update={"qty": item.qty + 1,
                                                "tags": [*item.tags, "bumped"]}),
                "note": type(item).__name__}

    builder = StateGraph(ItemState).add_node("bump", bump).add_edge(START, "bump")
    graph, _ = _serve(temporal_client, graph_worker, builder)
    cfg = _cfg(_tid())
    out = await graph.ainvoke({"item": Item(name="pen", qty=1)}, cfg)
    assert type(out["item"]) is Item
    assert out["item"] == Item(name="pen", qty=2, tags=["bumped"])
    assert out["note"] == "Item"
    snap = await graph.aget_state(cfg)
    assert type(snap.values["item"]) is Item
    assert snap.values["item"] == Item(name="pen", qty=2, tags=["bumped"])


async def test_duplicated_signal_answer_does_not_answer_next_question(temporal_client,
                                                                      graph_worker):
    """Two identical signals for one question: the second is refused, not kept for the
    loop's next question (a duplicated approval must not approve the next question)."""
    graph, _ = _serve(temporal_client, graph_worker, _loop_graph())
    gc = graph.gc
    tid = _tid("dup")
    cfg = _cfg(tid)
    out = await graph.ainvoke({"nums": []}, cfg)
    first_id = out["__interrupt__"][0].id
    await gc.resume(tid, 5, interrupt_id=first_id)
    await gc.resume(tid, 5, interrupt_id=first_id)
    handle = gc.client.get_workflow_handle(tid)
    raw = await _poll(lambda: handle.query("get_state"), lambda r: len(r["refused"]) >= 1)
    assert len(raw["refused"]) == 1 and first_id in raw["refused"][0], raw["refused"]
    snap = await graph.aget_state(cfg)
    assert snap.values["nums"] == [5]
    assert [i.value for i in snap.interrupts] == ["number #1?"]
    assert snap.interrupts[0].id != first_id
    # and the same by update: a stale id is an error, the new question stays pending
    with pytest.raises(gerrors.InvalidResumeError):
        await graph.ainvoke(Command(resume={first_id: 7}), cfg)
    assert _fingerprint(await graph.aget_state(cfg)) == _fingerprint(snap)


async def test_undecodable_resume_signal_is_refused_not_fatal(temporal_client,
                                                              graph_worker):
    graph, _ = _serve(temporal_client, graph_worker, _ask_graph())
    tid = _tid("bad")
    cfg = _cfg(tid)
    await graph.ainvoke({"topic": "z"}, cfg)
    handle = graph.gc.client.get_workflow_handle(tid)
    try:
        await handle.signal("resume", {"resume": {"__gr": "no-such-tag"}})

        async def query() -> Any:
            try:
                return await asyncio.wait_for(handle.query("get_state"), 2)
            except Exception as exc:  # a stuck workflow answers nothing
                return {"refused": [], "error": repr(exc)}

        raw = await _poll(query, lambda r: len(r["refused"]) >= 1, timeout=3)
        assert len(raw["refused"]) == 1, raw
        out = await asyncio.wait_for(graph.ainvoke(Command(resume="fine"), cfg), 5)
        assert out["answer"] == "fine"
    finally:
        with contextlib.suppress(RPCError):  # already completed when the test passed
            await handle.terminate("test cleanup")
