"""Fixtures for LangGraph's prebuilt tests, run on graphrun through the bridge.

Upstream: langchain-ai/langgraph, libs/prebuilt/tests/conftest.py,
conftest_checkpointer.py and conftest_store.py at commit
f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f. Only the in-memory variants are
ported (upstream's FAST_MODE default): sqlite/postgres/redis params are dropped.
`sync_store`/`async_store` and `deterministic_uuids` (needs pytest-mock) are not
used by the ported test modules and are not ported.

The parent conftest (tests/langgraph_bridge/conftest.py) routes every compiled
LangGraph graph through `graphrun.bridge.from_langgraph`.
"""

from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver

pytest.register_assert_rewrite("tests.langgraph_bridge.prebuilt.memory_assert")

from .memory_assert import MemorySaverAssertImmutable  # noqa: E402

SYNC_CHECKPOINTER_PARAMS = ["memory"]
ASYNC_CHECKPOINTER_PARAMS = ["memory"]


@contextmanager
def _checkpointer_memory():
    yield MemorySaverAssertImmutable()


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="function", params=SYNC_CHECKPOINTER_PARAMS)
def sync_checkpointer(request: pytest.FixtureRequest) -> Iterator[BaseCheckpointSaver]:
    checkpointer_name = request.param
    if checkpointer_name == "memory":
        with _checkpointer_memory() as checkpointer:
            yield checkpointer
    else:
        raise NotImplementedError(f"Unknown checkpointer: {checkpointer_name}")


@pytest.fixture(scope="function", params=ASYNC_CHECKPOINTER_PARAMS)
async def async_checkpointer(
    request: pytest.FixtureRequest,
) -> AsyncIterator[BaseCheckpointSaver]:
    checkpointer_name = request.param
    if checkpointer_name == "memory":
        with _checkpointer_memory() as checkpointer:
            yield checkpointer
    else:
        raise NotImplementedError(f"Unknown checkpointer: {checkpointer_name}")
