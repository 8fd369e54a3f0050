"""Large state on a real dev server, with graphrun's LocalDirectoryDriver: a state that
outgrows Temporal's 2 MB payload limit runs, pauses, resumes, is read and continues as
new, and no payload in history is over the storage threshold (history holds references).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowExecutionStatus

from graphrun import Command
from graphrun.client import GraphClient, data_converter
from graphrun.codec import ENCODING
from graphrun.storage import DEFAULT_THRESHOLD, LocalDirectoryDriver
from graphrun.worker import create_worker
from tests.temporal.storage_helpers import (
    big_state_graph,
    growing_graph,
    history_payloads,
    is_reference,
    text,
)

MB = 1_000_000


def _client(plain: Client, **converter: Any) -> Client:
    config = plain.config()
    config["data_converter"] = data_converter(**converter)
    return Client(**config)


@pytest.fixture(scope="module")
def payload_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("payloads")


STEPS, CHUNK = 40, 60_000   # 60 KB a step for 40 steps: a node's input passes 2 MB
BIG = 10 * MB
CAN_SIZE, CAN_ROUNDS = 1 * MB, 8


@pytest.fixture(scope="module")
async def stored(temporal_client: Client, payload_dir: Path) -> AsyncIterator[GraphClient]:
    """A worker and a GraphClient whose converter stores large payloads in payload_dir.

    The graphs go through create_worker, which turns off graphrun's 2 MB payload check
    because the client's converter has external storage."""
    client = _client(temporal_client, external_storage=LocalDirectoryDriver(payload_dir))
    queue = f"storage-{uuid.uuid4()}"
    graphs = {"storage-grow": growing_graph("storage-grow", chunk=CHUNK, steps=STEPS),
              "storage-big": big_state_graph("storage-big", size=BIG),
              "storage-can": big_state_graph("storage-can", size=CAN_SIZE, rounds=CAN_ROUNDS)}
    async with create_worker(client, graphs, task_queue=queue):
        yield GraphClient(client, task_queue=queue)


