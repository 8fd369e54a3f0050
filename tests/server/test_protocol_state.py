"""The v3 protocol's state, agent and input commands and its checkpoints channel
(graphrun/server/protocol.py) on threads run by Temporal: `state.listCheckpoints`,
`state.fork`, `agent.getTree`, `input.inject`, `checkpoints` events, and `debug` refused
as LangGraph's server refuses it. Raw HTTP and websocket frames: langgraph-sdk's Python
client sends none of these commands (the JS SDK's are in tests/server/js)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
import websockets

from tests.server.test_protocol import PAY, PURCHASE, QUESTION, _command, _sse

APPROVE = {"decisions": [{"type": "approve"}]}


async def _run(api_url: str, tid: str, method: str, params: dict[str, Any]
               ) -> dict[str, Any]:
    """A command that starts a run, and the run's end (its join)."""
    answer = await _command(api_url, tid, method, params)
    assert answer["type"] == "success", answer
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        r = await http.get(f"/threads/{tid}/runs/{answer['result']['run_id']}/join")
        r.raise_for_status()
    return answer


async def _purchase(api_url: str) -> tuple[str, list[dict[str, Any]]]:
    """A purchase thread asked, approved and charged, and its checkpoints' events."""
    tid = str(uuid.uuid4())
    await _run(api_url, tid, "run.start", {"assistant_id": "purchase", "input": PURCHASE})
    pending = await _state(api_url, tid)
    await _run(api_url, tid, "input.respond", {
        "namespace": [], "interrupt_id": pending["interrupts"][0]["id"], "response": True})
    events = await _sse(api_url, tid, {"channels": ["checkpoints"], "since": 0}, 5)
    return tid, events


