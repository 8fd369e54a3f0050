"""Every example graph, run end to end on the dev server through RemoteGraph.

Each test drives the same steps twice: in-process (``build(InMemorySaver())``)
and on Temporal (``GraphClient(...).graph(name)`` on the session ``graph_worker``,
a fresh uuid thread), and compares the transcripts: the interrupt payloads in
order and every returned state. The in-process side is also checked against the
example's own ``main()`` where there is one. Nodes run on the worker, which lives
in this process, so module-level side-effect lists (``SENT``, ``CALLS``) are
visible here.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from examples import (
    approval,
    breakpoints,
    email_tool,
    multi_interrupt,
    purchase,
    purchase_functional,
    review,
    subgraph,
    validation,
)
from graphrun import Command, InMemorySaver, registry
from graphrun.client import GraphClient, RemoteGraph

INTERRUPT = "__interrupt__"

# -- helpers ------------------------------------------------------------------------


def _cfg(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _remote(temporal_client: Any, graph_worker: str, graph: Any) -> tuple[GraphClient,
                                                                           RemoteGraph]:
    registry.register(graph.name, graph)
    gc = GraphClient(temporal_client, task_queue=graph_worker)
    return gc, gc.graph(graph.name)


def _entry(result: dict[str, Any]) -> dict[str, Any]:
    """A returned state as a comparable record: values, interrupt values in order."""
    interrupts = result.get(INTERRUPT, [])
    for i in interrupts:
        assert isinstance(i.id, str) and i.id and i.id != "placeholder-id", i
    return {"values": {k: v for k, v in result.items() if k != INTERRUPT},
            "interrupts": [i.value for i in interrupts],
            "ids": [i.id for i in interrupts]}


def _strip_ids(transcript: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "ids"} for e in transcript]


def _local(build: Callable[..., Any], inputs: Sequence[Any]) -> list[dict[str, Any]]:
    app = build(InMemorySaver())
    config = _cfg(f"local-{uuid.uuid4().hex}")
    return [_entry(app.invoke(x, config)) for x in inputs]


async def _on_temporal(rg: RemoteGraph, inputs: Sequence[Any]) -> list[dict[str, Any]]:
    config = _cfg(f"ex-{uuid.uuid4().hex}")
    transcript = [_entry(await rg.ainvoke(x, config)) for x in inputs]
    snap = await rg.aget_state(config)
    assert snap.next == ()
    assert snap.values == transcript[-1]["values"]
    return transcript


async def _compare(temporal_client: Any, graph_worker: str, module_build: Callable[..., Any],
                   inputs: Sequence[Any]) -> list[dict[str, Any]]:
    local = _local(module_build, inputs)
    _, rg = _remote(temporal_client, graph_worker, module_build())
    remote = await _on_temporal(rg, inputs)
    assert _strip_ids(remote) == _strip_ids(local)
    return remote


async def _poll(fn: Callable[[], Awaitable[Any]], ok: Callable[[Any], bool],
                timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)


# -- purchase -------------------------------------------------------------------------

PURCHASE_IN = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
PURCHASE_Q = {"question": "Approve this purchase?", "item": "GPU rental, 8 hours",
              "amount": 96.0}


@pytest.mark.parametrize(("answer", "status"), [(True, "charged"), (False, "charged")],
                         ids=["approve", "reject"])
async def test_purchase(temporal_client: Any, graph_worker: str, answer: bool,
                        status: str) -> None:
    # The example's charge_card follows request_approval unconditionally, so a
    # rejected purchase ends "charged" too: same in-process and on Temporal.
    t = await _compare(temporal_client, graph_worker, purchase.build,
                       [PURCHASE_IN, Command(resume=answer)])
    assert t[0]["interrupts"] == [PURCHASE_Q]
    assert t[-1] == {"values": {**PURCHASE_IN, "status": status}, "interrupts": [], "ids": []}
    assert purchase.main() == t[-1]["values"]


@pytest.mark.parametrize(("answer", "status"), [(True, "charged 96.00"), (False, "rejected")],
                         ids=["approve", "reject"])
async def test_purchase_functional(temporal_client: Any, graph_worker: str, answer: bool,
                                   status: str) -> None:
    # The Functional API: quote and charge are tasks, each an activity on Temporal.
    purchase_functional.CHARGED.clear()
    t = await _compare(temporal_client, graph_worker, purchase_functional.build,
                       [{"item": "GPU rental", "hours": 8}, Command(resume=answer)])
    assert t[0]["interrupts"] == [{"question": "Approve this purchase?",
                                   "item": "GPU rental", "amount": 96.0}]
    assert t[-1]["values"] == {"item": "GPU rental", "amount": 96.0, "status": status}
    # Charged once in-process and once on Temporal, never on the rerun after resume.
    charged = purchase_functional.CHARGED
    assert charged == [("GPU rental", 96.0)] * (2 if answer else 0)


async def test_purchase_resumed_by_signal(temporal_client: Any, graph_worker: str) -> None:
    gc, rg = _remote(temporal_client, graph_worker, purchase.graph)
    tid = f"ex-signal-{uuid.uuid4().hex}"
    first = await rg.ainvoke(PURCHASE_IN, _cfg(tid))
    [pending] = first[INTERRUPT]
    assert pending.value == PURCHASE_Q
    snap = await rg.aget_state(_cfg(tid))
    assert snap.next == ("request_approval",)
    assert [i.id for i in snap.interrupts] == [pending.id]

    await gc.resume(tid, True, interrupt_id=pending.id)
    snap = await _poll(lambda: rg.aget_state(_cfg(tid)), lambda s: s.next == ())
    assert snap.next == ()
    assert snap.values == purchase.main()
    assert snap.values == {**PURCHASE_IN, "status": "charged"}
    assert snap.interrupts == ()


# -- approval (Command(goto)) ----------------------------------------------------------

@pytest.mark.parametrize(("approve", "status"), [(True, "approved"), (False, "rejected")])
async def test_approval(temporal_client: Any, graph_worker: str, approve: bool,
                        status: str) -> None:
    start = {"action_details": "Transfer $500", "status": "pending"}
    t = await _compare(temporal_client, graph_worker, approval.build,
                       [start, Command(resume=approve)])
    assert t[0]["interrupts"] == [{"question": "Approve this action?",
                                   "details": "Transfer $500"}]
    assert t[-1]["values"] == {"action_details": "Transfer $500", "status": status}
    assert t[-1]["values"] == approval.main(approve=approve)


# -- review and edit -------------------------------------------------------------------

async def test_review(temporal_client: Any, graph_worker: str) -> None:
    t = await _compare(temporal_client, graph_worker, review.build,
                       [{"generated_text": "Initial draft"},
                        Command(resume="Improved draft after review")])
    assert t[0]["interrupts"] == [{"instruction": "Review and edit this content",
                                   "content": "Initial draft"}]
    assert t[-1]["values"] == {"generated_text": "Improved draft after review"} == review.main()


# -- email tool: approve with an edited subject, and cancel ----------------------------

EMAIL_ALICE = {"messages": [{"role": "user",
                             "content": "Send an email to alice@example.com about the meeting"}]}


async def test_email_tool_approve_with_edit(temporal_client: Any, graph_worker: str) -> None:
    email_tool.SENT.clear()
    resume = Command(resume={"action": "approve", "subject": "Updated subject"})
    local = _local(email_tool.build, [EMAIL_ALICE, resume])
    sent_locally = list(email_tool.SENT)
    email_tool.SENT.clear()
    _, rg = _remote(temporal_client, graph_worker, email_tool.graph)
    config = _cfg(f"ex-{uuid.uuid4().hex}")
    first = _entry(await rg.ainvoke(EMAIL_ALICE, config))
    assert email_tool.SENT == []  # nothing goes out before the approval
    final = _entry(await rg.ainvoke(resume, config))
    assert _strip_ids([first, final]) == _strip_ids(local)

    expected = [{"to": "alice@example.com", "subject": "Updated subject",
                 "body": "Hi, a quick note about the meeting."}]
    assert email_tool.SENT == sent_locally == expected  # exactly once
    assert first["interrupts"][0]["subject"] == "Meeting"
    messages = final["values"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[-1]["content"] == "Email sent to alice@example.com"
    email_tool.SENT.clear()
    assert email_tool.main() == final["values"]
    email_tool.SENT.clear()


async def test_email_tool_cancel(temporal_client: Any, graph_worker: str) -> None:
    email_tool.SENT.clear()
    start = {"messages": [{"role": "user", "content": "Email bob@example.org about lunch"}]}
    t = await _compare(temporal_client, graph_worker, email_tool.build,
                       [start, Command(resume={"action": "reject"})])
    assert t[0]["interrupts"][0]["to"] == "bob@example.org"
    assert t[-1]["values"]["messages"][-1]["content"] == "Email cancelled by user"
    assert email_tool.SENT == []


# -- validation loop -------------------------------------------------------------------

async def test_validation(temporal_client: Any, graph_worker: str) -> None:
    t = await _compare(temporal_client, graph_worker, validation.build,
                       [{"age": None}, Command(resume="thirty"), Command(resume=30)])
    assert [e["interrupts"] for e in t] == [
        ["What is your age?"],
        ["'thirty' is not a valid age. Please enter a positive number."],
        [],
    ]
    assert t[-1]["values"] == {"age": 30} == validation.main()


# -- several interrupts in one node ----------------------------------------------------

async def test_multi_interrupt(temporal_client: Any, graph_worker: str) -> None:
    t = await _compare(temporal_client, graph_worker, multi_interrupt.build,
                       [{}, *(Command(resume=a) for a in multi_interrupt.ANSWERS)])
    assert [e["interrupts"] for e in t] == [
        ["What's your name?"], ["What's your age?"], ["What's your city?"], []]
    assert len({e["ids"][0] for e in t[:3]}) == 3  # each question has its own id
    assert t[-1]["values"] == {"name": "Ada", "age": 36, "city": "London"}
    assert t[-1]["values"] == multi_interrupt.main()


# -- subgraphs (as a node, and called as a function) -----------------------------------

SUB_IN = {"name": None, "greeting": None, "status": "new"}


@pytest.mark.parametrize(("build", "answer", "calls"), [
    (subgraph.build, "Ada", ["prepare", "ask_name", "ask_name", "greet", "finish"]),
    (subgraph.build_function, "Grace",
     ["node_in_parent_graph", "ask_name", "node_in_parent_graph", "ask_name", "greet"]),
], ids=["node", "function"])
async def test_subgraph(temporal_client: Any, graph_worker: str, build: Callable[..., Any],
                        answer: str, calls: list[str]) -> None:
    inputs = [SUB_IN, Command(resume=answer)]
    subgraph.CALLS.clear()
    local = _local(build, inputs)
    local_calls = list(subgraph.CALLS)

    subgraph.CALLS.clear()
    _, rg = _remote(temporal_client, graph_worker, build())
    remote = await _on_temporal(rg, inputs)
    remote_calls = list(subgraph.CALLS)

    assert _strip_ids(remote) == _strip_ids(local)
    assert remote[0]["interrupts"] == ["What's your name?"]
    assert remote[-1]["values"] == {"name": answer, "greeting": f"Hello, {answer}!",
                                    "status": "done"}
    # The re-run record: which code re-executed on resume.
    assert local_calls == calls
    assert remote_calls == calls


def test_subgraph_main_matches() -> None:
    as_node, as_function = subgraph.main()
    assert as_node == {"name": "Ada", "greeting": "Hello, Ada!", "status": "done"}
    assert as_function == {"name": "Grace", "greeting": "Hello, Grace!", "status": "done"}


# -- static breakpoints, resumed with None ---------------------------------------------

async def test_breakpoints(temporal_client: Any, graph_worker: str) -> None:
    async def run(app: Any, is_remote: bool) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
        config = _cfg(f"bp-{uuid.uuid4().hex}")

        async def call(x: Any) -> tuple[dict[str, Any], tuple[str, ...]]:
            if is_remote:
                result = await app.ainvoke(x, config)
                snap = await app.aget_state(config)
            else:
                result = app.invoke(x, config)
                snap = app.get_state(config)
            return result, tuple(snap.next)

        steps = [await call({"visited": []})]
        while steps[-1][1]:
            steps.append(await call(None))
            assert len(steps) < 10
        return steps

    local = await run(breakpoints.build(InMemorySaver()), False)
    _, rg = _remote(temporal_client, graph_worker, breakpoints.graph)
    remote = await run(rg, True)
    assert remote == local
    assert remote == [
        ({"visited": []}, ("node_a",)),
        ({"visited": ["node_a", "node_b"]}, ("node_c",)),
        ({"visited": ["node_a", "node_b", "node_c"]}, ()),
    ]
    assert remote[-1][0] == breakpoints.main()
