"""LangChain's `create_agent` with the human-in-the-loop middleware, served as is.

The agent (examples/agent_approval.py) is LangChain's own object; the worker
converts it. Each decision gives the same messages and the same tool runs as
LangGraph gives in-process; a question waits across a SIGKILLed worker; a plain
signal answers it; each tool and the model run once with no workflow cache; an
answer the middleware's schema refuses leaves the question pending.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langgraph.checkpoint.memory import InMemorySaver as LGInMemorySaver
from langgraph.types import Command
from temporalio.api.enums.v1 import EventType

from examples import agent_approval as ex
from graphrun import InvalidResumeError
from graphrun.client import GraphClient
from graphrun.devserver import temporal_cli_path
from graphrun.worker import create_worker
from tests.settle import settled

REQUEST = ex.REQUEST
DECISIONS = {
    "approve": {"type": "approve"},
    "edit": {"type": "edit", "edited_action": {
        "name": "pay_invoice", "args": {"invoice": "INV-7", "amount": 1000.0}}},
    "reject": {"type": "reject", "message": "Not this month."},
    "respond": {"type": "respond", "message": "Paid by card already."},
}


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"agent-{uuid.uuid4().hex}"}}


def _messages(out: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(m.type, m.content, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])],
             getattr(m, "tool_call_id", None)) for m in out["messages"]]


def _per_call_agent(checkpointer: Any = None) -> Any:
    return create_agent(
        ex.InvoiceModel(), [ex.lookup_vendor, ex.pay_invoice],
        middleware=[HumanInTheLoopMiddleware(
            interrupt_on={"pay_invoice": True, "lookup_vendor": True},
            interrupt_mode="per_call")],
        checkpointer=checkpointer, name="agent_per_call")


@pytest.fixture(scope="module")
async def agent_queue(temporal_client: Any) -> Any:
    """A worker given LangGraph's objects directly, with no workflow cache (so every
    workflow task replays the history from the start)."""
    queue = f"agent-{uuid.uuid4()}"
    worker = create_worker(temporal_client, {ex.NAME: ex.agent, "agent_per_call":
                                             _per_call_agent()},
                           task_queue=queue, max_cached_workflows=0)
    async with worker:
        yield queue


@pytest.mark.parametrize("decision", list(DECISIONS))
async def test_each_decision_matches_langgraph(temporal_client: Any, agent_queue: str,
                                               decision: str) -> None:
    answer = Command(resume={"decisions": [DECISIONS[decision]]})
    ex.PAID.clear()
    lg, cfg = ex.make_agent(LGInMemorySaver()), _cfg()
    lg_paused = lg.invoke(REQUEST, cfg)
    lg_done = lg.invoke(answer, cfg)
    lg_paid = list(ex.PAID)

    ex.PAID.clear()
    remote = GraphClient(temporal_client, task_queue=agent_queue).graph(ex.NAME)
    cfg = _cfg()
    paused = await remote.ainvoke(REQUEST, cfg)
    assert [i.value for i in paused["__interrupt__"]] == [
        i.value for i in lg_paused["__interrupt__"]]
    assert ex.PAID == []  # nothing paid before the decision
    done = await remote.ainvoke(answer, cfg)
    assert _messages(done) == _messages(lg_done)
    assert lg_paid == ex.PAID
    assert len(ex.PAID) == (1 if decision in ("approve", "edit") else 0)
    assert (await remote.aget_state(cfg)).next == ()


async def test_per_call_questions_answered_by_id(temporal_client: Any,
                                                 agent_queue: str) -> None:
    """`per_call`: one question per gated tool call, each answered by its id; an answer
    the decision schema refuses is an error and leaves both questions pending."""
    def by_tool(interrupts: Any, answers: dict[str, Any]) -> dict[str, Any]:
        return {i.id: answers[i.value["name"]] for i in interrupts}

    answers = {"lookup_vendor": {"type": "approve"},
               "pay_invoice": {"type": "reject", "message": "No."}}
    ex.PAID.clear()
    lg, cfg = _per_call_agent(LGInMemorySaver()), _cfg()
    lg_paused = lg.invoke(REQUEST, cfg)
    lg_done = lg.invoke(Command(resume=by_tool(lg_paused["__interrupt__"], answers)), cfg)

    remote = GraphClient(temporal_client, task_queue=agent_queue).graph("agent_per_call")
    cfg = _cfg()
    paused = await remote.ainvoke(REQUEST, cfg)
    assert sorted(i.value["name"] for i in paused["__interrupt__"]) == [
        "lookup_vendor", "pay_invoice"]
    ids = {i.id for i in paused["__interrupt__"]}
    bad = {i: {"type": "bogus"} for i in ids}
    with pytest.raises(InvalidResumeError):
        await remote.ainvoke(Command(resume=bad), cfg)
    assert {i.id for i in (await remote.aget_state(cfg)).interrupts} == ids
    done = await remote.ainvoke(Command(resume=by_tool(paused["__interrupt__"], answers)), cfg)
    assert _messages(done) == _messages(lg_done)
    assert ex.PAID == []


async def test_plain_signal_answers_and_each_step_runs_once(
        temporal_client: Any, dev_server: Any, agent_queue: str) -> None:
    ex.PAID.clear()
    ex.MODEL_CALLS.clear()
    gc = GraphClient(temporal_client, task_queue=agent_queue)
    cfg = _cfg()
    tid = cfg["configurable"]["thread_id"]
    await gc.graph(ex.NAME).ainvoke(REQUEST, cfg)
    payload = json.dumps({"resume": {"decisions": [{"type": "approve"}]}})
    subprocess.run([temporal_cli_path(), "workflow", "signal", "--address",
                    dev_server.address, "--workflow-id", tid, "--name", "resume",
                    "--input", payload], check=True, capture_output=True, timeout=30)
    handle = temporal_client.get_workflow_handle(tid)
    await settled(handle)
    snap = await gc.graph(ex.NAME).aget_state(cfg)
    assert snap.values["messages"][-1].content.endswith("Paid INV-7: 1200.00 EUR")
    assert ex.PAID == [{"invoice": "INV-7", "amount": 1200.0}]
    assert len(ex.MODEL_CALLS) == 2  # one call per turn, none again on replay
    nodes = [json.loads(e.user_metadata.summary.data) if e.user_metadata.summary.data
             else None async for e in handle.fetch_history_events()
             if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED]
    assert nodes.count("tools") == 2  # a task per tool call, each scheduled once


def _worker(address: str, queue: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "graphrun.cli", "worker", "--graph",
         "examples.agent_approval:agent", "--address", address, "--task-queue", queue],
        cwd=Path(__file__).parents[2], text=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)


@pytest.mark.slow
async def test_question_survives_a_killed_worker(temporal_client: Any,
                                                 dev_server: Any) -> None:
    """`graphrun worker --graph examples.agent_approval:agent` serves LangChain's object;
    the worker is SIGKILLed while the question waits and a new process answers it."""
    queue = f"agent-kill-{uuid.uuid4()}"
    remote = GraphClient(temporal_client, task_queue=queue).graph("agent")
    cfg = _cfg()
    first = _worker(dev_server.address, queue)
    try:
        paused = await remote.ainvoke(REQUEST, cfg)
    finally:
        first.kill()
        first.wait()
    assert paused["__interrupt__"][0].value["action_requests"][0]["name"] == "pay_invoice"
    second = _worker(dev_server.address, queue)
    try:
        done = await remote.ainvoke(Command(resume={"decisions": [DECISIONS["edit"]]}), cfg)
    finally:
        second.kill()
        second.wait()
    tools = [m.content for m in done["messages"] if m.type == "tool"]
    assert tools[0] == "ACME: verified, IBAN on file"
    assert tools[1].endswith("Paid INV-7: 1000.00 EUR")


async def test_hitl_tutorial_on_temporal(temporal_client: Any) -> None:
    """LangGraph's "Add human-in-the-loop controls" tutorial: its compiled graph served
    as is; the tool's interrupt() inside ToolNode waits on Temporal."""
    from tests.langgraph_bridge import tutorial_hitl as t

    lg, cfg = t.compile(t.memory()), _cfg()
    lg_events = list(lg.stream({"messages": [{"role": "user", "content": t.USER_INPUT}]},
                               cfg, stream_mode="values"))
    lg_after = list(lg.stream(Command(resume={"data": t.HUMAN_RESPONSE}), cfg,
                              stream_mode="values"))

    queue = f"tutorial-{uuid.uuid4()}"
    async with create_worker(temporal_client, {"tutorial": t.compile()}, task_queue=queue):
        remote = GraphClient(temporal_client, task_queue=queue).graph("tutorial")
        cfg = _cfg()
        events = [e async for e in remote.astream(
            {"messages": [{"role": "user", "content": t.USER_INPUT}]}, cfg,
            stream_mode="values")]
        assert (await remote.aget_state(cfg)).next == ("tools",)
        after = [e async for e in remote.astream(
            Command(resume={"data": t.HUMAN_RESPONSE}), cfg, stream_mode="values")]

    def shown(es: list[Any]) -> list[Any]:
        return [[(m.type, m.content) for m in e["messages"]] for e in es]

    assert shown(events) == shown(lg_events)
    assert shown(after) == shown(lg_after)
