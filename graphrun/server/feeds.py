"""A thread's v3 protocol events (graphrun/server/protocol.py serves them), made from its
live stream.

The API process keeps nothing of its own: the thread's live stream (temporalio's workflow
stream, which keeps the chunks of the thread's last two streamed runs) is read once per
thread and API process (a `Feed`), from what Temporal retains of it, and turned into
protocol events. An event's `seq` is made of where its stream item sits (the workflow
run's start, the item's offset, the event's index among the item's; see Origin), so every
API process gives every event the same `seq` and `event_id`: a reader that reconnects
with `since` to any process goes on where it was, with no gap and no repeat, and
`applied_through_seq` of `run.start` holds on every process. A reader without `since`
gets the thread's latest run from its start (a client opens its streams after `run.start`
has answered), then what comes next. (`timestamp` is when the process read the event:
Temporal keeps no time per item.)

Channels (CHANNELS): values, updates, custom (and `custom:<name>`, named by the payload's
`name`), tasks as the graph streams them; checkpoints (each checkpoint of the run at the
root: id, parent_id, step, source); lifecycle (started, then completed, interrupted or
failed, for the run at the root and for each subgraph namespace seen in `tasks`); input
(`input.requested` for each interrupt a run stops at); messages and tools, built from the
chat models' own content-block events and the tool runs the workers relay
(graphrun.relay). `debug` is not a channel of the protocol: asked for, it is refused, as
LangGraph's server refuses it.
"""

from __future__ import annotations

import asyncio
import base64
import bisect
import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, Field
from starlette.requests import HTTPConnection
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowQueryFailedError
from temporalio.converter import DataConverter
from temporalio.service import RPCError, RPCStatusCode

from graphrun import serde, stream
from graphrun.server import runs, shapes
from graphrun.server.context import NotFound
from graphrun.server.run_events import Out, RunEvents
from graphrun.server.threads import describe, is_record, thread_config

log = logging.getLogger(__name__)

KEEP = 20_000  # events a feed keeps for replay
LINGER = 30.0  # seconds a feed nobody reads stays: a reader back soon finds it caught up
KEEPALIVE = 15.0  # seconds between SSE comments on an idle stream
IDLE_POLL = 0.25  # seconds between looks for a thread's next workflow run
CHANNELS = frozenset({"values", "updates", "messages", "tools", "lifecycle", "input",
                      "checkpoints", "tasks", "custom"})


class EventStreamRequest(BaseModel):
    channels: list[str]
    namespaces: list[list[str]] | None = None
    depth: int | None = Field(None, ge=0)
    since: int | None = Field(None, ge=0)

    def unknown_channels(self) -> str | None:
        """Why the channels asked for cannot be served (LangGraph's words), or None."""
        if not self.channels:
            return "channels is required and must be a non-empty array"
        bad = [c for c in self.channels if c not in CHANNELS and not (
            c.startswith("custom:") and len(c) > len("custom:"))]
        if not bad:
            return None
        return (f"channels contains unsupported entries: {', '.join(bad[:5])}. Allowed: "
                f"{', '.join(sorted(CHANNELS))}, or any `custom:<name>`.")


async def pending_interrupts(server: Any, thread_id: str, desc: Any = None) -> list[Any]:
    """The interrupts the thread waits at (none for a thread that does not exist, or
    that the API created and that has not run yet: its record has no state)."""
    try:
        desc = desc or await describe(server.gc, thread_id)
    except NotFound:
        return []
    if is_record(desc):
        return []
    remote = await runs.thread_graph(server, thread_id, desc)
    snap = await remote.aget_state(thread_config(thread_id))
    return [i for t in snap.tasks for i in t.interrupts]


def _channel(ev: dict[str, Any]) -> str:
    method = ev["method"]
    if method == "custom":
        data = ev["params"]["data"]
        name = data.get("name") if isinstance(data, dict) else None
        return f"custom:{name}" if isinstance(name, str) and name else "custom"
    return "input" if method == "input.requested" else method


def _prefix(ns: list[str], prefix: list[str]) -> bool:
    """`ns` under `prefix`; a prefix segment without `:` matches any task of that node."""
    return len(prefix) <= len(ns) and all(
        n == p or (":" not in p and n.partition(":")[0] == p) for n, p in zip(ns, prefix, strict=False))


