"""Tracing graphs on Temporal: one trace per invocation, in LangSmith or OpenTelemetry.

A trace follows one invocation (an `ainvoke`, an `astream`, a resume) across processes:

    purchase                       the client's call (RemoteGraph, GraphClient.resume)
    └── GraphWorkflow              the thread's workflow running this invocation
        ├── agent                  a node: its activity, from scheduled to done
        │   └── ChatOpenAI         what the node calls (LangChain, @traceable, OTel spans)
        └── approve

Each invocation of a thread is its own trace, though one workflow runs them all: the
workflow side parents what it runs to the invocation it runs it for (the `invoke`
update or `resume` signal whose header carried the caller's context), not to the
workflow's start. A node is one run however often Temporal runs its activity: what an
attempt after a lost worker or a timeout does is nested under the same node run and
marked with its `attempt` (LangSmith: metadata and an "attempt N" marker run;
OpenTelemetry: one `RunActivity:run_node` span per attempt under the node's span).

Runs and spans made by workflow code have ids drawn from the workflow's deterministic
random (`workflow.new_random`), and nothing is sent while the workflow replays history:
a worker that replays a thread (cache eviction, restart, another worker) sends no run
twice, and ends the runs it picked up under the ids their children already name.

Headers carry trace context only, in the formats of Temporal's own integrations, so
their clients and workers join graphrun's traces and the other way round:
``_temporal-langsmith-context`` as `temporalio-langsmith` writes it (the LangSmith
dotted order, and the project in a baggage entry) and ``_tracer-data`` as
`temporalio.contrib.opentelemetry` writes it (W3C ``traceparent``). Never code, and no
state: inputs and outputs go to the tracing backend only.

    gc = await GraphClient.connect(tracing="langsmith")       # or "otel", "langsmith,otel"
    worker = create_worker(gc.client, graphs)                  # keeps the client's tracing
    create_worker(client, graphs, tracing=GraphTracing(LangSmithTracing(project_name="x")))

"auto" (the default of `create_worker` and `GraphClient`) turns LangSmith on when
``LANGSMITH_TRACING`` (or ``LANGCHAIN_TRACING_V2``) is true, and OpenTelemetry when
``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``) is set.

Modules: `base` (the Backend interface), `langsmith` and `otel` (the backends),
`interceptors` (the client, workflow and activity sides), `choose` (which backends).
"""

from __future__ import annotations

from graphrun.tracing.base import Backend
from graphrun.tracing.choose import (
    TracingLike,
    configure_otel_from_env,
    find,
    of_client,
    resolve,
    tracing_from_env,
    with_tracing,
)
from graphrun.tracing.interceptors import GraphTracing, node_metadata
from graphrun.tracing.langsmith import LANGSMITH_HEADER, LangSmithTracing
from graphrun.tracing.otel import OTEL_HEADER, OpenTelemetryTracing

__all__ = ["LANGSMITH_HEADER", "OTEL_HEADER", "Backend", "GraphTracing", "LangSmithTracing",
           "OpenTelemetryTracing", "TracingLike", "configure_otel_from_env", "find",
           "node_metadata", "of_client", "resolve", "tracing_from_env", "with_tracing"]
