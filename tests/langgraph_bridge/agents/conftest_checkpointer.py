"""Helper ported from langchain-ai/langchain (in-memory checkpointer only).

Upstream: libs/langchain_v1/tests/unit_tests/agents/conftest_checkpointer.py
(stored blob read at commit 2ff057fed58a2b52abdba1f511305dba9be2d32f).
Not ported: the sqlite/postgres placeholder context managers (upstream they
only fall back to memory; the brief limits this port to the in-memory saver).
"""

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from langgraph.checkpoint.base import BaseCheckpointSaver

from .memory_assert import (
    MemorySaverAssertImmutable,
)


@contextmanager
def _checkpointer_memory() -> Iterator[BaseCheckpointSaver[str]]:
    yield MemorySaverAssertImmutable()


@asynccontextmanager
async def _checkpointer_memory_aio() -> AsyncIterator[BaseCheckpointSaver[str]]:
    yield MemorySaverAssertImmutable()
