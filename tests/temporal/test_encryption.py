"""Encrypted threads on a real dev server: a paused thread round-trips through AES-GCM,
history holds only ciphertext tagged with its key id, search attributes stay readable,
keys rotate, and an unknown key id is a clear error."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any, TypedDict

import pytest
from temporalio.client import Client, WorkflowQueryFailedError

from graphrun import END, START, Command, StateGraph, interrupt
from graphrun.client import GRAPH_STATUS, GraphClient, data_converter
from graphrun.codec import ENCODING, KEY_ID_METADATA
from graphrun.errors import EncryptionKeyError
from graphrun.worker import create_worker
from tests.settle import settled

K1 = bytes(range(32))
K2 = bytes(range(200, 232))
SECRET = "acct-7781-SECRET-eel"      # must never appear in plaintext in history
ANSWER = "approved-by-SECRET-otter"


class Card(TypedDict):
    card: str
    status: str


def _approve(state: Card) -> Card:
    answer = interrupt({"question": f"Charge {state['card']}?"})
    return {"card": state["card"], "status": f"charged:{answer}"}


def _graph(name: str) -> Any:
    builder = StateGraph(Card)
    builder.add_node("approve", _approve)
    builder.add_edge(START, "approve")
    builder.add_edge("approve", END)
    return builder.compile(name=name)


def _client(plain: Client, keys: dict[str, bytes]) -> Client:
    """The session's connection with an encrypting graphrun converter."""
    config = plain.config()
    config["data_converter"] = data_converter(encryption=keys)
    return Client(**config)


