"""A thread's TTL (graphrun.lifetime): when it ends, counted again from each change
(and each read, with refresh on read), and the deletion once it has ended."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from graphrun import lifetime


def parse_ttl(given: dict[str, Any] | None) -> lifetime.ThreadTTL | None:
    """The TTL a client sent (it validated it); one that does not parse is none."""
    if not given:
        return None
    try:
        return lifetime.ThreadTTL.model_validate(given)
    except ValueError:
        return None


class ThreadExpiry:
    def __init__(self, ttl: dict[str, Any] | None, expires_at: str) -> None:
        self.ttl = parse_ttl(ttl)
        self.expires_at = expires_at if self.ttl is not None else ""
        self.rearm = False  # a signal changed the TTL: the loop sets its timer again
        self.removed = False  # a signal took the TTL away: the next run has none either

    def refresh(self) -> None:
        """The thread changed (or was read, with refresh on read): its TTL starts again."""
        if self.ttl is not None:
            self.expires_at = lifetime.expiry(self.ttl, workflow.now())

    def replace(self, ttl: lifetime.ThreadTTL | None) -> None:
        """A new TTL (None: none), counted from now."""
        self.ttl, self.expires_at, self.rearm = ttl, "", True
        self.removed = ttl is None
        self.refresh()

    def touch(self) -> None:
        self.refresh()
        self.rearm = self.ttl is not None

    def seconds_left(self) -> float | None:
        return lifetime.seconds_left(self.expires_at, workflow.now())

    def ended(self) -> bool:
        return bool(self.expires_at) and datetime.fromisoformat(self.expires_at) <= workflow.now()

    def carried(self, given: dict[str, Any] | None) -> dict[str, Any] | None:
        """The TTL the next run starts with: this one, none once it was taken away, or
        the one it started with when that did not parse."""
        if self.ttl is not None:
            return self.ttl.model_dump()
        return None if self.removed else given


async def delete_thread() -> None:
    """Delete every execution of the thread, this one too (a workflow cannot delete
    itself; the `delete_thread` activity can). On a server that cannot delete (the
    time-skipping one) the activity says so and the run ends."""
    await workflow.execute_activity(
        "delete_thread", workflow.info().workflow_id, summary="TTL: delete the thread",
        start_to_close_timeout=timedelta(minutes=1))
