"""The `update_metadata` update, one for GraphWorkflow and ThreadRecord: each keeps its
own `set_metadata` signal (what a merge also writes differs), and this answers once
it is applied."""

from __future__ import annotations

from typing import Any

from temporalio import workflow


class MetadataUpdate:
    def set_metadata(self, metadata: Any) -> None:
        raise NotImplementedError

    @workflow.update
    def update_metadata(self, metadata: dict[str, Any]) -> dict[str, Any]:
        """`set_metadata` that answers once applied (the API's PATCH reads its writes):
        the thread's metadata after the merge."""
        self.set_metadata(metadata)
        merged: dict[str, Any] = workflow.memo_value("metadata", default={}) or {}
        return merged

    @update_metadata.validator
    def _validate_update_metadata(self, metadata: dict[str, Any]) -> None:
        if not isinstance(metadata, dict):
            raise ValueError("metadata must be a JSON object")
