"""Every LangGraph graph a test compiles runs on graphrun (see routing.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.langgraph_bridge.routing import route_compiled_graphs


@pytest.fixture(autouse=True)
def _on_graphrun() -> Iterator[None]:
    with route_compiled_graphs():
        yield
