"""graphrun's metrics, recorded through Temporal's metric meter.

They go wherever the worker's `temporalio.runtime.Runtime` sends Temporal's own SDK
metrics: a Prometheus endpoint (`prometheus_runtime`, `graphrun worker --metrics-bind`),
OpenTelemetry, or a MetricBuffer. Without metrics configured they cost nothing.

    graphrun_runs{graph, status}                 counter: invocations of threads, by how
                                                 they ended (done, interrupted, failed,
                                                 cancelled, refused)
    graphrun_interrupts{graph}                   counter: questions asked (interrupt())
    graphrun_node_failures{graph, node, error_type}
                                                 counter: nodes that failed for good (their
                                                 retries used up)
    graphrun_node_duration{graph, node, outcome} histogram, seconds: one node attempt,
                                                 outcome ok | interrupted | error
    graphrun_interrupts_waiting{graph}           gauge: threads paused on a question now
                                                 (from Temporal's visibility, every few
                                                 seconds; see `report_waiting`)

Workflow-side metrics use `workflow.metric_meter()`, which records nothing while a
workflow replays history, so a replayed thread is not counted twice. Temporal adds its
own labels (namespace, task_queue, workflow_type or activity_type).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

import temporalio.activity
import temporalio.worker
import temporalio.workflow
from temporalio.client import Client
from temporalio.exceptions import ActivityError, ApplicationError

RUNS = "graphrun_runs"
INTERRUPTS = "graphrun_interrupts"
NODE_FAILURES = "graphrun_node_failures"
NODE_DURATION = "graphrun_node_duration"
INTERRUPTS_WAITING = "graphrun_interrupts_waiting"
WORKFLOW_TYPE = "GraphWorkflow"


def prometheus_runtime(bind_address: str) -> Any:
    """A temporalio Runtime that serves Temporal's and graphrun's metrics for Prometheus at
    http://<bind_address>/metrics. Connect the worker's client with ``runtime=`` it."""
    from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

    return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(
        bind_address=bind_address, durations_as_seconds=True)))


class GraphMetrics(temporalio.worker.Interceptor):
    """Worker interceptor recording graphrun's metrics (create_worker adds it)."""

    def intercept_activity(self, next: temporalio.worker.ActivityInboundInterceptor
                           ) -> temporalio.worker.ActivityInboundInterceptor:
        return _ActivityMetrics(next)

    def workflow_interceptor_class(self, input: temporalio.worker.WorkflowInterceptorClassInput
                                   ) -> type[temporalio.worker.WorkflowInboundInterceptor]:
        return _WorkflowMetrics


class _ActivityMetrics(temporalio.worker.ActivityInboundInterceptor):
    async def execute_activity(self, input: temporalio.worker.ExecuteActivityInput) -> Any:
        info = temporalio.activity.info()
        if info.activity_type != "run_node" or not input.args:
            return await super().execute_activity(input)
        call = input.args[0]
        labels = {"graph": str(getattr(call, "graph", "")), "node": str(getattr(call, "node", ""))}
        start = time.monotonic()
        outcome = "error"
        try:
            result = await super().execute_activity(input)
            outcome = "interrupted" if getattr(result, "interrupts", None) else "ok"
            return result
        finally:
            with contextlib.suppress(Exception):  # a metric never fails a node
                temporalio.activity.metric_meter().create_histogram_float(
                    NODE_DURATION, "Time one node attempt took", "s").record(
                    time.monotonic() - start, {**labels, "outcome": outcome})


