"""Fixtures ported from langchain-ai/langgraph, libs/langgraph/tests/conftest.py (commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f).

Checkpointer fixtures give LangGraph's in-memory `InMemorySaver` only (upstream's
"memory" param; sqlite/postgres/redis need servers or extras and are not ported).
Through the bridge, the saver keeps the bridged graph's threads
(graphrun.bridge.saver), so tests read it as upstream does. `durability` is "async" alone (LangGraph's default): the
durability modes are graphrun's own engine, tested under all three in
tests/langgraph_suite; here each test runs once through the bridge.
`cache` and `sync_store` give the in-memory `InMemoryCache` / `InMemoryStore` only
(upstream's "memory" / "in_memory" params). Not ported: `async_store`,
`deterministic_uuids` (no ported test uses them). The parent folder's autouse fixture routes every compiled graph
through graphrun.
"""

from collections.abc import AsyncIterator, Iterator

import pytest
from langgraph.cache.base import BaseCache
from langgraph.cache.memory import InMemoryCache
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langgraph.types import Durability


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(params=["async"])
def durability(request: pytest.FixtureRequest) -> Durability:
    return request.param


@pytest.fixture(scope="function", params=["memory"])
def sync_checkpointer(
    request: pytest.FixtureRequest,
) -> Iterator[BaseCheckpointSaver]:
    yield InMemorySaver()


@pytest.fixture(scope="function", params=["memory"])
async def async_checkpointer(
    request: pytest.FixtureRequest,
) -> AsyncIterator[BaseCheckpointSaver]:
    yield InMemorySaver()


@pytest.fixture(scope="function", params=["memory"])
def cache(request: pytest.FixtureRequest) -> Iterator[BaseCache]:
    yield InMemoryCache()


@pytest.fixture(scope="function", params=["in_memory"])
def sync_store(request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    yield InMemoryStore()