def _cfg(tid: str, **kw: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": tid}, **kw}


async def _check_history(client: Client, tid: str) -> str:
    """No payload in any run's history reaches the threshold; some are references."""
    found, runs = await history_payloads(client, tid)
    largest = max(p.ByteSize() for p in found)
    assert largest < DEFAULT_THRESHOLD, largest
    refs = sum(is_reference(p) for p in found)
    assert refs > 0
    return (f"{runs} run(s), {len(found)} payloads in history, {refs} references, "
            f"largest {largest} B")


async def test_growing_state_loop_finishes(stored: GraphClient, payload_dir: Path) -> None:
    steps, chunk = STEPS, CHUNK
    graph = stored.graph("storage-grow")
    tid = f"grow-{uuid.uuid4()}"
    t0 = time.monotonic()
    out = await graph.ainvoke({"chunks": []}, _cfg(tid, recursion_limit=steps + 5))
    took = time.monotonic() - t0
    assert len(out["chunks"]) == steps
    assert sum(map(len, out["chunks"])) == steps * chunk
    # The run ended; the thread stays open, its state (and history) stored outside.
    handle = stored.client.get_workflow_handle(tid)
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
    seen = await _check_history(stored.client, tid)
    assert any(payload_dir.rglob("sha256/*/*"))
    print(f"\ngrowing loop: {steps} steps x {chunk} chars = {steps * chunk} chars of state, "
          f"{took:.1f}s; {seen}")


async def test_10mb_state_pauses_resumes_and_reads(stored: GraphClient) -> None:
    size = BIG
    graph = stored.graph("storage-big")
    tid = f"big-{uuid.uuid4()}"
    cfg = _cfg(tid)
    t0 = time.monotonic()
    out = await graph.ainvoke({"blob": "", "answers": []}, cfg)
    assert len(out["blob"]) == size
    assert out["__interrupt__"][0].value == {"question": "round 0?", "size": size}

    snap = await graph.aget_state(cfg)           # a 10 MB query result
    assert len(snap.values["blob"]) == size and snap.next == ("ask",)

    out = await graph.ainvoke(Command(resume="yes"), cfg)
    assert out["answers"] == ["yes"] and len(out["blob"]) == size
    snap = await graph.aget_state(cfg)
    assert snap.values["answers"] == ["yes"] and snap.values["blob"] == out["blob"]
    assert snap.next == ()
    took = time.monotonic() - t0
    seen = await _check_history(stored.client, tid)
    print(f"\n10 MB state: {size} chars, pause/get_state/resume/get_state {took:.1f}s; "
          f"{seen}")


async def test_large_thread_continues_as_new(stored: GraphClient) -> None:
    # A 1 MB state and a low event limit: the thread continues as new with its
    # checkpoints (each holding the 1 MB state) as the new run's input.
    size, rounds = CAN_SIZE, CAN_ROUNDS
    gc = GraphClient(stored.client, task_queue=stored.task_queue, history_event_limit=40)
    graph = gc.graph("storage-can")
    tid = f"can-{uuid.uuid4()}"
    cfg = _cfg(tid)
    out = await graph.ainvoke({"blob": "", "answers": []}, cfg)
    first_run = (await gc.client.get_workflow_handle(tid).describe()).run_id
    for n in range(rounds - 1):
        out = await graph.ainvoke(Command(resume=f"a{n}"), cfg)
        assert out["__interrupt__"][0].value["question"] == f"round {n + 1}?"

    desc = await gc.client.get_workflow_handle(tid).describe()
    assert desc.run_id != first_run and desc.status == WorkflowExecutionStatus.RUNNING
    first = await gc.client.get_workflow_handle(tid, run_id=first_run).describe()
    assert first.status == WorkflowExecutionStatus.CONTINUED_AS_NEW

    # The new run's input (the carried thread) is a reference, not the thread itself.
    history = await gc.client.get_workflow_handle(tid).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    assert started.continued_execution_run_id
    assert is_reference(started.input.payloads[0])
    print(f"\ncontinue-as-new: {await _check_history(gc.client, tid)}")

    snap = await graph.aget_state(cfg)
    assert snap.values["answers"] == [f"a{n}" for n in range(rounds - 1)]
    assert len(snap.values["blob"]) == size
    out = await graph.ainvoke(Command(resume="last"), cfg)
    assert out["answers"][-1] == "last" and "__interrupt__" not in out


async def test_encrypted_payloads_are_stored_as_ciphertext(temporal_client: Client,
                                                           tmp_path: Path) -> None:
    # The SDK runs the codec first, then external storage: the blob store holds ciphertext.
    keys = {"k1": bytes(range(32))}
    client = _client(temporal_client, encryption=keys, external_storage=tmp_path)
    queue = f"storage-enc-{uuid.uuid4()}"
    name = f"enc-{uuid.uuid4().hex[:8]}"
    graph_obj = big_state_graph(name, size=1 * MB)
    async with create_worker(client, {name: graph_obj}, task_queue=queue):
        graph = GraphClient(client, task_queue=queue).graph(name)
        tid = f"enc-{uuid.uuid4()}"
        out = await graph.ainvoke({"blob": "", "answers": []}, _cfg(tid))
        out = await graph.ainvoke(Command(resume="ok"), _cfg(tid))
        assert out["answers"] == ["ok"] and len(out["blob"]) == MB
        await _check_history(client, tid)

    blobs = list(tmp_path.rglob("sha256/*/*"))
    assert blobs
    marker = text(64, "big").encode()
    for path in blobs:
        stored = Payload.FromString(path.read_bytes())
        assert stored.metadata["encoding"] == ENCODING
        assert marker not in stored.data


async def test_a_deleted_thread_leaves_no_payloads(stored: GraphClient, payload_dir: Path
                                                   ) -> None:
    """A thread's stored payloads sit in a folder of its own, deleted with it; another
    thread's stay."""
    graph = stored.graph("storage-can")
    gone, kept = f"gone-{uuid.uuid4()}", f"kept-{uuid.uuid4()}"
    for tid in (gone, kept):
        out = await graph.ainvoke({"blob": "", "answers": []}, _cfg(tid))
        assert out["__interrupt__"]
    namespace = stored.client.namespace
    folders = {tid: payload_dir / "threads" / LocalDirectoryDriver.scope(namespace, tid)
               for tid in (gone, kept)}
    assert all(any(f.rglob("sha256/*/*")) for f in folders.values())
    assert await stored.delete_thread(gone) >= 1
    assert not folders[gone].exists()
    assert any(folders[kept].rglob("sha256/*/*"))
    snap = await graph.aget_state(_cfg(kept))     # still read from its own folder
    assert len(snap.values["blob"]) == CAN_SIZE
