"""The node activity: runs one task's node and routing; all user code runs here.

An `interrupt()` comes back as part of the result, never as an exception, so
Temporal's retries can neither swallow nor repeat it. Real errors raise and
are retried according to the node's RetryPolicy.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from graphrun import cache as caching
from graphrun import payloads, registry, relay, relay_wire, serde, state, stream
from graphrun.errors import ParentCommand, UndeclaredTypeError
from graphrun.factory import FactoryError, GraphFactory
from graphrun.payloads import NodeCall, NodeResult, UpdateCall
from graphrun.runner import CALLS_INLINE, HEARTBEAT, arun_task, handle_error, node_writes, run_task
from graphrun.types import matching_policy


def _refuse(what: str, exc: Exception) -> ApplicationError:
    return ApplicationError(f"{what}: {exc}", type=type(exc).__name__, non_retryable=True)


async def _liveness(timeout: Any) -> None:
    if not timeout:
        return
    every = max(timeout.total_seconds() / 4, 0.05)
    while True:  # a node done before the first beat costs no heartbeat at all
        await asyncio.sleep(every)
        activity.heartbeat()


async def _task_state(task_id: str, types: Any) -> Any:
    """The state a Send task reads, from its workflow (kept out of the task's input so
    history does not hold a copy per task)."""
    info = activity.info()
    handle = activity.client().get_workflow_handle(str(info.workflow_id),
                                                   run_id=info.workflow_run_id)
    answer = await handle.query("task_state", task_id)
    if not isinstance(answer, dict) or "state" not in answer:
        raise RuntimeError(f"workflow {info.workflow_id} no longer runs task {task_id}")
    return serde.loads(answer["state"], types)



async def _in_thread(executor: Any, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
                     ) -> Any:
    """`asyncio.to_thread` (the context goes along), on the worker's node threads when it
    has its own (`create_worker(node_threads=...)`)."""
    if executor is None:
        return await asyncio.to_thread(fn, *args, **kwargs)
    call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(executor, call)

@activity.defn(name="run_node")
async def run_node(call: NodeCall) -> NodeResult:
    spec = registry.lookup(call.graph).spec
    node = spec.nodes[call.node]
    types = spec.types  # decoding builds the graph's declared classes and nothing else
    try:
        kind = (call.task.get("path") or [""])[0]
        task_call = payloads.task_call(
            call, serde.task_from_wire(call.task, call.node,
                                       spec.usual_triggers(call.node, kind), types),
            types, attempt=activity.info().attempt,
            first_attempt_time=activity.info().scheduled_time.timestamp())
        if call.state_by_query:
            task_call = dataclasses.replace(task_call, task=dataclasses.replace(
                task_call.task, state=await _task_state(task_call.task.id, types)))
        config: dict[str, Any] = serde.loads(call.config, types) or {}
        resume_map = serde.loads(call.resume_map, types)
    except (UndeclaredTypeError, ValueError) as exc:
        raise _refuse(f"node '{call.node}' input refused", exc) from None
    config["configurable"] = {**config.get("configurable", {}), "thread_id": call.thread_id}
    if isinstance(graph := registry.lookup(call.graph), GraphFactory):
        # The run's own graph, made by its factory for this run (same shape, its nodes).
        try:
            spec = (await graph.for_run(_run_key(call, config), config,
                                        context=task_call.context,
                                        store=registry.store(call.graph))).spec
        except FactoryError as exc:
            raise _refuse(f"graph '{call.graph}'", exc) from None
        node = spec.nodes[call.node]
    # A cached node's writes come from the worker's cache (a run for a @task call looks
    # that call up instead, in graphrun.calls).
    cache = registry.cache(call.graph)
    try:
        key = (caching.node_key(spec, task_call.task)
               if cache is not None and not task_call.target else None)
    except Exception as exc:  # the policy's key_func failed on this input
        raise _refuse(f"node '{call.node}' cache key", exc) from None
    if (cached := await caching.aget_json(cache, key, types)) is not None:
        return NodeResult(writes=cached, cached=True)
    loop = asyncio.get_running_loop()
    # Sync nodes run in a worker thread; heartbeats must be sent from the loop's thread.
    def send(*details: Any) -> None:
        loop.call_soon_threadsafe(activity.heartbeat, *details)

    HEARTBEAT.set(send)
    CALLS_INLINE.set(False)  # each @task call is an activity of its own (graphrun.calls)
    # A node that does not heartbeat itself gets a liveness beat, so the server notices
    # a dead worker within the heartbeat timeout and runs the node again elsewhere.
    beat = (asyncio.create_task(_liveness(activity.info().heartbeat_timeout))
            if node.heartbeat_timeout is None and not activity.info().is_local else None)
    # A caller reading the run live gets what the node streams as it streams it.
    publisher, live = (stream.activity_publisher(call.stream_to, task_call.task.id)
                       if call.stream_to and not activity.info().is_local
                       else (contextlib.nullcontext(), None))
    # A caller with callbacks hears the task's runs (graphrun.relay): live, or batched.
    trace, relayed = _relaying(call, task_call, types, live)
    store = registry.store(call.graph)  # the worker's: never part of the call's data
    threads = registry.executor(call.graph)
    entered = caching.enter(cache)  # for the node's @task calls and the graphs it runs
    try:
        async with publisher:
            if node.is_async:
                result = await arun_task(spec, task_call, config, resume_map=resume_map,
                                         live=live, trace=trace, store=store)
            elif relayed is None and trace is not None:  # a streaming handler's: as the
                # caller's async run reports it (a sync node's output streamed, a subgraph
                # run async), on a loop of its own
                result = await _in_thread(threads, asyncio.run, arun_task(
                    spec, task_call, config, resume_map=resume_map, live=live, trace=trace,
                    store=store))
            else:  # a sync node (or a subgraph, whose nodes may be sync) must not block
                # the worker's event loop: heartbeats and other activities run there
                result = await _in_thread(threads, run_task, spec, task_call, config,
                                          resume_map=resume_map, live=live, trace=trace,
                                          store=store)
    except ParentCommand as command:  # a root graph's node: there is no parent to go to
        await _signal_relayed(relayed, task_call.task)
        raise ApplicationError(f"node '{call.node}' returned Command(graph=PARENT) in a graph "
                               f"with no parent", serde.dumps(command.command, types),
                               type="ParentCommand", non_retryable=True) from None
    except BaseException:  # cancelled: no result carries the runs, so a signal does
        await _signal_relayed(relayed, task_call.task)
        raise
    finally:
        caching.leave(entered)
        if beat is not None:
            beat.cancel()
    if result.exception is not None:
        error = result.exception
        policy = matching_policy(node.retry_policy, error)
        retry = policy is not None and activity.info().attempt < policy.max_attempts
        if not retry and node.error_handler_node is not None and not call.handler_apart:
            # Its retries are used up, and its workflow (an older one) has the handler
            # run here; newer ones run it as a task of its own.
            result = await _in_thread(threads, handle_error, spec, task_call, config, result,
                                      store)
    if result.exception is not None:
        error = result.exception
        named = result.error or {"type": type(error).__name__, "message": str(error)}
        await _signal_relayed(relayed, task_call.task)
        raise ApplicationError(named["message"], type=named["type"],
                               non_retryable=not retry) from error
    try:  # what the workflow could not read back is refused here, where it is written
        out = payloads.node_result(result, types, stream=call.stream,
                                   runs=relayed.batch() if relayed is not None else None)
    except (UndeclaredTypeError, TypeError) as exc:
        await _signal_relayed(relayed, task_call.task)
        raise _refuse(f"node '{call.node}' wrote a value it cannot store", exc) from None
    await caching.aput_json(cache, key, result, out.writes)
    return out


class _Relayed:
    """A task attempt's callback events, gathered for its result (graphrun.relay_wire)."""

    def __init__(self, types: Any, attempt: int) -> None:
        self.events: list[dict[str, Any]] = []
        self.types, self.attempt = types, attempt

    def batch(self) -> dict[str, Any] | None:
        if not self.events:
            return None
        return relay_wire.batch(serde.dumps(self.events, self.types), self.attempt)


