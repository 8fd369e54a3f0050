"""Runs through LangGraph's SDK: background runs, their records, join, join stream with
Last-Event-ID, cancel, multitask strategies, delete."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}


async def _until(check: Any, timeout: float = 15.0) -> Any:
    """Poll `check()` until it returns something truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await check()
        if found or asyncio.get_running_loop().time() > deadline:
            return found
        await asyncio.sleep(0.05)


async def _running(client: Any, tid: str, run_id: str) -> bool:
    return (await client.runs.get(tid, run_id))["status"] == "running"


async def test_background_run_is_recorded_joined_and_listed(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = str(uuid.uuid4())
    run = await client.runs.create(tid, "purchase", input=PURCHASE, if_not_exists="create",
                                   metadata={"source": "test"})
    assert run["status"] in ("pending", "running", "success")
    # The run's metadata merged as LangGraph's server merges it: its assistant's (the
    # default one's), its own, and its assistant's id.
    assert run["thread_id"] == tid and run["metadata"] == {
        "created_by": "system", "source": "test", "assistant_id": run["assistant_id"]}
    out = await client.runs.join(tid, run["run_id"])
    assert out["__interrupt__"][0]["value"]["amount"] == 96.0
    got = await client.runs.get(tid, run["run_id"])
    assert got["status"] == "success"  # a run that stops at interrupt() ends `success`
    assert (await client.threads.get(tid))["status"] == "interrupted"
    second = await client.runs.create(tid, "purchase", command={"resume": True})
    await client.runs.join(tid, second["run_id"])
    listed = await client.runs.list(tid)
    assert [r["run_id"] for r in listed] == [second["run_id"], run["run_id"]]  # newest first
    assert [r["status"] for r in listed] == ["success", "success"]
    assert (await client.threads.get_state(tid))["values"]["status"] == "charged"


@pytest.mark.filterwarnings("ignore:`checkpoint_during` is deprecated:DeprecationWarning")
async def test_durability_exit_keeps_where_the_runs_stop(api_url: str) -> None:
    """durability="exit" (and checkpoint_during=False): the thread keeps the checkpoint
    each run stopped at, the first with no parent, as LangGraph's server does."""
    client = get_client(url=api_url)
    histories = {}
    for asked in ({"durability": "sync"}, {"durability": "exit"},
                  {"checkpoint_during": False}):
        tid = str(uuid.uuid4())
        await client.runs.wait(tid, "purchase", input=PURCHASE, if_not_exists="create",
                               **asked)
        await client.runs.wait(tid, "purchase", command={"resume": True}, **asked)
        histories[str(asked)] = await client.threads.get_history(tid)
    sync, *exits = histories.values()
    assert len(sync) > 2
    for history in exits:
        paused, done = history[::-1]
        assert paused["next"] and paused["parent_checkpoint"] is None
        assert not done["next"] and done["values"]["status"] == "charged"
        assert done["parent_checkpoint"]["checkpoint_id"] == paused["checkpoint"][
            "checkpoint_id"]


async def test_unknown_run_and_unknown_thread_are_404(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        missing = await http.get(f"/threads/{uuid.uuid4()}/runs/{uuid.uuid4()}")
        assert missing.status_code == 404
        # LangGraph's default for a run on a thread that does not exist: reject.
        refused = await http.post(f"/threads/{uuid.uuid4()}/runs",
                                  json={"assistant_id": "purchase", "input": PURCHASE})
        assert refused.status_code == 404


async def test_resumable_stream_goes_on_after_last_event_id(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = str(uuid.uuid4())
    first: list[Any] = []
    async for part in client.runs.stream(tid, "purchase", input=PURCHASE,
                                         stream_mode=["values", "updates"],
                                         if_not_exists="create", stream_resumable=True):
        first.append(part)
    assert first[0].event == "metadata"
    run_id = first[0].data["run_id"]
    ids = [p.id for p in first[1:]]
    assert len(ids) >= 3 and all(i is not None for i in ids)
    assert [int(i) for i in ids] == sorted(int(i) for i in ids)
    # A client that lost the connection after the second event reads the rest once.
    rest = [p async for p in client.runs.join_stream(tid, run_id, last_event_id=ids[1],
                                                     stream_mode=["values", "updates"])]
    assert [p.id for p in rest] == ids[2:]
    assert [p.data for p in rest] == [p.data for p in first[3:]]


async def test_cancel_interrupts_a_running_run_and_the_thread_goes_on(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = str(uuid.uuid4())
    run = await client.runs.create(tid, "slow", input={"seconds": 30, "done": []},
                                   if_not_exists="create")
    assert await _until(lambda: _running(client, tid, run["run_id"]))
    await client.runs.cancel(tid, run["run_id"], wait=True)
    assert (await client.runs.get(tid, run["run_id"]))["status"] == "interrupted"
    state = await client.threads.get_state(tid)
    assert state["next"] == ["wait"]  # the thread stays at its last checkpoint
    assert state["values"]["done"] == ["after"]
    # LangGraph's cancel of a finished run: 409.
    async with httpx.AsyncClient(base_url=api_url) as http:
        again = await http.post(f"/threads/{tid}/runs/{run['run_id']}/cancel")
        assert again.status_code == 409
    await client.threads.update_state(tid, {"seconds": 0})
    out = await client.runs.wait(tid, "slow", input=None)
    assert out["done"] == ["after", "wait"]


async def test_multitask_reject_enqueue_interrupt_rollback(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = str(uuid.uuid4())
    busy = await client.runs.create(tid, "slow", input={"seconds": 30, "done": []},
                                    if_not_exists="create")
    assert await _until(lambda: _running(client, tid, busy["run_id"]))
    async with httpx.AsyncClient(base_url=api_url) as http:
        refused = await http.post(f"/threads/{tid}/runs", json={
            "assistant_id": "slow", "input": {"seconds": 0}, "multitask_strategy": "reject"})
        assert refused.status_code == 409, refused.text
    queued = await client.runs.create(tid, "slow", input={"seconds": 0, "done": ["q"]})
    assert (await client.runs.get(tid, queued["run_id"]))["status"] == "pending"
    # "interrupt" stops the running run and the queued one; its own run then goes.
    taker = await client.runs.create(tid, "slow", input={"seconds": 0, "done": ["i"]},
                                     multitask_strategy="interrupt")
    out = await client.runs.join(tid, taker["run_id"])
    assert out["done"] == ["i", "after", "wait"]
    statuses = {r["run_id"]: r["status"] for r in await client.runs.list(tid)}
    assert statuses == {busy["run_id"]: "interrupted", queued["run_id"]: "interrupted",
                        taker["run_id"]: "success"}
    # "rollback" drops the interrupted run and what it wrote.
    history = len(await client.threads.get_history(tid, limit=100))
    slow = await client.runs.create(tid, "slow", input={"seconds": 30, "done": ["r"]})
    assert await _until(lambda: _running(client, tid, slow["run_id"]))
    assert (await client.threads.get_state(tid))["values"]["done"] == ["r", "after"]
    last = await client.runs.create(tid, "slow", input={"seconds": 0, "done": ["z"]},
                                    multitask_strategy="rollback")
    assert (await client.runs.join(tid, last["run_id"]))["done"] == ["z", "after", "wait"]
    runs = [r["run_id"] for r in await client.runs.list(tid)]
    assert slow["run_id"] not in runs and last["run_id"] in runs
    values = [h["values"].get("done") for h in await client.threads.get_history(tid, limit=100)]
    assert ["r", "after"] not in values and len(values) == history + 4


async def test_delete_run(api_url: str) -> None:
    client = get_client(url=api_url)
    tid = str(uuid.uuid4())
    run = await client.runs.create(tid, "purchase", input=PURCHASE, if_not_exists="create")
    await client.runs.join(tid, run["run_id"])
    await client.runs.delete(tid, run["run_id"])
    async with httpx.AsyncClient(base_url=api_url) as http:
        assert (await http.get(f"/threads/{tid}/runs/{run['run_id']}")).status_code == 404


@pytest.mark.parametrize("path", ["/runs", "/runs/wait"])
async def test_stateless_runs(api_url: str, path: str) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        answer = await http.post(path, json={"assistant_id": "broken",
                                             "input": {"item": "x"}})
        assert answer.status_code == 200
        if path == "/runs/wait":
            assert answer.json()["__error__"] == {"error": "ValueError",
                                                  "message": "card declined"}
        else:
            assert answer.json()["status"] in ("pending", "running", "error")


async def test_webhook_gets_the_finished_run_and_after_seconds_delays_it(api_url: str) -> None:
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    got: list[Any] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    hook = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    try:
        client = get_client(url=api_url)
        tid = str(uuid.uuid4())
        url = f"http://127.0.0.1:{hook.server_address[1]}/done"
        run = await client.runs.create(tid, "purchase", input=PURCHASE, webhook=url,
                                       after_seconds=1, if_not_exists="create")
        assert (await client.runs.get(tid, run["run_id"]))["status"] == "pending"
        await client.runs.join(tid, run["run_id"])
        assert await _until(lambda: asyncio.sleep(0, got))
        assert got[0]["run_id"] == run["run_id"] and got[0]["thread_id"] == tid
        assert got[0]["status"] == "success" and got[0]["values"]["amount"] == 96.0
        done = await client.runs.get(tid, run["run_id"])
        from datetime import datetime

        took = (datetime.fromisoformat(done["updated_at"])
                - datetime.fromisoformat(done["created_at"])).total_seconds()
        assert took >= 1.0
    finally:
        hook.shutdown()
    async with httpx.AsyncClient(base_url=api_url) as http:
        bad = await http.post("/runs", json={"assistant_id": "purchase", "input": PURCHASE,
                                             "webhook": "file:///etc/passwd"})
        assert bad.status_code == 422


async def test_join_stream_of_a_run_that_ended_the_thread(api_url: str) -> None:
    """The thread's workflow closed with the run: its stream is read from the closed run."""
    client = get_client(url=api_url)
    tid = str(uuid.uuid4())
    await client.runs.wait(tid, "purchase", input=PURCHASE, if_not_exists="create")
    parts = [p async for p in client.runs.stream(tid, "purchase", command={"resume": True},
                                                 stream_mode="updates",
                                                 stream_resumable=True)]
    assert (await client.threads.get(tid))["status"] == "idle"
    run_id = parts[0].data["run_id"]
    updates = [p for p in parts[1:] if p.event == "updates"]
    assert len(updates) >= 2
    rest = [p async for p in client.runs.join_stream(tid, run_id, stream_mode="updates",
                                                     last_event_id=updates[0].id)]
    assert [p.data for p in rest] == [p.data for p in updates[1:]]


async def test_runs_right_after_their_threads_are_created(api_url: str) -> None:
    """A run may reach a thread whose record (POST /threads) has not completed yet: it
    waits for it, many at once."""
    client = get_client(url=api_url)

    async def one() -> Any:
        tid = (await client.threads.create(metadata={"batch": "race"}))["thread_id"]
        return await client.runs.wait(tid, "purchase", input=PURCHASE)

    outs = await asyncio.gather(*(one() for _ in range(20)))
    assert all(out["__interrupt__"][0]["value"]["amount"] == 96.0 for out in outs)


async def test_update_as_end_resolves_a_paused_thread(api_url: str) -> None:
    """Agent Inbox's "Mark as Resolved": update_state as __end__ on a paused thread leaves
    nothing to run; the thread is idle (LangGraph's server says so too)."""
    client = get_client(url=api_url)
    tid = str(uuid.uuid4())
    await client.runs.wait(tid, "purchase", input=PURCHASE, if_not_exists="create")
    assert (await client.threads.get(tid))["status"] == "interrupted"
    await client.threads.update_state(tid, None, as_node="__end__")
    thread = await client.threads.get(tid)
    assert thread["status"] == "idle" and thread["interrupts"] == {}
    state = await client.threads.get_state(tid)
    assert state["next"] == [] and state["values"] == PURCHASE
