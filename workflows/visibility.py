"""What people and the Server API see of a thread without asking its worker: its
status and search attributes, the UI's current details, its last refusals."""

from __future__ import annotations

import json
from typing import Any

from temporalio import workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

from .thread_state import ThreadState

with workflow.unsafe.imports_passed_through():
    from graphrun import engine, serde, visibility
    from graphrun.details import current_details

GRAPH_STATUS = SearchAttributeKey.for_keyword("GraphStatus")
GRAPH_NAME = SearchAttributeKey.for_keyword("GraphName")
MAX_REFUSALS_KEPT = 20


class Visibility:
    def __init__(self, state: ThreadState) -> None:
        self._state = state

    def stamp_creation(self) -> None:
        """A thread whose client did not index its creation: its search attributes say
        when it was created, and what metadata it has."""
        req = self._state.req
        if not req.search_attributes:
            return
        have = workflow.info().typed_search_attributes
        if have.get(visibility.CREATED_AT) is None:  # started by a client that did not set it
            now = visibility.stamp(workflow.info().start_time)
            metadata = workflow.memo_value("metadata", default={}) or {}
            workflow.upsert_search_attributes([
                visibility.CREATED_AT.value_set(now), visibility.UPDATED_AT.value_set(now),
                visibility.METADATA.value_set(visibility.metadata_entries(
                    metadata if isinstance(metadata, dict) else {}, req.index_metadata))])

    def set_status(self, status: str) -> None:
        self._state.status = status
        req = self._state.req
        if req.search_attributes:
            want: list[SearchAttributeUpdate[Any]] = [
                GRAPH_STATUS.value_set(status), GRAPH_NAME.value_set(req.graph)]
            if req.upsert_changes_only:
                # Each upsert is a visibility write: about a tenth of the server's work
                # for an approval. Decided by the input, so old histories replay as run.
                have = workflow.info().typed_search_attributes
                want = [u for u in want if have.get(u.key) != u.value]
            if want and self._state.lives:  # the same write says when it changed
                want.append(visibility.UPDATED_AT.value_set(visibility.stamp(workflow.now())))
            if want:
                workflow.upsert_search_attributes(want)
        self.publish_details()

    def changed(self, metadata: dict[str, Any] | None = None) -> None:
        """The thread's search attributes say when it changed (and what metadata it now
        has)."""
        req = self._state.req
        if not (self._state.lives and req.search_attributes):
            return
        want: list[SearchAttributeUpdate[Any]] = [
            visibility.UPDATED_AT.value_set(visibility.stamp(workflow.now()))]
        if metadata is not None:
            want.append(visibility.METADATA.value_set(
                visibility.metadata_entries(metadata, req.index_metadata)))
        workflow.upsert_search_attributes(want)

    def refuse(self, message: str) -> None:
        workflow.logger.warning(message)
        # The last few are enough to explain; a flood of bad signals must not grow state.
        self._state.rejected = [*self._state.rejected, message][-MAX_REFUSALS_KEPT:]
        self.publish_details()

    def publish_details(self) -> None:
        # The UI renders this as markdown; graphrun.details keeps the data in it as text.
        # Setting details is not a workflow command: the text may change without a patch.
        state = self._state
        head = state.thread.head
        workflow.set_current_details(current_details(
            graph=state.req.graph, thread_id=state.thread.thread_id, status=state.status,
            questions=[(i.id, _json(serde.dumps(i.value)))
                       for i in engine.pending_interrupts(head).values()],
            failures=[p.error or "" for p in head.pending.values() if p.status == "failed"]
            if head is not None else [],
            refused=state.rejected[-1] if state.rejected else None))


def _json(v: Any) -> str:
    return json.dumps(v, indent=2, ensure_ascii=False, default=str)[:4000]