def _relaying(call: NodeCall, task_call: Any, types: Any, live: Any
              ) -> tuple[Any, _Relayed | None]:
    """The graph run to run the task under for a caller with callbacks (graphrun.relay),
    and where its events gather when they travel batched; (None, None) for no caller."""
    if not call.callbacks or not relay.AVAILABLE:
        return None, None
    attempt = activity.info().attempt
    # The task's run is one across the rounds of a task that waits for its @task calls:
    # a run for one of its calls names it as the first round did.
    run_attempt = 1 if task_call.target else attempt
    if call.callbacks == "stream" and live is not None:  # a streaming handler: live
        return relay.worker_run(lambda event: live(((), relay.EVENTS, event), attempt), types,
                                streaming=True, attempt=run_attempt), None
    relayed = _Relayed(types, run_attempt)
    packer = relay_wire.Packer(task_call.task, run_attempt)
    return relay.worker_run(relayed.events.append, types, streaming=False, packer=packer,
                            attempt=run_attempt), relayed


async def _signal_relayed(relayed: _Relayed | None, task: Any) -> None:
    """A failed or cancelled attempt's events: signalled to the workflow, which keeps them
    for the caller as it keeps a result's (best effort: a lost worker's are lost)."""
    if relayed is None or not relayed.events or activity.info().is_local:
        return
    info = activity.info()
    try:
        handle = activity.client().get_workflow_handle(str(info.workflow_id),
                                                       run_id=info.workflow_run_id)
        await handle.signal("relayed_runs", relay_wire.entry(relayed.batch() or {},
                                                        relay_wire.task_of(task)))
    except Exception as exc:  # the events are not worth the node's own error
        activity.logger.warning("callback events of node '%s' not relayed: %s", task.name, exc)


def _run_key(call: NodeCall, config: dict[str, Any]) -> str:
    """Which run a task belongs to: the API's run id, else its thread and checkpoint."""
    run_id = config["configurable"].get("run_id")
    return f"run:{run_id}" if run_id else f"{call.thread_id}@{call.checkpoint_id}"


@activity.defn(name="route_update")
async def route_update(call: UpdateCall) -> NodeResult:
    """`update_state` as a node with routing functions: they are user code, so run here."""
    spec = registry.lookup(call.graph).spec
    if call.checkpoint_ns:  # a subgraph's node: its graph, found by node names
        spec = state.spec_at(spec, call.checkpoint_ns)
    config = {"configurable": {"thread_id": call.thread_id}}
    try:
        values, current = serde.loads(call.values, spec.types), serde.loads(call.state,
                                                                            spec.types)
    except (UndeclaredTypeError, ValueError) as exc:
        raise _refuse("update_state values refused", exc) from None
    # The routing functions get the worker's store, as the nodes do (never the call's data).
    writes, update = await _in_thread(registry.executor(call.graph), node_writes, spec,
                                      call.node, values, current, config,
                                      store=registry.store(call.graph))
    return NodeResult(writes=serde.dumps(writes), update=serde.dumps(update))
