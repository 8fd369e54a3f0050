"""LangGraph's v3 streaming protocol (graphrun/server/protocol.py) through langgraph-sdk's
thread-centric client, `client.threads.stream(...)`, and raw HTTP for what the client
hides (error codes, seq numbers, replay with `since`)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
QUESTION = {"question": "Approve this purchase?", "item": "GPU rental, 8 hours",
            "amount": 96.0}
PAY = {"messages": [{"role": "user", "content": "Pay INV-7 from ACME, 1200 EUR"}]}


async def _sse(api_url: str, thread_id: str, body: dict[str, Any], count: int,
               timeout: float = 20.0) -> list[dict[str, Any]]:
    """The first `count` events of a stream/events request."""
    out: list[dict[str, Any]] = []

    async def read() -> None:
        async with httpx.AsyncClient(base_url=api_url, timeout=timeout) as http, \
                http.stream("POST", f"/threads/{thread_id}/stream/events", json=body) as r:
            r.raise_for_status()
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    out.append(json.loads(line[6:]))
                    if len(out) == count:
                        return

    await asyncio.wait_for(read(), timeout)
    return out


async def _paused(thread: Any) -> bool:
    """The SDK learns of an interrupt on its lifecycle stream, a connection apart from
    the projection that just ended at it: wait (boundedly) for that stream to catch up."""
    for _ in range(750):
        if thread.interrupted:
            return True
        await asyncio.sleep(0.02)
    return False


async def _why_not_paused(api_url: str, thread: Any) -> str:
    """What the server sent on the lifecycle and input channels, for a failure's message."""
    try:
        events: Any = await _sse(api_url, thread.thread_id,
                                 {"channels": ["lifecycle", "input"], "since": 0}, 3, 5)
    except TimeoutError:
        events = "fewer than 3 events in 5 s"
    async with httpx.AsyncClient(base_url=api_url) as http:
        state = (await http.get(f"/threads/{thread.thread_id}")).json()
        listed = (await http.get(f"/threads/{thread.thread_id}/runs")).json()
        values = (await http.get(f"/threads/{thread.thread_id}/state")).json()["values"]
    return (f"the SDK saw no interrupt; the server sent {events}; the thread is "
            f"{state.get('status')!r}, its runs {listed}, its values {values}")


async def _command(api_url: str, thread_id: str, method: str, params: Any
                   ) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post(f"/threads/{thread_id}/commands",
                            json={"id": 7, "method": method, "params": params})
        r.raise_for_status()
        return dict(r.json())


async def test_interrupt_respond_and_output(api_url: str) -> None:
    client = get_client(url=api_url)
    async with client.threads.stream(assistant_id="purchase") as thread:
        started = await thread.run.start(input=PURCHASE)
        snapshots = [snap async for snap in thread.values]  # ends at the interrupt
        assert await _paused(thread)
        assert [i["value"] for i in thread.interrupts] == [QUESTION]
        assert snapshots[-1]["status"] == "pending"
        await thread.run.respond(True)
        final = await thread.output
        assert final == {**PURCHASE, "status": "charged"}
        assert not thread.interrupted  # cleared by the run's end

    # The run is an ordinary run of the thread: the classic API sees both.
    listed = await client.runs.list(thread.thread_id)
    assert started["run_id"] in [r["run_id"] for r in listed]
    assert [r["status"] for r in listed] == ["success", "success"]
    # Every event of the thread, numbered in order, from seq 1 (within LINGER).
    events = await _sse(api_url, thread.thread_id,
                        {"channels": ["lifecycle", "input"], "since": 0}, 5)
    assert [(e["method"], e["params"]["data"].get("event")) for e in events] == [
        ("lifecycle", "started"), ("lifecycle", "interrupted"), ("input.requested", None),
        ("lifecycle", "started"), ("lifecycle", "completed")]
    assert events[2]["params"]["data"]["value"] == QUESTION
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(e["event_id"] for e in events)) == 5
    # `since` goes on after the last event seen.
    rest = await _sse(api_url, thread.thread_id,
                      {"channels": ["lifecycle", "input"], "since": seqs[2]}, 2)
    assert [e["seq"] for e in rest] == seqs[3:]


