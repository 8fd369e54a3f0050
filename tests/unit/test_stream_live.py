"""stream()/astream() in-process yield what a node writes while it runs."""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any, TypedDict

import pytest

from graphrun import END, START, InMemorySaver, StateGraph, get_stream_writer


class S(TypedDict, total=False):
    n: int


def _graph(node: Any) -> Any:
    b = StateGraph(S)
    b.add_node("work", node)
    b.add_node("after", lambda s: {"n": s["n"] + 1})
    b.add_edge(START, "work")
    b.add_edge("work", "after")
    b.add_edge("after", END)
    return b.compile(checkpointer=InMemorySaver())


async def test_astream_yields_an_async_nodes_chunks_as_they_are_written() -> None:
    async def work(state: S) -> S:
        write = get_stream_writer()
        for i in range(3):
            write({"tick": i})
            await asyncio.sleep(0.15)
        return {"n": 1}

    graph = _graph(work)
    gc.collect()  # not timed: a full collection of earlier tests' garbage (up to 0.5 s
    # on a loaded 2-core machine under xdist) inside the 0.1 s window below
    start = time.monotonic()
    seen: list[tuple[float, Any]] = []
    async for mode, chunk in graph.astream(
            {"n": 0}, {"configurable": {"thread_id": "a"}}, stream_mode=["custom", "updates"]):
        seen.append((time.monotonic() - start, (mode, chunk)))
    assert [c for _, c in seen] == [
        ("custom", {"tick": 0}), ("custom", {"tick": 1}), ("custom", {"tick": 2}),
        ("updates", {"work": {"n": 1}}), ("updates", {"after": {"n": 2}})]
    assert seen[0][0] < 0.1 < 0.4 < seen[3][0]  # the first tick long before the node ends


def test_stream_raises_a_nodes_error_after_the_chunks_before_it() -> None:
    def work(state: S) -> S:
        get_stream_writer()("before")
        raise RuntimeError("boom")

    got = []
    with pytest.raises(RuntimeError, match="boom"):
        for chunk in _graph(work).stream({"n": 0}, {"configurable": {"thread_id": "e"}},
                                         stream_mode="custom"):
            got.append(chunk)
    assert got == ["before"]

