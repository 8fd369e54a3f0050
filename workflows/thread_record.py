"""ThreadRecord: a thread that exists before its first run.

LangGraph's server keeps a row for a thread from `POST /threads` on; here it is a
workflow of the thread's id that stays open until the thread's first run or its
deletion. Its memo holds the thread's `metadata`, its search attributes say idle (and
the graph, when known), so `get`, `search` and `count` find it. The first run (or state
update) on it signals `adopt`: the record continues as new as the thread's
GraphWorkflow, in the same chain, so the thread is never only a closed execution.
Its TTL works as a GraphWorkflow's (graphrun.lifetime).

Records from before threads lived completed at once (their histories replay so).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributePair, TypedSearchAttributes

from .handover import next_run_version, version_moved
from .metadata_update import MetadataUpdate

with workflow.unsafe.imports_passed_through():
    from graphrun import lifetime, visibility
    from graphrun.payloads import RecordStart, StartRequest

LIVES = "graphrun-thread-lives"


@workflow.defn(name="ThreadRecord")
class ThreadRecord(MetadataUpdate):
    @workflow.init
    def __init__(self, start: RecordStart | None = None) -> None:
        self._start = start or RecordStart()
        self._adopted: StartRequest | None = None
        self._stamp: dict[str, Any] = {}
        self._ttl = _ttl(self._start.ttl)
        self._expires_at = self._start.expires_at
        self._rearm = False
        self._deleting = False

    @workflow.run
    async def run(self, start: RecordStart | None = None) -> None:
        if not (self._start.lives or workflow.patched(LIVES)):
            return  # a record from before threads lived: its memo was the point
        if self._ttl is not None and not self._expires_at:
            self._refresh_ttl()
        have = workflow.info().typed_search_attributes
        if self._start.search_attributes and have.get(visibility.CREATED_AT) is None:
            # Started by a client that did not say when (graphrun's clients do): sorted
            # and paged by its start.
            now = visibility.stamp(workflow.info().start_time)
            workflow.upsert_search_attributes([visibility.CREATED_AT.value_set(now),
                                               visibility.UPDATED_AT.value_set(now)])
        while True:
            try:
                await workflow.wait_condition(
                    lambda: self._adopted is not None or self._rearm
                    or workflow.info().is_continue_as_new_suggested() or version_moved(),
                    timeout=lifetime.seconds_left(self._expires_at, workflow.now()))
            except TimeoutError:
                if self._expires_at and datetime.fromisoformat(
                        self._expires_at) <= workflow.now():
                    await workflow.execute_activity(
                        "delete_thread", workflow.info().workflow_id,
                        summary="TTL: delete the thread",
                        start_to_close_timeout=timedelta(minutes=1))
                    return
                continue
            self._rearm = False
            await workflow.wait_condition(workflow.all_handlers_finished)
            if self._adopted is not None:
                # The thread's first run: the same chain goes on as its GraphWorkflow,
                # with this record's metadata (stamped with the graph, as a run's start
                # stamps it), search attributes, TTL and metadata keys.
                current = workflow.memo_value("metadata", default={}) or {}
                metadata = {**self._stamp, **current}
                memo: dict[str, Any] = {"metadata": metadata}
                if self._ttl is not None:
                    memo["ttl"] = self._ttl.model_dump()
                workflow.continue_as_new(
                    workflow="GraphWorkflow", args=[self._adopted.model_copy(update={
                        "ttl": None if self._ttl is None else self._ttl.model_dump(),
                        "expires_at": self._expires_at,
                        "index_metadata": self._start.index_metadata, "keep": True})],
                    memo=memo, search_attributes=self._attributes(metadata),
                    initial_versioning_behavior=next_run_version())
            if workflow.info().is_continue_as_new_suggested() or version_moved():
                workflow.continue_as_new(self._start.model_copy(update={
                    "ttl": None if self._ttl is None else self._ttl.model_dump(),
                    "expires_at": self._expires_at, "lives": True}),
                    initial_versioning_behavior=next_run_version())

    @workflow.signal
    def adopt(self, req: StartRequest, stamp: dict[str, Any] | None = None) -> None:
        """The thread's first run is here: become its GraphWorkflow (the first adopter's
        graph wins; a second adopter's call then reaches that GraphWorkflow). `stamp`:
        metadata the run adds where the thread has none (its graph and assistant)."""
        if self._adopted is None:
            self._adopted = req
            self._stamp = dict(stamp or {})

    def _attributes(self, metadata: dict[str, Any]) -> TypedSearchAttributes:
        """The record's search attributes, with the adopter's graph and metadata."""
        have = workflow.info().typed_search_attributes
        if not self._start.search_attributes or self._adopted is None:
            return have
        names = (visibility.GRAPH_NAME.name, visibility.METADATA.name)
        return TypedSearchAttributes([
            *(p for p in have if p.key.name not in names),
            SearchAttributePair(visibility.GRAPH_NAME, self._adopted.graph),
            SearchAttributePair(visibility.METADATA, visibility.metadata_entries(
                metadata, self._start.index_metadata))])

    @workflow.signal
    def set_metadata(self, metadata: Any) -> None:
        """Merge into the thread's metadata (the memo's "metadata"), as GraphWorkflow."""
        if not isinstance(metadata, dict):
            workflow.logger.warning("set_metadata needs a JSON object, got %.200r", metadata)
            return
        current = workflow.memo_value("metadata", default={}) or {}
        merged = {**current, **metadata}
        workflow.upsert_memo({"metadata": merged})
        self._refresh_ttl()
        if self._start.search_attributes:
            graph_id = merged.get("graph_id")
            workflow.upsert_search_attributes([
                visibility.UPDATED_AT.value_set(visibility.stamp(workflow.now())),
                visibility.METADATA.value_set(visibility.metadata_entries(
                    merged, self._start.index_metadata)),
                *([visibility.GRAPH_NAME.value_set(graph_id)]
                  if isinstance(graph_id, str) else [])])

    @workflow.signal
    def set_ttl(self, ttl: Any) -> None:
        try:
            self._ttl = None if ttl is None else lifetime.ThreadTTL.model_validate(ttl)
        except ValueError as exc:
            workflow.logger.warning("set_ttl refused: %s", exc)
            return
        self._expires_at, self._rearm = "", True
        self._refresh_ttl()
        # The API reads it there (refresh on read) without a query.
        workflow.upsert_memo({"ttl": None if self._ttl is None else self._ttl.model_dump()})

    @workflow.signal
    def upgrade(self) -> None:
        """Wake the record, so that, pinned to an earlier worker version, it moves to the
        one its task queue now targets (`GraphClient.upgrade_threads`)."""

    @workflow.signal
    def touch(self) -> None:
        self._refresh_ttl()
        self._rearm = self._ttl is not None

    @workflow.query
    def expires_at(self) -> str:
        return self._expires_at

    # A thread not run yet reads as empty, as GraphWorkflow's queries answer it.
    @workflow.query
    def get_state(self, checkpoint_id: str | None = None, subgraphs: bool = False,
                  subgraph: dict[str, Any] | None = None) -> dict[str, Any]:
        thread_id = self._start.thread_id or workflow.info().workflow_id
        return {"values": {}, "next": [], "config": {"configurable": {"thread_id": thread_id}},
                "metadata": None, "created_at": None, "parent_config": None, "tasks": [],
                "interrupts": [], "status": "done", "refused": []}

    @workflow.query
    def get_state_history(self, limit: int | None = None, before: str | None = None,
                          subgraph: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return []

    @workflow.query
    def pending_interrupts(self) -> list[dict[str, Any]]:
        return []

    def _refresh_ttl(self) -> None:
        self._expires_at = lifetime.expiry(self._ttl, workflow.now())


def _ttl(given: dict[str, Any] | None) -> lifetime.ThreadTTL | None:
    try:
        return lifetime.ThreadTTL.model_validate(given) if given else None
    except ValueError:
        return None
