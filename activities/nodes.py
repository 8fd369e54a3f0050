"""The node activity: runs one task's node and routing; all user code runs here.

An `interrupt()` comes back as part of the result, never as an exception, so
Temporal's retries can neither swallow nor repeat it. Real errors raise and
are retried according to the node's RetryPolicy.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from graphrun import registry, serde
from graphrun.channels import MISSING
from graphrun.checkpoint import TaskCall
from graphrun.payloads import NodeCall, NodeResult, UpdateCall
from graphrun.runner import HEARTBEAT, arun_task, node_writes, run_task


@activity.defn(name="run_node")
async def run_node(call: NodeCall) -> NodeResult:
    spec = registry.lookup(call.graph).spec
    node = spec.nodes[call.node]
    task_call = TaskCall(
        task=serde.loads(call.task), resume=serde.loads(call.resume),
        null_resume=serde.loads(call.null_resume) if call.has_null_resume else MISSING,
        nested=serde.loads(call.nested))
    config: dict[str, Any] = serde.loads(call.config) or {}
    config["configurable"] = {**config.get("configurable", {}), "thread_id": call.thread_id}
    resume_map = serde.loads(call.resume_map)
    loop = asyncio.get_running_loop()
    # Sync nodes run in a worker thread; heartbeats must be sent from the loop's thread.
    def send(*details: Any) -> None:
        loop.call_soon_threadsafe(activity.heartbeat, *details)

    HEARTBEAT.set(send)
    if node.is_async or node.is_subgraph:
        result = await arun_task(spec, task_call, config, resume_map=resume_map)
    else:  # a sync node must not block the worker's event loop (heartbeats, other tasks)
        result = await asyncio.to_thread(run_task, spec, task_call, config,
                                         resume_map=resume_map)
    if result.exception is not None:
        exc = result.exception
        policy = node.retry_policy
        retry = policy is not None and policy.should_retry(exc)
        raise ApplicationError(str(exc), type=type(exc).__name__,
                               non_retryable=not retry) from exc
    return NodeResult(
        writes=serde.dumps(result.writes), update=serde.dumps(result.update),
        interrupts=[serde.interrupt_to_json(i) for i in result.interrupts],
        resume=serde.dumps(result.resume), nested=serde.dumps(result.nested),
        invalid_resume=result.invalid_resume)


@activity.defn(name="route_update")
async def route_update(call: UpdateCall) -> NodeResult:
    """`update_state` as a node with routing functions: they are user code, so run here."""
    spec = registry.lookup(call.graph).spec
    config = {"configurable": {"thread_id": call.thread_id}}
    writes, update = await asyncio.to_thread(
        node_writes, spec, call.node, serde.loads(call.values), serde.loads(call.state), config)
    return NodeResult(writes=serde.dumps(writes), update=serde.dumps(update))
