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
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from datetime import UTC, datetime
from typing import Any, cast

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
)
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
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
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode, TLSConfig

from graphrun import callbacks, errors, lifetime, registry, relay, serde, stream, visibility
from graphrun import tracing as tracing_mod
from graphrun.connection import resolve
from graphrun.declared import DeclaredTypes
from graphrun.engine import stream_chunks
from graphrun.payloads import (
    RecordStart,
    ResumeSignal,
    RunResult,
    StartRequest,
    ThreadResult,
)
from graphrun.runnable import RunnableGraph, graph_output, stream_parts
from graphrun.serde import InputLimits
from graphrun.storage import StorageLike, storage_from
from graphrun.thread_handle import ThreadHandle, closed_runs, closed_thread, raise_failure
from graphrun.types import INTERRUPT, StateSnapshot


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


# How long upgrade_threads waits for a new current version to reach the task queues (30 s).
_ROUTING_POLLS = 150


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
                      tls: bool | TLSConfig | None = None, api_key: str | None = None,
                      profile: str | None = None, config_file: str | None = None,
                      max_history: int = 100, history_event_limit: int = 10_000,
                      encryption: Mapping[str, bytes] | str | PayloadCodec | None = None,
                      external_storage: StorageLike | None = None,
                      search_attributes: bool = True, types: Iterable[type] = (),
                      limits: InputLimits | None = None,
                      tracing: tracing_mod.TracingLike = "auto",
                      index_metadata: Sequence[str] | None = None,
                      default_ttl: lifetime.ThreadTTL | None = None,
                      **connect_options: Any) -> GraphClient:
        """Connect to Temporal as the `temporal` CLI does (`graphrun.connection`): the
        profile of a temporal.toml (`profile`, `config_file`, or $TEMPORAL_PROFILE and
        $TEMPORAL_CONFIG_FILE), the TEMPORAL_* environment over it (address, namespace,
        API key, TLS and mTLS certificates), then `target`, `namespace`, `tls` and
        `api_key` over both; localhost:7233 and "default" when none says.

        Takes the constructor's options (task_queue, id_prefix, max_history,
        history_event_limit, search_attributes, types, limits, index_metadata, default_ttl)
        and temporalio's `Client.connect` options.

        Args:
            tls: True or False to turn TLS on or off, or a temporalio `TLSConfig`
                (certificates as bytes); None (the default): as configured, and on with
                an API key.
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
        conn = resolve(address=target, namespace=namespace, api_key=api_key,
                       tls=None if isinstance(tls, TLSConfig) else tls, profile=profile,
                       config_file=config_file)
        options = conn.connect_options()
        if isinstance(tls, TLSConfig):
            options["tls"] = tls
        client = await Client.connect(
            **{**options, **connect_options},
            data_converter=data_converter(encryption=encryption,
                                          external_storage=external_storage))
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
                                        search_attributes=self.search_attributes,
                                        lives=True),
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

    async def upgrade_threads(self, deployment_name: str) -> list[str]:
        """Wake every open thread (and assistant) of this namespace pinned to a version of
        Worker Deployment `deployment_name` other than its current one, so that each
        moves to the current version: at once when idle or paused on an interrupt, after
        its run when one is under way. Threads that moved start their next run with the
        new graph; a paused one resumes its interrupted node there. Running it again
        wakes only those still behind. The workflow ids woken."""
        from temporalio.api.enums.v1 import RoutingConfigUpdateState
        from temporalio.api.workflowservice.v1 import DescribeWorkerDeploymentRequest

        if "'" in deployment_name or '"' in deployment_name:
            raise ValueError(f"deployment name {deployment_name!r} has a quote")
        request = DescribeWorkerDeploymentRequest(namespace=self.client.namespace,
                                                  deployment_name=deployment_name)
        # A new current version reaches the task queues a moment after it is set; a thread
        # woken before that would not see it.
        propagating = RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS
        for _ in range(_ROUTING_POLLS):
            info = (await self.client.workflow_service.describe_worker_deployment(
                request)).worker_deployment_info
            if info.routing_config_update_state != propagating:
                break
            await asyncio.sleep(0.2)
        current = info.routing_config.current_deployment_version
        if not current.build_id:
            raise ValueError(f"Worker Deployment {deployment_name!r} has no current version; "
                             f"set one with `temporal worker deployment set-current-version`")
        query = ("WorkflowType IN ('GraphWorkflow', 'ThreadRecord', 'AssistantRecord') "
                 "AND ExecutionStatus = 'Running' "
                 f"AND TemporalWorkerDeployment = '{deployment_name}' "
                 f"AND TemporalWorkerDeploymentVersion != "
                 f"'{deployment_name}:{current.build_id}'")
        woken = []
        async for wf in self.client.list_workflows(query):
            try:
                await self.client.get_workflow_handle(wf.id, run_id=wf.run_id).signal("upgrade")
            except RPCError as exc:
                if exc.status != RPCStatusCode.NOT_FOUND:  # it closed or moved meanwhile
                    raise
                continue
            woken.append(wf.id)
        return woken

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
                                                search_attributes=self.search_attributes,
                                                lives=True),
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
            seed, runs = await closed_thread(closed), await closed_runs(closed)
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

def _untraced(*_: Any) -> None:
    pass


def _quote(value: str) -> str:
    """A string literal of Temporal's list filter."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

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
    def spec(self) -> Any:
        """The graph's spec when this process serves it too (its schemas), else None."""
        graph = registry.find(self.name)
        return graph.spec if graph is not None else None

    @property
    def types(self) -> DeclaredTypes:
        """The classes results are rebuilt into: the client's, and the graph's if served here."""
        graph = registry.find(self.name)
        return self.gc.types | (graph.spec.types if graph is not None else ())

    def thread(self, config: Mapping[str, Any] | str | None) -> ThreadHandle:
        """The thread `config` names (or the thread of that id): run it, follow or join
        its stream, cancel a run, read and update its state."""
        if isinstance(config, str):
            config = {"configurable": {"thread_id": config}}
        return ThreadHandle(self, config)

    def encode(self, value: Any, what: str) -> Any:
        """`value` as sent to the thread's workflow, within the client's input limits."""
        data = serde.dumps(value)
        self.gc.limits.check(data, what)
        return data

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
                            index_metadata=self.gc.index_metadata, lives=True)

    @staticmethod
    def raise_failure(result: RunResult) -> None:
        """Raise the graphrun error of a run that failed, or whose state was too large to
        send back."""
        raise_failure(result)

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
            result = await self.thread(config).run(input, options)
        elif callbacks.streams(run):  # handlers that stream hear the nodes' runs live
            async for item in self._heard(run, input, config, {**options, "stream_mode": []}):
                result = item
        else:  # the others hear them once the run stops
            result = await self._told(run, input, config, options)
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
        items = (self.thread(config).live(input, options) if run is None
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
        chunks = cast(AsyncGenerator[Any, None], self.astream(input, config, **options).__aiter__())
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

    async def _told(self, run: Any, input: Any, config: Mapping[str, Any] | None,
                    options: Mapping[str, Any]) -> RunResult:
        """The run, then its callback events told to the handlers of the graph's run `run`
        (graphrun.relay: read by query, batched, so they add little to history); ends
        `run` with the run's output, or its error."""
        replay = relay.Replay.under(run)
        thread = self.thread(config)
        run_id = uuid.uuid4().hex
        try:
            result = await thread.run(input, {**options, "callbacks": "runs"}, run_id=run_id)
            for event in await thread.relayed(result, run_id):
                await replay(event)
            self.raise_failure(result)
        except BaseException as exc:
            await run.aerror(exc)
            raise
        values = serde.loads(result.values, self.types)
        await run.aend(values)
        return result

    async def _heard(self, run: Any, input: Any, config: Mapping[str, Any] | None,
                     options: Mapping[str, Any]) -> AsyncIterator[Any]:
        """`ThreadHandle.live` with the nodes' callback events relayed to the graph's run
        `run` (graphrun.relay); ends it with the run's output, or its error."""
        replay = relay.Replay.under(run)
        relayed = {**options, "callbacks": "stream" if callbacks.streams(run) else "runs"}
        try:
            async for item in self.thread(config).live(input, relayed):
                if isinstance(item, RunResult):
                    self.raise_failure(item)
                    values = serde.loads(item.values, self.types)
                    await run.aend(values)
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

    async def ajoin_stream(self, config: Mapping[str, Any], *, from_offset: int = 0,
                           stream_mode: str | Sequence[str] = "updates",
                           subgraphs: bool = False) -> AsyncIterator[tuple[int, Any]]:
        """Read a thread's live stream from `from_offset`: (offset, chunk) pairs, until
        the streamed run in progress there stops. A reader that lost its connection
        passes the last offset it saw + 1 and goes on with no gap and no repeat."""
        async for item in self.thread(config).join(from_offset=from_offset,
                                                   stream_mode=stream_mode,
                                                   subgraphs=subgraphs):
            yield item

    async def aget_state(self, config: Mapping[str, Any], *, subgraphs: bool = False
                         ) -> StateSnapshot:
        return await self.thread(config).state(subgraphs=subgraphs)

    async def aget_state_history(self, config: Mapping[str, Any], *, limit: int | None = None,
                                 before: Mapping[str, Any] | None = None, **_: Any
                                 ) -> AsyncIterator[StateSnapshot]:
        async for snapshot in self.thread(config).history(limit=limit, before=before):
            yield snapshot

    async def aupdate_state(self, config: Mapping[str, Any], values: Any,
                            as_node: str | None = None) -> dict[str, Any]:
        return await self.thread(config).update(values, as_node)

    async def abulk_update_state(self, config: Mapping[str, Any],
                                 supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
        """Apply `StateUpdate`s, one checkpoint per superstep (LangGraph's)."""
        return await self.thread(config).bulk_update(supersteps)

    def bulk_update_state(self, config: Mapping[str, Any],
                          supersteps: Sequence[Sequence[Any]]) -> dict[str, Any]:
        return asyncio.run(self.abulk_update_state(config, supersteps))

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
