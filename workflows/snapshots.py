"""The thread as the `get_state` and `get_state_history` queries read it: snapshots of
its checkpoints, or of a subgraph's."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

from .thread_state import ThreadState

with workflow.unsafe.imports_passed_through():
    from graphrun import serde, state


def state_snapshot(thread_state: ThreadState, checkpoint_id: str | None, subgraphs: bool,
                   subgraph: dict[str, Any] | None) -> dict[str, Any]:
    """`subgraph`: a subgraph's checkpoint_ns (and checkpoint_map) to read instead."""
    root = thread_state.thread
    spec, thread, ckpt, ns, parents = state.locate(
        thread_state.spec, root, {**(subgraph or {}), "checkpoint_id": checkpoint_id})
    snap = state.snapshot(spec, thread, ckpt, ns, with_pending=checkpoint_id is None,
                          subgraphs=subgraphs, thread_id=root.thread_id, parents=parents)
    return {**serde.snapshot_to_json(snap), "status": thread_state.status,
            "refused": list(thread_state.rejected)}


def state_history(thread_state: ThreadState, limit: int | None, before: str | None,
                  subgraph: dict[str, Any] | None) -> list[dict[str, Any]]:
    root = thread_state.thread
    spec, thread, _, ns, parents = state.locate(thread_state.spec, root,
                                                {**(subgraph or {}), "checkpoint_id": None})
    items = list(reversed(thread.checkpoints))
    if before is not None:
        ids = [c.id for c in items]
        items = items[ids.index(before) + 1:] if before in ids else []
    return [serde.snapshot_to_json(state.snapshot(
                spec, thread, c, ns, with_pending=False,
                thread_id=root.thread_id, parents=parents))
            for c in (items[:limit] if limit else items)]
