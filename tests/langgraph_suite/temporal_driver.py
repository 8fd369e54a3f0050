"""Run the ported LangGraph tests on Temporal: the same test bodies, through RemoteGraph.

A test parametrised with the `temporal` checkpointer compiles its graph as usual;
`compile(checkpointer=<TemporalCheckpointer>)` then returns a `TemporalGraph`:
the compiled graph is registered with a graphrun worker on the session's dev
server, and every call (invoke, stream, get_state, history, update_state, and
their async twins) goes through `RemoteGraph` to a GraphWorkflow. Nodes are the
test's own closures, so the worker runs in this process, on a loop of its own
in a background thread (the sync tests have no running loop).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any

from temporalio.client import Client

from graphrun import CompiledStateGraph, InMemorySaver, StateGraph, registry
from graphrun.client import GraphClient, data_converter
from graphrun.worker import create_worker


class TemporalHost:
    """A client and a worker on their own event loop, in a daemon thread."""

    def __init__(self, address: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.queue = f"langgraph-suite-{uuid.uuid4()}"
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(address,), daemon=True)
        self._thread.start()
        if not self._ready.wait(60):
            raise RuntimeError("the suite's Temporal worker did not start")

    def _serve(self, address: str) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._main(address))

    async def _main(self, address: str) -> None:
        self.client = await Client.connect(address, data_converter=data_converter)
        self._stop = asyncio.Event()
        placeholder = StateGraph(dict).add_node("n", lambda s: s).set_entry_point("n")
        async with create_worker(self.client, {"_suite": placeholder.compile(name="_suite")},
                                 task_queue=self.queue):
            self._ready.set()
            await self._stop.wait()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=120)

    async def arun(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def close(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)


class TemporalCheckpointer:
    """What the `temporal` parameter of the checkpointer fixtures gives a test."""

    def __init__(self, host: TemporalHost) -> None:
        self.host = host


class TemporalGraph(CompiledStateGraph):
    """A compiled graph served on Temporal, with the compiled graph's method names.

    Used as another graph's node (a subgraph), it runs in that graph's task, as usual.
    """

    def __init__(self, compiled: Any, host: TemporalHost) -> None:
        super().__init__(compiled.spec, checkpointer=compiled.checkpointer,
                         store=compiled.store, cache=compiled.cache)
        self.host = host
        self.compiled = compiled
        self.served_as = f"suite-{uuid.uuid4().hex[:12]}"
        registry.register(self.served_as, compiled)  # with its store and cache: the worker is here
        # Tests reuse thread ids ("1"): a prefix per graph keeps their workflows apart.
        gc = GraphClient(host.client, task_queue=host.queue, id_prefix=f"{self.served_as}-")
        self.remote = gc.graph(self.served_as)

    # Sent with each run (RemoteGraph.step_timeout): the workflow keeps it.
    @property  # type: ignore[override]
    def step_timeout(self) -> float | None:
        return self.remote.step_timeout

    @step_timeout.setter
    def step_timeout(self, value: float | None) -> None:
        self.remote.step_timeout = value

    # -- running ---------------------------------------------------------------
    def invoke(self, input: Any, config: Any = None, **kw: Any) -> Any:
        if self._nests(config):  # a subgraph of a graph that is running
            return super().invoke(input, config, **kw)
        return self.host.run(self.remote.ainvoke(input, _threaded(config), **_options(kw)))

    async def ainvoke(self, input: Any, config: Any = None, **kw: Any) -> Any:
        if self._nests(config):
            return await super().ainvoke(input, config, **kw)
        return await self.host.arun(self.remote.ainvoke(input, _threaded(config),
                                                        **_options(kw)))

    # Chunks one at a time from the host's loop, as RemoteGraph.astream yields them live.
    def stream(self, input: Any, config: Any = None, **kw: Any) -> Iterator[Any]:
        chunks = self.remote.astream(input, config, **_options(kw))
        while (chunk := self.host.run(_next(chunks))) is not _END:
            yield chunk

    async def astream(self, input: Any, config: Any = None, **kw: Any) -> AsyncIterator[Any]:
        chunks = self.remote.astream(input, config, **_options(kw))
        while (chunk := await self.host.arun(_next(chunks))) is not _END:
            yield chunk

    # -- reading and writing state --------------------------------------------------
    def get_state(self, config: Any, *, subgraphs: bool = False) -> Any:
        return self.host.run(self.remote.aget_state(config, subgraphs=subgraphs))

    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> Any:
        return await self.host.arun(self.remote.aget_state(config, subgraphs=subgraphs))

    async def _history(self, config: Any, kw: dict[str, Any]) -> list[Any]:
        return [s async for s in self.remote.aget_state_history(config, **kw)]

    def get_state_history(self, config: Any, **kw: Any) -> Iterator[Any]:
        yield from self.host.run(self._history(config, kw))

    async def aget_state_history(self, config: Any, **kw: Any) -> AsyncIterator[Any]:
        for snapshot in await self.host.arun(self._history(config, kw)):
            yield snapshot

    def update_state(self, config: Any, values: Any, as_node: str | None = None) -> Any:
        return self.host.run(self.remote.aupdate_state(config, values, as_node))

    async def aupdate_state(self, config: Any, values: Any, as_node: str | None = None) -> Any:
        return await self.host.arun(self.remote.aupdate_state(config, values, as_node))

    def bulk_update_state(self, config: Any, supersteps: Any) -> Any:
        return self.host.run(self.remote.abulk_update_state(config, supersteps))

    async def abulk_update_state(self, config: Any, supersteps: Any) -> Any:
        return await self.host.arun(self.remote.abulk_update_state(config, supersteps))


_END = object()


async def _next(chunks: AsyncIterator[Any]) -> Any:
    try:
        return await chunks.__anext__()
    except StopAsyncIteration:
        return _END


def _threaded(config: Any) -> Any:
    """A run of a graph the test compiled without a checkpointer (see `serve_every_graph`)
    names no thread: on Temporal it gets a new one, as each such run is on its own."""
    if ((config or {}).get("configurable") or {}).get("thread_id"):
        return config
    return {**(config or {}), "configurable": {**((config or {}).get("configurable") or {}),
                                               "thread_id": uuid.uuid4().hex}}


def _options(kw: dict[str, Any]) -> dict[str, Any]:
    return dict(kw)  # durability= too: the thread's workflow honours "exit"


def compile_on(host: TemporalHost, original: Any) -> Any:
    """A `StateGraph.compile` that serves graphs compiled with a TemporalCheckpointer."""

    def compile(self: StateGraph, checkpointer: Any = None, **kw: Any) -> Any:
        if isinstance(checkpointer, TemporalCheckpointer):
            return TemporalGraph(original(self, InMemorySaver(), **kw), host)
        return original(self, checkpointer, **kw)

    return compile


def serve_every_graph(request: Any) -> None:
    """Serve on Temporal every graph the test of fixture `request` compiles, with a
    checkpointer or not (for tests that take no checkpointer fixture but run on Temporal
    too)."""
    host: TemporalHost = request.getfixturevalue("suite_temporal_host")
    monkeypatch = request.getfixturevalue("monkeypatch")
    original = StateGraph.compile

    def compile(self: StateGraph, checkpointer: Any = None, **kw: Any) -> Any:
        return TemporalGraph(original(self, checkpointer or InMemorySaver(), **kw), host)

    monkeypatch.setattr(StateGraph, "compile", compile)


def entrypoint_on(host: TemporalHost, original: Any) -> Any:
    """An `entrypoint.__call__` that serves entrypoints given a TemporalCheckpointer."""

    def call(self: Any, func: Any) -> Any:
        if not isinstance(self.checkpointer, TemporalCheckpointer):
            return original(self, func)
        self.checkpointer = InMemorySaver()
        return TemporalGraph(original(self, func), host)

    return call
