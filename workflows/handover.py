"""What a run of the thread hands on: the input the next run continues as new with, or
the result it closes with; and the worker version the next run starts on."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

from .payload_limits import PayloadLimits

with workflow.unsafe.imports_passed_through():
    from graphrun import engine, serde
    from graphrun.payloads import StartRequest, ThreadResult
    from graphrun.spec import GraphSpec


def version_moved() -> bool:
    """The task queue now targets another worker version than the one this run is pinned
    to (Worker Versioning; always False on unversioned workers, so histories from
    before replay as they ran)."""
    return workflow.info().is_target_worker_deployment_version_changed()


def next_run_version() -> workflow.ContinueAsNewVersioningBehavior | None:
    """How the next run picks its worker version: the task queue's target when it moved
    (a pinned thread changes version only between runs, at a continue-as-new), else the
    same version as this run."""
    return workflow.ContinueAsNewVersioningBehavior.AUTO_UPGRADE if version_moved() else None


def carried_request(req: StartRequest, thread: engine.Thread, deadlines: dict[str, str],
                    stream: Any, runs: list[dict[str, Any]], ttl: dict[str, Any] | None,
                    expires_at: str) -> StartRequest:
    """The next run's input: this one's, with the thread and what its run keeps as it
    goes (interrupt deadlines, the live stream, run records, the TTL)."""
    return StartRequest(
        graph=req.graph, thread_id=req.thread_id,
        thread=serde.thread_to_json(thread), max_history=req.max_history,
        history_event_limit=req.history_event_limit,
        search_attributes=req.search_attributes,
        upsert_changes_only=req.upsert_changes_only, deadlines=dict(deadlines),
        stream=stream, runs=runs, ttl=ttl, expires_at=expires_at,
        index_metadata=req.index_metadata, keep=req.keep, lives=True)


def final_result(req: StartRequest, spec: GraphSpec, thread: engine.Thread,
                 runs: list[dict[str, Any]], limits: PayloadLimits) -> ThreadResult:
    """The final values and the last checkpoint; the whole thread stays readable by the
    `thread` query (a client seeding a new run asks for it)."""
    values = engine.values_with_pending(
        spec, engine.restore_channels(spec, thread.head), None)
    last = engine.Thread(thread.thread_id, thread.checkpoints[-1:], seq=thread.seq,
                         max_history=thread.max_history, life=thread.life)
    final = ThreadResult(graph=req.graph, thread=serde.thread_to_json(last),
                         values=serde.dumps(values), runs=runs)
    # Never a completion Temporal refuses: drop what is too large to send.
    if limits.oversized(final, "the thread's result") is not None:
        final = ThreadResult(graph=req.graph, thread=final.thread, runs=runs)
    if limits.oversized(final, "the thread's result") is not None:
        final = ThreadResult(graph=req.graph, thread=serde.thread_to_json(
            engine.Thread(thread.thread_id, seq=thread.seq, life=thread.life)))
    return final