async def test_messages_and_tool_calls(api_url: str) -> None:
    client = get_client(url=api_url)
    async with client.threads.stream(assistant_id="agent") as thread:
        await thread.run.start(input=PAY)
        # The model's reply carries the tool calls; the human-in-the-loop middleware
        # pauses before any tool runs.
        streams = [s async for s in thread.messages]
        assert await _paused(thread), (len(streams), await _why_not_paused(api_url, thread))
        if streams:
            assert len(streams) == 1
            message = await streams[0].output
            assert [c["id"] for c in message.tool_calls] == ["call_lookup", "call_pay"]
        else:
            # The SDK subscribed after the run paused: it joins a projection to its one
            # event stream from where that stream already is, past the message. The
            # server still has the message's events, from the run's start.
            sent = json.dumps(await _sse(api_url, thread.thread_id,
                                         {"channels": ["messages"], "since": 0}, 2))
            assert "message-start" in sent and "call_lookup" in sent, sent
        await thread.run.respond({"decisions": [{"type": "approve"}]})
        calls = [h async for h in thread.tool_calls]  # until the run completes
        assert {h.tool_call_id: h.name for h in calls} == {
            "call_lookup": "lookup_vendor", "call_pay": "pay_invoice"}
        outputs = {h.tool_call_id: await h.output for h in calls}
        assert outputs["call_pay"]["content"] == "Paid INV-7: 1200.00 EUR"
        assert all(o["status"] == "success" for o in outputs.values())
        final = await thread.output
        assert final["messages"][-1]["content"].startswith("Done.")


async def test_failed_run_fails_output(api_url: str) -> None:
    client = get_client(url=api_url)
    async with client.threads.stream(assistant_id="broken") as thread:
        await thread.run.start(input={"item": "book"})
        with pytest.raises(RuntimeError, match="card declined"):
            await thread.output


async def test_protocol_errors(api_url: str) -> None:
    tid = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=api_url) as http:
        # No thread yet: its event stream is 404 (the SDK retries after run.start).
        r = await http.post(f"/threads/{tid}/stream/events", json={"channels": ["values"]})
        assert r.status_code == 404
        r = await http.post(f"/threads/{tid}/commands", content=b"{not json")
        assert r.json()["error"] == "invalid_argument"
    unknown = await _command(api_url, tid, "run.explode", {})
    assert unknown["type"] == "error" and unknown["error"] == "unknown_command"
    assert unknown["id"] == 7
    no_assistant = await _command(api_url, tid, "run.start", {"input": {}})
    assert no_assistant["error"] == "invalid_argument"
    missing = await _command(api_url, tid, "run.start",
                             {"assistant_id": "no-such-graph", "input": {}})
    assert missing["error"] == "invalid_argument" and "not found" in missing["message"]
    bogus = await _command(api_url, tid, "input.respond",
                           {"namespace": [], "interrupt_id": "nope", "response": 1})
    assert bogus["error"] == "no_such_interrupt"
    assert (await _command(api_url, tid, "agent.getTree", {}))["error"] == "no_such_run"


async def test_websocket_transport(api_url: str) -> None:
    client = get_client(url=api_url)
    async with client.threads.stream(assistant_id="purchase", transport="websocket") as thread:
        await thread.run.start(input=PURCHASE)
        snapshots = [snap async for snap in thread.values]
        assert snapshots and await _paused(thread)
        # Commands go over HTTP beside the socket: state.get reads the paused thread.
        answer = await thread._transport.send_command(
            {"id": 9, "method": "state.get", "params": {"namespace": [], "keys": ["item"]}})
        assert answer is not None and answer["result"]["values"] == {"item": PURCHASE["item"]}
        await thread.run.respond(True)
        assert (await thread.output)["status"] == "charged"
