"""Live streams on Temporal: chunks reach the client while the node that makes them
runs, in order, with nothing lost or repeated, across a reconnecting reader and across
a worker that dies mid-node."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from graphrun import END, START, StateGraph, get_stream_writer, registry
from graphrun.client import GraphClient
from tests.temporal.test_worker_restart import _start_worker

pytestmark = pytest.mark.temporal

ANSWER = "graphrun streams chat model tokens as the model makes them"


class S(TypedDict, total=False):
    n: int
    reply: str


def _graph(name: str) -> Any:
    def ticker(state: S) -> dict:
        write = get_stream_writer()
        for i in range(50):  # 50 chunks over 5 s
            write({"i": i})
            time.sleep(0.1)
        return {"n": 50}

    def chat(state: S) -> dict:
        model = GenericFakeChatModel(messages=iter([AIMessage(content=ANSWER)]))
        return {"reply": model.invoke("hi").content}

    return (StateGraph(S).add_node("ticker", ticker).add_node("chat", chat)
            .add_edge(START, "ticker").add_edge("ticker", "chat").add_edge("chat", END)
            .compile(name=name))


async def test_chunks_arrive_while_the_node_runs_and_a_reader_reconnects(temporal_client,
                                                                         graph_worker):
    name = f"live-{uuid.uuid4().hex[:10]}"
    registry.register(name, _graph(name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    config = {"configurable": {"thread_id": f"live-{uuid.uuid4().hex}"}}

    async def late_reader() -> list[tuple[int, Any]]:
        """Joins the thread's stream once the run is going, drops its connection after
        ten chunks, and reconnects from the last offset it saw."""
        await asyncio.sleep(1.0)
        got: list[tuple[int, Any]] = []
        async for offset, chunk in remote.ajoin_stream(config, stream_mode="custom"):
            got.append((offset, chunk))
            if len(got) == 10:
                break  # the connection drops
        async for offset, chunk in remote.ajoin_stream(config, from_offset=got[-1][0] + 1,
                                                       stream_mode="custom"):
            got.append((offset, chunk))
        return got

    reader = asyncio.create_task(late_reader())
    t0 = time.monotonic()
    seen: list[tuple[float, str, Any]] = []
    async for mode, chunk in remote.astream({"n": 0}, config,
                                            stream_mode=["custom", "messages", "updates"]):
        seen.append((time.monotonic() - t0, mode, chunk))
    custom = [(t, c) for t, m, c in seen if m == "custom"]
    ticker_done = next(t for t, m, c in seen if m == "updates" and "ticker" in c)
    # The first chunk long before the 5 s node ends, all 50 in order, none twice.
    assert custom[0][0] < 2.0 and ticker_done > 4.5, (custom[0][0], ticker_done)
    assert [c["i"] for _, c in custom] == list(range(50))
    tokens = [c[0].content for _, m, c in seen if m == "messages"]
    assert len(tokens) > 5 and "".join(tokens) == ANSWER
    assert [c for _, m, c in seen if m == "updates"] == [{"ticker": {"n": 50}},
                                                         {"chat": {"reply": ANSWER}}]
    # The reader that reconnected saw the same chunks, none lost or repeated.
    got = await asyncio.wait_for(reader, 30)
    offsets = [o for o, _ in got]
    assert offsets == sorted(set(offsets))
    assert [c["i"] for _, c in got] == list(range(50))


@pytest.mark.slow
async def test_stream_goes_on_across_a_worker_that_dies_mid_node(dev_server, temporal_client,
                                                                 tmp_path: Path):
    """The worker is killed 1.5 s into a 3 s node that streams a chunk every 0.1 s. The
    node runs again on a new worker and streams its chunks again; the reader skips those
    it has seen, so it gets each chunk once, in order."""
    queue = f"stream-crash-{uuid.uuid4()}"
    journal = tmp_path / "journal.txt"
    config = {"configurable": {"thread_id": f"sc-{uuid.uuid4().hex[:8]}"}}
    remote = GraphClient(temporal_client, task_queue=queue).graph("streamy")
    first = _start_worker(dev_server.address, queue, journal)
    chunks: list[Any] = []

    async def read() -> None:
        async for mode, chunk in remote.astream({"order": "S-1", "status": "new"}, config,
                                                stream_mode=["custom", "updates"]):
            chunks.append((mode, chunk))

    reading = asyncio.create_task(read())
    second = None
    try:
        for _ in range(200):
            if sum(m == "custom" for m, _ in chunks) >= 10:
                break
            await asyncio.sleep(0.05)
        first.kill()  # SIGKILL mid-node
        first.wait()
        second = _start_worker(dev_server.address, queue, journal)
        await asyncio.wait_for(reading, 90)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    assert journal.read_text().count("chatter-start") == 2  # the node ran again
    assert [c["i"] for m, c in chunks if m == "custom"] == list(range(30))
    assert [c for m, c in chunks if m == "updates"] == [
        {"chatter": {"status": "chattered"}}, {"last": {"status": "done after chattered"}}]


async def test_chunks_survive_continue_as_new(temporal_client, graph_worker):
    name = f"live-can-{uuid.uuid4().hex[:10]}"

    def step(state: S) -> dict:
        get_stream_writer()({"at": state.get("n", 0)})
        return {"n": state.get("n", 0) + 1}

    registry.register(name, StateGraph(S).add_node("step", step).add_edge(START, "step")
                      .compile(name=name))
    # A short history limit: the thread continues as new after the streamed run.
    gc = GraphClient(temporal_client, task_queue=graph_worker, history_event_limit=10)
    remote = gc.graph(name)
    config = {"configurable": {"thread_id": f"can-{uuid.uuid4().hex}"}}
    first = [c async for c in remote.astream({"n": 0}, config, stream_mode=["custom",
                                                                            "updates"])]
    assert first == [("custom", {"at": 0}), ("updates", {"step": {"n": 1}})]
    handle = gc.client.get_workflow_handle(gc.workflow_id(config["configurable"]["thread_id"]))
    desc = await handle.describe()
    for _ in range(100):  # wait for the new run
        desc = await handle.describe()
        if desc.run_id != handle.run_id and (await handle.fetch_history()).events[0] \
                .workflow_execution_started_event_attributes.continued_execution_run_id:
            break
        await asyncio.sleep(0.1)
    started = (await handle.fetch_history()).events[0].workflow_execution_started_event_attributes
    assert started.continued_execution_run_id  # the thread is in its second run
    # A reader joining from offset 0 reads the first run's chunks from the new run.
    again = [(o, c) async for o, c in remote.ajoin_stream(config, stream_mode=["custom",
                                                                                "updates"])]
    assert [c for _, c in again] == first


async def test_a_chunk_that_cannot_be_stored_is_shown_not_fatal(temporal_client, graph_worker):
    name = f"live-odd-{uuid.uuid4().hex[:10]}"

    class Opaque:
        def __repr__(self) -> str:
            return "<opaque>"

    def odd(state: S) -> dict:
        get_stream_writer()({"handle": Opaque()})  # not data: shown as its repr
        return {"n": 1}

    registry.register(name, StateGraph(S).add_node("odd", odd).add_edge(START, "odd")
                      .compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    config = {"configurable": {"thread_id": f"odd-{uuid.uuid4().hex}"}}
    chunks = [c async for c in remote.astream({"n": 0}, config, stream_mode=["custom",
                                                                             "updates"])]
    assert chunks == [("custom", "{'handle': <opaque>}"), ("updates", {"odd": {"n": 1}})]
