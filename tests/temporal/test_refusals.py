"""Refused invocations leave nothing behind: no zombie workflow, no changed thread."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated, Any, TypedDict

import pydantic
import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.common import SearchAttributeKey
from temporalio.service import RPCError

from graphrun import (
    START,
    Command,
    EmptyInputError,
    InvalidResumeError,
    InvalidUpdateError,
    ResumeValidationError,
    StateGraph,
    interrupt,
    registry,
)
from graphrun.client import GraphClient


class State(TypedDict):
    n: int


def _remote(client: Any, queue: str) -> Any:
    name = f"inc-{uuid.uuid4().hex[:8]}"
    registry.register(name, StateGraph(State).add_node("inc", lambda s: {"n": s["n"] + 1})
                      .add_edge(START, "inc").compile(name=name))
    return GraphClient(client, task_queue=queue).graph(name)


async def test_resuming_a_never_started_thread_starts_no_workflow(temporal_client: Any,
                                                                  graph_worker: str) -> None:
    remote = _remote(temporal_client, graph_worker)
    tid = f"never-{uuid.uuid4().hex[:8]}"
    with pytest.raises(InvalidResumeError, match="never started"):
        await remote.ainvoke(Command(resume=True), {"configurable": {"thread_id": tid}})
    with pytest.raises(EmptyInputError, match="never started"):
        await remote.ainvoke(None, {"configurable": {"thread_id": tid}})
    with pytest.raises(RPCError):
        await temporal_client.get_workflow_handle(tid).describe()


async def test_bad_input_is_refused_and_the_workflow_closes(temporal_client: Any,
                                                            graph_worker: str) -> None:
    remote = _remote(temporal_client, graph_worker)
    config = {"configurable": {"thread_id": f"bad-{uuid.uuid4().hex[:8]}"}}
    with pytest.raises(InvalidUpdateError, match="must be a dict"):
        await remote.ainvoke("not a dict", config)
    handle = temporal_client.get_workflow_handle(config["configurable"]["thread_id"])
    for _ in range(50):
        if (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED:
            break
        await asyncio.sleep(0.1)
    assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED
    assert await remote.ainvoke({"n": 1}, config) == {"n": 2}  # the thread is usable


async def test_a_flood_of_bad_signals_keeps_only_the_last_refusals(temporal_client: Any,
                                                                   graph_worker: str) -> None:
    name = f"ask-{uuid.uuid4().hex[:8]}"

    def ask(state: State) -> dict:
        return {"n": interrupt("n?")}

    registry.register(name, StateGraph(State).add_node("ask", ask).add_edge(START, "ask")
                      .compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    tid = f"flood-{uuid.uuid4().hex[:8]}"
    await remote.ainvoke({"n": 0}, {"configurable": {"thread_id": tid}})
    handle = temporal_client.get_workflow_handle(tid)
    for i in range(25):
        await handle.signal("resume", {"not-resume": i})
    refused: list[str] = []
    for _ in range(50):
        refused = (await handle.query("get_state"))["refused"]
        if "24" in refused[-1] if refused else False:
            break
        await asyncio.sleep(0.1)
    assert len(refused) == 20 and "24" in refused[-1]
    assert (await remote.ainvoke(Command(resume=5), {"configurable": {"thread_id": tid}})) == {
        "n": 5}


def _strict_add(old: list, new: list) -> list:
    if "boom" in new:
        raise ValueError("the reducer refuses 'boom'")
    return old + new


class Logged(TypedDict):
    log: Annotated[list, _strict_add]


async def test_a_reducer_that_raises_fails_the_run_not_the_workflow_task(
        temporal_client: Any, graph_worker: str) -> None:
    name = f"reducer-{uuid.uuid4().hex[:8]}"
    registry.register(name, StateGraph(Logged).add_node("w", lambda s: {"log": ["boom"]})
                      .add_edge(START, "w").compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    config = {"configurable": {"thread_id": f"red-{uuid.uuid4().hex[:8]}"}}
    with pytest.raises(ValueError, match="the reducer refuses 'boom'"):  # as in-process
        await asyncio.wait_for(remote.ainvoke({"log": []}, config), 20)
    desc = await temporal_client.get_workflow_handle(
        config["configurable"]["thread_id"]).describe()
    assert desc.status == WorkflowExecutionStatus.RUNNING  # open, waiting for a fix
    assert desc.typed_search_attributes.get(SearchAttributeKey.for_keyword(
        "GraphStatus")) == "failed"


async def test_an_answer_its_schema_refuses_is_pydantics_error_too(temporal_client: Any,
                                                                   graph_worker: str) -> None:
    class Approval(pydantic.BaseModel):
        approved: bool

    def ask(state: State) -> dict[str, Any]:
        return {"n": int(interrupt("ship it?", response_schema=Approval).approved)}

    name = f"ask-{uuid.uuid4().hex[:8]}"
    registry.register(name, StateGraph(State).add_node("ask", ask).add_edge(START, "ask")
                      .compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    config = {"configurable": {"thread_id": f"schema-{uuid.uuid4().hex[:8]}"}}
    [asked] = (await remote.ainvoke({"n": 0}, config))["__interrupt__"]

    with pytest.raises(ResumeValidationError) as refused:
        await remote.ainvoke(Command(resume={"approved": "perhaps"}), config)
    # graphrun's class (a RuntimeError, as LangGraph's resume errors) and pydantic's.
    assert isinstance(refused.value, InvalidResumeError)
    assert isinstance(refused.value, pydantic.ValidationError)
    assert [(e["loc"], e["type"]) for e in refused.value.errors()] == [
        (("approved",), "bool_parsing")]
    assert refused.value.title == "Approval"
    assert str(refused.value).startswith("the answer to node 'ask' does not match its "
                                         "response_schema: 1 validation error for Approval\n")
    assert [i.id for i in (await remote.aget_state(config)).interrupts] == [asked.id]
    assert await remote.ainvoke(Command(resume={"approved": True}), config) == {"n": 1}
