"""State updates (`update_state`, `bulk_update_state`, and both on a subgraph's
thread): the node's edges are applied here; its routing functions, if it has any, run
in the `route_update` activity like all user code."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy as TemporalRetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from .inputs import Inputs
from .steps import DEFAULT_NODE_TIMEOUT, node_error
from .thread_state import ThreadState, now

with workflow.unsafe.imports_passed_through():
    from graphrun import engine, serde, state
    from graphrun.errors import GraphrunError
    from graphrun.payloads import NodeResult, SubgraphUpdate, UpdateCall
    from graphrun.runner import node_writes
    from graphrun.spec import GraphSpec


@contextlib.contextmanager
def update_failure() -> Iterator[None]:
    """An update that cannot be applied fails the update, not the workflow task: a
    routing function that raised (its activity), or data the thread refuses."""
    try:
        yield
    except ActivityError as exc:
        error = node_error(exc)
        raise ApplicationError(error["message"], type=error["type"],
                               non_retryable=True) from exc
    except (GraphrunError, ValueError) as exc:
        raise ApplicationError(str(exc), type=type(exc).__name__, non_retryable=True) from exc


@dataclass
class Target:
    """What an update applies to: the thread, or the thread of a subgraph in it."""

    spec: GraphSpec
    thread: engine.Thread
    ns: str


class StateUpdates:
    def __init__(self, state: ThreadState, inputs: Inputs) -> None:
        self._state = state
        self._inputs = inputs

    def root(self) -> Target:
        return Target(self._state.spec, self._state.thread, "")

    def locate(self, req: SubgraphUpdate) -> Any:
        return state.locate(self._state.spec, self._state.thread, {
            "checkpoint_ns": req.checkpoint_ns, "checkpoint_id": req.checkpoint_id,
            "checkpoint_map": req.checkpoint_map})

    async def update(self, values: Any, as_node: str | None, checkpoint_id: str | None,
                     t: Target) -> engine.Checkpoint:
        """An `update_state` of the thread, or of a subgraph's thread in it."""
        ckpt = state.special_update(t.spec, t.thread, values, as_node, clock=now,
                                    checkpoint=checkpoint_id)
        if ckpt is None:
            ckpt = await self._update_as(values, as_node, checkpoint_id, t)
        elif as_node == state.COPY and isinstance(values, list) and values:
            # the copy, then the updates on top: (values, as_node, ...)
            if workflow.patched("graphrun-copy-updates-one-step"):
                ckpt = await self._updates_as(values, ckpt.id, t)  # one superstep
            else:
                for item in values:
                    ckpt = await self._update_as(item[0], item[1], ckpt.id, t)
        return ckpt

    async def supersteps(self, steps: list[Any], checkpoint_id: str | None, t: Target
                         ) -> str:
        """A `bulk_update_state`: one checkpoint per superstep; the last one's id."""
        for step in steps:
            values, as_node = step[0][0], step[0][1]
            ckpt = (state.special_update(t.spec, t.thread, values, as_node, clock=now,
                                         checkpoint=checkpoint_id)
                    if len(step) == 1 else None)
            if ckpt is None:
                ckpt = await self._updates_as(list(step), checkpoint_id, t)
            checkpoint_id = ckpt.id
        return str(checkpoint_id)

    async def _update_as(self, values: Any, as_node: str | None,
                         checkpoint_id: str | None, t: Target) -> engine.Checkpoint:
        node, writes, written = await self._writes_as(values, as_node, checkpoint_id, t)
        return state.apply_update(t.spec, t.thread, node, writes, written,
                                  clock=now, checkpoint=checkpoint_id)

    async def _updates_as(self, items: list[Any], checkpoint_id: str | None,
                          t: Target) -> engine.Checkpoint:
        """Several nodes' updates as one checkpoint, as if they ran in one step."""
        if len(items) == 1:
            return await self._update_as(items[0][0], items[0][1], checkpoint_id, t)
        updates = []
        for values, as_node, *_ in items:
            state.check_one_of_many(as_node)
            updates.append(await self._writes_as(values, as_node, checkpoint_id, t))
        return state.apply_updates(t.spec, t.thread, updates, clock=now,
                                   checkpoint=checkpoint_id)

    async def _writes_as(self, values: Any, as_node: str | None, checkpoint_id: str | None,
                         t: Target) -> tuple[str, list[Any], Any]:
        """The writes of an update as `as_node`: its routing functions run in an activity."""
        node, update, current = state.resolve_update(
            t.spec, t.thread, values, as_node, checkpoint=checkpoint_id)
        if node in t.spec.branches:
            routed = await workflow.execute_activity(
                "route_update", UpdateCall(graph=self._state.req.graph, node=node,
                                           thread_id=self._state.thread.thread_id,
                                           values=serde.dumps(update),
                                           state=serde.dumps(current), checkpoint_ns=t.ns),
                result_type=NodeResult, start_to_close_timeout=DEFAULT_NODE_TIMEOUT,
                retry_policy=TemporalRetryPolicy(maximum_attempts=1),
                summary=f"update_state as {node}")
            writes = [(w[0], w[1]) for w in self._inputs.loads(routed.writes)]
            written = self._inputs.loads(routed.update)
        else:
            writes, written = node_writes(t.spec, node, update, current, None)
        return node, writes, written
