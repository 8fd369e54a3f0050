"""The in-process driver: `CompiledStateGraph` and `InMemorySaver`.

It runs the same `engine.Run` the Temporal workflow runs, executing each task
in this process. Use it for fast tests, notebooks and as an oracle next to
LangGraph; serve the same compiled graph on Temporal for durability.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import dataclasses
import queue
import random
import threading
import time
import typing
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime
from typing import Any, NamedTuple

from graphrun import cache as caching
from graphrun import callbacks as tracing
from graphrun import engine, state
from graphrun.channels import MISSING
from graphrun.checkpoint import STATEFUL, Checkpoint, checkpoint_config
from graphrun.engine import Run, RunOptions, TaskCall, TaskResult, Thread
from graphrun.errors import GraphDrained, GraphInterrupt
from graphrun.limits import alimited, limited, slots_for, timed_out
from graphrun.runnable import RunnableGraph, graph_output, stream_parts
from graphrun.runner import TaskContext, arun_task, node_writes, run_task
from graphrun.runtime import merging_thread
from graphrun.spec import GraphSpec
from graphrun.task import current_task
from graphrun.types import (
    INTERRUPT,
    NS_END,
    NS_SEP,
    Command,
    RetryPolicy,
    StateSnapshot,
    matching_policy,
    retry_delay,
)


def _now() -> str:
    return datetime.now(UTC).isoformat()


class CheckpointTuple(NamedTuple):
    """One saved checkpoint, as `InMemorySaver.list` yields it (LangGraph's shape)."""

    config: dict[str, Any]
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    parent_config: dict[str, Any] | None = None
    pending_writes: list[Any] | None = None


class InMemorySaver:
    """Keeps threads in this process's memory (like LangGraph's InMemorySaver)."""

    def __init__(self) -> None:
        self.threads: dict[str, Thread] = {}

    def thread(self, thread_id: str) -> Thread:
        if thread_id not in self.threads:
            self.threads[thread_id] = Thread(thread_id=thread_id)
        return self.threads[thread_id]

    def delete_thread(self, thread_id: str) -> None:
        self.threads.pop(str(thread_id), None)

    def list(self, config: Mapping[str, Any] | None, *, filter: Mapping[str, Any] | None = None,
             before: Mapping[str, Any] | None = None, limit: int | None = None
             ) -> Iterator[CheckpointTuple]:
        """Saved checkpoints of a thread (or of all threads), newest first."""
        tid = _thread_id(config)
        threads = [self.threads[tid]] if tid in self.threads else (
            [] if tid else list(self.threads.values()))
        count = 0
        for thread in threads:
            items = list(reversed(thread.checkpoints))
            if before is not None and _checkpoint_id(before):
                ids = [c.id for c in items]
                bid = _checkpoint_id(before)
                items = items[ids.index(bid) + 1:] if bid in ids else items
            for c in items:
                metadata = {"source": c.source, "step": c.step, "parents": {}}
                if filter and any(metadata.get(k) != v for k, v in filter.items()):
                    continue
                if limit is not None and count >= limit:
                    return
                count += 1
                yield CheckpointTuple(
                    config=_config(thread.thread_id, c.id), metadata=metadata,
                    checkpoint={"id": c.id, "ts": c.created_at,
                                "channel_values": dict(c.channel_values),
                                "channel_versions": dict(c.channel_versions),
                                "versions_seen": {k: dict(v) for k, v in
                                                  c.versions_seen.items()}},
                    parent_config=_config(thread.thread_id, c.parent_id) if c.parent_id
                    else None, pending_writes=[])

    async def alist(self, config: Mapping[str, Any] | None, *,
                    filter: Mapping[str, Any] | None = None,
                    before: Mapping[str, Any] | None = None, limit: int | None = None
                    ) -> AsyncIterator[CheckpointTuple]:
        for t in self.list(config, filter=filter, before=before, limit=limit):
            yield t

    async def aget_tuple(self, config: Mapping[str, Any]) -> CheckpointTuple | None:
        return self.get_tuple(config)

    def get_tuple(self, config: Mapping[str, Any]) -> CheckpointTuple | None:
        return next(iter(self.list(config, limit=1, before=None)), None) if not \
            _checkpoint_id(config) else next((t for t in self.list(
                {"configurable": {"thread_id": _thread_id(config)}})
                if t.config["configurable"]["checkpoint_id"] == _checkpoint_id(config)), None)


def _config(thread_id: str, checkpoint_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": "",
                             "checkpoint_id": checkpoint_id}}


MemorySaver = InMemorySaver


def _thread_id(config: Mapping[str, Any] | None) -> str | None:
    return ((config or {}).get("configurable") or {}).get("thread_id")


def _checkpoint_id(config: Mapping[str, Any] | None) -> str | None:
    return ((config or {}).get("configurable") or {}).get("checkpoint_id")


