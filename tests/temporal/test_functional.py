"""The Functional API on Temporal: each @task call is an activity of its own, finished
calls are not run again on resume, and an entrypoint whose calls change fails clearly."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType

from graphrun import Command, InMemorySaver, NodeFailedError, interrupt, registry
from graphrun.client import GraphClient
from graphrun.func import entrypoint, task

pytestmark = pytest.mark.temporal

_lock = threading.Lock()
RAN: Counter[str] = Counter()


def _ran(key: str) -> None:
    with _lock:
        RAN[key] += 1


def _serve(temporal_client: Any, graph_worker: str, graph: Any) -> Any:
    name = f"func-{uuid.uuid4().hex[:12]}"
    registry.register(name, graph)
    return GraphClient(temporal_client, task_queue=graph_worker).graph(name)


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": f"f-{uuid.uuid4().hex}"}}


async def _activities(remote: Any, cfg: dict[str, Any]) -> list[str]:
    """The activity summaries of the thread's workflow, in the order they were scheduled."""
    gc = remote.gc
    handle = gc.client.get_workflow_handle(gc.workflow_id(cfg["configurable"]["thread_id"]))
    out = []
    for ev in (await handle.fetch_history()).events:
        if ev.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            out.append(ev.user_metadata.summary.data.decode().strip('"'))
    return out


async def test_calls_are_activities_and_run_once(temporal_client, graph_worker):
    key = uuid.uuid4().hex

    @task
    def price(item: str) -> int:
        _ran(f"{key}:price:{item}")
        return {"pen": 2, "ink": 5}[item]

    @task
    def charge(total: int) -> str:
        _ran(f"{key}:charge")
        return f"charged {total}"

    @entrypoint()
    def purchase(items: list[str]) -> dict:
        prices = [price(i) for i in items]  # two calls at once: one round
        total = sum(p.result() for p in prices)
        if not interrupt({"approve": total}):
            return {"total": total, "receipt": None}
        return {"total": total, "receipt": charge(total).result()}

    remote = _serve(temporal_client, graph_worker, purchase)
    cfg = _cfg()
    out = await remote.ainvoke(["pen", "ink"], cfg)
    assert out["__interrupt__"][0].value == {"approve": 7}
    assert await remote.ainvoke(Command(resume=True), cfg) == {"total": 7,
                                                               "receipt": "charged 7"}
    # The prices ran once each, though the entrypoint ran again on resume.
    assert [RAN[f"{key}:price:pen"], RAN[f"{key}:price:ink"], RAN[f"{key}:charge"]] == [1, 1, 1]
    # Each call is an activity named after its task; the entrypoint runs between rounds.
    assert await _activities(remote, cfg) == [
        "purchase", "price", "price", "purchase",  # to the interrupt
        "purchase", "charge", "purchase"]          # the resume
    state = await remote.aget_state(cfg)
    assert state.values == {"total": 7, "receipt": "charged 7"} and state.next == ()


async def test_interrupt_inside_a_task_and_failed_call(temporal_client, graph_worker):
    @task
    def ask(question: str) -> str:
        return interrupt(question)

    @task
    def broken() -> None:
        raise ValueError("no ink")

    @entrypoint()
    def survey(n: int) -> dict:
        answers = [ask(f"q{i}").result() for i in range(n)]
        try:
            broken().result()
            error = None
        except NodeFailedError as exc:  # on Temporal a call's error comes back by name
            error = (exc.node, exc.error_type, exc.error_message)
        return {"answers": answers, "error": error}

    remote = _serve(temporal_client, graph_worker, survey)
    cfg = _cfg()
    assert (await remote.ainvoke(2, cfg))["__interrupt__"][0].value == "q0"
    assert (await remote.ainvoke(Command(resume="a0"), cfg))["__interrupt__"][0].value == "q1"
    assert await remote.ainvoke(Command(resume="a1"), cfg) == {
        "answers": ["a0", "a1"], "error": ("broken", "ValueError", "no ink")}


