"""Serving graphs on Temporal: `create_worker` and `create_replayer`."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from temporalio.client import Client
from temporalio.common import VersioningBehavior, WorkerDeploymentVersion
from temporalio.converter import DataConverter
from temporalio.worker import PollerBehaviorAutoscaling, Replayer, Worker, WorkerDeploymentConfig
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from graphrun import registry
from graphrun import tracing as tracing_mod
from graphrun.activities import delete_thread, route_update, run_node, send_webhook
from graphrun.activities.cron import run_cron
from graphrun.client import data_converter as _graphrun_data_converter
from graphrun.client import graphrun_converter, with_data_converter
from graphrun.metrics import GraphMetrics
from graphrun.serde import InputLimits
from graphrun.workflows import GraphWorkflow
from graphrun.workflows.records import AssistantRecord, CronRun
from graphrun.workflows.thread_record import ThreadRecord

# The thread's workflow, and the Server API's records: a thread before its first run,
# a user assistant, a cron's firing. Workers and replayers know them all.
WORKFLOWS = [GraphWorkflow, ThreadRecord, AssistantRecord, CronRun]


def as_graphrun(graph: Any, name: str) -> Any:
    """A LangGraph graph (e.g. from `create_agent`) converted with `from_langgraph`; its
    checkpointer is not used on Temporal, where the workflow keeps the thread."""
    from graphrun.bridge import from_langgraph, is_langgraph

    if not is_langgraph(graph):
        return graph
    if getattr(graph, "checkpointer", None) not in (None, True, False):
        warnings.warn(f"graphs[{name!r}]: the LangGraph graph's checkpointer is not used on "
                      f"Temporal; the workflow keeps the thread.", stacklevel=3)
    return from_langgraph(graph, name=name, checkpointer=None)


def _register(graphs: Mapping[str, Any], limits: InputLimits | None = None,
              store: Any = None, cache: Any = None, task_queue: str | None = None,
              executor: Any = None) -> None:
    if not graphs:
        raise ValueError("create_worker needs at least one graph: graphs={'name': graph}.")
    for name, graph in graphs.items():
        graph = as_graphrun(graph, name)
        if not hasattr(graph, "spec"):
            raise TypeError(f"graphs[{name!r}] is a {type(graph).__name__}, not a compiled "
                            f"graph. Pass builder.compile(name={name!r}).")
        registry.register(name, graph, limits, store, cache, task_queue, executor)
        if getattr(graph, "step_timeout", None):
            # A run's limits travel with the run, so replays read them from history.
            warnings.warn(f"graphs[{name!r}].step_timeout is not applied by workers: set "
                          f"RemoteGraph.step_timeout on the caller (it is sent with each "
                          f"run).", stacklevel=3)


_WARNED: set[str] = set()


def _warn_in_memory(name: str, store: Any) -> None:
    """Once per graph: a store in this process's memory is not shared with other workers,
    and is lost when the worker stops (LangGraph's InMemoryStore, or one like it)."""
    if store is None or "InMemory" not in type(store).__name__ or name in _WARNED:
        return
    _WARNED.add(name)
    warnings.warn(f"graphs[{name!r}] was compiled with an in-memory store "
                  f"({type(store).__name__}): on Temporal each worker process has its own "
                  f"copy, lost when it stops. Give the workers a shared store (e.g. "
                  f"LangGraph's PostgresStore): create_worker(..., store=...).", stacklevel=4)


def _payload_limits(limits: InputLimits | None, converter: DataConverter) -> InputLimits:
    """With external storage a large payload leaves history as a reference, so the
    workflow need not refuse it; without, Temporal's 2 MB limit stands."""
    limits = limits or InputLimits()
    if converter.external_storage is None:
        return limits
    return dataclasses.replace(limits, max_payload_bytes=None)


def _runner() -> SandboxedWorkflowRunner:
    # The workflow only runs graphrun's pure engine and the graphs' reducers; passing
    # modules through lets reducers and state classes from user modules be used as is.
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_all_modules())