def matches(ev: dict[str, Any], req: EventStreamRequest) -> bool:
    channel = _channel(ev)
    if channel not in req.channels and not (
            channel.startswith("custom:") and "custom" in req.channels):
        return False
    prefixes = req.namespaces if req.namespaces else ([[]] if req.depth is not None else [])
    ns = ev["params"]["namespace"]
    return not prefixes or any(
        _prefix(ns, p) and (req.depth is None or len(ns) - len(p) <= req.depth)
        for p in prefixes)


# -- event numbers: the same on every API process ---------------------------------------
# An event's seq says where the stream item it came from sits in Temporal, so every API
# process gives the same event the same number:
#     seq = (start - EPOCH_MS) * PER_MS + (offset - first) * PER_ITEM + index
# `start` is when the workflow run that published the item started (ms), `offset - first`
# the item's place among that run's own items (continue-as-new carries the log on, with
# its offsets: the items before `first` are an earlier run's, numbered as that run
# numbered them), `index` the event's place among the item's events. A workflow run
# starts after the one before it stopped publishing, so seqs grow across runs while a
# run publishes fewer than PER_MS / PER_ITEM items per ms of its life (10,000 a second);
# they stay below 2**53, a JavaScript number, until 2052.
EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
PER_MS = 10_000
PER_ITEM = 1_000  # events one item may make


@dataclasses.dataclass(frozen=True)
class Origin:
    """What numbering a workflow run's stream items takes: facts of its start, which
    never change (so every process reads the same, and keeps them)."""

    start_ms: int  # when the workflow run started
    first: int  # the offset of its first own item: the items before it were carried on
    previous: str  # the workflow run whose log it carries on ("": a log of its own)

    def seq(self, offset: int, index: int) -> int:
        return (self.start_ms - EPOCH_MS) * PER_MS + (offset - self.first) * PER_ITEM + index