async def test_previous_and_final(temporal_client, graph_worker):
    @entrypoint()
    def tally(n: int, *, previous: Any) -> entrypoint.final[int, int]:
        total = (previous or 0) + n
        return entrypoint.final(value=total * 10, save=total)

    remote = _serve(temporal_client, graph_worker, tally)
    cfg = _cfg()
    assert await remote.ainvoke(1, cfg) == 10
    assert await remote.ainvoke(2, cfg) == 30
    assert (await remote.aget_state(cfg)).values == 30


async def test_calls_that_change_on_a_rerun_fail_the_node(temporal_client, graph_worker):
    key = uuid.uuid4().hex

    @task
    def step(i: int) -> int:
        return i

    @entrypoint()
    def flaky(n: int) -> int:
        _ran(key)
        # Not allowed: which task it calls depends on how often the body ran.
        return (step(1) if RAN[key] == 1 else step2(2)).result()

    @task
    def step2(i: int) -> int:
        return i

    remote = _serve(temporal_client, graph_worker, flaky)
    with pytest.raises(NodeFailedError) as err:
        await remote.ainvoke(1, _cfg())
    assert err.value.error_type == "CallMismatchError"
    assert "did not make the @task call" in err.value.error_message


async def test_async_entrypoint_with_parallel_calls(temporal_client, graph_worker):
    @task
    async def double(x: int) -> int:
        return 2 * x

    @task
    def square(x: int) -> int:
        return x * x

    @entrypoint()
    async def crunch(xs: list[int]) -> list[int]:
        doubled = [await f for f in [double(x) for x in xs]]
        return [await square(d) for d in doubled]

    remote = _serve(temporal_client, graph_worker, crunch)
    cfg = _cfg()
    assert await remote.ainvoke([1, 2, 3], cfg) == [4, 16, 36]
    # One round of three doubles, then the squares one at a time (each awaited at once).
    assert await _activities(remote, cfg) == [
        "crunch", "double", "double", "double", "crunch", "square", "crunch", "square",
        "crunch", "square", "crunch"]
    # In-process, the same entrypoint gives the same answer.
    assert await crunch.ainvoke([1, 2, 3]) == [4, 16, 36]


async def test_uncaught_call_error_fails_the_entrypoint_with_its_own_error(
        temporal_client, graph_worker):
    @task
    def broken() -> None:
        raise ValueError("no ink")

    @entrypoint()
    def writer(n: int) -> int:
        broken().result()  # not caught: the entrypoint fails with the call's error
        return n

    remote = _serve(temporal_client, graph_worker, writer)
    with pytest.raises(NodeFailedError) as err:
        await remote.ainvoke(1, _cfg())
    assert (err.value.node, err.value.error_type, err.value.error_message) == (
        "writer", "ValueError", "no ink")
    with pytest.raises(ValueError, match="no ink"):  # in-process: the exception itself
        writer.invoke(1)


async def test_two_calls_that_interrupt_show_the_same_interrupts_as_the_output(
        temporal_client, graph_worker):
    @task
    def ask(q: str) -> Any:
        return interrupt(q)

    @entrypoint(checkpointer=InMemorySaver())
    def pair(n: int) -> list[Any]:
        first, second = ask("q1"), ask("q2")
        return [first.result(), second.result()]

    remote = _serve(temporal_client, graph_worker, pair)
    for g in (pair, remote):
        cfg = _cfg()
        out = await g.ainvoke(1, cfg)
        snapshot = await g.aget_state(cfg)
        # as LangGraph: the interrupt the entrypoint waited on, in the output and the state
        assert [i.value for i in out["__interrupt__"]] == ["q1"]
        assert snapshot.interrupts == tuple(out["__interrupt__"])
        assert [i for t in snapshot.tasks for i in t.interrupts] == out["__interrupt__"]
