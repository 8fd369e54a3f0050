"""GraphClient.connect takes every option the constructor takes; a 5 MB input, answer or
update is refused by the client before anything is sent."""

from __future__ import annotations

import inspect
import re
import uuid
from typing import Any, TypedDict

import pytest
from temporalio.service import RPCError, RPCStatusCode

from graphrun import START, Command, StateGraph, interrupt, registry
from graphrun.client import GRAPH_STATUS, GraphClient
from graphrun.errors import InputLimitError
from graphrun.serde import InputLimits


class State(TypedDict, total=False):
    item: str
    answer: Any


class Quote(TypedDict):
    price: float


def _register() -> str:
    name = f"opts-{uuid.uuid4().hex[:8]}"
    registry.register(name, StateGraph(State)
                      .add_node("ask", lambda s: {"answer": interrupt("ok?")})
                      .add_edge(START, "ask").compile(name=name))
    return name


def test_connect_takes_every_option_of_the_constructor() -> None:
    init = inspect.signature(GraphClient.__init__).parameters
    connect = inspect.signature(GraphClient.connect).parameters
    for name, param in init.items():
        if name in ("self", "client"):
            continue
        assert name in connect, f"GraphClient.connect has no {name}="
        assert connect[name].kind == inspect.Parameter.KEYWORD_ONLY
        assert connect[name].default == param.default, name


async def test_connect_passes_the_options_on(dev_server: Any, graph_worker: str) -> None:
    limits = InputLimits(max_bytes=10_000, max_depth=8)
    gc = await GraphClient.connect(
        dev_server.address, task_queue=graph_worker, id_prefix="opts-", max_history=7,
        history_event_limit=5_000, search_attributes=False, types=[Quote], limits=limits)
    assert (gc.task_queue, gc.id_prefix, gc.max_history, gc.history_event_limit,
            gc.search_attributes, gc.limits) == (graph_worker, "opts-", 7, 5_000, False, limits)
    assert Quote in gc.types

    remote = gc.graph(_register())
    tid = uuid.uuid4().hex[:10]
    config = {"configurable": {"thread_id": tid}}
    await remote.ainvoke({"item": "a"}, config)
    desc = await gc.client.get_workflow_handle(f"opts-{tid}").describe()
    assert desc.typed_search_attributes.get(GRAPH_STATUS) is None  # search_attributes=False
    with pytest.raises(InputLimitError, match="the limit is 10,000"):
        await remote.ainvoke(Command(resume="x" * 20_000), config)
    assert (await remote.ainvoke(Command(resume=1), config))["answer"] == 1


async def test_a_5mb_value_is_refused_before_it_is_sent(temporal_client: Any,
                                                       graph_worker: str) -> None:
    gc = GraphClient(temporal_client, task_queue=graph_worker)
    remote = gc.graph(_register())
    big = "x" * 5_000_000
    message = re.compile(r" is 5,000,\d{3} bytes as JSON; the limit is 1,000,000\. Send a "
                         r"reference \(a URL or an id\) instead, or raise the limit")

    tid = f"big-{uuid.uuid4().hex[:10]}"
    with pytest.raises(InputLimitError, match="^the input" + message.pattern):
        await remote.ainvoke({"item": big}, {"configurable": {"thread_id": tid}})
    with pytest.raises(RPCError) as err:  # nothing was started
        await temporal_client.get_workflow_handle(tid).describe()
    assert err.value.status == RPCStatusCode.NOT_FOUND

    config = {"configurable": {"thread_id": f"paused-{uuid.uuid4().hex[:10]}"}}
    await remote.ainvoke({"item": "a"}, config)
    before = await remote.aget_state(config)
    with pytest.raises(InputLimitError, match=message):
        await remote.ainvoke(Command(resume=big), config)
    with pytest.raises(InputLimitError, match="^the resume value" + message.pattern):
        await gc.resume(config["configurable"]["thread_id"], big)
    with pytest.raises(InputLimitError, match="^update_state values" + message.pattern):
        await remote.aupdate_state(config, {"item": big})
    assert await remote.aget_state(config) == before
