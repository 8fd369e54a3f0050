"""Fixtures ported from langchain-ai/langchain (in-memory checkpointer only).

Upstream: libs/langchain_v1/tests/unit_tests/agents/conftest.py
(stored blob read at commit 1a491b6199620a092cb6355b1bf35462bea59f4c).
Upstream's FAST_MODE (the default) parametrizes only "memory"; that is all that
is ported. Not ported: `sync_store` / `async_store` (no ported test uses them),
`deterministic_uuids` (needs pytest-mock, not installed; no ported test uses it),
and the sqlite/postgres branches (need servers).
The parent folder's autouse fixture routes every compiled graph through graphrun.
"""

from collections.abc import AsyncIterator, Iterator

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

from .conftest_checkpointer import _checkpointer_memory

SYNC_CHECKPOINTER_PARAMS = ["memory"]
ASYNC_CHECKPOINTER_PARAMS = ["memory"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(
    params=SYNC_CHECKPOINTER_PARAMS,
)
def sync_checkpointer(
    request: pytest.FixtureRequest,
) -> Iterator[BaseCheckpointSaver]:
    checkpointer_name = request.param
    if checkpointer_name == "memory":
        with _checkpointer_memory() as checkpointer:
            yield checkpointer
    else:
        msg = f"Unknown checkpointer: {checkpointer_name}"
        raise NotImplementedError(msg)


@pytest.fixture(
    params=ASYNC_CHECKPOINTER_PARAMS,
)
async def async_checkpointer(
    request: pytest.FixtureRequest,
) -> AsyncIterator[BaseCheckpointSaver]:
    checkpointer_name = request.param
    if checkpointer_name == "memory":
        with _checkpointer_memory() as checkpointer:
            yield checkpointer
    else:
        msg = f"Unknown checkpointer: {checkpointer_name}"
        raise NotImplementedError(msg)
