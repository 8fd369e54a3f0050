"""The conformance scenarios on the Temporal driver: same transcripts as LangGraph."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from graphrun import registry
from graphrun.client import GraphClient
from tests.conformance import scenarios as _scenarios  # noqa: F401  (registers SCENARIOS)
from tests.conformance.harness import SCENARIOS, AsyncGraph, Driver, graphrun_api
from tests.conformance.test_conformance import assert_same_as_langgraph


class RemoteAsyncGraph(AsyncGraph):
    """The driver surface over a RemoteGraph (history and streams as lists)."""


class TemporalDriver(Driver):
    """Registers each scenario's graph on the session worker and calls it remotely."""

    name = "graphrun-temporal"

    def __init__(self, client: Any, task_queue: str) -> None:
        self.api = graphrun_api()
        self.gc = GraphClient(client, task_queue=task_queue)
        self.run_id = uuid.uuid4().hex[:8]

    def config(self, thread: str, **configurable: Any) -> dict:
        return {"configurable": {"thread_id": f"{thread}-{self.run_id}", **configurable}}

    def compile(self, builder: Any, **kw: Any) -> AsyncGraph:
        if "checkpointer" in kw and kw["checkpointer"] is None:
            # No checkpointer means no thread to keep: that is the in-process driver.
            return AsyncGraph(builder.compile(**kw))
        kw.pop("checkpointer", None)
        name = f"g-{uuid.uuid4().hex[:10]}"
        graph = builder.compile(name=name, **kw)
        registry.register(name, graph)
        return RemoteAsyncGraph(self.gc.graph(name))


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_temporal_same_as_langgraph(scenario: str, temporal_client: Any,
                                          graph_worker: str) -> None:
    await assert_same_as_langgraph(scenario, TemporalDriver(temporal_client, graph_worker))
