"""The Functional API scenarios (tests/conformance/functional.py) on Temporal give
LangGraph's transcripts: outputs, pending interrupts, and how often each leaf task ran."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from graphrun import registry
from graphrun.client import GraphClient
from tests.conformance.functional import FUNCTIONAL_SCENARIOS, FuncDriver, graphrun_func_api
from tests.conformance.test_functional_conformance import assert_functional_same_as_langgraph

pytestmark = pytest.mark.temporal


class TemporalFuncDriver(FuncDriver):
    """Registers each scenario's graph on the session worker and drives it remotely."""

    name = "graphrun-temporal"

    def __init__(self, client: Any, task_queue: str) -> None:
        self.api = graphrun_func_api()
        self.gc = GraphClient(client, task_queue=task_queue)
        self.run_id = uuid.uuid4().hex[:8]

    def serve(self, graph: Any) -> Any:
        name = f"fn-{uuid.uuid4().hex[:10]}"
        registry.register(name, graph)
        return self.gc.graph(name)

    def config(self, thread: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": f"{thread}-{self.run_id}"}}


@pytest.mark.parametrize("scenario", list(FUNCTIONAL_SCENARIOS))
async def test_functional_on_temporal_same_as_langgraph(scenario: str, temporal_client: Any,
                                                        graph_worker: str) -> None:
    await assert_functional_same_as_langgraph(
        scenario, TemporalFuncDriver(temporal_client, graph_worker))
