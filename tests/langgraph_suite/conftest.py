"""Fixtures for the LangGraph test suite ported to graphrun.

Upstream: langchain-ai/langgraph, libs/langgraph/tests/conftest.py
(commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f). Checkpointer fixtures give
graphrun's `InMemorySaver()` only; LangGraph-only savers (sqlite, postgres,
redis) are not ported.
"""

from __future__ import annotations

import pytest

from graphrun import InMemorySaver


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(params=["sync", "async", "exit"])
def durability(request: pytest.FixtureRequest) -> str:
    # graphrun accepts and ignores `durability=`; kept so parametrisation matches upstream.
    return request.param


@pytest.fixture(params=["memory"])
def sync_checkpointer(request: pytest.FixtureRequest) -> InMemorySaver:
    return InMemorySaver()


@pytest.fixture(params=["memory"])
def async_checkpointer(request: pytest.FixtureRequest) -> InMemorySaver:
    return InMemorySaver()
