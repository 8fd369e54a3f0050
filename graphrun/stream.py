"""Live chunks on Temporal: what the workflow and node activities publish, and reading it.

A run invoked by `astream` (or `graphrun invoke --stream`) carries a stream id. The
workflow publishes each chunk of its steps, one stream item per chunk, tagged with that
id, to its workflow stream (temporalio.contrib.workflow_streams), and an end marker when
the run stops. A node's activity publishes what the node streams while it runs
(`custom` writes, chat-model tokens, a subgraph's steps), tagged with its task id and a
sequence number: an activity that runs again after a lost worker sends the same
sequence again, and readers drop what they have seen. Items are read by offset, so a
reader that reconnects goes on from the last offset it saw.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import Any

from graphrun import serde
from graphrun.task import current_task

STREAM_TOPIC = "graphrun"
EVENTS = "events"  # the stream mode of relayed callback events (graphrun.relay)
# A poll waits in the workflow until there is something new, so a reader that is caught
# up polls again at once: chunks arrive a round trip after they are published (50 ms of
# cooldown made a streamed 10-node chain 1.7x slower than an invoked one; none, 1.5x).
POLL_COOLDOWN = timedelta(0)
CATCH_UP = 0.25  # seconds a reader may take to reach the end once the run has stopped  # between polls once caught up


def activity_publisher(stream_to: str, task_id: str
                       ) -> tuple[Any, Callable[..., None]]:
    """In a node activity: the stream client to enter, and the callback the runner calls
    with each chunk the node streams (from any thread).

    Chunks are numbered per task: the node's, or a @task call's while it runs. A node
    that runs again (a retry; an @entrypoint between rounds of calls) numbers from 0
    again, so readers drop what it already sent."""
    from temporalio.contrib.workflow_streams import WorkflowStreamClient

    client = WorkflowStreamClient.from_within_activity(
        batch_interval=timedelta(milliseconds=100))
    topic = client.topic(STREAM_TOPIC)
    loop = asyncio.get_running_loop()
    numbers: dict[str, itertools.count[int]] = {}

    def publish(event: tuple[Any, ...], attempt: int = 0) -> None:
        """`attempt`: number this attempt's events apart from an earlier attempt's, which
        readers keep too (relayed callback events: each attempt's runs are its own)."""
        ctx = current_task()
        tid = ctx.call.task.id if ctx is not None else task_id
        if attempt:
            tid = f"{tid}@{attempt}"
        seq = next(numbers.setdefault(tid, itertools.count()))
        try:
            data = serde.dumps(event)
        except (TypeError, ValueError):  # a chunk is no reason to fail the node: show it
            data = serde.dumps((*event[:-1], repr(event[-1])[:2000]))
        item = {"id": stream_to, "task": tid, "seq": seq, "e": data}
        loop.call_soon_threadsafe(topic.publish, item)

    return client, publish


async def read(client: Any, handle: Any, *, from_offset: int, stream_id: str | None,
               decode: Callable[[Any], Any] = serde.loads
               ) -> AsyncIterator[tuple[int, tuple[Any, ...]]]:
    """(offset, event) of the stream's run chunks from `from_offset`, until the end of
    the run `stream_id` (or, without one, of the first run that ends). `decode` turns
    an event's typed JSON into values (serde.loads with the graph's declared types)."""
    from temporalio.contrib.workflow_streams import WorkflowStreamClient

    stream = WorkflowStreamClient(handle, client=client)
    seen: dict[str, int] = {}  # task id -> last sequence number read
    async for item in stream.subscribe([STREAM_TOPIC], from_offset=from_offset,
                                       poll_cooldown=POLL_COOLDOWN):
        data = item.data
        if not isinstance(data, dict) or (stream_id is not None and data.get("id") != stream_id):
            continue
        if data.get("end"):
            return
        if repeated(data, seen):
            continue
        yield item.offset, tuple(decode(data["e"]))


def repeated(data: dict[str, Any], seen: dict[str, int]) -> bool:
    """Whether a node's item was sent before, by a node that ran again (its task's
    sequence number was read already); `seen` keeps the last number read per task."""
    task = data.get("task")
    if task is None:
        return False
    if data.get("seq", 0) <= seen.get(task, -1):
        return True
    seen[task] = data["seq"]
    return False


async def follow(client: Any, handle: Any, run: asyncio.Future[Any], *, from_offset: int,
                 stream_id: str, decode: Callable[[Any], Any]
                 ) -> AsyncIterator[tuple[int, tuple[Any, ...]]]:
    """(offset, event) of the run `stream_id` as `read` gives them, for a caller that also
    waits for the run's result (`run`). Once the result is in, every event is in the
    stream; a poll that reached the workflow as it closed would be retried for seconds,
    so the rest is read again from the last offset, from the closed run."""
    queue: asyncio.Queue[tuple[int, Any] | None] = asyncio.Queue()

    async def pump(offset: int) -> None:
        async for item in read(client, handle, from_offset=offset, stream_id=stream_id,
                               decode=decode):
            await queue.put(item)
        await queue.put(None)

    reader = asyncio.create_task(pump(from_offset))
    last = from_offset - 1
    try:
        while True:
            get = asyncio.ensure_future(queue.get())
            waits: list[asyncio.Future[Any]] = [get, run]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if not get.done():
                get.cancel()
                break  # the run is over: catch up below
            item = get.result()
            if item is None:
                return
            last = item[0]
            yield item
        try:
            while (item := await asyncio.wait_for(queue.get(), CATCH_UP)) is not None:
                last = item[0]
                yield item
            return
        except TimeoutError:
            reader.cancel()
        async for item in read(client, handle, from_offset=last + 1, stream_id=stream_id,
                               decode=decode):
            yield item
    finally:
        reader.cancel()