class _WorkflowMetrics(temporalio.worker.WorkflowInboundInterceptor):
    def init(self, outbound: temporalio.worker.WorkflowOutboundInterceptor) -> None:
        self._meters: dict[str, Any] = {}
        self._graph: bool | None = None
        self._waiting: set[asyncio.Future[None]] = set()
        super().init(_OutboundMetrics(outbound, self))

    @property
    def on(self) -> bool:
        if self._graph is None:
            self._graph = temporalio.workflow.info().workflow_type == WORKFLOW_TYPE
        return self._graph

    def counter(self, name: str, description: str) -> Any:
        if name not in self._meters:
            self._meters[name] = temporalio.workflow.metric_meter().create_counter(
                name, description)
        return self._meters[name]

    def graph(self) -> str:
        inst = temporalio.workflow.instance()
        return inst.graph_and_thread()[0] if hasattr(inst, "graph_and_thread") else ""

    def ended(self, result: Any, refused: bool = False) -> None:
        graph = self.graph()
        status = "refused" if refused else str(getattr(result, "status", "unknown"))
        self.counter(RUNS, "Invocations of threads, by how they ended").add(
            1, {"graph": graph, "status": status})
        asked = len(getattr(result, "interrupts", None) or ())
        if asked:
            self.counter(INTERRUPTS, "Questions asked by interrupt()").add(
                asked, {"graph": graph})

    async def handle_update_handler(self, input: temporalio.worker.HandleUpdateInput) -> Any:
        if input.update != "invoke" or not self.on:
            return await super().handle_update_handler(input)
        try:
            result = await super().handle_update_handler(input)
        except ApplicationError:
            self.ended(None, refused=True)
            raise
        self.ended(result)
        return result

    async def handle_signal(self, input: temporalio.worker.HandleSignalInput) -> None:
        if input.signal != "resume" or not self.on:
            await super().handle_signal(input)
            return
        inst = temporalio.workflow.instance()
        if not hasattr(inst, "invocations_taken"):  # not a thread's GraphWorkflow
            await super().handle_signal(input)
            return
        before = inst.invocations_taken()
        await super().handle_signal(input)
        number = inst.invocations_taken()
        if number == before:
            return

        async def wait() -> None:  # nothing waits for a signal's run: count it when done
            await temporalio.workflow.wait_condition(lambda: inst.result_of(number) is not None)
            self.ended(inst.result_of(number))

        task = asyncio.ensure_future(wait())
        self._waiting.add(task)  # kept until done (the loop holds tasks weakly)
        task.add_done_callback(self._waiting.discard)


class _OutboundMetrics(temporalio.worker.WorkflowOutboundInterceptor):
    def __init__(self, next: temporalio.worker.WorkflowOutboundInterceptor,
                 root: _WorkflowMetrics) -> None:
        super().__init__(next)
        self.root = root

    def _watch(self, input: Any, handle: Any) -> Any:
        if input.activity == "run_node" and input.args and self.root.on:
            call = input.args[0]
            labels = {"graph": str(getattr(call, "graph", "")),
                      "node": str(getattr(call, "node", ""))}

            def done(h: Any) -> None:
                if h.cancelled() or h.exception() is None:
                    return
                exc = h.exception()
                cause = exc.cause if isinstance(exc, ActivityError) else exc
                error_type = (cause.type if isinstance(cause, ApplicationError) and cause.type
                              else type(cause).__name__)
                self.root.counter(NODE_FAILURES, "Nodes that failed, retries used up").add(
                    1, {**labels, "error_type": error_type})

            handle.add_done_callback(done)
        return handle

    def start_activity(self, input: temporalio.worker.StartActivityInput) -> Any:
        return self._watch(input, super().start_activity(input))

    def start_local_activity(self, input: temporalio.worker.StartLocalActivityInput) -> Any:
        return self._watch(input, super().start_local_activity(input))


async def report_waiting(client: Client, graphs: Iterable[str], *, every: float = 15.0,
                         runtime: Any = None) -> None:
    """Set `graphrun_interrupts_waiting{graph}` every `every` seconds, until cancelled: the
    threads of each graph paused on a question, counted by Temporal's visibility (the
    same for every worker that reports it: aggregate with max, not sum)."""
    from temporalio.runtime import Runtime

    meter = (runtime or client.service_client.config.runtime or Runtime.default()).metric_meter
    gauge = meter.create_gauge(INTERRUPTS_WAITING, "Threads paused on a question")
    names = sorted(set(graphs))
    while True:
        for name in names:
            query = (f"WorkflowType = '{WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND "
                     f"GraphStatus = 'interrupted' AND GraphName = '{_quote(name)}'")
            with contextlib.suppress(Exception):  # a visibility hiccup skips a beat
                count = await client.count_workflows(query)
                gauge.set(count.count, {"graph": name})
        await asyncio.sleep(every)


@contextlib.asynccontextmanager
async def waiting_reporter(client: Client, graphs: Iterable[str], *, every: float = 15.0,
                           runtime: Any = None) -> AsyncIterator[None]:
    """`report_waiting` in the background while the block runs."""
    task = asyncio.ensure_future(report_waiting(client, graphs, every=every, runtime=runtime))
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace("'", "\\'")


__all__ = ["INTERRUPTS", "INTERRUPTS_WAITING", "NODE_DURATION", "NODE_FAILURES", "RUNS",
           "GraphMetrics", "prometheus_runtime", "report_waiting", "waiting_reporter"]