def _cfg(tid: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": tid}}


def _payloads(node: Any, path: str = "") -> Iterator[tuple[str, dict[str, str]]]:
    """Every Payload in a history's JSON (a dict with metadata and data), with its path."""
    if isinstance(node, dict):
        if "metadata" in node and isinstance(node["metadata"], dict) and (
                "data" in node or "encoding" in node["metadata"]):
            yield path, {k: base64.b64decode(v).decode(errors="replace")
                         for k, v in node["metadata"].items()}
            return
        for k, v in node.items():
            yield from _payloads(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _payloads(v, f"{path}[{i}]")


async def _raw_history(plain: Client, tid: str) -> dict[str, Any]:
    history = await plain.get_workflow_handle(tid).fetch_history()
    return json.loads(history.to_json())


def _data_payloads(history: dict[str, Any]) -> list[tuple[str, dict[str, str]]]:
    # Search attributes are indexed by the server and never pass through a codec; nor do
    # patch markers, which hold only the patch's name.
    return [(p, m) for p, m in _payloads(history)
            if "searchAttributes" not in p and ".patch-data." not in p]


async def test_encrypted_thread_round_trip_and_history_is_ciphertext(
        temporal_client: Client, task_queue: str) -> None:
    name = f"enc-{uuid.uuid4().hex[:10]}"
    tid = f"enc-{uuid.uuid4().hex}"
    client = _client(temporal_client, {"k1": K1})
    async with create_worker(client, {name: _graph(name)}, task_queue=task_queue) as worker:
        assert worker.client.data_converter.payload_codec is not None   # the codec survived
        gc = GraphClient(client, task_queue=task_queue)
        assert gc.client.data_converter is client.data_converter
        out = await gc.graph(name).ainvoke({"card": SECRET, "status": "new"}, _cfg(tid))
        [pending] = out["__interrupt__"]
        assert pending.value == {"question": f"Charge {SECRET}?"}
        snap = await gc.graph(name).aget_state(_cfg(tid))
        assert snap.values["card"] == SECRET and snap.next == ("approve",)

        # Search attributes stay readable without any key, from a plain client.
        plain_gc = GraphClient(temporal_client, task_queue=task_queue)
        desc = await temporal_client.get_workflow_handle(tid).describe()
        assert desc.typed_search_attributes.get(GRAPH_STATUS) == "interrupted"
        listed = await plain_gc.list_threads(status="interrupted", graph=name)
        assert [t.thread_id for t in listed] == [tid]

        # A plain client (no codec) cannot read the state.
        with pytest.raises(Exception, match="Unknown payload encoding binary/encrypted"):
            await temporal_client.get_workflow_handle(tid).query("get_state", None)

        await gc.resume(tid, ANSWER)          # a signal, encrypted like everything else
        await settled(client.get_workflow_handle(tid))
        snap = await gc.graph(name).aget_state(_cfg(tid))
        assert snap.values == {"card": SECRET, "status": f"charged:{ANSWER}"}

    history = await _raw_history(temporal_client, tid)
    text = json.dumps(history)
    assert SECRET not in text and ANSWER not in text
    for secret in (SECRET, ANSWER):
        assert base64.b64encode(secret.encode()).decode()[:16] not in text
    payloads = _data_payloads(history)
    assert len(payloads) >= 4
    plain = {p: m for p, m in payloads if m.get("encoding") != ENCODING.decode()}
    assert not plain, f"unencrypted payloads in history: {plain}"
    assert {m[KEY_ID_METADATA] for _, m in payloads} == {"k1"}


async def test_rotation_old_threads_resume_new_payloads_use_the_newest_key(
        temporal_client: Client, task_queue: str) -> None:
    name = f"enc-rot-{uuid.uuid4().hex[:10]}"
    tid = f"enc-rot-{uuid.uuid4().hex}"
    graph = _graph(name)
    old = _client(temporal_client, {"k1": K1})
    async with create_worker(old, {name: graph}, task_queue=task_queue):
        out = await GraphClient(old, task_queue=task_queue).graph(name).ainvoke(
            {"card": SECRET, "status": "new"}, _cfg(tid))
        assert out["__interrupt__"]
    before = len(_data_payloads(await _raw_history(temporal_client, tid)))

    # Rotate: k2 is newest, k1 still known. A new worker replays the k1 history.
    new = _client(temporal_client, {"k2": K2, "k1": K1})
    async with create_worker(new, {name: graph}, task_queue=task_queue):
        gc = GraphClient(new, task_queue=task_queue)
        final = await gc.graph(name).ainvoke(Command(resume=ANSWER), _cfg(tid))
        assert final == {"card": SECRET, "status": f"charged:{ANSWER}"}

    payloads = _data_payloads(await _raw_history(temporal_client, tid))
    ids = [m.get(KEY_ID_METADATA) for _, m in payloads]
    assert all(m.get("encoding") == ENCODING.decode() for _, m in payloads)
    assert set(ids[:before]) == {"k1"}
    assert ids[before:] and set(ids[before:]) == {"k2"}
    assert SECRET not in json.dumps(await _raw_history(temporal_client, tid))


async def test_unknown_key_id_is_a_clear_error(temporal_client: Client, task_queue: str) -> None:
    name = f"enc-unk-{uuid.uuid4().hex[:10]}"
    tid = f"enc-unk-{uuid.uuid4().hex}"
    k1_client = _client(temporal_client, {"k1": K1})
    async with create_worker(k1_client, {name: _graph(name)}, task_queue=task_queue):
        await GraphClient(k1_client, task_queue=task_queue).graph(name).ainvoke(
            {"card": SECRET, "status": "new"}, _cfg(tid))

        # A client that only knows k2 reads a result the k1 worker encrypted.
        k2_only = _client(temporal_client, {"k2": K2})
        with pytest.raises(EncryptionKeyError, match=r"key id 'k1'.*\['k2'\]") as info:
            await k2_only.get_workflow_handle(tid).query("pending_interrupts")
        assert info.value.key_id == "k1"

        # The k1 worker cannot read the argument the k2-only client encrypted: the query
        # fails at once rather than hanging. Its text is an encrypted failure attribute
        # (the client lacks k1 to read it); the worker logs the EncryptionKeyError.
        with pytest.raises(WorkflowQueryFailedError, match="Encoded failure"):
            await k2_only.get_workflow_handle(tid).query("get_state", None)

        # Cleanup: answer so the thread ends before the worker stops.
        await GraphClient(k1_client, task_queue=task_queue).graph(name).ainvoke(
            Command(resume="ok"), _cfg(tid))