class CompiledStateGraph(RunnableGraph):
    """A compiled graph: invoke, stream and inspect threads in this process.

    With langchain-core installed it is a LangChain `Runnable` (see graphrun.runnable),
    and the callbacks in `config["callbacks"]` see LangGraph's run tree
    (see graphrun.callbacks)."""

    spec: GraphSpec
    stream_transformers: tuple[Any, ...] = ()  # for stream_events(version="v3")
    # LangGraph's: seconds a superstep may take; past it the step's unfinished tasks are
    # cancelled and the run raises StepTimeoutError (a TimeoutError).
    step_timeout: float | None = None

    def __init__(self, spec: GraphSpec, *, checkpointer: Any = None, store: Any = None,
                 cache: Any = None) -> None:
        self.spec = spec
        self.checkpointer = checkpointer
        self.store = store  # LangGraph's BaseStore (long-term memory), or None
        self.cache = cache  # LangGraph's BaseCache, for nodes with a CachePolicy, or None

    def _store(self) -> Any:
        """The store this run's nodes get. Run inside a node (a subgraph, or a graph the
        node calls) the caller's store stands, as in LangGraph; the graph's own otherwise."""
        parent = current_task()
        return parent.store if parent is not None and parent.store is not None else self.store

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def _run_name(self) -> str:
        """The name of the graph's chain run (LangGraph names an @entrypoint's "LangGraph")."""
        name: str = getattr(self.spec, "run_name", None) or self.spec.name
        return name

    # -- threads -------------------------------------------------------------
    def _thread(self, config: Mapping[str, Any] | None, *, required: bool = False) -> Thread:
        tid = _thread_id(config)
        if self.checkpointer is None:
            if required:
                raise ValueError("No checkpointer set. Compile with "
                                 "checkpointer=InMemorySaver() to keep thread state.")
            return Thread(thread_id=str(tid or "ephemeral"))
        if tid is None:
            raise ValueError('Checkpointer requires a thread_id: pass config={"configurable": '
                             '{"thread_id": "..."}}.')
        thread: Thread = self.checkpointer.thread(str(tid))
        return thread

    # -- running -------------------------------------------------------------
    async def _arun(self, input: Any, config: Mapping[str, Any] | None,
                    options: Mapping[str, Any]) -> Run:
        """`_run` for the async entry points (a saver bound to the loop reads the thread
        from a thread of its own: graphrun.bridge)."""
        return self._run(input, config, options)

    def _run(self, input: Any, config: Mapping[str, Any] | None,
             options: Mapping[str, Any]) -> Run:
        if isinstance(input, Command) and input.resume is not None and self.checkpointer is None:
            raise RuntimeError("Cannot use Command(resume=...) without checkpointer")
        thread = self._thread(config)
        checkpoint, subgraph_checkpoints = state.run_from(config)
        with merging_thread(_thread_id(config)):  # the input goes through the reducers
            run = Run(self.spec, thread, input, clock=_now, options=RunOptions(
                checkpoint=checkpoint, subgraph_checkpoints=subgraph_checkpoints,
                recursion_limit=int((config or {}).get("recursion_limit",
                                                       self.spec.recursion_limit)),
                checkpointer=self.checkpointer is not None,
                interrupt_before=options.get("interrupt_before"),
                interrupt_after=options.get("interrupt_after"),
                context=options.get("context"), durability=options.get("durability"),
                stream_modes=_modes(options.get("stream_mode")),
                messages_v2=bool(options.get("messages_v2"))))
        run.control = options.get("control")  # RunControl: asked between steps
        return run

    def _after(self, run: Run) -> None:
        run.close()
        if run.status == "failed":
            exception = run.failed[0].exception
            # In-process, the node's own exception propagates, as in LangGraph.
            raise exception if exception is not None else run.failure()

    def _steps(self, run: Run, config: Mapping[str, Any] | None, live: Live | None = None,
               trace: tracing.GraphRun | None = None) -> Iterator[list[tuple[str, Any]]]:
        slots, timeout = slots_for(config), self.step_timeout
        yield self._drain(run)
        stepped = False
        while tasks := run.next_tasks():
            if stepped:
                self._stop_if_drained(run)
            stepped = True
            yield self._drain(run)  # the tasks' start, before what they stream live
            calls = [run.call_for(t) for t in tasks]
            results: list[TaskResult] = []
            if len(calls) == 1 and not timeout:
                results = limited(slots, self._handling, calls[0], run, config, live, trace)
            else:  # a step's nodes run at the same time, each in a thread (LangGraph)
                pool = ThreadPoolExecutor(max_workers=len(calls))
                futures = {pool.submit(contextvars.copy_context().run, limited, slots,
                                       self._handling, c, run, config, live, trace): c.task
                           for c in calls}
                taken: set[Any] = set()
                try:
                    # as_completed's timeout counts from the step's start (LangGraph's too)
                    for future in as_completed(futures, timeout=timeout or None):
                        taken.add(future)
                        for result in future.result():
                            results.append(result)
                            run.task_finished(result)
                        yield self._drain(run)
                except TimeoutError:
                    late = [f for f in futures if f not in taken]
                    results += [r for f in late if f.done() and not f.cancelled()
                                for r in f.result()]
                    # A thread cannot be stopped: a node still running ends unheard.
                    results += timed_out([futures[f] for f in late if not f.done()
                                          or f.cancelled()], timeout)
                finally:
                    pool.shutdown(wait=not timeout, cancel_futures=True)
            run.finish_step(results)
            _paused_after(run, trace)
            yield self._drain(run)
        yield self._drain(run)  # a breakpoint's chunk
        self._after(run)

    async def _asteps(self, run: Run, config: Mapping[str, Any] | None, live: Live | None = None,
                      trace: tracing.GraphRun | None = None
                      ) -> AsyncIterator[list[tuple[str, Any]]]:
        slots, timeout = slots_for(config), self.step_timeout
        loop = asyncio.get_running_loop()
        yield self._drain(run)
        stepped = False
        while tasks := run.next_tasks():
            if stepped:
                self._stop_if_drained(run)
            stepped = True
            yield self._drain(run)  # the tasks' start, before what they stream live
            # The first node to fail cancels its unfinished siblings (LangGraph).
            of = {asyncio.ensure_future(alimited(slots, self._ahandling(
                run.call_for(t), run, config, live, trace))): t for t in tasks}
            pending = set(of)
            results: list[TaskResult] = []
            ends = loop.time() + timeout if timeout else None  # from the step's start
            try:
                while pending:
                    done, pending = await asyncio.wait(
                        pending, return_when=asyncio.FIRST_COMPLETED,
                        timeout=None if ends is None else max(ends - loop.time(), 0))
                    if not done:  # the step ran past step_timeout: stop what still runs
                        for p in pending:
                            p.cancel()
                        await asyncio.gather(*pending, return_exceptions=True)
                        ended = [p for p in pending if not p.cancelled() and not p.exception()]
                        results += [r for p in ended for r in p.result()]
                        results += timed_out([of[p] for p in pending if p not in ended],
                                             timeout)
                        pending = set()
                        break
                    for d in done:
                        for result in d.result():
                            results.append(result)
                            run.task_finished(result)
                    yield self._drain(run)  # chunks as tasks finish
                    if any(run.fails(r) for r in results):
                        for p in pending:
                            p.cancel()
                        await asyncio.gather(*pending, return_exceptions=True)
                        break
            except BaseException:  # the run was cancelled (its reader left): so are its nodes
                for p in pending:
                    p.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                run.keep_finished()  # not run again when the thread goes on
                raise
            run.finish_step(results)
            _paused_after(run, trace)
            yield self._drain(run)
        yield self._drain(run)  # a breakpoint's chunk
        self._after(run)

    def _stop_if_drained(self, run: Run) -> None:
        """Between steps: a run whose RunControl asked to drain stops here, its last
        checkpoint (with the next step's tasks) saved, and raises GraphDrained."""
        control = run.control
        if control is not None and control.drain_requested:
            self._after(run)
            raise GraphDrained(control.drain_reason or "shutdown")

    @staticmethod
    def _drain(run: Run) -> list[tuple[str, Any]]:
        events, run.events = run.events, []
        return events

    def _cache(self) -> Any:
        """The cache this run's nodes use: inside a running task its caller's (as in
        LangGraph), the graph's own otherwise."""
        cache = caching.active()
        return cache if cache is not None else self.cache

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Drop the cached writes of `nodes` (all nodes when None)."""
        if self.cache is None:
            raise ValueError("No cache is set for this graph. Cannot clear cache.")
        self.cache.clear(caching.namespaces(self.spec, nodes))

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        if self.cache is None:
            raise ValueError("No cache is set for this graph. Cannot clear cache.")
        await self.cache.aclear(caching.namespaces(self.spec, nodes))

    def _handling(self, call: TaskCall, run: Run, config: Mapping[str, Any] | None,
                  live: Live | None = None, trace: tracing.GraphRun | None = None
                  ) -> list[TaskResult]:
        """A task's result, then its error handler's when it failed and its node has one
        (run at once, in the same step, while the other tasks go on: LangGraph's)."""
        result = self._execute(call, run, config, live, trace)
        handler = run.error_handler(call.task, result)
        if handler is None:
            return [result]
        return [result, *self._handling(run.call_for(handler), run, config, live, trace)]

    async def _ahandling(self, call: TaskCall, run: Run, config: Mapping[str, Any] | None,
                         live: Live | None = None, trace: tracing.GraphRun | None = None
                         ) -> list[TaskResult]:
        result = await self._aexecute(call, run, config, live, trace)
        handler = run.error_handler(call.task, result)
        if handler is None:
            return [result]
        return [result, *await self._ahandling(run.call_for(handler), run, config, live,
                                               trace)]

    def _execute(self, call: TaskCall, run: Run, config: Mapping[str, Any] | None,
                 live: Live | None = None, trace: tracing.GraphRun | None = None
                 ) -> TaskResult:
        cache = self._cache()
        key = caching.node_key(self.spec, call.task) if cache is not None else None
        if (writes := caching.get(cache, key, self.spec.types)) is not None:
            return caching.hit(call.task.id, writes)  # the node does not run
        token = caching.enter(cache)  # for its @task calls and the graphs it runs
        try:
            result = self._attempts(call, run, config, live, trace)
        finally:
            caching.leave(token)
        caching.put(cache, key, result)
        return result

    def _attempts(self, call: TaskCall, run: Run, config: Mapping[str, Any] | None,
                  live: Live | None, trace: tracing.GraphRun | None) -> TaskResult:
        policies = self.spec.nodes[call.task.name].retry_policy
        attempt, first = 0, time.time()
        while True:
            attempt += 1
            call = dataclasses.replace(call, attempt=attempt, first_attempt_time=first)
            result = run_task(self.spec, call, config, resume_map=run.resume_map, live=live,
                              trace=trace, store=self._store())
            delay = _retry_delay(result, policies, attempt)
            if delay is None:
                return result
            time.sleep(delay)

    async def _aexecute(self, call: TaskCall, run: Run, config: Mapping[str, Any] | None,
                        live: Live | None = None, trace: tracing.GraphRun | None = None
                        ) -> TaskResult:
        cache = self._cache()
        key = caching.node_key(self.spec, call.task) if cache is not None else None
        if (writes := await caching.aget(cache, key, self.spec.types)) is not None:
            return caching.hit(call.task.id, writes)
        token = caching.enter(cache)
        try:
            result = await self._aattempts(call, run, config, live, trace)
        finally:
            caching.leave(token)
        await caching.aput(cache, key, result)
        return result

    async def _aattempts(self, call: TaskCall, run: Run, config: Mapping[str, Any] | None,
                         live: Live | None, trace: tracing.GraphRun | None) -> TaskResult:
        policies = self.spec.nodes[call.task.name].retry_policy
        attempt, first = 0, time.time()
        while True:
            attempt += 1
            call = dataclasses.replace(call, attempt=attempt, first_attempt_time=first)
            result = await arun_task(self.spec, call, config, resume_map=run.resume_map,
                                     live=live, trace=trace, store=self._store())
            delay = _retry_delay(result, policies, attempt)
            if delay is None:
                return result
            await asyncio.sleep(delay)

    def invoke(self, input: Any, config: Mapping[str, Any] | None = None, *,
               version: str = "v1", **options: Any) -> Any:
        """Run until the graph ends or pauses; returns the state (+ `__interrupt__`).

        `interrupt_before=[...]` / `interrupt_after=[...]` set this run's breakpoints
        instead of the compiled ones; other LangGraph options are accepted and ignored.
        `version="v2"` returns a `GraphOutput(value, interrupts)` (with a `stream_mode`
        other than "values": the list of v2 stream parts), as LangGraph's; with such a
        `stream_mode` in v1, the list of its chunks.
        """
        config = self.merged_config(config)
        if options.get("stream_mode", "values") != "values":
            return list(self.stream(input, config, version=version, **options))
        if self._nests(config):
            nested: dict[str, Any] = self._invoke_nested(input, config, sync=True)
            return self._v2_output(nested) if version == "v2" else nested
        trace = tracing.start_graph(self._run_name, input, config)
        try:
            run = self._run(input, config, options)
            _resumed(run, input, trace)
            for _events in _merging(config, self._steps(run, config, trace=trace)):
                pass
            _paused(run, trace)
        except BaseException as exc:
            if trace is not None:
                trace.error(exc)
            raise
        if trace is not None:
            trace.end(run.output_values())
        if version == "v2":
            return graph_output(self.spec, run.output_values(), run.interrupts)
        return run.output()

    async def ainvoke(self, input: Any, config: Mapping[str, Any] | None = None, *,
                      version: str = "v1", **options: Any) -> Any:
        config = self.merged_config(config)
        if options.get("stream_mode", "values") != "values":  # its chunks, as LangGraph's
            return [part async for part in self.astream(input, config, version=version,
                                                        **options)]
        if self._nests(config):
            nested_out: dict[str, Any] = await self._invoke_nested(input, config, sync=False)
            return self._v2_output(nested_out) if version == "v2" else nested_out
        trace = await tracing.astart_graph(self._run_name, input, config)
        try:
            run = await self._arun(input, config, options)
            await _aresumed(run, input, trace)
            async for _events in _amerging(config, self._asteps(run, config, trace=trace)):
                pass
            await _apaused(run, trace)
        except BaseException as exc:
            if trace is not None:
                await trace.aerror(exc)
            raise
        if trace is not None:
            await trace.aend(run.output_values())
        if version == "v2":
            return graph_output(self.spec, run.output_values(), run.interrupts)
        return run.output()

    def _v2_output(self, out: Any) -> Any:
        interrupts = out.pop(INTERRUPT, ()) if isinstance(out, dict) else ()
        return graph_output(self.spec, out, interrupts)

    def stream(self, input: Any, config: Mapping[str, Any] | None = None, *,
               stream_mode: str | Sequence[str] = "updates", subgraphs: bool = False,
               version: str = "v1", **options: Any) -> Iterator[Any]:
        """Yield 'updates' ({node: update}, the default as in LangGraph) or 'values'
        (the state after each step); a list of modes yields (mode, chunk) pairs, and
        `subgraphs=True` puts the namespace first (() for this graph's own chunks).
        `version="v2"` yields LangGraph's `StreamPart` dicts instead:
        `{"type": mode, "ns": namespace, "data": chunk}`."""
        config = self.merged_config(config)
        if self._nests(config):  # called inside a node: a subgraph of its task
            yield from self._stream_nested(input, config, stream_mode, subgraphs, version)
            return
        chunks = self._chunker(stream_mode, subgraphs, version)
        trace = tracing.start_graph(self._run_name, input, config)
        try:
            run = self._run(input, config, {**options, "stream_mode": stream_mode})
            _resumed(run, input, trace)
            for events in _live_thread(lambda live: _merging(
                    config, self._steps(run, config, live, trace))):
                yield from chunks(events)
            _paused(run, trace)
        except BaseException as exc:
            if trace is not None:
                trace.error(exc)
            raise
        if trace is not None:
            trace.end(run.output_values())

    async def astream(self, input: Any, config: Mapping[str, Any] | None = None, *,
                      stream_mode: str | Sequence[str] = "updates", subgraphs: bool = False,
                      version: str = "v1", **options: Any) -> AsyncIterator[Any]:
        config = self.merged_config(config)
        if self._nests(config):  # called inside a node: a subgraph of its task
            async for chunk in self._astream_nested(input, config, stream_mode, subgraphs,
                                                    version):
                yield chunk
            return
        chunks = self._chunker(stream_mode, subgraphs, version)
        trace = await tracing.astart_graph(self._run_name, input, config)
        try:
            run = await self._arun(input, config, {**options, "stream_mode": stream_mode})
            await _aresumed(run, input, trace)
            # Closed with this generator: a reader that leaves stops the run's nodes now.
            async with contextlib.aclosing(_live_task(lambda live: _amerging(
                    config, self._asteps(run, config, live, trace)))) as steps:
                async for events in steps:
                    for chunk in chunks(events):
                        yield chunk
            await _apaused(run, trace)
        except BaseException as exc:
            if trace is not None:
                await trace.aerror(exc)
            raise
        if trace is not None:
            await trace.aend(run.output_values())

    def _chunker(self, stream_mode: str | Sequence[str], subgraphs: bool, version: str,
                 own: tuple[str, ...] = ()) -> Callable[[list[tuple[Any, ...]]], Iterator[Any]]:
        """A run's events as chunks: LangGraph's v1 shapes, or its v2 stream parts; the
        run's own under `own`, the namespace its graph streams under."""
        if version == "v2":
            return lambda events: stream_parts(events, stream_mode, subgraphs, self.spec, own)
        return lambda events: engine.stream_chunks(events, stream_mode, subgraphs, own)

    # -- subgraphs -----------------------------------------------------------
    def _nests(self, config: Mapping[str, Any] | None) -> bool:
        """Called inside a node, a graph runs in the node's task (its subgraph), unless it
        has a checkpointer of its own and is given another thread: then it runs that
        thread, saved there at the root namespace, as LangGraph keeps it."""
        ctx = current_task()
        if ctx is None:
            return False
        if self.checkpointer is None or isinstance(self.checkpointer, bool):
            return True
        tid = _thread_id(config)
        return tid is None or str(tid) == str(_thread_id(ctx.config))

    def _invoke_nested(self, input: Any, config: Mapping[str, Any] | None, *, sync: bool) -> Any:
        """A graph called from inside a node keeps its thread in the calling task."""
        if sync:
            trace = tracing.start_graph(self._run_name, input, config)
            try:
                run, finish, forward, live = self._nested(input, config)
                for events in self._steps(run, config, live, trace):
                    forward(events)
                out = finish()
            except BaseException as exc:
                if trace is not None:
                    trace.error(exc)
                raise
            if trace is not None:
                trace.end(out)
            return out

        async def go() -> Any:
            atrace = await tracing.astart_graph(self._run_name, input, config)
            try:
                run, finish, forward, live = self._nested(input, config)
                async for events in self._asteps(run, config, live, atrace):
                    forward(events)
                out = finish()
            except BaseException as exc:
                if atrace is not None:
                    await atrace.aerror(exc)
                raise
            if atrace is not None:
                await atrace.aend(out)
            return out

        return go()

    def _stream_nested(self, input: Any, config: Mapping[str, Any] | None,
                       stream_mode: str | Sequence[str], subgraphs: bool, version: str
                       ) -> Iterator[Any]:
        """stream() inside a node: as `_invoke_nested`, yielding the run's chunks, under
        the namespace of the task that runs it (LangGraph's)."""
        trace = tracing.start_graph(self._run_name, input, config)
        try:
            run, finish, forward, live = self._nested(input, config, stream_mode)
            chunks = self._chunker(stream_mode, subgraphs, version, _split(run.ns))
            heard, tee = _tee(live)
            for events in self._steps(run, config, tee, trace):
                forward(events)
                yield from chunks([*heard(), *events])
            out = finish()
        except BaseException as exc:
            if trace is not None:
                trace.error(exc)
            raise
        if trace is not None:
            trace.end(out)

    async def _astream_nested(self, input: Any, config: Mapping[str, Any] | None,
                              stream_mode: str | Sequence[str], subgraphs: bool,
                              version: str) -> AsyncIterator[Any]:
        trace = await tracing.astart_graph(self._run_name, input, config)
        try:
            run, finish, forward, live = self._nested(input, config, stream_mode)
            chunks = self._chunker(stream_mode, subgraphs, version, _split(run.ns))
            heard, tee = _tee(live)
            async for events in self._asteps(run, config, tee, trace):
                forward(events)
                for chunk in chunks([*heard(), *events]):
                    yield chunk
            out = finish()
        except BaseException as exc:
            if trace is not None:
                await trace.aerror(exc)
            raise
        if trace is not None:
            await trace.aend(out)

    def _nested_ns(self, ctx: TaskContext) -> str:
        """The namespace of this graph's next run inside the task `ctx`: the task's (for
        compile(checkpointer=True), its node's), numbered from the task's second graph
        call on, as LangGraph's."""
        ns = ctx.call.task.ns
        if self.checkpointer is True:
            ns = ns.rsplit(NS_END, 1)[0]
        count = ctx.subgraph_counter
        return f"{ns}{NS_SEP}{count}" if count else ns

    def stream_scope(self, config: Mapping[str, Any] | None) -> tuple[str, ...]:
        """Called inside a node, the namespace this graph's own chunks will stream under
        (as `stream_events(version="v3")` inside a node is scoped in LangGraph); else a
        `checkpoint_ns` the config names."""
        ctx = current_task()
        if ctx is not None and self._nests(self.merged_config(config)):
            return _split(self._nested_ns(ctx))
        return super().stream_scope(config)

    def _nested(self, input: Any, config: Mapping[str, Any] | None,
                stream_mode: str | Sequence[str] = ()) -> tuple[
            Run, Callable[[], Any], Callable[[list[tuple[Any, ...]]], None], Any]:
        """The run of a graph called inside a node, what ends it, and where its chunks go."""
        ctx = current_task()
        assert ctx is not None
        # compile(checkpointer=True): the subgraph keeps its thread across the parent's
        # steps and runs (under the node's name); otherwise only while it is paused.
        stateful = self.checkpointer is True
        task = ctx.call.task
        count = ctx.subgraph_counter
        key = (f"{STATEFUL}{task.name}:{self.spec.name}:{count}" if stateful
               else f"{self.spec.name}:{count}")
        ns = self._nested_ns(ctx)
        ctx.subgraph_counter += 1
        # The task's saved nested thread (typed JSON brings it back as a Thread on Temporal).
        saved: Thread | None = ctx.nested.get(key)
        parent_tid = _thread_id(ctx.config) or "ephemeral"
        thread = saved or Thread(thread_id=f"{parent_tid}|{ns}|{key}")
        # durability="exit": a subgraph that runs to its end saves nothing more (LangGraph
        # saves at the root's exit only), so its history stays as it was when it paused.
        kept = (copy.deepcopy(saved) if saved is not None and not stateful
                and ctx.call.durability == "exit" else None)
        # A config naming one of the subgraph's own checkpoints: it runs from there.
        pinned = ctx.call.subgraph_checkpoints.get(ns) if saved is not None else None
        paused = saved is not None and (pinned is not None
                                        or engine.is_paused(self.spec, saved))
        # A subgraph that ran to its end before its task paused is read back, not run
        # again; only a paused one takes the task's answer.
        resuming = saved is not None and (paused or not stateful)
        asked = _modes(stream_mode)
        run = Run(self.spec, thread, None if resuming else input, clock=_now,
                  options=RunOptions(
                      checkpoint=pinned, subgraph_checkpoints=ctx.call.subgraph_checkpoints,
                      ns=ns, parents=_around(ctx.call), root_thread_id=parent_tid,
                      context=ctx.call.context, durability=ctx.call.durability,
                      null_resume=ctx.take_null_resume() if paused else MISSING,
                      resume_map=ctx.resume_map if resuming else None,
                      stream_modes=asked | _inherited_modes(ctx.call),
                      # A caller streaming 'messages' itself gets LangChain's message
                      # chunks, whatever protocol the node's own caller streams (LangGraph).
                      messages_v2=ctx.call.messages_v2 and "messages" not in asked))

        def finish() -> Any:
            if run.status == "interrupted":  # an interrupt(), or its own breakpoint
                run.close()
                ctx.nested[key] = thread
                raise GraphInterrupt(run.interrupts)
            if stateful:
                ctx.nested[key] = thread
            else:
                ctx.nested.pop(key, None)
            self._after(run)
            if not stateful and self.checkpointer is not False and (
                    ctx.call.durability != "exit" or kept is not None):
                # Kept with the task: if it pauses later and runs again, the subgraph is
                # not run again (its end is read back, as LangGraph does), and its
                # checkpoints stay in the thread's history.
                ctx.nested[key] = kept or thread
            return run.values()

        # The subgraph's chunks, under the namespace of the task that ran it; streamed at
        # once when the caller streams, else handed over with the task's result.
        prefix = _split(ns)

        def sub_event(e: tuple[Any, ...]) -> None:
            ctx.sub_event(e if len(e) == 3 else (prefix, *e))

        live = sub_event if ctx.live is not None else None

        def forward(events: list[tuple[Any, ...]]) -> None:
            for e in events:
                sub_event(e)

        return run, finish, forward, live

    # -- reading and writing state -----------------------------------------------
    def get_state(self, config: Mapping[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        config = self.merged_config(config)
        thread = self._thread(config, required=True)
        # A subgraph's config (checkpoint_ns "node:<task id>") names its own thread.
        with merging_thread(_thread_id(config)):
            spec, here, ckpt, ns, parents = state.locate(self.spec, thread,
                                                         config.get("configurable") or {})
            # A checkpoint asked for by id shows as saved; the head also shows what
            # finished tasks already wrote (LangGraph).
            return _copied(state.snapshot(spec, here, ckpt, ns,
                                          with_pending=_checkpoint_id(config) is None,
                                          subgraphs=subgraphs, thread_id=thread.thread_id,
                                          parents=parents))

    async def aget_state(self, config: Mapping[str, Any], *, subgraphs: bool = False
                         ) -> StateSnapshot:
        return self.get_state(config, subgraphs=subgraphs)

    def get_state_history(self, config: Mapping[str, Any], *, limit: int | None = None,
                          before: Mapping[str, Any] | None = None, **_: Any
                          ) -> Iterator[StateSnapshot]:
        """Snapshots newest first."""
        config = self.merged_config(config)
        root = self._thread(config, required=True)
        spec, thread, _head, ns, parents = state.locate(
            self.spec, root, {**(config.get("configurable") or {}), "checkpoint_id": None})
        items = list(reversed(thread.checkpoints))
        if before is not None:
            bid = _checkpoint_id(before)
            ids = [c.id for c in items]
            items = items[ids.index(bid) + 1:] if bid in ids else items
        for c in items[:limit] if limit else items:
            with merging_thread(root.thread_id):
                snap = state.snapshot(spec, thread, c, ns, with_pending=False,
                                      thread_id=root.thread_id, parents=parents)
            yield _copied(snap)

    async def aget_state_history(self, config: Mapping[str, Any], **kw: Any
                                 ) -> AsyncIterator[StateSnapshot]:
        for s in self.get_state_history(config, **kw):
            yield s

    def update_state(self, config: Mapping[str, Any], values: Any, as_node: str | None = None
                     ) -> dict[str, Any]:
        """Write `values` as if `as_node` had returned them; returns the new config."""
        config = self.merged_config(config)
        return self._update(config, lambda spec, thread, checkpoint: state.update_state(
            spec, thread, values, as_node, clock=_now, checkpoint=checkpoint,
            node_writes=self._node_writes, config=config))

    def _node_writes(self, *args: Any, **kwargs: Any) -> tuple[list[Any], Any]:
        """An update's writes; its routing functions get the graph's store, as nodes do."""
        return node_writes(*args, store=self._store(), **kwargs)

    def _update(self, config: Mapping[str, Any],
                apply: Callable[[GraphSpec, Thread, str | None], Checkpoint]
                ) -> dict[str, Any]:
        """Apply an update to the thread, or to the subgraph's own thread a config names
        (checkpoint_ns "node:<task id>"): a new checkpoint there, which a run from the
        returned config goes on from (LangGraph's fork inside a subgraph)."""
        root = self._thread(config, required=True)
        with merging_thread(root.thread_id):
            spec, thread, at, ns, parents = state.locate(self.spec, root,
                                                         config.get("configurable") or {})
            ckpt = apply(spec, thread, at.id if at is not None else None)
        return checkpoint_config(root.thread_id, ns, ckpt.id, parents)

    async def aupdate_state(self, config: Mapping[str, Any], values: Any,
                            as_node: str | None = None) -> dict[str, Any]:
        return self.update_state(config, values, as_node)

    def bulk_update_state(self, config: Mapping[str, Any],
                          supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
        """Apply `StateUpdate(values, as_node)`s: each inner list is one step (checkpoint)."""
        config = self.merged_config(config)
        return self._update(config, lambda spec, thread, checkpoint: state.bulk_update_state(
            spec, thread, supersteps, clock=_now, checkpoint=checkpoint,
            node_writes=self._node_writes, config=config))

    async def abulk_update_state(self, config: Mapping[str, Any],
                                 supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
        return self.bulk_update_state(config, supersteps)

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        return _json_schema(self.spec.input_type, "LangGraphInput", self.spec.root_model_schema)

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        return _json_schema(self.spec.output_type, "LangGraphOutput", self.spec.root_model_schema)

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        schema = self.spec.builder.context_schema
        return None if schema is None else _json_schema(schema, "LangGraphContext")

    def get_graph(self, config: Any = None, *, xray: int | bool = False) -> Any:
        """LangChain's drawable `Graph` of this graph, as LangGraph draws it:
        `.draw_mermaid()`, `.draw_ascii()`, `.draw_mermaid_png()`, `.to_json()`.
        `xray=True` expands subgraphs (`xray=n`: n levels). Needs langchain-core
        (`pip install 'graphrun[messages]'`); the topology itself is `self.spec`."""
        from graphrun.drawing import draw_graph

        return draw_graph(self, xray=xray)

    async def aget_graph(self, config: Any = None, *, xray: int | bool = False) -> Any:
        return self.get_graph(config, xray=xray)


Live = Callable[[tuple[Any, ...]], None]  # takes one chunk event as soon as it is made
_END = object()


def _merging(config: Mapping[str, Any] | None, steps: Iterator[list[tuple[Any, ...]]]
             ) -> Iterator[list[tuple[Any, ...]]]:
    """A run's steps with its thread id where its reducers see it (graphrun.messages mixes
    it into message ids, so two threads never share one); its nodes inherit it."""
    with merging_thread(_thread_id(config)):
        yield from steps


async def _amerging(config: Mapping[str, Any] | None,
                    steps: AsyncIterator[list[tuple[Any, ...]]]
                    ) -> AsyncIterator[list[tuple[Any, ...]]]:
    with merging_thread(_thread_id(config)):
        async for events in steps:
            yield events


def _live_thread(steps: Callable[[Live], Iterator[list[tuple[Any, ...]]]]
                 ) -> Iterator[list[tuple[Any, ...]]]:
    """stream(): the run goes on in a thread, so what nodes write while they run
    (custom chunks, chat-model tokens, a subgraph's steps) is yielded at once. The
    run stops at its next step when the caller stops reading."""
    q: queue.SimpleQueue[Any] = queue.SimpleQueue()
    stop = threading.Event()

    def drive() -> None:
        try:
            for events in steps(lambda e: q.put([e])):
                q.put(events)
                if stop.is_set():
                    break
            q.put(_END)
        except BaseException as exc:  # handed to the reader
            q.put((_END, exc))

    thread = threading.Thread(target=contextvars.copy_context().run, args=(drive,),
                              daemon=True, name="graphrun-stream")
    thread.start()
    try:
        while (item := q.get()) is not _END:
            if isinstance(item, tuple):
                raise item[1]
            yield item
    finally:
        stop.set()


async def _live_task(steps: Callable[[Live], AsyncIterator[list[tuple[Any, ...]]]]
                     ) -> AsyncGenerator[list[tuple[Any, ...]], None]:
    """astream(): as `_live_thread`, with the run as a task of this event loop."""
    loop = asyncio.get_running_loop()
    q: asyncio.Queue[Any] = asyncio.Queue()
    loop_thread = threading.get_ident()

    def live(e: tuple[Any, ...]) -> None:  # from the loop or from a node's thread
        if threading.get_ident() == loop_thread:
            q.put_nowait([e])
        else:
            loop.call_soon_threadsafe(q.put_nowait, [e])

    async def drive() -> None:
        try:
            async for events in steps(live):
                q.put_nowait(events)
            loop.call_soon(q.put_nowait, _END)  # after the chunks still on their way
        except BaseException as exc:  # handed to the reader
            loop.call_soon(q.put_nowait, (_END, exc))

    task = asyncio.ensure_future(drive())
    try:
        while (item := await q.get()) is not _END:
            if isinstance(item, tuple):
                raise item[1]
            yield item
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _retry_delay(result: TaskResult, policies: Sequence[RetryPolicy], attempt: int
                 ) -> float | None:
    """Seconds before the next attempt, or None when the result stands (LangGraph's rule)."""
    if result.exception is None:
        return None
    policy = matching_policy(policies, result.exception)
    if policy is None or attempt >= policy.max_attempts:
        return None
    return retry_delay(policy, attempt, random.uniform(0, 1))


def _json_schema(annotation: Any, title: str, one_value: bool = False) -> dict[str, Any]:
    """An annotation's JSON Schema, titled as LangGraph titles a graph's input/output."""
    from pydantic import PydanticUserError, RootModel, TypeAdapter, create_model

    if one_value and not hasattr(annotation, "__annotations__"):  # LangGraph's root model
        value = typing.get_args(annotation)[0] if typing.get_origin(
            annotation) is typing.Annotated else annotation
        root: Any = create_model(title, __base__=RootModel[value],  # type: ignore[valid-type]
                                 root=(value, None))
        return {**root.model_json_schema(), "title": title}
    try:
        adapter: Any = TypeAdapter(annotation)
    except PydanticUserError:  # a typing.TypedDict before Python 3.12: as a model of its keys
        hints = typing.get_type_hints(annotation, include_extras=True)
        optional: frozenset[str] = getattr(annotation, "__optional_keys__", frozenset())
        adapter = TypeAdapter(create_model(  # type: ignore[call-overload]
            getattr(annotation, "__name__", title),
            **{k: (v, None if k in optional else ...) for k, v in hints.items()}))
    schema: dict[str, Any] = adapter.json_schema()
    schema.setdefault("title", title)
    return schema


def _tee(live: Live | None) -> tuple[Callable[[], list[tuple[Any, ...]]], Live | None]:
    """For stream() inside a node whose caller streams: what its tasks stream goes to the
    caller at once and to this stream too. Returns what came since asked, and the tee."""
    heard: list[tuple[Any, ...]] = []

    def taken() -> list[tuple[Any, ...]]:
        out = heard[:]  # tasks in other threads may add meanwhile
        del heard[:len(out)]
        return out

    if live is None:
        return taken, None

    def tee(event: tuple[Any, ...]) -> None:
        heard.append(event)
        live(event)

    return taken, tee


def _split(ns: str) -> tuple[str, ...]:
    """A checkpoint namespace ("node:<task id>|...") as a stream names it."""
    return tuple(ns.split(NS_SEP)) if ns else ()


def _inherited_modes(call: TaskCall) -> frozenset[str]:
    """The modes a task's caller streams that reach a subgraph the task runs: its own
    nodes' chat models and tools, its own checkpoints and debug chunks, all under its
    namespace (and only with subgraphs=True), as LangGraph's."""
    flags = {"messages": call.messages, "tools": call.tools, "debug": call.debug,
             "checkpoints": call.checkpoints}
    return frozenset(mode for mode, streamed in flags.items() if streamed)


def _around(call: TaskCall) -> dict[str, str]:
    """The checkpoints a graph run inside the task runs under, by namespace: the one the
    task runs from (of the task's graph) and those of the graphs around it."""
    if not call.checkpoint_id:
        return dict(call.parents)
    return {**call.parents, call.task.ns.rpartition(NS_SEP)[0]: call.checkpoint_id}


def _modes(stream_mode: Any) -> frozenset[str]:
    if stream_mode is None:
        return frozenset()
    return frozenset([stream_mode] if isinstance(stream_mode, str) else stream_mode)


# -- GraphCallbackHandler's events (graphrun.callbacks) ------------------------------------
def _resuming(run: Run, input: Any) -> str | None:
    """The checkpoint a run resumes from (input None or a Command), as LangGraph tells it."""
    if (input is None or isinstance(input, Command)) and run.ckpt is not None:
        return run.ckpt.id
    return None


def _resumed(run: Run, input: Any, trace: tracing.GraphRun | None) -> None:
    if trace is not None and (ckpt := _resuming(run, input)) is not None:
        trace.resumed(ckpt)


async def _aresumed(run: Run, input: Any, trace: tracing.GraphRun | None) -> None:
    if trace is not None and (ckpt := _resuming(run, input)) is not None:
        await trace.aresumed(ckpt)


def _paused_after(run: Run, trace: tracing.GraphRun | None) -> None:
    """Note a pause at an interrupt_after breakpoint (else a pause is before a step)."""
    if trace is not None and run.status == "interrupted" and not run.interrupts:
        trace.status = "interrupt_after"


def _pause(run: Run, trace: tracing.GraphRun) -> tuple[Any, str, tuple[Any, ...]]:
    status = "pending" if run.interrupts else trace.status or "interrupt_before"
    return status, run.ckpt.id if run.ckpt is not None else "", tuple(run.interrupts)


def _paused(run: Run, trace: tracing.GraphRun | None) -> None:
    if trace is not None and run.status == "interrupted":
        trace.interrupted(*_pause(run, trace))


async def _apaused(run: Run, trace: tracing.GraphRun | None) -> None:
    if trace is not None and run.status == "interrupted":
        await trace.ainterrupted(*_pause(run, trace))


def _copied(snap: StateSnapshot) -> StateSnapshot:
    """`snap` with values of its own: changing them changes no checkpoint, and no object
    a node returned (LangGraph's saver hands out deserialized copies)."""
    try:
        return snap._replace(values=copy.deepcopy(snap.values))
    except (TypeError, copy.Error):  # a value that cannot be copied (a lock, a client)
        return snap