# A graphrun thread waits for a person most of its life: a cached waiting thread holds
# ~0.1 MB to save one replay (~15 ms) when it resumes. Temporal's default is 1,000.
MAX_CACHED_THREADS = 500


def deployment_config(deployment_name: str, build_id: str, *,
                      pinned: bool = True) -> WorkerDeploymentConfig:
    """Temporal Worker Versioning for a graphrun worker: ``create_worker(...,
    deployment_config=deployment_config("billing", "2026-12-06.1"))``.

    Pinned (the default) suits graphrun's threads, which stay open for their whole life:
    a thread's run (an invocation, or a resume up to its next pause) runs on the worker
    version it started on, so a graph change never meets a run the old graph began. The
    thread moves to its deployment's current version between runs, by continue-as-new,
    when it next wakes (its next input, or `GraphClient.upgrade_threads`). With
    ``pinned=False`` (Temporal's auto-upgrade) threads move at their next workflow task,
    mid-run too, so a changed graph must replay the histories of runs in flight.
    """
    return WorkerDeploymentConfig(
        version=WorkerDeploymentVersion(deployment_name=deployment_name, build_id=build_id),
        use_worker_versioning=True,
        default_versioning_behavior=(VersioningBehavior.PINNED if pinned
                                     else VersioningBehavior.AUTO_UPGRADE))


def _autoscale_pollers(options: dict[str, Any]) -> None:
    """Workflow-task pollers that scale with the server's backlog, unless the caller chose.
    Temporal's fixed default (5 pollers, a fifth of them on the shared queue) leaves one
    poller for every workflow's first task: a burst of new threads then waits on one
    poll round trip at a time."""
    if not {"workflow_task_poller_behavior", "max_concurrent_workflow_task_polls"} & set(options):
        options["workflow_task_poller_behavior"] = PollerBehaviorAutoscaling()


def _interceptors(given: Any, chosen: tracing_mod.GraphTracing | None) -> list[Any]:
    """graphrun's metrics, its tracing (unless the client brings it), then the caller's."""
    out: list[Any] = [GraphMetrics()]
    if chosen is not None:
        out.append(chosen)
    return [*out, *(given or [])]


