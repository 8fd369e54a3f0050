"""Two API processes over one thread (graphrun/server/protocol.py): a v3 run started on
one is read from the other, and a reader that reconnects with `since` to either goes on
where it was. Temporal is the only store: both number every event alike, from where its
stream item sits. Real dev server, one worker, two apps on its task queue."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from graphrun.server.assistants import DEFAULT_CREATED_AT
from graphrun.server.shapes import assistant_id
from tests.server.conftest import _ApiHost, _polling

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
PAY = {"messages": [{"role": "user", "content": "Pay INV-7 from ACME, 1200 EUR"}]}
EVERYTHING = {"channels": ["values", "updates", "custom", "tasks", "lifecycle", "input",
                           "messages", "tools"]}

Event = dict[str, Any]


class _Replica(_ApiHost):
    """An API process on a task queue it shares; with `worker`, that queue's worker too."""

    def __init__(self, address: str, queue: str, worker: bool, **client_options: Any) -> None:
        self.shared_queue, self.with_worker, self.client_options = queue, worker, client_options
        super().__init__(address)

    async def _main(self, address: str) -> None:
        import uvicorn
        from temporalio.client import Client

        from graphrun.client import GraphClient, data_converter
        from graphrun.server import build_app
        from graphrun.worker import create_worker

        self.queue = self.shared_queue
        client = await Client.connect(address, data_converter=data_converter)
        gc = GraphClient(client, task_queue=self.queue, **self.client_options)
        app = self.app = build_app(gc, self.api_graphs)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="off"))

        async def serve() -> None:
            serving = asyncio.ensure_future(self.server.serve())
            while not self.server.started and not serving.done():
                await asyncio.sleep(0.02)
            self._ready.set()
            await serving

        if not self.with_worker:
            await serve()
            return
        async with create_worker(client, self.graphs, task_queue=self.queue):
            await _polling(client, self.queue)
            await serve()


def _pair(address: str, **client_options: Any) -> Iterator[tuple[str, str]]:
    queue = f"replicas-{uuid.uuid4()}"
    a = _Replica(address, queue, worker=True, **client_options)
    b = _Replica(address, queue, worker=False, **client_options)  # an API process only
    yield a.url, b.url
    b.close()
    a.close()


@pytest.fixture(scope="module")
def replicas(dev_server: Any) -> Iterator[tuple[str, str]]:
    yield from _pair(dev_server.address)


@pytest.fixture(scope="module")
def short_lived(dev_server: Any) -> Iterator[tuple[str, str]]:
    """Replicas whose threads continue as new after every run (a short history)."""
    yield from _pair(dev_server.address, history_event_limit=20)


async def _read(url: str, thread_id: str, body: dict[str, Any], stop: Callable[[Event], bool],
                timeout: float = 30.0) -> list[Event]:
    """A stream/events request's events, up to the first that `stop` picks."""
    out: list[Event] = []

    async def read() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=timeout) as http, \
                http.stream("POST", f"/threads/{thread_id}/stream/events", json=body) as r:
            r.raise_for_status()
            async for line in r.aiter_lines():
                if line.startswith("data: "):
                    out.append(json.loads(line[6:]))
                    if stop(out[-1]):
                        return

    await asyncio.wait_for(read(), timeout)
    return out


async def _command(url: str, thread_id: str, method: str, params: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=30.0) as http:
        r = await http.post(f"/threads/{thread_id}/commands",
                            json={"id": 1, "method": method, "params": params})
        r.raise_for_status()
        answer = dict(r.json())
    assert answer["type"] == "success", answer
    return answer


def _root(phase: str) -> Callable[[Event], bool]:
    return lambda e: (e["method"] == "lifecycle" and not e["params"]["namespace"]
                      and e["params"]["data"]["event"] == phase)


def _asked(e: Event) -> bool:
    return e["method"] == "input.requested"


def _task(name: str, finished: bool) -> Callable[[Event], bool]:
    return lambda e: (e["method"] == "tasks" and e["params"]["data"].get("name") == name
                      and ("result" in e["params"]["data"]) == finished)


def _content(events: list[Event]) -> list[Event]:
    """Events as a replica makes them: all but `timestamp` (when it read them)."""
    out = []
    for e in events:
        params = {k: v for k, v in e["params"].items() if k != "timestamp"}
        out.append({**e, "params": params})
    return out


def _in_order(events: list[Event]) -> None:
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs)), seqs  # increasing: no repeat
    assert len({e["event_id"] for e in events}) == len(events)
    assert all(isinstance(s, int) and 0 < s < 2**53 for s in seqs)  # a JavaScript number


