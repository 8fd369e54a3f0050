"""The LangGraph Server API through LangGraph's own Python SDK (langgraph-sdk)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.errors import NotFoundError

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
QUESTION = {"question": "Approve this purchase?", "item": "GPU rental, 8 hours",
            "amount": 96.0}


async def test_ok_info_and_assistants(api_url: str) -> None:
    client = get_client(url=api_url)
    async with httpx.AsyncClient(base_url=api_url) as http:
        assert (await http.get("/ok")).json() == {"ok": True,
                                                  "services": {"temporal": "healthy"}}
        assert (await http.get("/info")).json()["flags"]["strict_resume"] is True
    found = await client.assistants.search(graph_id="purchase")
    assert [a["graph_id"] for a in found] == ["purchase"]
    assert found[0]["metadata"] == {"created_by": "system"}
    # LangGraph's server names a graph's default assistant uuid5(NAMESPACE_GRAPH, graph id).
    assert found[0]["assistant_id"] == str(uuid.uuid5(
        uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8"), "purchase"))
    assert (await client.assistants.get(found[0]["assistant_id"]))["graph_id"] == "purchase"
    schemas = await client.assistants.get_schemas("purchase")
    assert "amount" in schemas["input_schema"]["properties"]


async def test_approval_found_by_status_and_resumed(api_url: str) -> None:
    client = get_client(url=api_url)
    thread = await client.threads.create()
    tid = thread["thread_id"]
    assert thread["status"] == "idle"
    out = await client.runs.wait(tid, "purchase", input=PURCHASE)
    assert out["__interrupt__"][0]["value"] == QUESTION
    interrupt_id = out["__interrupt__"][0]["id"]

    found: list = []
    for _ in range(50):  # visibility shows the new status a moment later
        found = await client.threads.search(status="interrupted",
                                            metadata={"graph_id": "purchase"}, limit=100)
        if any(t["thread_id"] == tid for t in found):
            break
        await asyncio.sleep(0.1)
    mine = next(t for t in found if t["thread_id"] == tid)
    assert await client.threads.count(status="interrupted",
                                      metadata={"graph_id": "purchase"}) >= 1
    assert mine["metadata"]["graph_id"] == "purchase"
    (task_id, questions), = mine["interrupts"].items()  # keyed by task id
    assert questions == [{"id": interrupt_id, "value": QUESTION}]

    state = await client.threads.get_state(tid)
    assert state["next"] == ["request_approval"]
    assert state["tasks"][0]["id"] == task_id
    assert state["interrupts"][0]["id"] == interrupt_id

    done = await client.runs.wait(tid, "purchase", command={"resume": {interrupt_id: True}})
    assert done == {**PURCHASE, "status": "charged"}
    assert (await client.threads.get(tid))["status"] == "idle"
    history = await client.threads.get_history(tid, limit=3)
    assert history[0]["values"]["status"] == "charged"
    assert len(history) == 3


async def test_stream_values_and_updates(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = (await client.threads.create())["thread_id"]
    events = [(p.event, p.data) async for p in client.runs.stream(
        tid, "purchase", input=PURCHASE, stream_mode=["values", "updates"])]
    assert events[0][0] == "metadata" and "run_id" in events[0][1]
    kinds = [e for e, _ in events[1:]]
    assert set(kinds) == {"values", "updates"}
    assert events[-1][1]["__interrupt__"][0]["value"] == QUESTION
    after = [(p.event, p.data) async for p in client.runs.stream(
        tid, "purchase", command={"resume": True}, stream_mode="updates")]
    assert after[1:] == [("updates", {"request_approval": {"status": "approved"}}),
                         ("updates", {"charge_card": {"status": "charged"}})]


async def test_agent_approval_through_the_sdk(api_url: str) -> None:
    """LangChain's create_agent, its question answered as Agent Inbox answers it."""
    client = get_client(url=api_url)
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "agent", input={
        "messages": [{"role": "user", "content": "Pay INV-7 from ACME, 1200 EUR"}]})
    request = out["__interrupt__"][0]["value"]
    assert request["action_requests"][0]["name"] == "pay_invoice"
    done = await client.runs.wait(tid, "agent", command={
        "resume": {"decisions": [{"type": "approve"}]}})
    assert done["messages"][-1]["type"] == "ai"
    assert done["messages"][-1]["content"].endswith("Paid INV-7: 1200.00 EUR")


async def test_errors(api_url: str) -> None:
    client = get_client(url=api_url)
    with pytest.raises(NotFoundError):
        await client.threads.get(f"missing-{uuid.uuid4()}")
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post("/threads/x/runs/wait", json={"assistant_id": "nope"})
        assert r.status_code == 422 and "nope" in r.json()["detail"]
        r = await http.post("/threads/x/runs/wait", content=b"{not json")
        assert r.status_code == 422
        tid = str(uuid.uuid4())
        r = await http.post(f"/threads/{tid}/runs/wait",
                            json={"assistant_id": "purchase", "command": {"resume": True}})
        assert r.status_code == 404  # LangGraph's default: no run on an unknown thread
        await client.threads.create(thread_id=tid)
        r = await http.post(f"/threads/{tid}/runs/wait",
                            json={"assistant_id": "purchase", "command": {"resume": True}})
        assert r.status_code == 400  # strict resume: nothing to answer


