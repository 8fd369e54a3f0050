"""Server-Sent Events as LangGraph's server frames them: one event per stream chunk,
named after its stream mode (`|`-joined with the subgraph's namespace), `error` for a
failed run; with ids, each event's id is its offset in the thread's live stream, so a
client that lost the connection goes on after its `Last-Event-ID`."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import Any

from graphrun import relay, serde, stream
from graphrun.payloads import RunResult
from graphrun.server import shapes


def event(name: str, data: Any, event_id: int | None = None) -> bytes:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data)}\n\n".encode()


async def events(gc: Any, thread_id: str, run_id: str, types: Any,
                 asked: Mapping[str, str], subgraphs: bool, *,
                 outcome: Awaitable[RunResult | None], from_offset: int = 0,
                 ids: bool = False, graph: str = "", input: Any = None
                 ) -> AsyncIterator[bytes]:
    """The run's events from `from_offset` until it ends, then `error` if it failed.

    `asked`: graphrun's stream mode -> the API's name for it; `outcome`: the run's
    result, awaited alongside (the stream is complete once it is in). The `events` mode
    gives LangChain's astream_events v2 events, the graph's run (named `graph`, with
    `input`) around its nodes' runs relayed from the workers (graphrun.relay).
    """
    handle = gc.client.get_workflow_handle(gc.workflow_id(thread_id))
    ended = asyncio.ensure_future(outcome)
    runs = (relay.EventStream(uuid.UUID(run_id), graph or "LangGraph",
                              {"thread_id": thread_id, "run_id": run_id})
            if stream.EVENTS in asked else None)

    def run_events(evs: list[Any], offset: int | None) -> list[bytes]:
        return [event("events", shapes.jsonable(e), offset) for e in evs]

    try:
        if runs is not None and from_offset == 0:
            for out in run_events(await runs.start(input), None):
                yield out
        async for offset, chunk in stream.follow(
                gc.client, handle, ended, from_offset=from_offset, stream_id=run_id,
                decode=lambda data: serde.loads(data, types)):
            ns, mode, payload = chunk if len(chunk) == 3 else ((), *chunk)
            if mode == stream.EVENTS:
                if runs is not None:
                    for out in run_events(await runs.relayed(payload), offset if ids else None):
                        yield out
                continue
            if mode not in asked or (ns and not subgraphs):
                continue
            name = "messages" if asked[mode] == "messages-tuple" else asked[mode]
            if ns:
                name = "|".join([name, *ns])
            yield event(name, shapes.jsonable(payload), offset if ids else None)
        result = await ended
    finally:
        ended.cancel()
    if runs is not None and result is not None and not result.error:
        for out in run_events(await runs.end(serde.loads(result.values, types)), None):
            yield out
    if result is not None and result.error:
        e = result.error
        yield event("error", {"error": e.get("error_type") or e.get("type"),
                              "message": e.get("error_message") or e.get("message")})