async def test_default_assistants_alike(replicas: tuple[str, str]) -> None:
    a, b = replicas
    async with httpx.AsyncClient(base_url=a) as on_a, httpx.AsyncClient(base_url=b) as on_b:
        for graph in ("purchase", "agent"):
            got = [(await http.get(f"/assistants/{assistant_id(graph)}")).json()
                   for http in (on_a, on_b)]
            assert got[0] == got[1]
            assert got[0]["created_at"] == got[0]["updated_at"] == DEFAULT_CREATED_AT
        found = [(await http.post("/assistants/search", json={"graph_id": "purchase"})).json()
                 for http in (on_a, on_b)]
        assert found[0] == found[1] and found[0][0]["created_at"] == DEFAULT_CREATED_AT


async def test_run_started_on_one_read_on_the_other(replicas: tuple[str, str]) -> None:
    a, b = replicas
    tid = str(uuid.uuid4())
    started = await _command(a, tid, "run.start", {"assistant_id": "purchase",
                                                  "input": PURCHASE})
    # B never read this thread: its feed reads the run A started from its first event.
    on_b = await _read(b, tid, EVERYTHING, _asked)
    assert on_b[0]["method"] == "lifecycle"
    assert on_b[0]["params"]["data"] == {"event": "started", "graph_name": "purchase"}
    assert on_b[0]["event_id"] == f"{started['result']['run_id']}:start"
    on_a = await _read(a, tid, {**EVERYTHING, "since": 0}, _asked)
    assert _content(on_a) == _content(on_b)
    _in_order(on_a)
    question = on_b[-1]["params"]["data"]

    # Answered on B: its applied_through_seq holds on A too.
    answered = await _command(b, tid, "input.respond", {
        "interrupt_id": question["interrupt_id"], "response": True})
    cursor = answered["meta"]["applied_through_seq"]
    assert on_b[-1]["seq"] <= cursor
    # A reader that goes from A to B to A, each time with `since`.
    first = await _read(a, tid, {**EVERYTHING, "since": cursor}, _task("request_approval", True))
    then = await _read(b, tid, {**EVERYTHING, "since": first[-1]["seq"]},
                       _task("charge_card", False))
    last = await _read(a, tid, {**EVERYTHING, "since": then[-1]["seq"]}, _root("completed"))
    assert first and then and last
    whole = {url: await _read(url, tid, {**EVERYTHING, "since": cursor}, _root("completed"))
             for url in (a, b)}
    assert _content(first + then + last) == _content(whole[a]) == _content(whole[b])
    _in_order(whole[a])
    assert whole[a][-1]["params"]["data"] == {"event": "completed", "graph_name": "purchase"}

    # The thread from its first event, on either: both runs, nothing else.
    since_start = {url: await _read(url, tid, {**EVERYTHING, "since": 0}, _root("completed"))
                   for url in (a, b)}
    assert _content(since_start[a]) == _content(since_start[b]) == _content(on_b + whole[b])
    # Without `since`: the latest run from its start, alike on both.
    latest = {url: await _read(url, tid, EVERYTHING, _root("completed")) for url in (a, b)}
    assert _content(latest[a]) == _content(latest[b]) == _content(whole[a])


async def test_live_run_read_across_replicas(replicas: tuple[str, str]) -> None:
    """While the run goes on: A until its slow node starts, B through the node, A on to
    the end; together what either gives from the start."""
    a, b = replicas
    tid = str(uuid.uuid4())
    await _command(a, tid, "run.start", {"assistant_id": "slow",
                                         "input": {"seconds": 2.0, "done": []}})
    first = await _read(a, tid, EVERYTHING, _task("wait", False))
    then = await _read(b, tid, {**EVERYTHING, "since": first[-1]["seq"]}, _task("wait", True))
    last = await _read(a, tid, {**EVERYTHING, "since": then[-1]["seq"]}, _root("completed"))
    whole = {url: await _read(url, tid, {**EVERYTHING, "since": 0}, _root("completed"))
             for url in (a, b)}
    assert _content(first + then + last) == _content(whole[a]) == _content(whole[b])
    _in_order(whole[a])
    values = [e["params"]["data"] for e in whole[a] if e["method"] == "values"]
    assert values[-1]["done"] == ["after", "wait"]