def create_worker(client: Client, graphs: Mapping[str, Any], *, task_queue: str = "graphrun",
                  limits: InputLimits | None = None, tracing: tracing_mod.TracingLike = "auto",
                  store: Any = None, cache: Any = None, node_threads: int | None = None,
                  **worker_options: Any) -> Worker:
    """A temporalio Worker that runs GraphWorkflow and the node activity for `graphs`.

    Args:
        client: any temporalio Client; its data converter is replaced by graphrun's,
            keeping its payload codec and external storage. To encrypt, connect with
            ``data_converter=graphrun.client.data_converter(encryption=keys)``
            (or use ``GraphClient.connect(..., encryption=keys).client``); to keep large
            payloads out of history, ``data_converter(external_storage=driver)`` or
            ``GraphClient.connect(..., external_storage=driver).client``.
        graphs: registered name -> compiled graph. Threads find their graph by this
            name, so keep it stable across deploys.
        task_queue: the queue GraphClient starts threads on.
        limits: the largest input, answer or update a thread takes (`InputLimits`;
            default 1 MB of JSON, 64 levels deep). Larger ones are refused before
            they are kept: an update by its validator, a signal as a refused resume.
            With external storage on the client, ``max_payload_bytes`` is off: large
            payloads then leave history as references.
        tracing: trace invocations, the workflow and nodes (graphrun.tracing): "langsmith",
            "otel", both ("langsmith,otel"), a GraphTracing, or None. "auto" (default)
            reads the environment (LANGSMITH_TRACING, OTEL_EXPORTER_OTLP_ENDPOINT). A client
            that traces already (GraphClient.connect(tracing=...)) gives the worker its
            tracing, and this is ignored.
        store: LangGraph's long-term memory store (any `BaseStore`, e.g. LangGraph's
            PostgresStore) the graphs' nodes and tasks get as `store`, `runtime.store`
            and `get_store()`. Default: each graph's `compile(store=...)`. It lives in the
            worker, never in workflow history; an in-memory store is this process's
            only (other workers have their own), so share one across workers.
        cache: LangGraph's cache (any `BaseCache`) for the nodes and tasks that have a
            `CachePolicy`. Default: each graph's `compile(cache=...)`. The node activity
            looks entries up and stores them, so a hit costs an activity but runs no
            node code; share one cache (e.g. LangGraph's RedisCache) so that every
            worker's threads hit what any of them stored.
        node_threads: threads for sync nodes (and sync subgraphs), this worker's own.
            Default: the event loop's default executor, as `asyncio.to_thread` (on
            Python 3.11, min(32, CPUs + 4) threads shared with the rest of the process).
            Async nodes run on the event loop and need none.
        **worker_options: passed to temporalio's Worker: ``max_concurrent_activities``
            (nodes at once), ``max_concurrent_workflow_tasks``, ``tuner`` (e.g.
            ``WorkerTuner.create_resource_based(...)``, instead of the two),
            ``graceful_shutdown_timeout`` (how long `shutdown()` lets running nodes
            finish before cancelling them; Temporal's default is none),
            ``deployment_config`` (Worker Versioning; see `deployment_config()`)...
            graphrun's defaults differ from Temporal's in two: ``max_cached_workflows``
            is 500 (threads kept in memory between their tasks, about 0.1 MB each;
            Temporal's default is 1,000), and
            workflow-task pollers autoscale (``PollerBehaviorAutoscaling``) unless
            ``workflow_task_poller_behavior`` or ``max_concurrent_workflow_task_polls``
            is given.

    graphrun's metrics (graphrun.metrics) are recorded through the client's Runtime.
    """
    client = with_data_converter(client)
    if node_threads is not None and node_threads < 1:
        raise ValueError(f"node_threads={node_threads}: at least 1")
    executor = (None if node_threads is None else ThreadPoolExecutor(
        node_threads, thread_name_prefix=f"graphrun-node-{task_queue}"))
    _register(graphs, _payload_limits(limits, client.data_converter), store, cache,
              task_queue, executor)
    for name in graphs if store is None else ():
        _warn_in_memory(name, registry.store(name))
    own = None if tracing_mod.of_client(client) is not None else tracing_mod.resolve(tracing)
    interceptors = _interceptors(worker_options.pop("interceptors", None), own)
    _autoscale_pollers(worker_options)
    worker_options.setdefault("max_cached_workflows", MAX_CACHED_THREADS)
    return Worker(client, task_queue=task_queue,
                  workflows=WORKFLOWS,
                  activities=[run_node, route_update, run_cron, send_webhook, delete_thread],
                  workflow_runner=_runner(), interceptors=interceptors, **worker_options)


def create_replayer(graphs: Mapping[str, Any], *, data_converter: DataConverter | None = None,
                    limits: InputLimits | None = None, tracing: tracing_mod.TracingLike = None,
                    **replayer_options: Any) -> Replayer:
    """A Replayer configured exactly like the worker, for replay tests of histories.

    Args:
        graphs: registered name -> compiled graph, as for `create_worker`.
        data_converter: to replay encrypted histories, or ones with externally stored
            payloads, the worker's converter, e.g. ``graphrun.client.data_converter(
            encryption=keys, external_storage=driver)``; its payload converter is
            replaced by graphrun's, its codec and storage kept. Default: the plain one.
        limits: as given to `create_worker` (they decide which signals are refused).
        tracing: as for `create_worker` (default none): replaying sends no run.
        **replayer_options: passed to temporalio's Replayer.

    The worker's interceptors (metrics, tracing) are in place, so a replay checks them too.
    """
    converter = graphrun_converter(data_converter or _graphrun_data_converter)
    _register(graphs, _payload_limits(limits, converter))  # decides as the worker did
    interceptors = _interceptors(replayer_options.pop("interceptors", None),
                                 tracing_mod.resolve(tracing))
    return Replayer(workflows=WORKFLOWS, data_converter=converter,
                    workflow_runner=_runner(), interceptors=interceptors, **replayer_options)