async def test_stateless_run(api_url: str) -> None:
    client = get_client(url=api_url)
    out: Any = await client.runs.wait(None, "purchase", input=PURCHASE)
    assert out["__interrupt__"][0]["value"] == QUESTION


async def test_langgraph_remote_graph(api_url: str) -> None:
    """LangGraph's own RemoteGraph(url=...) drives a graphrun thread."""
    from langgraph.pregel.remote import RemoteGraph
    from langgraph.types import Command

    remote = RemoteGraph("purchase", url=api_url)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    out = await remote.ainvoke(PURCHASE, config)
    assert out["__interrupt__"][0]["value"] == QUESTION  # as from LangGraph's server: JSON
    state = await remote.aget_state(config)
    assert state.next == ("request_approval",)
    done = await remote.ainvoke(Command(resume=True), config)
    assert done == {**PURCHASE, "status": "charged"}


async def test_stream_messages_tuple(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = (await client.threads.create())["thread_id"]
    events = [(p.event, p.data) async for p in client.runs.stream(
        tid, "agent", input={"messages": [{"role": "user", "content": "Hello"}]},
        stream_mode="messages-tuple")]
    assert events[0][0] == "metadata"
    chunks = [d for e, d in events if e == "messages"]
    message, metadata = chunks[-1]
    assert message["content"] == "Which invoice should I pay?"
    assert metadata["langgraph_node"] == "model"


async def test_stream_events(api_url: str) -> None:
    """`events`: LangChain's astream_events v2 events, the nodes' runs relayed from the
    worker, beside the other modes asked for."""
    client = get_client(url=api_url)
    tid = (await client.threads.create())["thread_id"]
    parts = [(p.event, p.data) async for p in client.runs.stream(
        tid, "agent", input={"messages": [{"role": "user", "content": "Hello"}]},
        stream_mode=["events", "values"])]
    run_id = parts[0][1]["run_id"]
    events = [d for e, d in parts if e == "events"]
    assert {e for e, _ in parts[1:]} == {"events", "values"}
    first, last = events[0], events[-1]
    assert (first["event"], first["name"], first["run_id"]) == (
        "on_chain_start", "agent", run_id)
    assert first["data"]["input"]["messages"][0]["content"] == "Hello"
    assert (last["event"], last["run_id"]) == ("on_chain_end", run_id)
    assert last["data"]["output"]["messages"][-1]["content"] == "Which invoice should I pay?"
    model = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "model")
    assert model["parent_ids"] == [run_id]
    assert model["metadata"]["langgraph_node"] == "model"
    assert model["metadata"]["thread_id"] == tid
    chat = next(e for e in events if e["event"] == "on_chat_model_end")
    assert chat["parent_ids"] == [run_id, model["run_id"]]
    assert chat["data"]["output"]["content"] == "Which invoice should I pay?"
    assert [e["event"] for e in events].count("on_chain_end") == [
        e["event"] for e in events].count("on_chain_start")


async def test_a_failing_node(api_url: str) -> None:
    """LangGraph's shapes: `wait` answers 200 with `__error__`, the thread is `error`,
    `stream` ends with an `error` event."""
    client = get_client(url=api_url)
    tid = (await client.threads.create())["thread_id"]
    with pytest.raises(Exception, match="ValueError: card declined"):  # the SDK raises it
        await client.runs.wait(tid, "broken", input={"item": "pen"})
    out = await client.runs.wait(tid, "broken", input=None, raise_error=False)
    assert out == {"__error__": {"error": "ValueError", "message": "card declined"}}
    assert (await client.threads.get(tid))["status"] == "error"
    tid = (await client.threads.create())["thread_id"]
    events = [(p.event, p.data) async for p in client.runs.stream(
        tid, "broken", input={"item": "pen"})]
    assert events[-1] == ("error", {"error": "ValueError", "message": "card declined"})


async def test_time_travel_inside_a_subgraph_through_the_sdk(api_url: str) -> None:
    """A subgraph's own checkpoint, as the API names it (checkpoint_ns and checkpoint_map):
    its state read with subgraphs=True, updated there, and run from there."""
    client = get_client(url=api_url)
    tid = (await client.threads.create())["thread_id"]
    out = await client.runs.wait(tid, "nested", input={"amount": 5})
    assert out["__interrupt__"][0]["value"] == {"amount": 5}
    state = await client.threads.get_state(tid, subgraphs=True)
    task = state["tasks"][0]
    sub = task["state"]
    assert sub["values"] == {"amount": 5, "notes": ["checked"]} and sub["next"] == ["ask"]
    assert task["checkpoint"]["checkpoint_ns"].startswith("review:")
    at = sub["checkpoint"]
    assert at["checkpoint_ns"] == task["checkpoint"]["checkpoint_ns"]
    assert at["checkpoint_map"][""] == state["checkpoint"]["checkpoint_id"]

    forked = (await client.threads.update_state(tid, {"amount": 7}, as_node="check",
                                                checkpoint=at))["checkpoint"]
    assert forked["checkpoint_ns"] == at["checkpoint_ns"]
    assert forked["checkpoint_id"] != at["checkpoint_id"]
    again = await client.runs.wait(tid, "nested", input=None, checkpoint=forked)
    assert again["__interrupt__"][0]["value"] == {"amount": 7}  # asked again, from the fork
    done = await client.runs.wait(tid, "nested", command={"resume": "ok"})
    assert done["notes"] == ["checked", "answer:ok"]