async def test_messages_and_tools_alike(replicas: tuple[str, str]) -> None:
    """Chat models' content-block events and tool calls: the same events on both."""
    a, b = replicas
    tid = str(uuid.uuid4())
    await _command(b, tid, "run.start", {"assistant_id": "agent", "input": PAY})
    asked = {url: await _read(url, tid, EVERYTHING, _asked) for url in (b, a)}
    assert _content(asked[a]) == _content(asked[b])
    assert any(e["method"] == "messages" for e in asked[a])
    question = asked[a][-1]["params"]["data"]
    answered = await _command(a, tid, "input.respond", {
        "interrupt_id": question["interrupt_id"],
        "response": {"decisions": [{"type": "approve"}]}})
    cursor = answered["meta"]["applied_through_seq"]
    done = {url: await _read(url, tid, {**EVERYTHING, "since": cursor}, _root("completed"))
            for url in (b, a)}
    assert _content(done[a]) == _content(done[b])
    assert {e["params"]["data"]["event"] for e in done[a] if e["method"] == "tools"} >= {
        "tool-started", "tool-finished"}
    _in_order(asked[a] + done[a])


async def test_numbers_hold_across_continue_as_new(short_lived: tuple[str, str],
                                                   temporal_client: Any) -> None:
    """Each run ends in a new workflow run, which carries the stream's log on: A reads
    across the change live, B begins after it (the first run's items then come from the
    carried log, numbered as the workflow run that published them numbered them)."""
    a, b = short_lived
    tid = str(uuid.uuid4())
    await _command(a, tid, "run.start", {"assistant_id": "purchase", "input": PURCHASE})
    asked = await _read(a, tid, EVERYTHING, _asked)
    answered = await _command(b, tid, "input.respond", {
        "interrupt_id": asked[-1]["params"]["data"]["interrupt_id"], "response": True})
    cursor = answered["meta"]["applied_through_seq"]
    done = await _read(a, tid, {**EVERYTHING, "since": cursor}, _root("completed"))
    assert asked[-1]["seq"] <= cursor < done[0]["seq"]
    on_b = await _read(b, tid, {**EVERYTHING, "since": 0}, _root("completed"))
    on_a = await _read(a, tid, {**EVERYTHING, "since": 0}, _root("completed"))
    assert _content(on_a) == _content(on_b) == _content(asked + done)
    _in_order(on_a)
    # The thread did continue as new, carrying its stream on.
    handle = temporal_client.get_workflow_handle(tid)
    async for event in handle.fetch_history_events(page_size=1):
        assert event.workflow_execution_started_event_attributes.continued_execution_run_id
        break


async def test_pause_of_a_classic_run_alike(replicas: tuple[str, str]) -> None:
    """A thread paused by a run no stream showed: each replica says so when its feed
    begins, numbered from where the stream stands, so alike; a run.start answered after
    it comes after it on both."""
    from langgraph_sdk import get_client

    a, b = replicas
    tid = str(uuid.uuid4())
    await get_client(url=a).runs.wait(tid, "purchase", input=PURCHASE, if_not_exists="create")
    said = {url: await _read(url, tid, EVERYTHING, _asked) for url in (a, b)}
    assert _content(said[a]) == _content(said[b])
    assert [(e["method"], e["event_id"].split(":")[1]) for e in said[a]] == [
        ("lifecycle", "paused"), ("lifecycle", "paused"), ("input.requested", "paused")]
    answered = await _command(b, tid, "input.respond", {
        "interrupt_id": said[b][-1]["params"]["data"]["interrupt_id"], "response": True})
    cursor = answered["meta"]["applied_through_seq"]
    assert said[a][-1]["seq"] <= cursor
    done = {url: await _read(url, tid, {**EVERYTHING, "since": cursor}, _root("completed"))
            for url in (a, b)}
    assert _content(done[a]) == _content(done[b])
    _in_order(said[a] + done[a])


async def test_reader_waiting_before_the_first_run(replicas: tuple[str, str]) -> None:
    """A thread made before its first run (POST /threads): a reader on B waits from
    before the run A starts, and gets it whole, as A numbers it."""
    a, b = replicas
    async with httpx.AsyncClient(base_url=a, timeout=30.0) as http:
        made = await http.post("/threads", json={})
        assert made.status_code == 200, made.text
        tid = made.json()["thread_id"]
    waiting = asyncio.ensure_future(_read(b, tid, EVERYTHING, _root("completed")))
    await asyncio.sleep(1.0)  # B's feed has begun, on a thread with no run yet
    assert not waiting.done()
    await _command(a, tid, "run.start", {"assistant_id": "slow",
                                         "input": {"seconds": 0.2, "done": []}})
    on_b = await waiting
    on_a = await _read(a, tid, {**EVERYTHING, "since": 0}, _root("completed"))
    assert _content(on_a) == _content(on_b)
    assert on_b[0]["params"]["data"]["event"] == "started"