async def _read_origin(client: Any, workflow_id: str, run_id: str) -> Origin:
    """A workflow run's Origin, from its first history event: its start time, and the
    stream state its input carried (GraphWorkflow's StartRequest.stream)."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    try:
        event = await anext(aiter(handle.fetch_history_events(page_size=1)), None)
    except RPCError as exc:
        if exc.status != RPCStatusCode.NOT_FOUND:
            raise
        event = None
    if event is None:  # gone (retention): for good
        raise NotFound(f"Workflow run {run_id!r} is gone.")
    started = event.workflow_execution_started_event_attributes
    payloads = list(started.input.payloads)
    req = (await client.data_converter.decode(payloads[:1]))[0] if payloads else None
    carried = req.get("stream") if isinstance(req, dict) else None
    if not isinstance(carried, dict):
        return Origin(event.event_time.ToMilliseconds(), 0, "")
    first = int(carried.get("base_offset") or 0) + len(carried.get("log") or [])
    return Origin(event.event_time.ToMilliseconds(), first, started.continued_execution_run_id)


async def _latest(server: Any, thread_id: str) -> str | None:
    """The thread's latest workflow run's id; None for none, or for a record the API made
    (no stream: its first run will have one)."""
    try:
        desc = await describe(server.gc, thread_id)
    except NotFound:
        return None
    return None if is_record(desc) else desc.run_id


async def _position(server: Any, thread_id: str) -> tuple[str | None, int]:
    """The thread's latest workflow run (running or closed: a closed one's stream is read
    by query) and the end of its live stream; None while it has none."""
    wf_run = await _latest(server, thread_id)
    if wf_run is None:
        return None, 0
    handle = server.gc.client.get_workflow_handle(server.gc.workflow_id(thread_id),
                                                  run_id=wf_run)
    try:
        end = await handle.query("__temporal_workflow_stream_offset", result_type=int)
    except (RPCError, WorkflowQueryFailedError):
        return wf_run, 0
    return wf_run, int(end)


async def applied_through(conn: HTTPConnection, thread_id: str) -> int:
    """The seq just before the thread's next event: where its stream ends now (0 for a
    thread with no stream yet). Durable, so any process may serve the reader."""
    wf_run, end = await _position(conn.app.state.server, thread_id)
    if wf_run is None:
        return 0
    try:
        origin = await hub(conn).origin(thread_id, wf_run)
    except NotFound:  # the run ended and went meanwhile: no promise then
        return 0
    return origin.seq(max(end, origin.first), 0) - 1


def _wire_data(wire: Any) -> Any:
    """A stream item as a poll query answers it (base64 of the item's Payload)."""
    payload = Payload()
    payload.ParseFromString(base64.b64decode(wire.data))
    return DataConverter.default.payload_converter.from_payload(payload)


# -- a thread's events ------------------------------------------------------------------
class Hub:
    """The feeds of this API process, by thread, and the workflow runs' Origins read."""

    ORIGINS_KEPT = 4096

    def __init__(self, server: Any) -> None:
        self.server = server
        self.feeds: dict[str, Feed] = {}
        self._origins: dict[str, asyncio.Future[Origin]] = {}

    def feed(self, thread_id: str) -> Feed:
        if thread_id not in self.feeds:
            self.feeds[thread_id] = Feed(self, thread_id)
        return self.feeds[thread_id]

    async def origin(self, thread_id: str, run_id: str) -> Origin:
        """A workflow run's Origin, read once (concurrent askers share the read); NotFound
        is kept too (a run gone stays gone), other failures are asked again."""
        found = self._origins.get(run_id)
        if found is None or (found.done() and (found.cancelled() or not isinstance(
                found.exception() or NotFound(), NotFound))):
            if len(self._origins) >= self.ORIGINS_KEPT:
                del self._origins[next(iter(self._origins))]
            found = self._origins[run_id] = asyncio.ensure_future(_read_origin(
                self.server.gc.client, self.server.gc.workflow_id(thread_id), run_id))
        return await asyncio.shield(found)


def close(app: Any) -> None:
    """Stop every feed of this process (the app is shutting down)."""
    found = getattr(app.state, "protocol_hub", None)
    for feed in list(found.feeds.values()) if found is not None else []:
        feed.stop()


def hub(conn: HTTPConnection) -> Hub:
    state = conn.app.state
    if getattr(state, "protocol_hub", None) is None:
        state.protocol_hub = Hub(state.server)
    return state.protocol_hub  # type: ignore[no-any-return]


def _seq(ev: dict[str, Any]) -> int:
    return int(ev["seq"])


class Feed:
    """One thread's protocol events, made from its live stream: what Temporal retains of
    it first (the last two streamed runs, from their starts), then what comes, across
    runs and workflow runs, for as long as someone reads. Every process reads the same
    items from the same starts, so makes the same events with the same seqs."""

    def __init__(self, owner: Hub, thread_id: str) -> None:
        self.owner, self.server, self.thread_id = owner, owner.server, thread_id
        self.events: list[dict[str, Any]] = []  # by seq, the last KEEP
        self.latest: str | None = None  # the latest run seen, and its first event's seq
        self.latest_first = 0
        self.ended: set[str] = set()
        self.asked: set[str] = set()  # the interrupts the last run to end stopped at
        self.runs: dict[str, RunEvents] = {}  # runs under way
        # run id -> task id -> last sequence number read: a task resumed in a later run
        # numbers its items from 0 again, and they are new
        self.seen: dict[str, dict[str, int]] = {}
        self.wf_run: str | None = None  # the workflow run read, and its next offset
        self.offset = 0
        self.users = 0
        self._changed = asyncio.Event()
        self._began: asyncio.Future[None] | None = None
        self._reader: asyncio.Task[None] | None = None
        self._remote: Any = None

    @contextlib.asynccontextmanager
    async def using(self) -> AsyncIterator[None]:
        self.users += 1
        try:
            yield
        finally:
            self.users -= 1
            if not self.users:
                asyncio.get_running_loop().call_later(LINGER, self._close_if_unused)

    def _close_if_unused(self) -> None:
        if self.users or self.owner.feeds.get(self.thread_id) is not self:
            return
        del self.owner.feeds[self.thread_id]
        self.stop()

    def stop(self) -> None:
        """Stop reading the thread's stream."""
        if self._reader is not None:
            self._reader.cancel()

    async def ready(self) -> None:
        """Begin reading (once; again if it could not begin): caught up with the stream
        as it stands."""
        began = self._began
        if began is None or (began.done() and not began.cancelled() and began.exception()):
            self._began = began = asyncio.ensure_future(self._begin())
        await asyncio.shield(began)

    async def _begin(self) -> None:
        self.wf_run, end = await _position(self.server, self.thread_id)
        if self.wf_run is not None:
            try:
                await self._catch_up(end)
            except Exception:  # no worker answers the query: the live read catches up
                log.warning("thread %s: its stream could not be read at once",
                            self.thread_id, exc_info=True)
            await self._announce_pause(end)
        self._reader = asyncio.ensure_future(self._follow())

    async def _catch_up(self, end: int) -> None:
        """The retained items up to `end`, by the stream's poll query (answered at once;
        an offset before the retained ones reads from the first retained)."""
        from temporalio.contrib.workflow_streams import PollInput, PollResult

        handle = self._handle()
        while self.offset < end:
            batch = await handle.query("__temporal_workflow_stream_poll", PollInput(
                topics=[stream.STREAM_TOPIC], from_offset=self.offset), result_type=PollResult)
            for wire in batch.items:
                await self._take(wire.offset, _wire_data(wire))
            if batch.next_offset <= self.offset:
                return
            self.offset = batch.next_offset

    async def _announce_pause(self, end: int) -> None:
        """A thread that waits at interrupts its stream does not show (a run that was not
        streamed stopped there) says so at once, numbered just before the stream's end:
        every process that begins there says it alike."""
        if self.runs:
            return  # a run is under way: its end will say
        try:
            paused = await pending_interrupts(self.server, self.thread_id)
            records = await runs.run_records(self.server, self.thread_id) if paused else []
            origin = await self.owner.origin(self.thread_id, self.wf_run or "")
            graph = (await self._graph()).name if paused else ""
        except Exception:  # no worker answers: the questions come with the next run
            log.warning("thread %s: its interrupts could not be read", self.thread_id,
                        exc_info=True)
            return
        if not paused or {i.id for i in paused} == self.asked:
            return
        rid = records[-1]["run_id"] if records else "paused"
        named = {"graph_name": graph} if graph else {}
        out: Out = [("lifecycle", (), {"event": "started", **named}),
                    *self._closing(RunEvents(graph), "interrupted", None, paused)]
        first = origin.seq(max(end, origin.first), 0) - len(out)
        self.latest, self.latest_first = rid, first
        self.ended.add(rid)
        for k, (method, ns, data) in enumerate(out):
            self.emit(first + k, f"{rid}:paused:{k}", method, ns, data)

    def _handle(self, wf_run: str | None = None) -> Any:
        return self.server.gc.client.get_workflow_handle(
            self.server.gc.workflow_id(self.thread_id), run_id=wf_run or self.wf_run)

    async def _follow(self) -> None:
        """Read the stream live: the workflow run read, then each one after it (continued
        as new, or started when a closed thread runs again)."""
        while True:
            try:
                if self.wf_run is not None:
                    await self._subscribe()  # until the run has closed and been read
                await self._move_on(wait=True)
            except asyncio.CancelledError:
                raise
            except Exception:  # continued as new; or Temporal or a worker away a while
                with contextlib.suppress(Exception):
                    if await self._move_on(wait=False):
                        continue
                log.warning("reading thread %s's live stream failed", self.thread_id,
                            exc_info=True)
                await asyncio.sleep(1.0)

    async def _subscribe(self) -> None:
        from temporalio.contrib.workflow_streams import WorkflowStreamClient

        # Without a client the subscription does not follow continue-as-new at the same
        # offset: it fails, and _move_on finds where the next run's log goes on.
        async for item in WorkflowStreamClient(self._handle()).subscribe(
                [stream.STREAM_TOPIC], from_offset=self.offset,
                poll_cooldown=stream.POLL_COOLDOWN):
            await self._take(item.offset, item.data)

    async def _move_on(self, wait: bool) -> bool:
        """Go on to the thread's next workflow run: where its log carries on the one read,
        or from its start (False: there is none yet)."""
        while (latest := await _latest(self.server, self.thread_id)) in (None, self.wf_run):
            if not wait:
                return False
            await asyncio.sleep(IDLE_POLL)
        assert latest is not None
        if not await self._carries(latest, self.wf_run):
            self.offset, self.seen = 0, {}
        self.wf_run = latest
        return True

    async def _carries(self, wf_run: str, earlier: str | None) -> bool:
        """Whether `wf_run`'s log carries on `earlier`'s (continue-as-new, with offsets)."""
        while earlier is not None:
            try:
                origin = await self.owner.origin(self.thread_id, wf_run)
            except NotFound:
                return False
            if origin.previous in ("", earlier):
                return origin.previous == earlier
            wf_run = origin.previous
        return False

    async def _origin_at(self, offset: int) -> Origin | None:
        """The Origin of the item at `offset` of the run read: the run's, or that of the
        run before it that published it (None if Temporal no longer has that run)."""
        wf_run = self.wf_run
        while wf_run:
            try:
                origin = await self.owner.origin(self.thread_id, wf_run)
            except NotFound:
                return None
            if offset >= origin.first:
                return origin
            wf_run = origin.previous
        return None

    async def read(self, req: EventStreamRequest, until: asyncio.Future[Any] | None = None
                   ) -> AsyncIterator[dict[str, Any] | None]:
        """The events `req` asks for, from its `since`; None when idle for KEEPALIVE."""
        await self.ready()
        if req.since is not None:
            after = req.since
        else:  # the latest run, even one just ended: a client opens its streams after
            after = self.latest_first - 1 if self.latest is not None else 0  # run.start
        while until is None or not until.done():
            changed = self._changed
            while (i := bisect.bisect_right(self.events, after, key=_seq)) < len(self.events):
                ev = self.events[i]
                after = ev["seq"]
                if matches(ev, req):
                    yield ev
            waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(changed.wait())]
            if until is not None:
                waits.append(until)
            try:
                done, _ = await asyncio.wait(waits, timeout=KEEPALIVE,
                                             return_when=asyncio.FIRST_COMPLETED)
            finally:  # also when the reader goes away meanwhile
                waits[0].cancel()
            if not done:
                yield None
        if until is not None and until.exception() is not None:
            raise until.exception()  # type: ignore[misc]

    def tree(self, run_id: str | None = None) -> dict[str, Any] | None:
        """Run `run_id`'s namespaces (default: the latest run's) as its lifecycle events
        left them: {namespace, status, graph_name, children}; None if none was read."""
        rid = run_id or self.latest
        found: dict[tuple[str, ...], dict[str, Any]] = {}
        for ev in self.events:
            if ev["method"] != "lifecycle" or not ev["event_id"].startswith(f"{rid}:"):
                continue
            ns, data = tuple(ev["params"]["namespace"]), ev["params"]["data"]
            known = found.get(ns, {})
            found[ns] = {"namespace": list(ns), "status": data.get("event"),
                         "graph_name": data.get("graph_name") or known.get("graph_name")}
        if rid is None or not found:
            return None
        for ns in list(found):  # a namespace's parents, if their own events are gone
            for k in range(len(ns)):
                found.setdefault(ns[:k], {"namespace": list(ns[:k]), "status": "started"})

        def node(ns: tuple[str, ...]) -> dict[str, Any]:
            out = dict(found[ns])
            # As LangGraph's server names a namespace it saw no name for.
            out["graph_name"] = out.get("graph_name") or (
                ns[-1].partition(":")[0] if ns else "root")
            children = sorted(c for c in found if len(c) == len(ns) + 1 and c[:-1] == ns)
            if children:
                out["children"] = [node(c) for c in children]
            return out

        return node(())

    def emit(self, seq: int, event_id: str, method: str, ns: Any, data: Any) -> None:
        if self.events and seq <= self.events[-1]["seq"]:
            # Beyond what the numbering holds (see PER_MS): kept in order, numbered here.
            log.warning("thread %s: event %s numbered out of order", self.thread_id, event_id)
            seq = self.events[-1]["seq"] + 1
        self.events.append({
            "type": "event", "method": method, "seq": seq, "event_id": event_id,
            "params": {"namespace": list(ns), "timestamp": int(time.time() * 1000),
                       "data": data}})
        if len(self.events) > KEEP:
            del self.events[:len(self.events) - KEEP]
        self._changed.set()
        self._changed = asyncio.Event()

    # -- runs ---------------------------------------------------------------------------
    async def _take(self, offset: int, data: Any) -> None:
        """One stream item's events, numbered by where the item sits. What needs Temporal
        is asked first; the feed's state then changes with the events, in one go."""
        rid = data.get("id") if isinstance(data, dict) else None
        origin = None
        if isinstance(rid, str) and rid not in self.ended:
            # None: its workflow run is gone (retention), so it cannot be numbered as
            # others numbered it; only an old run's replay misses it.
            origin = await self._origin_at(offset)
        if origin is None or not isinstance(rid, str):
            self.offset = max(self.offset, offset + 1)
            return  # not a run's; or a run read before (continue-as-new carries its log)
        graph = await self._graph()
        ending = await self._outcome(rid) if data.get("end") else None
        out: list[tuple[str, str, Any, Any]] = []  # (event id, method, namespace, data)
        if rid not in self.runs:
            self.runs[rid] = RunEvents(graph.name)
            self.latest, self.latest_first = rid, origin.seq(offset, 0)
            named = {"graph_name": graph.name} if graph.name else {}
            out.append((f"{rid}:start", "lifecycle", (), {"event": "started", **named}))
        if ending is not None:
            self.ended.add(rid)
            self.seen.pop(rid, None)
            ends = self._closing(self.runs.pop(rid), *ending)
            out += [(f"{rid}:end:{k}", *e) for k, e in enumerate(ends)]
        elif not stream.repeated(data, self.seen.setdefault(rid, {})):
            chunk = tuple(serde.loads(data["e"], graph.types))
            ns, mode, payload = chunk if len(chunk) == 3 else ((), *chunk)
            made = self.runs[rid].convert(tuple(ns), mode, payload)
            out += [(f"{rid}:{offset}:{k}", *e) for k, e in enumerate(made)]
        for k, (event_id, method, ns, payload) in enumerate(out):
            self.emit(origin.seq(offset, k), event_id, method, ns, payload)
        self.offset = max(self.offset, offset + 1)

    async def _outcome(self, rid: str) -> tuple[str, Any, list[Any]]:
        """How run `rid` ended: its update's result (durable); for a run with no record
        (the Python client's), the thread as it stands."""
        result = None
        with contextlib.suppress(NotFound):
            result = await runs.run_outcome(self.server, self.thread_id, rid)
        if result is not None:
            types = (await self._graph()).types
            return (result.status, result.error,
                    [serde.interrupt_from_json(i, types) for i in result.interrupts])
        paused = await pending_interrupts(self.server, self.thread_id)
        return ("interrupted" if paused else "done"), None, paused

    def _closing(self, run: RunEvents, status: str, error: Any, paused: list[Any]) -> Out:
        """The events that end a run: its subgraphs', then its own."""
        self.asked = {i.id for i in paused}
        out = run.close_children("interrupted" if paused or status == "interrupted" else (
            "completed" if status == "done" and not error else "failed"))
        graph = {"graph_name": run.graph} if run.graph else {}
        if paused or status == "interrupted":
            out.append(("lifecycle", (), {"event": "interrupted", **graph}))
            for i in paused:
                value = shapes.jsonable(i.value)
                out.append(("input.requested", (), {"interrupt_id": i.id, "payload": value,
                                                     "value": value}))
        elif status == "done" and not error:
            out.append(("lifecycle", (), {"event": "completed", **graph}))
        else:
            why = "cancelled" if status == "cancelled" else (
                (error or {}).get("message") or (error or {}).get("error_message")
                or status)
            out.append(("lifecycle", (), {"event": "failed", "error": str(why), **graph}))
        return out

    async def _graph(self) -> Any:
        if self._remote is None:
            self._remote = await runs.thread_graph(self.server, self.thread_id)
        return self._remote
