"""Calling graphs on Temporal: `GraphClient` and `RemoteGraph`.

A RemoteGraph has the compiled graph's method names (`ainvoke`, `aget_state`,
...), so code written against the in-process driver moves over unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateRPCTimeoutOrCancelledError,
    WorkflowUpdateStage,
)
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.contrib.pydantic import (
    PydanticJSONPlainPayloadConverter,
    PydanticPayloadConverter,
    ToJsonOptions,
)
from temporalio.converter import (
    CompositePayloadConverter,
    DataConverter,
    DefaultFailureConverter,
    DefaultFailureConverterWithEncodedAttributes,
    DefaultPayloadConverter,
    JSONPlainPayloadConverter,
    PayloadCodec,
)
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from graphrun import callbacks, errors, lifetime, registry, relay, serde, state, stream, visibility
from graphrun import tracing as tracing_mod
from graphrun.bridge import is_langgraph_value
from graphrun.declared import DeclaredTypes
from graphrun.engine import stream_chunks
from graphrun.payloads import (
    InvokeRequest,
    RecordStart,
    ResumeSignal,
    RunResult,
    StartRequest,
    SubgraphUpdate,
    ThreadResult,
)
from graphrun.runnable import RunnableGraph, graph_output, stream_parts
from graphrun.serde import InputLimits
from graphrun.storage import StorageLike, storage_from
from graphrun.types import INTERRUPT, Command, StateSnapshot


@dataclasses.dataclass(frozen=True)
class GraphDataConverter(DataConverter):
    """temporalio's pydantic data converter, optionally with a payload codec.

    Call it to get the same converter with encryption:
    ``data_converter(encryption={"k2": key2, "k1": key1})`` (newest key first), or
    ``encryption=`` a ``GRAPHRUN_ENCRYPTION_KEYS``-style string or any PayloadCodec.
    ``encryption=None`` gives the plain converter. With a codec, failure messages and
    stack traces are encrypted as well (temporalio's encoded failure attributes). See
    `graphrun.codec`.

    ``external_storage=`` a directory, a StorageDriver (S3, ...) or an ExternalStorage
    puts large payloads in a blob store and references in history (`graphrun.storage`).
    With both, payloads are encrypted first, then stored.
    """

    def __call__(self, *, encryption: Mapping[str, bytes] | str | PayloadCodec | None = None,
                 external_storage: StorageLike | None = None) -> GraphDataConverter:
        from graphrun.codec import codec_from

        codec = None if encryption is None else codec_from(encryption)
        # With a codec, failure messages and stack traces move into the (encrypted)
        # encoded attributes too: a node's error text may quote the state.
        failures = (DefaultFailureConverter if codec is None
                    else DefaultFailureConverterWithEncodedAttributes)
        storage = None if external_storage is None else storage_from(external_storage)
        return dataclasses.replace(self, payload_codec=codec, failure_converter_class=failures,
                                   external_storage=storage)

    @property
    def encrypted(self) -> bool:
        """True when payloads pass through a codec."""
        return self.payload_codec is not None


# The SDK builds a payload converter for every workflow activation. A new pydantic
# JSON converter makes a serializer and an empty type-adapter cache, so each
# activation paid for both again; the converters share one instead.
_WIRE_CONVERTERS = tuple(
    PydanticJSONPlainPayloadConverter(ToJsonOptions(exclude_unset=True))
    if isinstance(c, JSONPlainPayloadConverter) else c
    for c in DefaultPayloadConverter.default_encoding_payload_converters)


class _WirePayloadConverter(PydanticPayloadConverter):
    """Pydantic JSON that leaves out the fields a model did not set (see payloads)."""

    def __init__(self) -> None:
        CompositePayloadConverter.__init__(self, *_WIRE_CONVERTERS)


data_converter = GraphDataConverter(payload_converter_class=_WirePayloadConverter)
"""The converter both sides use: pydantic models and plain JSON on the wire.

Also callable: ``data_converter(encryption=keys)`` is the same converter with the
AES-GCM codec of `graphrun.codec`."""

GRAPH_STATUS = visibility.GRAPH_STATUS
GRAPH_NAME = visibility.GRAPH_NAME


def graphrun_converter(converter: DataConverter) -> GraphDataConverter:
    """`converter` as graphrun needs it: graphrun's payload converter, its codec kept.

    A graphrun converter (encrypting or not) is returned as it is. Any other converter
    is replaced by graphrun's; a payload codec and external storage it had are kept, so
    a client that encrypts never starts writing plaintext, nor one that offloads large
    payloads starts writing them inline, because graphrun replaced its converter.
    """
    if isinstance(converter, GraphDataConverter):
        return converter
    return data_converter(encryption=converter.payload_codec,
                          external_storage=converter.external_storage)


def with_data_converter(client: Client) -> Client:
    """The same connection, with graphrun's data converter (and the client's codec, if any)."""
    converter = graphrun_converter(client.data_converter)
    if converter is client.data_converter:
        return client
    config = client.config()
    config["data_converter"] = converter
    return Client(**config)


@dataclasses.dataclass(frozen=True)
class ThreadInfo:
    """A thread as listed by `GraphClient.list_threads`."""

    thread_id: str
    graph: str | None
    status: str | None
    workflow_status: str
    run_id: str | None


_ERRORS: dict[str, type[Exception]] = {
    "InvalidResumeError": errors.InvalidResumeError,
    "InvalidUpdateError": errors.InvalidUpdateError,
    "EmptyInputError": errors.EmptyInputError,
    "GraphRecursionError": errors.GraphRecursionError,
    "GraphNotFoundError": errors.GraphNotFoundError,
    "UndeclaredTypeError": errors.UndeclaredTypeError,
    "InputLimitError": errors.InputLimitError,
    "ThreadBusyError": errors.ThreadBusyError,
    "RunNotFoundError": errors.RunNotFoundError,
    "RuntimeError": RuntimeError,
    "ValueError": ValueError,
}


def as_graphrun_error(exc: BaseException) -> BaseException:
    """The graphrun error a workflow's refusal (an update's ApplicationError) stands for,
    by its type name; `exc` itself when it is no such refusal."""
    cause = exc.cause if isinstance(exc, WorkflowUpdateFailedError) else exc
    if isinstance(cause, ApplicationError):
        cls = _ERRORS.get(cause.type or "", errors.GraphrunError)
        return cls(cause.message)
    return exc


class GraphClient:
    """Starts, resumes and reads threads of graphs served by a graphrun worker."""

    def __init__(self, client: Client, *, task_queue: str = "graphrun",
                 id_prefix: str = "", max_history: int = 100,
                 history_event_limit: int = 10_000, search_attributes: bool = True,
                 types: Iterable[type] = (), limits: InputLimits | None = None,
                 tracing: tracing_mod.TracingLike = "auto",
                 index_metadata: Sequence[str] | None = None,
                 default_ttl: lifetime.ThreadTTL | None = None) -> None:
        """Args:
            client: any temporalio Client (graphrun sets its own data converter).
            task_queue: where the graphrun worker listens.
            id_prefix: workflow id = id_prefix + thread_id.
            max_history: checkpoints a thread keeps (older ones are dropped).
            history_event_limit: continue-as-new once a thread's history passes this
                many events (or when Temporal suggests it), carrying the checkpoints.
            search_attributes: keep GraphStatus/GraphName current; turn off only for
                a namespace where they cannot be registered (the time-skipping server).
            types: classes this client may rebuild from thread data (state, answers).
                A graph registered in this process (a worker here) adds its declared
                types; any other class named by data is refused, never imported.
            limits: the largest input, answer or update this client sends.
            tracing: trace each call to a thread (graphrun.tracing): "langsmith", "otel",
                both, a GraphTracing, or None; "auto" (default) reads the environment. A
                client that traces already keeps its tracing.
            index_metadata: the thread metadata keys that Temporal's visibility indexes
                (the GraphMetadata search attribute, which a payload codec does not
                encrypt), so searches can filter on them. None (default): every key, or
                the comma-separated keys of $GRAPHRUN_INDEX_METADATA when it is set.
            default_ttl: the TTL of each thread this client creates (LangGraph's
                `checkpointer.ttl.default_ttl`): deleted after that long without a change.
                None (default): threads live until deleted.
        """
        self.types = DeclaredTypes(types)
        self.limits = limits or InputLimits()
        self.search_attributes = search_attributes
        self.client = tracing_mod.with_tracing(with_data_converter(client), tracing)
        self.tracing = tracing_mod.of_client(self.client)
        self.task_queue = task_queue
        self.id_prefix = id_prefix
        self.max_history = max_history
        self.history_event_limit = history_event_limit
        if index_metadata is None and "GRAPHRUN_INDEX_METADATA" in os.environ:
            index_metadata = [k.strip() for k in
                              os.environ["GRAPHRUN_INDEX_METADATA"].split(",") if k.strip()]
        self.index_metadata = None if index_metadata is None else list(index_metadata)
        self.default_ttl = default_ttl

    @classmethod
    async def connect(cls, target: str | None = None, *, namespace: str | None = None,
                      task_queue: str = "graphrun", id_prefix: str = "",
                      tls: bool | Any = False, api_key: str | None = None,
                      max_history: int = 100, history_event_limit: int = 10_000,
                      encryption: Mapping[str, bytes] | str | PayloadCodec | None = None,
                      external_storage: StorageLike | None = None,
                      search_attributes: bool = True, types: Iterable[type] = (),
                      limits: InputLimits | None = None,
                      tracing: tracing_mod.TracingLike = "auto",
                      index_metadata: Sequence[str] | None = None,
                      default_ttl: lifetime.ThreadTTL | None = None,
                      **connect_options: Any) -> GraphClient:
        """Connect to Temporal (default: $TEMPORAL_ADDRESS or localhost:7233).

        Takes the constructor's options (task_queue, id_prefix, max_history,
        history_event_limit, search_attributes, types, limits, index_metadata, default_ttl)
        and temporalio's
        `Client.connect` options.

        Args:
            encryption: encrypt payloads with AES-GCM: key id -> 32-byte key, newest
                first (the newest encrypts, any decrypts), a
                ``GRAPHRUN_ENCRYPTION_KEYS``-style string, or a PayloadCodec. None
                (the default) sends plain JSON; the environment is not read here, use
                ``graphrun.codec.keys_from_env()`` for that. Workers need the same keys.
            external_storage: payloads of 256 KiB or more go to a blob store and history
                keeps references, so a large state never meets Temporal's 2 MB payload
                limit: a directory (`graphrun.storage.LocalDirectoryDriver`), any
                StorageDriver (e.g. the SDK's S3StorageDriver), or an ExternalStorage
                (its own threshold). Workers need the same drivers. None: all inline.
            tracing: trace calls, and the workers made from this client
                (`create_worker(gc.client, ...)`): "langsmith", "otel", "langsmith,otel", a
                GraphTracing, or None. "auto" (default): LangSmith when LANGSMITH_TRACING is
                true, OpenTelemetry when OTEL_EXPORTER_OTLP_ENDPOINT is set.
            runtime (a temporalio option): e.g. ``graphrun.metrics.prometheus_runtime(
                "0.0.0.0:9464")`` to serve Temporal's and graphrun's metrics.
        """
        chosen = tracing_mod.resolve(tracing)
        if chosen is not None:
            connect_options["interceptors"] = [*connect_options.get("interceptors", ()), chosen]
        client = await Client.connect(
            target or os.environ.get("TEMPORAL_ADDRESS", "localhost:7233"),
            namespace=namespace or os.environ.get("TEMPORAL_NAMESPACE", "default"),
            data_converter=data_converter(encryption=encryption,
                                          external_storage=external_storage),
            tls=tls or bool(api_key),
            api_key=api_key, **connect_options)
        return cls(client, task_queue=task_queue, id_prefix=id_prefix, max_history=max_history,
                   history_event_limit=history_event_limit,
                   search_attributes=search_attributes, types=types, limits=limits,
                   tracing=None, index_metadata=index_metadata, default_ttl=default_ttl)

    def graph(self, name: str) -> RemoteGraph:
        return RemoteGraph(self, name)

    def thread_attributes(self, graph: str | None, status: str,
                          metadata: Mapping[str, Any] | None = None,
                          created_at: datetime | None = None) -> TypedSearchAttributes | None:
        """The search attributes a new thread starts with (graphrun.visibility), or None
        when this client keeps none."""
        if not self.search_attributes:
            return None
        now = visibility.stamp(created_at or datetime.now(UTC))
        pairs: list[SearchAttributePair[Any]] = [
            SearchAttributePair(GRAPH_STATUS, status),
            SearchAttributePair(visibility.CREATED_AT, now),
            SearchAttributePair(visibility.UPDATED_AT, now),
            SearchAttributePair(visibility.METADATA, visibility.metadata_entries(
                metadata or {}, self.index_metadata))]
        if graph:
            pairs.append(SearchAttributePair(GRAPH_NAME, graph))
        return TypedSearchAttributes(pairs)

    async def create_thread(self, thread_id: str, *, metadata: Mapping[str, Any] | None = None,
                            ttl: lifetime.ThreadTTL | None = None) -> datetime | None:
        """Make a thread before its first run (LangGraph's `POST /threads`): an open
        ThreadRecord holding its metadata, which the first run (or state update) turns
        into the thread's GraphWorkflow. Returns the creation time it indexed (None when
        this client keeps no search attributes: the run's start time then stands). Raises
        WorkflowAlreadyStartedError when the id is taken by a thread that exists."""
        metadata = dict(metadata or {})
        graph = metadata.get("graph_id")
        ttl = ttl or self.default_ttl
        created = visibility.stamp(datetime.now(UTC))
        await self.client.start_workflow(
            "ThreadRecord", RecordStart(thread_id=thread_id,
                                        ttl=None if ttl is None else ttl.model_dump(),
                                        index_metadata=self.index_metadata,
                                        search_attributes=self.search_attributes),
            id=self.workflow_id(thread_id), task_queue=self.task_queue,
            memo={"metadata": metadata, **({"ttl": ttl.model_dump()} if ttl else {})},
            # Refused while any run of the id is kept (an earlier version's closed thread
            # too): the id is taken.
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            search_attributes=self.thread_attributes(
                graph if isinstance(graph, str) else None, "done", metadata, created))
        return created if self.search_attributes else None

    async def migrate(self) -> list[str]:
        """Bring the threads an earlier graphrun closed under today's rule: each thread
        whose latest run completed (a finished GraphWorkflow, or a ThreadRecord that
        completed at once) gets an open run holding it, so the namespace's retention no
        longer decides its life. Run it before that retention ends; running it again
        does nothing. The thread ids reopened."""
        query = ("WorkflowType IN ('GraphWorkflow', 'ThreadRecord') "
                 "AND ExecutionStatus = 'Completed'")
        seen: set[str] = set()
        reopened = []
        async for wf in self.client.list_workflows(query):
            if wf.id in seen or not wf.id.startswith(self.id_prefix):
                continue
            seen.add(wf.id)
            tid = wf.id[len(self.id_prefix):]
            if await self.reopen(tid):
                reopened.append(tid)
        return reopened

    async def reopen(self, thread_id: str) -> bool:
        """Give a thread whose latest run completed (an earlier graphrun closed it) an
        open run holding it, seeded with its checkpoints, run records and metadata.
        False when its latest run is open, or did not complete (nothing to keep)."""
        handle = self.client.get_workflow_handle(self.workflow_id(thread_id))
        try:
            desc = await handle.describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return False
            raise
        if desc.status != WorkflowExecutionStatus.COMPLETED:
            return False
        memo = await desc.memo()
        kept = memo.get("metadata")
        metadata: dict[str, Any] = dict(kept) if isinstance(kept, dict) else {}
        created = desc.start_time
        try:
            if desc.workflow_type == "ThreadRecord":
                graph = metadata.get("graph_id")
                await self.client.start_workflow(
                    "ThreadRecord", RecordStart(thread_id=thread_id,
                                                index_metadata=self.index_metadata,
                                                search_attributes=self.search_attributes),
                    id=handle.id, task_queue=self.task_queue, memo={"metadata": metadata},
                    id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                    search_attributes=self.thread_attributes(
                        graph if isinstance(graph, str) else None, "done", metadata,
                        created_at=created))
                return True
            graph = desc.typed_search_attributes.get(GRAPH_NAME)
            if desc.workflow_type != "GraphWorkflow" or not graph:
                return False
            remote = self.graph(graph)
            closed = self.client.get_workflow_handle(handle.id, run_id=desc.run_id,
                                                     result_type=ThreadResult)
            seed, runs = await remote._thread_of(closed), await remote._runs_of(closed)
            status = desc.typed_search_attributes.get(GRAPH_STATUS) or "done"
            await self.client.start_workflow(
                "GraphWorkflow", remote.start_request(thread_id, seed, runs), id=handle.id,
                task_queue=self.task_queue, memo={"metadata": metadata},
                id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                search_attributes=self.thread_attributes(graph, status, metadata,
                                                         created_at=created))
            return True
        except WorkflowAlreadyStartedError:
            return False  # a run started meanwhile: it holds the thread already

    async def delete_thread(self, thread_id: str) -> int:
        """Delete the thread: every execution of its workflow, so nothing of it stays in
        history or visibility; how many were deleted (0: there was no such thread)."""
        return await lifetime.delete_executions(self.client, self.workflow_id(thread_id))

    def workflow_id(self, thread_id: str) -> str:
        return f"{self.id_prefix}{thread_id}"

    def trace(self, graph: str, thread_id: str, inputs: Any, what: str = "invoke"
              ) -> contextlib.AbstractContextManager[Callable[..., None]]:
        """The client's run around one call to a thread, when this client traces."""
        if self.tracing is None:
            return contextlib.nullcontext(_untraced)
        return self.tracing.invocation(graph, thread_id, inputs, what=what)

    async def resume(self, thread_id: str, value: Any, interrupt_id: str | None = None) -> None:
        """Answer a paused thread by signal (fire and forget)."""
        payload = {interrupt_id: value} if interrupt_id else value
        data = serde.dumps(payload)
        self.limits.check(data, "the resume value")
        handle = self.client.get_workflow_handle(self.workflow_id(thread_id))
        with self.trace("resume", thread_id, {"resume": value}, what="resume"):
            await handle.signal("resume", ResumeSignal(resume=data))

    async def list_threads(self, *, status: str | None = None, graph: str | None = None,
                           limit: int = 100) -> list[ThreadInfo]:
        """Threads by GraphStatus / GraphName, newest first, from Temporal's visibility:
        one row per thread (its open workflow), exact at any count. Threads an earlier
        graphrun closed are listed once `graphrun migrate` has reopened them."""
        base = visibility.THREADS
        if self.id_prefix:
            base += f" AND WorkflowId STARTS_WITH {visibility.quote(self.id_prefix)}"
        query = visibility.where(status=status, graph=graph, base=base)
        rows = await visibility.page(self.client, query, "created_at", "desc", 0, limit)
        return [ThreadInfo(
            thread_id=wf.id[len(self.id_prefix):], graph=wf.typed_search_attributes.get(
                GRAPH_NAME), status=wf.typed_search_attributes.get(GRAPH_STATUS),
            workflow_status=wf.status.name if wf.status else "UNKNOWN", run_id=wf.run_id)
            for wf in rows]

# Seconds to wait for a thread record (workflows/thread_record.py) to become its thread.
RECORD_ADOPT_TIMEOUT = 30.0


class _RecordOpen(Exception):
    """The update reached a workflow of the thread's id that has no such handler: the
    thread record made by `POST /threads`, not yet adopted by its first run."""


def _unhandled(exc: WorkflowUpdateFailedError) -> bool:
    cause = exc.cause
    return isinstance(cause, ApplicationError) and "expected but not found" in cause.message


async def _taken(update: WorkflowUpdateHandle[Any]) -> RunResult:
    """A background run the workflow took; a refused one (its validator said no) raises.
    Temporal answers a refusal with the outcome already known, which temporalio keeps on
    the handle (no public accessor): its result is then read without a wait."""
    if getattr(update, "_known_outcome", None) is not None:
        await update.result()
    return RunResult(status="running")


def _untraced(*_: Any) -> None:
    pass


def _quote(value: str) -> str:
    """A string literal of Temporal's list filter."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

def _names(value: str | Sequence[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _subgraph(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A subgraph's address in a config (its checkpoint_ns and checkpoint_map), if any."""
    c = (config or {}).get("configurable") or {}
    if not c.get("checkpoint_ns"):
        return None
    return {"checkpoint_ns": c["checkpoint_ns"], "checkpoint_map": c.get("checkpoint_map")}


def _thread_id(config: Mapping[str, Any] | None) -> str:
    tid = ((config or {}).get("configurable") or {}).get("thread_id")
    if not tid:
        raise ValueError('a thread_id is required: config={"configurable": {"thread_id": ...}}')
    return str(tid)


class RemoteGraph(RunnableGraph):
    """A graph served on Temporal, with the compiled graph's method names; a LangChain
    Runnable when langchain-core is installed (graphrun.runnable), whose callbacks hear
    the nodes' runs from the workers (graphrun.relay)."""

    def __init__(self, gc: GraphClient, name: str) -> None:
        self.gc = gc
        self.name = name

    # Seconds a superstep may take (LangGraph's graph.step_timeout): sent with each run,
    # over the served graph's own. The workflow keeps it with a durable timer.
    step_timeout: float | None = None

    @property
    def spec(self) -> Any:  # type: ignore[override]
        """The graph's spec when this process serves it too (its schemas), else None."""
        graph = registry.find(self.name)
        return graph.spec if graph is not None else None

    @property
    def types(self) -> DeclaredTypes:
        """The classes results are rebuilt into: the client's, and the graph's if served here."""
        graph = registry.find(self.name)
        return self.gc.types | (graph.spec.types if graph is not None else ())

    def _send(self, value: Any, what: str) -> Any:
        data = serde.dumps(value)
        self.gc.limits.check(data, what)
        return data

    async def run_thread(self, input: Any, config: Mapping[str, Any] | None,
                         options: Mapping[str, Any], **kw: Any) -> RunResult:
        """One run on the thread `config` names, as the CLI and the Server API send it
        (`ainvoke` and `astream` do too): `input` (a Command to resume), `options` the
        invocation's (stream_mode, interrupt_before, ...), `kw` how the run is sent
        (`run_id`, `record` of the Server API, `background`, `stream`, `stream_to`,
        `multitask`, `webhook`, ...). Its RunResult: values, interrupts, status.
        Sent again once a thread record that was still completing has closed (a thread
        the Server API created just before: its record takes no run).

        A caller that is cancelled while it waits (a cancelled `ainvoke`, an `astream`
        left early) cancels the run too: its node activities are asked to stop, and the
        thread stays at its last checkpoint (`ainvoke(None)` goes on from there)."""
        kw["run_id"] = kw.get("run_id") or uuid.uuid4().hex  # to name the run to cancel
        with self.gc.trace(self.name, _thread_id(config), input) as finish:
            try:
                try:
                    result = await self._run_once(input, config, options, **kw)
                except _RecordOpen:
                    await self._adopt(_thread_id(config), kw.get("record"))
                    result = await self._run_once(input, config, options, **kw)
            except (asyncio.CancelledError, WorkflowUpdateRPCTimeoutOrCancelledError) as exc:
                # temporalio reports a cancelled wait for an update as the latter
                task = asyncio.current_task()
                if not (isinstance(exc, asyncio.CancelledError)
                        or (task is not None and task.cancelling())):
                    raise
                if not kw.get("background"):
                    await asyncio.shield(self.cancel_run(config, kw["run_id"]))
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise asyncio.CancelledError() from exc
            finish(result)
            return result

    async def cancel_run(self, config: Mapping[str, Any] | None, run_id: str) -> None:
        """Ask the thread to stop the run `run_id` (keeping what it wrote), if it still
        runs or waits its turn; nothing if it is over."""
        handle = self.gc.client.get_workflow_handle(self.gc.workflow_id(_thread_id(config)))
        with contextlib.suppress(RPCError, WorkflowUpdateFailedError):
            await handle.execute_update("cancel_run", args=[run_id, "interrupt"])

    async def _adopt(self, tid: str, record: Mapping[str, Any] | None = None) -> None:
        """The thread is a record made before its first run (`POST /threads`): ask it to
        become this graph's thread (it continues as new as its GraphWorkflow), and wait
        until it has. A record of an earlier version completes by itself instead."""
        handle = self.gc.client.get_workflow_handle(self.gc.workflow_id(tid))
        with contextlib.suppress(RPCError):  # closed already: the call goes on as usual
            await handle.signal("adopt", args=[self.start_request(tid, None),
                                               self._memo({}, record)["metadata"]])
        deadline = asyncio.get_running_loop().time() + RECORD_ADOPT_TIMEOUT
        while asyncio.get_running_loop().time() < deadline:
            try:
                desc = await handle.describe()
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
                return
            if (desc.workflow_type != "ThreadRecord"
                    or desc.status != WorkflowExecutionStatus.RUNNING):
                return
            await asyncio.sleep(0.02)

    async def _run_once(self, input: Any, config: Mapping[str, Any] | None,
                        options: Mapping[str, Any], *, stream: bool = False,
                        stream_to: str = "",
                   accepted: Callable[[str], None] | None = None, run_id: str | None = None,
                   record: Mapping[str, Any] | None = None, multitask: str = "",
                   background: bool = False, webhook: str = "", after_seconds: float = 0,
                   webhook_options: Mapping[str, Any] | None = None,
                   thread_metadata: Mapping[str, Any] | None = None,
                   delete_after: bool = False) -> RunResult:
        """Invoke the thread and wait for the run to stop. `accepted` is told the workflow
        run id once the workflow has taken the invocation (a live reader starts then).

        `run_id` names the run (the invoke update's id: join and cancel find it by it),
        `record` is kept as the run's record (the Server API's run fields), `multitask`
        says what happens to runs already on the thread (InvokeRequest.multitask), and
        `background` returns a "running" RunResult as soon as the workflow took the run;
        the run is POSTed to `webhook` when it ends, and starts `after_seconds` late.
        A thread the run starts has `thread_metadata` (an owner an auth handler stamped);
        `delete_after`: the thread is deleted once the run has ended (a stateless run)."""
        checkpoint_id, subgraph_checkpoints = state.run_from(config)
        if options.get("control") is not None:
            raise TypeError("control= (a RunControl) drains runs in this process: a thread on "
                            "Temporal keeps running in its workflow. Cancel the caller (the "
                            "run stops at its last checkpoint) or use the Server API's cancel.")
        if is_langgraph_value(input):  # LangGraph's Command, from code ported as is
            from graphrun.bridge.run import to_graphrun

            input = to_graphrun(input)
        tid = _thread_id(config)
        configurable = {k: v for k, v in ((config or {}).get("configurable") or {}).items()
                        if k not in ("checkpoint_id", "checkpoint_ns", "checkpoint_map")}
        req = InvokeRequest(input=self._send(input, "the input"),
                            checkpoint_id=checkpoint_id,
                            subgraph_checkpoints=subgraph_checkpoints,
                            step_timeout=self.step_timeout,
                            config={"configurable": serde.dumps(configurable),
                                    **{k: config[k] for k in ("recursion_limit",
                                                              "max_concurrency")
                                       if config and k in config}},
                            stream=stream, stream_to=stream_to,
                            stream_modes=_names(options.get("stream_mode")) or [],
                            interrupt_before=_names(options.get("interrupt_before")),
                            interrupt_after=_names(options.get("interrupt_after")),
                            context=self._send(options.get("context"), "the context"),
                            run=dict(record or {}), multitask=multitask, webhook=webhook,
                            webhook_options=dict(webhook_options or {}),
                            delete_after=delete_after,
                            after_seconds=after_seconds,
                            callbacks=options.get("callbacks") or "",
                            messages_v2=bool(options.get("messages_v2")))
        if background:
            accepted = accepted or (lambda _: None)
        wid = self.gc.workflow_id(tid)
        try:
            if input is None or isinstance(input, Command):
                # Usually answers a paused, running thread: one call.
                try:
                    handle = self.gc.client.get_workflow_handle(wid)
                    update = await handle.start_update(
                        "invoke", req, id=run_id, result_type=RunResult,
                        wait_for_stage=(WorkflowUpdateStage.ACCEPTED if accepted
                                        else WorkflowUpdateStage.COMPLETED))
                    if accepted:
                        accepted(update.workflow_run_id or "")
                    if background:
                        return await _taken(update)
                    result: RunResult = await update.result()
                    return result
                except RPCError as exc:
                    if exc.status != RPCStatusCode.NOT_FOUND:
                        raise
            else:
                # New input: one call starts a new thread or reaches a running one; only
                # a thread whose run finished is refused, and is then seeded below.
                try:
                    started: RunResult = await self._start_with(
                        "invoke", [req], RunResult, tid, None,
                        WorkflowIDReusePolicy.REJECT_DUPLICATE, accepted,
                        update_id=run_id, memo=self._memo(thread_metadata or {}, record),
                        background=background)
                    return started
                except WorkflowAlreadyStartedError:
                    pass
            finished, metadata = await self._prior(wid)
            if finished is None and (input is None or isinstance(input, Command)):
                # Never started: there is nothing to continue, so start no workflow.
                raise (errors.EmptyInputError if input is None else errors.InvalidResumeError)(
                    f"thread '{tid}' was never started: invoke it with the graph's input "
                    f"first.")
            if finished is not None and input is None and req.checkpoint_id is None:
                done = await self._finished_result(finished, tid)
                if done is not None:
                    return done  # read without fetching the whole thread
            seed, runs = (await self._thread_of(finished), await self._runs_of(finished)
                          ) if finished is not None else (None, [])
            seeded: RunResult = await self._start_with(
                "invoke", [req], RunResult, tid, seed, WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                accepted, update_id=run_id, memo=self._memo(metadata, record), runs=runs,
                background=background)
            return seeded
        except WorkflowUpdateFailedError as exc:
            if _unhandled(exc):
                raise _RecordOpen() from exc
            raise as_graphrun_error(exc) from exc

    def _memo(self, metadata: Mapping[str, Any], record: Mapping[str, Any] | None
              ) -> dict[str, Any]:
        """The memo a new workflow run of the thread starts with: the thread's metadata
        so far, stamped with its graph (and the assistant of its first run)."""
        stamped = {"graph_id": self.name, **dict(metadata)}
        if record and record.get("assistant_id"):
            stamped.setdefault("assistant_id", record["assistant_id"])
        return {"metadata": stamped}

    async def _start_with(self, update: str, args: list[Any], result_type: type, tid: str,
                          seed: dict[str, Any] | None, reuse: WorkflowIDReusePolicy,
                          accepted: Callable[[str], None] | None = None, *,
                          update_id: str | None = None, memo: dict[str, Any] | None = None,
                          runs: list[dict[str, Any]] | None = None,
                          background: bool = False) -> Any:
        """Send `update`, starting the thread's workflow (seeded) if none is running."""
        if seed is None and self.gc.default_ttl is not None:
            memo = {**(memo or {}), "ttl": self.gc.default_ttl.model_dump()}
        op: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
            "GraphWorkflow", self.start_request(tid, seed, runs),
            id=self.gc.workflow_id(tid), task_queue=self.gc.task_queue, memo=memo,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING, id_reuse_policy=reuse,
            search_attributes=self.gc.thread_attributes(
                self.name, "running", (memo or {}).get("metadata")))
        try:
            if accepted is None:
                return await self.gc.client.execute_update_with_start_workflow(
                    update, args=args, id=update_id, start_workflow_operation=op,
                    result_type=result_type)
            handle = await self.gc.client.start_update_with_start_workflow(
                update, args=args, id=update_id, start_workflow_operation=op,
                result_type=result_type, wait_for_stage=WorkflowUpdateStage.ACCEPTED)
            accepted(handle.workflow_run_id or "")
            if background:
                return await _taken(handle)
            return await handle.result()
        except WorkflowAlreadyStartedError:
            with contextlib.suppress(WorkflowAlreadyStartedError):
                await op.workflow_handle()  # the start's own copy of the error: consume it
            raise
        except RPCError as exc:
            if "StartDeduped" not in str(exc) or update_id is None:
                raise
            # A retry of this very call (under load) found the workflow its first attempt
            # started: the update, named, goes to that workflow (at most once, by its id).
            with contextlib.suppress(RPCError):
                await op.workflow_handle()
            handle = self.gc.client.get_workflow_handle(self.gc.workflow_id(tid))
            if accepted is None:
                return await handle.execute_update(update, args=args, id=update_id,
                                                   result_type=result_type)
            started = await handle.start_update(update, args=args, id=update_id,
                                                result_type=result_type,
                                                wait_for_stage=WorkflowUpdateStage.ACCEPTED)
            accepted(started.workflow_run_id or "")
            if background:
                return await _taken(started)
            return await started.result()

    def start_request(self, tid: str, seed: dict[str, Any] | None,
                      runs: list[dict[str, Any]] | None = None) -> StartRequest:
        """The GraphWorkflow input of thread `tid`: new (`seed` None) or seeded with a
        thread's checkpoints (and its run records)."""
        ttl = self.gc.default_ttl if seed is None else None  # a new thread's
        return StartRequest(graph=self.name, thread_id=tid, thread=seed,
                            ttl=None if ttl is None else ttl.model_dump(),
                            max_history=self.gc.max_history,
                            history_event_limit=self.gc.history_event_limit,
                            search_attributes=self.gc.search_attributes,
                            upsert_changes_only=self.gc.search_attributes, runs=runs or [],
                            index_metadata=self.gc.index_metadata)

    async def _prior(self, wid: str) -> tuple[WorkflowHandle[Any, Any] | None, dict[str, Any]]:
        """The thread's last workflow run if it is a GraphWorkflow that completed (its
        state seeds the next run), and the thread's metadata (the memo's, whatever the
        run: a thread created by the Server API before its first run has only that)."""
        handle = self.gc.client.get_workflow_handle(wid, result_type=ThreadResult)
        try:
            desc = await handle.describe()
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return None, {}
            raise
        metadata = (await desc.memo()).get("metadata") or {}
        done = (desc.status == WorkflowExecutionStatus.COMPLETED
                and desc.workflow_type == "GraphWorkflow")
        return (handle if done else None), dict(metadata) if isinstance(metadata, dict) else {}

    @staticmethod
    async def _runs_of(handle: WorkflowHandle[Any, Any]) -> list[dict[str, Any]]:
        """The run records a completed run hands on (none from versions before them)."""
        result: ThreadResult = await handle.result()
        return list(result.runs)

    @staticmethod
    async def _thread_of(handle: WorkflowHandle[Any, Any]) -> dict[str, Any]:
        # The whole thread, from the closed run's query (a worker replays it): the run's
        # result keeps only its last checkpoint, to keep history small.
        try:
            thread: dict[str, Any] = await handle.query("thread")
            return thread
        except WorkflowQueryFailedError:  # a run of a version without that query
            result: ThreadResult = await handle.result()
            return result.thread

    @staticmethod
    async def _finished_result(handle: WorkflowHandle[Any, Any], tid: str
                               ) -> RunResult | None:
        """`invoke(None)` on a finished thread with nothing left to run: its final state,
        as in-process and in LangGraph, and no new run. None when there is something to
        run (what an `update_state` after the end scheduled)."""
        snap = await handle.query("get_state", args=[None, False, None])
        if snap.get("next"):
            return None
        if not ((snap.get("config") or {}).get("configurable") or {}).get("checkpoint_id"):
            # Its only run was refused before it made a checkpoint.
            raise errors.EmptyInputError(f"thread '{tid}' was never started: invoke it with "
                                         f"the graph's input first.")
        return RunResult(status="done", values=snap.get("values"))

    @staticmethod
    def raise_failure(result: RunResult) -> None:
        """Raise the graphrun error of a run that failed, or whose state was too large to
        send back."""
        if result.error and result.error.get("type") == "PayloadTooLargeError":
            raise errors.InputLimitError(result.error.get("message", ""))
        if result.status == "failed" and result.error:
            e = result.error
            if e.get("error_type") == "StepTimeoutError":  # a TimeoutError, as in-process
                raise errors.StepTimeoutError(e.get("error_message", ""))
            if e.get("type") == "NodeFailedError":
                raise errors.NodeFailedError(e.get("node", "?"), e.get("error_type", ""),
                                             e.get("error_message", ""))
            raise _ERRORS.get(e.get("type", ""), errors.GraphrunError)(e.get("message", ""))

    def _output(self, result: RunResult) -> Any:
        self.raise_failure(result)
        types = self.types
        out = serde.loads(result.values, types)
        if out is None:
            out = {}
        if result.interrupts:
            # A state that is not a dict gives way to the interrupts (LangGraph).
            out = {**(out if isinstance(out, dict) else {}),
                   INTERRUPT: [serde.interrupt_from_json(i, types) for i in result.interrupts]}
        return out

    async def ainvoke(self, input: Any, config: Mapping[str, Any] | None = None, *,
                      version: str = "v1", **options: Any) -> Any:
        """Run the thread's graph until it ends or pauses; the thread lives on Temporal.

        Takes `interrupt_before=` / `interrupt_after=` like the compiled graph, and
        `version="v2"` (a `GraphOutput`)."""
        config = self.merged_config(config)
        if options.get("stream_mode", "values") != "values":  # its chunks, as LangGraph's
            return [part async for part in self.astream(input, config, version=version,
                                                        **options)]
        run = await self._start_callbacks(input, config)
        if run is None:
            result = await self.run_thread(input, config, options)
        else:  # the callbacks hear the nodes' runs: read the run live
            async for item in self._heard(run, input, config, {**options, "stream_mode": []}):
                result = item
        if version == "v2":
            self.raise_failure(result)
            values = serde.loads(result.values, self.types)
            return graph_output(self.spec, {} if values is None else values, [
                serde.interrupt_from_json(i, self.types) for i in result.interrupts])
        return self._output(result)

    def invoke(self, input: Any, config: Mapping[str, Any] | None = None, **kw: Any
               ) -> Any:
        return asyncio.run(self.ainvoke(input, config, **kw))

    async def astream(self, input: Any, config: Mapping[str, Any] | None = None, *,
                      stream_mode: str | Sequence[str] = "updates", subgraphs: bool = False,
                      version: str = "v1", **options: Any) -> AsyncIterator[Any]:
        """The run's chunks as the workflow and its nodes make them (a live stream;
        see graphrun.stream). A failed run raises once its chunks are out.
        `version="v2"` yields LangGraph's `StreamPart` dicts."""
        config = self.merged_config(config)
        options = {**options, "stream_mode": stream_mode}
        run = await self._start_callbacks(input, config)
        items = (self.live_run(input, config, options) if run is None
                 else self._heard(run, input, config, options))
        async for item in items:
            if isinstance(item, RunResult):
                self._output(item)  # a failed run raises, as in-process
            elif version == "v2":
                for part in stream_parts([item], stream_mode, subgraphs, self.spec):
                    yield part
            else:
                for chunk in stream_chunks([item], stream_mode, subgraphs):
                    yield chunk

    def stream(self, input: Any, config: Mapping[str, Any] | None = None, **options: Any
               ) -> Iterator[Any]:
        """`astream`'s chunks, from sync code (an event loop of its own, as `invoke`)."""
        loop = asyncio.new_event_loop()
        chunks = self.astream(input, config, **options).__aiter__()
        try:
            while True:
                try:
                    yield loop.run_until_complete(chunks.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            loop.run_until_complete(chunks.aclose())
            loop.close()

    async def _start_callbacks(self, input: Any, config: Mapping[str, Any] | None
                               ) -> Any:
        """The graph's run under the config's callbacks, or None when none listen. With
        this client tracing to LangSmith (graphrun.tracing), LangChain's own LangSmith
        tracer is left out: the trace is already sent, from the workers."""
        traced = self.gc.tracing is not None and any(
            b.name == "langsmith" for b in self.gc.tracing.backends)
        spec = self.spec  # the graph's own run name where this process knows it
        name = (getattr(spec, "run_name", None) or spec.name) if spec is not None else self.name
        return await callbacks.astart_graph(name, input, config, langsmith=not traced)

    async def _heard(self, run: Any, input: Any, config: Mapping[str, Any] | None,
                     options: Mapping[str, Any]) -> AsyncIterator[Any]:
        """`live_run` with the nodes' callback events relayed to the graph's run `run`
        (graphrun.relay); ends it with the run's output, or its error."""
        replay = relay.Replay.under(run)
        relayed = {**options, "callbacks": "stream" if callbacks.streams(run) else "runs"}
        try:
            async for item in self.live_run(input, config, relayed):
                if isinstance(item, RunResult):
                    self.raise_failure(item)
                    values = serde.loads(item.values, self.types)
                    await run.aend({} if values is None else values)
                    yield item
                    return
                if item[-2] == stream.EVENTS:  # for the handlers, not a chunk
                    await replay(item[-1])
                    continue
                yield item
        except GeneratorExit:
            raise
        except BaseException as exc:
            await run.aerror(exc)
            raise

    async def live_run(self, input: Any, config: Mapping[str, Any] | None,
                       options: Mapping[str, Any], decode: Callable[[Any], Any] | None = None
                       ) -> AsyncIterator[Any]:
        """Each event of the run as it is published, then the run's RunResult. Events
        are decoded into the graph's declared types, or by `decode` (the CLI: plain JSON)."""
        decode = decode or (lambda data: serde.loads(data, self.types))
        tid = _thread_id(config)
        wid = self.gc.workflow_id(tid)
        start_run, start = await self.stream_end(wid)
        stream_id = uuid.uuid4().hex
        taken: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def accepted(run_id: str) -> None:
            if not taken.done():
                taken.set_result(run_id)

        run = asyncio.create_task(self.run_thread(input, config, options, stream=True,
                                                  stream_to=stream_id, accepted=accepted))
        try:
            waits: list[asyncio.Future[Any]] = [taken, run]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if taken.done():
                run_id = taken.result()
                handle = self.gc.client.get_workflow_handle(wid, run_id=run_id or None)
                offset = start if run_id == start_run else 0  # a new run's log starts at 0
                async for _, event in stream.follow(self.gc.client, handle, run,
                                                    from_offset=offset, stream_id=stream_id,
                                                    decode=decode):
                    yield event
            result = await run
        finally:
            if not run.done():
                run.cancel()
        for event in decode(result.events) or []:  # a run the workflow did not stream live
            yield tuple(event)
        yield result

    async def stream_end(self, wid: str) -> tuple[str | None, int]:
        """The running workflow's run id and the end of its live stream (0 if none)."""
        handle = self.gc.client.get_workflow_handle(wid)
        try:
            desc = await handle.describe()
            if desc.status != WorkflowExecutionStatus.RUNNING:
                return None, 0
            end = await handle.query("__temporal_workflow_stream_offset", result_type=int)
            return desc.run_id, int(end)
        except (RPCError, WorkflowQueryFailedError):
            return None, 0

    async def ajoin_stream(self, config: Mapping[str, Any], *, from_offset: int = 0,
                           stream_mode: str | Sequence[str] = "updates",
                           subgraphs: bool = False) -> AsyncIterator[tuple[int, Any]]:
        """Read a thread's live stream from `from_offset`: (offset, chunk) pairs, until
        the streamed run in progress there stops. A reader that lost its connection
        passes the last offset it saw + 1 and goes on with no gap and no repeat."""
        handle = self.gc.client.get_workflow_handle(self.gc.workflow_id(_thread_id(config)))
        async for offset, event in stream.read(
                self.gc.client, handle, from_offset=from_offset, stream_id=None,
                decode=lambda data: serde.loads(data, self.types)):
            for chunk in stream_chunks([event], stream_mode, subgraphs):
                yield offset, chunk

    async def aget_state(self, config: Mapping[str, Any], *, subgraphs: bool = False
                         ) -> StateSnapshot:
        tid = _thread_id(config)
        cid = ((config or {}).get("configurable") or {}).get("checkpoint_id")
        handle = self.gc.client.get_workflow_handle(self.gc.workflow_id(tid))
        try:
            data = await handle.query("get_state", args=[cid, subgraphs, _subgraph(config)])
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:
                return StateSnapshot(values={}, next=(), config={"configurable": {
                    "thread_id": tid}}, metadata=None, created_at=None, parent_config=None,
                    tasks=())
            raise
        snapshot: StateSnapshot = serde.snapshot_from_json(data, self.types)
        return snapshot

    async def aget_state_history(self, config: Mapping[str, Any], *, limit: int | None = None,
                                 before: Mapping[str, Any] | None = None, **_: Any
                                 ) -> AsyncIterator[StateSnapshot]:
        tid = _thread_id(config)
        bid = ((before or {}).get("configurable") or {}).get("checkpoint_id")
        handle = self.gc.client.get_workflow_handle(self.gc.workflow_id(tid))
        types = self.types
        for item in await handle.query("get_state_history",
                                       args=[limit, bid, _subgraph(config)]):
            yield serde.snapshot_from_json(item, types)

    async def aupdate_state(self, config: Mapping[str, Any], values: Any,
                            as_node: str | None = None) -> dict[str, Any]:
        cid = ((config or {}).get("configurable") or {}).get("checkpoint_id")
        return await self._update(config, "update_state",
                                  [self._send(values, "update_state values"), as_node, cid])

    async def abulk_update_state(self, config: Mapping[str, Any],
                                 supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
        """Apply `StateUpdate`s, one checkpoint per superstep (LangGraph's)."""
        cid = ((config or {}).get("configurable") or {}).get("checkpoint_id")
        steps = [list(step) for step in supersteps]
        return await self._update(config, "bulk_update_state",
                                  [self._send(steps, "bulk_update_state values"), cid])

    def bulk_update_state(self, config: Mapping[str, Any],
                          supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
        return asyncio.run(self.abulk_update_state(config, supersteps))

    async def _update(self, config: Mapping[str, Any], update: str, args: list[Any]
                      ) -> dict[str, Any]:
        c = (config or {}).get("configurable") or {}
        if c.get("checkpoint_ns"):  # a subgraph's own thread: it answers the new config
            bulk = update == "bulk_update_state"
            update, args = "update_subgraph_state", [SubgraphUpdate(
                values=args[0], as_node=None if bulk else args[1], bulk=bulk,
                checkpoint_ns=c["checkpoint_ns"], checkpoint_id=c.get("checkpoint_id"),
                checkpoint_map={k: str(v) for k, v in (c.get("checkpoint_map") or {}).items()
                                if v})]
        with self.gc.trace(self.name, _thread_id(config), {"values": args[0]}, what=update):
            try:
                return await self._update_once(config, update, args)
            except _RecordOpen:
                await self._adopt(_thread_id(config))
                return await self._update_once(config, update, args)

    async def _update_once(self, config: Mapping[str, Any], update: str, args: list[Any]
                           ) -> dict[str, Any]:
        tid = _thread_id(config)
        wid = self.gc.workflow_id(tid)
        answer: type = dict if update == "update_subgraph_state" else str
        try:
            try:
                new_id = await self.gc.client.get_workflow_handle(wid).execute_update(
                    update, args=args, result_type=answer)
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:
                    raise
                # The thread's run finished (or it never started): as in LangGraph, the
                # update applies to its last state, in a new run seeded with it.
                finished, metadata = await self._prior(wid)
                seed, runs = (await self._thread_of(finished), await self._runs_of(finished)
                              ) if finished is not None else (None, [])
                new_id = await self._start_with(update, args, answer, tid, seed,
                                                WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                                                memo=self._memo(metadata, None), runs=runs)
        except WorkflowUpdateFailedError as exc:
            if _unhandled(exc):
                raise _RecordOpen() from exc
            raise as_graphrun_error(exc) from exc
        if isinstance(new_id, dict):
            return new_id
        return {"configurable": {"thread_id": tid, "checkpoint_ns": "", "checkpoint_id": new_id}}

    def get_state(self, config: Mapping[str, Any]) -> StateSnapshot:
        return asyncio.run(self.aget_state(config))

    def get_graph(self, config: Mapping[str, Any] | None = None, *,
                  xray: int | bool = False) -> Any:
        """The graph's drawing (LangChain's `Graph`, as the compiled graph's `get_graph`),
        when this process has the graph: a worker here serves it (`create_worker`)."""
        graph = registry.find(self.name)
        if graph is None:
            raise errors.GraphNotFoundError(
                f"cannot draw graph {self.name!r}: it is not served in this process. Draw "
                f"the compiled graph itself (graph.get_graph()), or `graphrun graph "
                f"module:attr` from the command line.")
        return graph.get_graph(config, xray=xray)

    async def aget_graph(self, config: Mapping[str, Any] | None = None, *,
                         xray: int | bool = False) -> Any:
        return self.get_graph(config, xray=xray)
