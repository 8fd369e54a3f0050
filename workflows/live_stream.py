"""Live chunks for astream (temporalio's workflow streams: published here and by node
activities, read by long-poll updates). Publishing appends to a log in memory and adds
nothing to history; only a subscriber's polls do."""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.contrib.workflow_streams import WorkflowStream

from .thread_state import Invocation

with workflow.unsafe.imports_passed_through():
    from graphrun import engine, relay_wire, serde
    from graphrun.stream import EVENTS, STREAM_TOPIC


class LiveStream:
    def __init__(self, carried: Any) -> None:
        self._stream = WorkflowStream(carried)
        self._chunks = self._stream.topic(STREAM_TOPIC)
        self._starts: list[int] = []  # log offsets where the last two streamed runs began

    def begin(self, item: Invocation) -> None:
        """A streamed run starts: the stream keeps the chunks of the last two."""
        if item.stream_to:
            # The log's current end (the stream's own offset query reads the same).
            self._starts = [*self._starts[-1:], self._stream._on_offset()]
            if len(self._starts) == 2:
                self._stream.truncate(self._starts[0])

    def hand_on(self, item: Invocation, run: engine.Run) -> list[Any]:
        """Take the run's chunks so far: published to the live stream when the caller
        reads it (one item per chunk, so a reader can go on from any offset), else
        returned for the run's result."""
        events, run.events = run.events, []
        if not item.stream_to:
            return events
        for event in events:
            self._chunks.publish({"id": item.stream_to, "e": serde.dumps(event)})
        return []

    def relayed(self, item: Invocation, entry: dict[str, Any]) -> None:
        """Callback events for the run's caller (workflows/relayed.py): each a chunk of the
        `events` mode, as a node's activity publishes it live."""
        for event in relay_wire.expand(entry):  # typed JSON of ((), EVENTS, event)
            chunk = {serde.TAG: "tuple", "v": [serde.dumps(()), EVENTS, event]}
            self._chunks.publish({"id": item.stream_to, "e": chunk})

    def end(self, item: Invocation) -> None:
        if item.stream_to:
            self._chunks.publish({"id": item.stream_to, "end": True})

    def detach(self) -> None:
        """Polls still waiting return now (they read the rest by query, or from the next
        run); new ones go to the next run."""
        self._stream.detach_pollers()

    def reattach(self) -> None:
        """The run goes on after all: its stream takes polls again."""
        self._stream._detaching = False  # no public way to undo detach_pollers

    def carried(self) -> Any:
        """What the next run's stream starts from: nothing if no run streamed."""
        return self._stream.get_state() if self._starts else None