async def _state(api_url: str, tid: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.get(f"/threads/{tid}/state")
        r.raise_for_status()
        return dict(r.json())


async def _history(api_url: str, tid: str) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post(f"/threads/{tid}/history", json={"limit": 100})
        r.raise_for_status()
        return list(r.json())


def _data(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["params"]["data"] for e in events]


# -- the checkpoints channel ------------------------------------------------------------
async def test_checkpoints_channel_names_each_checkpoint(api_url: str) -> None:
    tid, events = await _purchase(api_url)
    assert {e["method"] for e in events} == {"checkpoints"}
    assert all(e["params"]["namespace"] == [] for e in events)
    got = _data(events)
    # The first run: its input and the step that asks; the resumed run goes on from there
    # (LangGraph's checkpoints mode shows the checkpoint it resumes from again).
    assert [(c["step"], c["source"]) for c in got] == [
        (-1, "input"), (0, "loop"), (0, "loop"), (1, "loop"), (2, "loop")]
    assert all(set(c) <= {"id", "parent_id", "step", "source"} for c in got)  # no state
    assert "parent_id" not in got[0]
    assert got[1]["parent_id"] == got[0]["id"] and got[2]["id"] == got[1]["id"]
    assert got[3]["parent_id"] == got[2]["id"] and got[4]["parent_id"] == got[3]["id"]
    # The same checkpoints the thread's history has, and the last is its state's.
    history = await _history(api_url, tid)
    assert [h["checkpoint"]["checkpoint_id"] for h in reversed(history)] == [
        got[0]["id"], got[1]["id"], got[3]["id"], got[4]["id"]]
    assert (await _state(api_url, tid))["checkpoint"]["checkpoint_id"] == got[4]["id"]


async def test_checkpoint_follows_its_values(api_url: str) -> None:
    tid, _ = await _purchase(api_url)
    events = await _sse(api_url, tid, {"channels": ["checkpoints", "values"], "since": 0},
                        10)
    methods = [e["method"][0] for e in events]
    # As LangGraph orders its checkpoints and values modes: the first run's checkpoint
    # before its values; the resumed run's values, then the checkpoint they were saved in.
    assert "".join(methods) == "cvcv" + "vcvcvc", methods
    assert [e["seq"] for e in events] == sorted(e["seq"] for e in events)


async def test_debug_is_not_a_channel(api_url: str) -> None:
    tid, _ = await _purchase(api_url)
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post(f"/threads/{tid}/stream/events",
                            json={"channels": ["values", "debug"]})
        assert r.status_code == 400
        assert "debug" in r.json()["detail"] and "checkpoints" in r.json()["detail"]
        r = await http.post(f"/threads/{tid}/stream/events", json={"channels": []})
        assert r.status_code == 400
    ws_url = api_url.replace("http://", "ws://") + f"/threads/{tid}/stream/events"
    async with websockets.connect(ws_url) as ws:
        await ws.send(json.dumps({"id": 1, "method": "subscription.subscribe",
                                  "params": {"channels": ["debug"]}}))
        answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert answer["type"] == "error" and answer["error"] == "invalid_argument"
    assert "debug" in answer["message"]


# -- state.listCheckpoints ------------------------------------------------------------
async def test_list_checkpoints_pages_newest_first(api_url: str) -> None:
    tid, events = await _purchase(api_url)
    ids = [c["id"] for c in _data(events)]
    first = await _command(api_url, tid, "state.listCheckpoints", {"limit": 2})
    assert first["type"] == "success", first
    page = first["result"]["checkpoints"]
    assert [(c["id"], c["step"]) for c in page] == [(ids[4], 2), (ids[3], 1)]
    # Each loop step's checkpoint names the node whose writes made it.
    assert [c["node_name"] for c in page] == ["charge_card", "request_approval"]
    assert page[0]["metadata"]["source"] == "loop" and page[0]["metadata"]["step"] == 2
    history = await _history(api_url, tid)
    assert [c["timestamp"] for c in page] == [h["created_at"] for h in history[:2]]
    rest = await _command(api_url, tid, "state.listCheckpoints",
                          {"namespace": [], "before": page[-1]["id"]})
    older = rest["result"]["checkpoints"]
    assert [(c["id"], c["step"], c.get("node_name")) for c in older] == [
        (ids[1], 0, "__start__"), (ids[0], -1, None)]
    everything = await _command(api_url, tid, "state.listCheckpoints", {})
    assert [c["id"] for c in everything["result"]["checkpoints"]] == [
        h["checkpoint"]["checkpoint_id"] for h in history]


async def test_list_checkpoints_refusals(api_url: str) -> None:
    tid, _ = await _purchase(api_url)
    for params, code in (({"limit": 0}, "invalid_argument"),
                         ({"limit": "2"}, "invalid_argument"),
                         ({"namespace": ["sub"]}, "no_such_namespace"),
                         ({"before": "no-such-checkpoint"}, "no_such_checkpoint")):
        answer = await _command(api_url, tid, "state.listCheckpoints", params)
        assert answer["type"] == "error" and answer["error"] == code, (params, answer)
    missing = await _command(api_url, str(uuid.uuid4()), "state.listCheckpoints", {})
    assert missing["error"] == "no_such_run"


async def test_a_thread_not_run_yet_reads_empty(api_url: str) -> None:
    # Made by POST /threads, never run: state.get answers as GET /threads/{id}/state.
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post("/threads", json={})
        r.raise_for_status()
        tid = r.json()["thread_id"]
    assert (await _state(api_url, tid))["values"] == {}
    answer = await _command(api_url, tid, "state.get", {})
    assert answer["type"] == "success" and answer["result"] == {"values": {}}, answer
    listed = await _command(api_url, tid, "state.listCheckpoints", {})
    assert listed["result"] == {"checkpoints": []}, listed


# -- state.fork -----------------------------------------------------------------------
async def test_fork_runs_again_from_a_checkpoint(api_url: str) -> None:
    tid, events = await _purchase(api_url)
    asked_at = _data(events)[1]["id"]  # where the first run stopped to ask
    answer = await _run(api_url, tid, "state.fork", {"checkpoint_id": asked_at})
    assert set(answer["result"]) == {"run_id", "thread_id"}
    assert answer["result"]["thread_id"] == tid
    since = answer["meta"]["applied_through_seq"]
    # The fork's answer is dropped with it (time travel): the question comes again.
    state = await _state(api_url, tid)
    assert state["next"] == ["request_approval"]
    assert [i["value"] for i in state["interrupts"]] == [QUESTION]
    forked = await _sse(api_url, tid, {"channels": ["checkpoints", "lifecycle", "input"],
                                       "since": since}, 4)
    assert [(e["method"], e["params"]["data"].get("event") or e["params"]["data"].get(
        "source")) for e in forked] == [("lifecycle", "started"), ("checkpoints", "fork"),
                                        ("lifecycle", "interrupted"), ("input.requested", None)]
    assert forked[1]["params"]["data"]["parent_id"] == asked_at
    # The run is the thread's, as any other.
    async with httpx.AsyncClient(base_url=api_url) as http:
        listed = (await http.get(f"/threads/{tid}/runs")).json()
    assert answer["result"]["run_id"] in [r["run_id"] for r in listed]


async def test_fork_with_input(api_url: str) -> None:
    tid, events = await _purchase(api_url)
    pen = {"item": "pen", "amount": 2.0, "status": "pending"}
    await _run(api_url, tid, "state.fork", {"checkpoint_id": _data(events)[0]["id"],
                                            "input": pen})
    state = await _state(api_url, tid)
    assert state["values"] == pen
    assert [i["value"]["item"] for i in state["interrupts"]] == ["pen"]


async def test_run_start_forks_from_a_configured_checkpoint(api_url: str) -> None:
    """The JS SDK's `forkFrom`: run.start with config.configurable.checkpoint_id."""
    tid, events = await _purchase(api_url)
    await _run(api_url, tid, "run.start", {
        "assistant_id": "purchase", "input": None,
        "config": {"configurable": {"checkpoint_id": _data(events)[1]["id"]}}})
    state = await _state(api_url, tid)
    assert state["next"] == ["request_approval"] and state["values"]["status"] == "pending"


async def test_fork_refusals(api_url: str) -> None:
    tid, _ = await _purchase(api_url)
    for params, code in (({}, "invalid_argument"),
                         ({"checkpoint_id": "nope"}, "no_such_checkpoint"),
                         ({"checkpoint_id": "x", "config": [1]}, "invalid_argument")):
        answer = await _command(api_url, tid, "state.fork", params)
        assert answer["type"] == "error" and answer["error"] == code, (params, answer)
    missing = await _command(api_url, str(uuid.uuid4()), "state.fork",
                             {"checkpoint_id": "x"})
    assert missing["error"] == "no_such_run"


# -- agent.getTree --------------------------------------------------------------------
async def test_agent_tree_of_a_run_with_a_subgraph(api_url: str) -> None:
    tid = str(uuid.uuid4())
    started = await _run(api_url, tid, "run.start",
                         {"assistant_id": "nested", "input": {"amount": 5}})
    asked = await _command(api_url, tid, "agent.getTree", {})
    assert asked["type"] == "success", asked
    tree = asked["result"]["tree"]
    (child,) = tree.pop("children")
    assert tree == {"namespace": [], "status": "interrupted", "graph_name": "nested"}
    assert child["namespace"][0].startswith("review:")
    assert (child["status"], child["graph_name"]) == ("interrupted", "review")
    iid = (await _state(api_url, tid))["interrupts"][0]["id"]
    await _run(api_url, tid, "input.respond",
               {"namespace": [], "interrupt_id": iid, "response": "ok"})
    done = (await _command(api_url, tid, "agent.getTree", {}))["result"]["tree"]
    assert done["status"] == "completed"
    assert [c["status"] for c in done["children"]] == ["completed"]
    # An earlier run's tree, by its id.
    first = await _command(api_url, tid, "agent.getTree",
                           {"run_id": started["result"]["run_id"]})
    assert first["result"]["tree"]["status"] == "interrupted"
    unknown = await _command(api_url, tid, "agent.getTree", {"run_id": "no-such-run"})
    assert unknown["type"] == "error" and unknown["error"] == "no_such_run"


async def test_agent_tree_over_the_websocket(api_url: str) -> None:
    tid = str(uuid.uuid4())
    await _run(api_url, tid, "run.start", {"assistant_id": "purchase", "input": PURCHASE})
    ws_url = api_url.replace("http://", "ws://") + f"/threads/{tid}/stream/events"
    async with websockets.connect(ws_url) as ws:
        await ws.send(json.dumps({"id": 1, "method": "subscription.subscribe",
                                  "params": {"channels": ["lifecycle"]}}))
        await ws.send(json.dumps({"id": 2, "method": "agent.getTree", "params": {}}))
        answer: dict[str, Any] = {}
        while answer.get("id") != 2:
            answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert answer["type"] == "success", answer
    assert answer["result"]["tree"] == {"namespace": [], "status": "interrupted",
                                        "graph_name": "purchase"}


# -- input.inject ---------------------------------------------------------------------
async def test_input_inject_runs_the_agent_with_the_message(api_url: str) -> None:
    tid = str(uuid.uuid4())
    hello = {"messages": [{"role": "user", "content": "Hello"}]}
    await _run(api_url, tid, "run.start", {"assistant_id": "agent", "input": hello})
    assert (await _state(api_url, tid))["values"]["messages"][-1]["content"] == (
        "Which invoice should I pay?")
    message = {"role": "user", "content": PAY["messages"][0]["content"], "name": "ana"}
    answer = await _command(api_url, tid, "input.inject",
                            {"namespace": [], "message": message})
    assert answer["type"] == "success" and answer["result"] == {}, answer
    since = answer["meta"]["applied_through_seq"]
    events = await _sse(api_url, tid, {"channels": ["lifecycle"], "since": since}, 2)
    assert [e["params"]["data"]["event"] for e in events] == ["started", "interrupted"]
    state = await _state(api_url, tid)
    human = state["values"]["messages"][2]
    assert (human["type"], human["content"], human["name"]) == (
        "human", message["content"], "ana")
    # Waiting for approval: a message would drop the question, so it is refused.
    refused = await _command(api_url, tid, "input.inject", {"namespace": [], "message": {
        "role": "user", "content": "Never mind"}})
    assert refused["type"] == "error" and refused["error"] == "invalid_argument"
    assert "input.respond" in refused["message"]
    await _run(api_url, tid, "input.respond", {
        "namespace": [], "interrupt_id": state["interrupts"][0]["id"], "response": APPROVE})
    final = (await _state(api_url, tid))["values"]["messages"][-1]["content"]
    assert final.startswith("Done.")


async def test_input_inject_refusals(api_url: str) -> None:
    tid, _ = await _purchase(api_url)
    note = {"role": "user", "content": "hi"}
    for params, code in (({"namespace": [], "message": note}, "invalid_argument"),
                         ({"namespace": [], "message": {"role": "ai", "content": "x"}},
                          "invalid_argument"),
                         ({"namespace": [], "message": {"role": "user"}},
                          "invalid_argument"),
                         ({"namespace": ["sub"], "message": note}, "no_such_namespace")):
        answer = await _command(api_url, tid, "input.inject", params)
        assert answer["type"] == "error" and answer["error"] == code, (params, answer)
    assert "messages" in (await _command(api_url, tid, "input.inject", {
        "namespace": [], "message": note}))["message"]  # purchase takes no messages
    missing = await _command(api_url, str(uuid.uuid4()), "input.inject",
                             {"namespace": [], "message": note})
    assert missing["error"] == "no_such_run"


@pytest.mark.parametrize("method", ["state.listCheckpoints", "state.fork",
                                    "agent.getTree", "input.inject"])
async def test_commands_are_served(api_url: str, method: str) -> None:
    """None of them answers not_supported any more (their refusals name what is wrong)."""
    answer = await _command(api_url, str(uuid.uuid4()), method, {})
    assert answer["error"] != "not_supported"
