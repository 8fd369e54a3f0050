"""What GraphWorkflow's helpers share: the thread, its queue of invocations, its status."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from graphrun import engine
    from graphrun.payloads import RunResult, StartRequest
    from graphrun.spec import GraphSpec


@dataclass
class Invocation:
    number: int
    input: Any
    checkpoint_id: str | None
    config: dict[str, Any]
    from_signal: bool = False
    stream: bool = False
    interrupt_before: list[str] | None = None
    interrupt_after: list[str] | None = None
    refusal: Exception | None = None  # refused on arrival; answered in turn
    context: Any = None
    stream_modes: tuple[str, ...] = ()
    stream_to: str = ""  # publish the run's chunks live, tagged with this id
    run_id: str = ""  # the invoke update's id: the run's id (its record, cancel_run)
    cancel: str = ""  # "interrupt" or "rollback" once cancel_run (or a multitask) asked
    webhook: str = ""
    webhook_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    delete_after: bool = False  # InvokeRequest.delete_after
    after_seconds: float = 0
    callbacks: str = ""  # relay the nodes' callback events: "runs" or "stream" (NodeCall)
    messages_v2: bool = False  # 'messages' as content-block events (stream_events v3)
    subgraph_checkpoints: dict[str, str] = dataclasses.field(default_factory=dict)
    step_timeout: float | None = None
    durability: str | None = None  # "exit": the thread keeps only where the run stops
    relayed: list[Any] = dataclasses.field(default_factory=list)  # workflows/relayed.py


class ThreadState:
    # Set once the graph is found: a thread of a graph this worker does not serve has
    # neither (its run ends at once).
    spec: GraphSpec
    thread: engine.Thread

    def __init__(self, req: StartRequest) -> None:
        self.req = req
        self.lives: bool | None = None  # decided once: GraphWorkflow._lives_now
        self.status = "running"
        self.rejected: list[str] = []  # the last refusals, for people
        self.inbox: list[Invocation] = []
        self.current: Invocation | None = None
        self.processing: asyncio.Future[RunResult] | None = None  # the current one's task
        self.results: dict[int, RunResult] = {}  # invocation number -> its answer
        self.count = 0  # invocations taken in
        self.busy = False
        self.handling = 0  # invoke and update_state handlers still running

    def idle(self) -> bool:
        return not self.busy and not self.inbox

    def enqueue(self, input: Any, checkpoint_id: str | None, config: dict[str, Any],
                from_signal: bool = False, stream: bool = False,
                interrupt_before: list[str] | None = None,
                interrupt_after: list[str] | None = None,
                refusal: Exception | None = None, context: Any = None,
                stream_modes: tuple[str, ...] = (), stream_to: str = "") -> Invocation:
        self.count += 1
        item = Invocation(self.count, input, checkpoint_id, config, from_signal, stream,
                          interrupt_before, interrupt_after, refusal, context, stream_modes,
                          stream_to)
        self.inbox.append(item)
        return item

    def runs_waiting(self) -> list[Invocation]:
        """The runs on the thread not yet finished: the running one, then the queued."""
        current = [self.current] if self.current is not None else []
        return [*current, *(i for i in self.inbox if i.run_id)]

    def values(self) -> Any:
        if self.thread.head is None:
            return {}
        return engine.values_with_pending(
            self.spec, engine.restore_channels(self.spec, self.thread.head), None)

    @contextlib.contextmanager
    def handling_update(self) -> Iterator[None]:
        """An invoke or update_state handler is running: the thread stays open for it
        (the stream's polls are handlers too, and must not keep it open)."""
        self.handling += 1
        try:
            yield
        finally:
            self.handling -= 1


def now() -> str:
    return workflow.now().isoformat()
