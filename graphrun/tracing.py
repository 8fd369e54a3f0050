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
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import json
import logging
import os
import random
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from typing import Any, ClassVar, cast
from urllib.parse import quote, unquote

import temporalio.activity
import temporalio.client
import temporalio.converter
import temporalio.worker
import temporalio.workflow
from temporalio.api.common.v1 import Payload
from temporalio.exceptions import ActivityError, ApplicationError

from graphrun import registry
from graphrun.runner import ROUTE_SCOPE
from graphrun.serde import TAG

logger = logging.getLogger(__name__)

LANGSMITH_HEADER = "_temporal-langsmith-context"  # temporalio-langsmith's header
OTEL_HEADER = "_tracer-data"  # temporalio.contrib.opentelemetry's header
# Activities that run a graph's user code: a node (run_node) or the routing of an
# update_state (route_update). Others (webhooks, crons) are not traced as nodes.
NODE_ACTIVITIES = frozenset({"run_node", "route_update"})
WORKFLOW_TYPE = "GraphWorkflow"
_payloads = temporalio.converter.PayloadConverter.default


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def tracing_from_env(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The backends the environment asks for: ("langsmith", "otel"), either or none."""
    env = os.environ if env is None else env
    out = []
    if _truthy(env.get("LANGSMITH_TRACING")) or _truthy(env.get("LANGCHAIN_TRACING_V2")):
        out.append("langsmith")
    if env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        out.append("otel")
    return tuple(out)


# -- backends ---------------------------------------------------------------------------
@dataclasses.dataclass
class _Span:
    """A run or span opened by workflow code: its backend object, kept until it ends."""

    backend: Backend
    handle: Any


class Backend:
    """One tracing system. Client and activity sides trace live; the workflow side opens
    runs with deterministic ids and sends nothing while replaying."""

    name: ClassVar[str]
    header: ClassVar[str]

    def __init__(self) -> None:
        # Runs opened by workflow code are sent from one thread, in order (post before
        # patch), never from the workflow's thread: it must not block on I/O.
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _submit(self, fn: Callable[[], None]) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"graphrun-{self.name}")
        future = self._executor.submit(fn)
        future.add_done_callback(_log_failure)

    def drain(self) -> None:
        """Wait for what workflow code handed to the sending thread."""
        with self._lock:
            executor = self._executor
        if executor is not None:
            executor.submit(lambda: None).result(timeout=30)

    # client side: a live run around the call, current while it lasts
    def client_scope(self, name: str, metadata: dict[str, Any], inputs: Any
                     ) -> contextlib.AbstractContextManager[Callable[[Any, str | None], None]]:
        raise NotImplementedError

    def current_carrier(self) -> dict[str, str] | None:
        """The current context, to send in a header."""
        raise NotImplementedError

    # workflow side
    def wf_open(self, name: str, parent: Any, metadata: dict[str, Any], inputs: Any,
                rng: random.Random) -> Any:
        """A run under `parent` (a carrier from a header, a handle from wf_open, or None),
        with an id from `rng`; sent unless replaying."""
        raise NotImplementedError

    def wf_close(self, handle: Any, outputs: Any, error: str | None) -> None:
        raise NotImplementedError

    def wf_carrier(self, handle: Any) -> dict[str, str]:
        raise NotImplementedError

    # activity side: the node's user code runs inside this
    def activity_scope(self, carrier: dict[str, str] | None, name: str,
                       metadata: dict[str, Any], attempt: int
                       ) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    def route_scope(self, name: str, inputs: Any, tags: list[str]
                    ) -> contextlib.AbstractContextManager[Callable[[Any], None]]:
        """A routing function's run, inside its node's activity scope (LangGraph shows
        each as a chain run under its node): `finish(outputs)` records what it chose."""
        raise NotImplementedError

    def flush(self) -> None:
        self.drain()


def _log_failure(future: Future[None]) -> None:
    exc = future.exception()
    if exc is not None:
        logger.warning("graphrun tracing: sending a run failed: %s", exc)


def _replaying() -> bool:
    return temporalio.workflow.unsafe.is_replaying_history_events()


def _langsmith_api() -> Any:
    """langsmith's names, imported once: workflow code must not import (in the sandbox
    each import statement costs far more than the call it serves)."""
    from types import SimpleNamespace

    from langsmith import trace, tracing_context
    from langsmith.run_helpers import get_current_run_tree
    from langsmith.run_trees import RunTree, get_cached_client

    return SimpleNamespace(RunTree=RunTree, tracing_context=tracing_context, trace=trace,
                           get_current_run_tree=get_current_run_tree,
                           get_cached_client=get_cached_client)


def _otel_api() -> Any:
    """OpenTelemetry's names, imported once (see _langsmith_api)."""
    from types import SimpleNamespace

    from opentelemetry import context, trace
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    sdk: Any = None
    with contextlib.suppress(ImportError):  # the API alone: no workflow spans (see below)
        from opentelemetry.sdk.trace import TracerProvider as sdk
    return SimpleNamespace(context=context, trace=trace, SpanContext=SpanContext,
                           SpanKind=SpanKind, Status=Status, StatusCode=StatusCode,
                           TraceFlags=TraceFlags, SDKTracerProvider=sdk)


class LangSmithTracing(Backend):
    """LangSmith runs, through the `langsmith` client (LANGSMITH_API_KEY, LANGSMITH_ENDPOINT,
    LANGSMITH_PROJECT as usual). Chat models, tools and `@traceable` functions a node calls
    nest under the node's run, since the node runs inside it (langsmith's tracing context,
    which LangChain's tracer follows)."""

    name = "langsmith"
    header = LANGSMITH_HEADER

    def __init__(self, *, client: Any = None, project_name: str | None = None,
                 metadata: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self._ls = _langsmith_api()  # fails early without langsmith: graphrun[tracing]
        self._client = client
        self.project_name = project_name
        self.metadata = dict(metadata or {})

    @property
    def client(self) -> Any:
        if self._client is None:
            # LangChain's tracer uses the same cached client: one queue, one flush.
            self._client = self._ls.get_cached_client()
        return self._client

    def _context(self, parent: Any = None, metadata: dict[str, Any] | None = None
                 ) -> contextlib.AbstractContextManager[None]:
        kw: dict[str, Any] = {"enabled": True, "client": self.client}
        if self.project_name:
            kw["project_name"] = self.project_name
        if parent is not None:
            kw["parent"] = parent
        if metadata:
            kw["metadata"] = metadata
        return self._ls.tracing_context(**kw)  # type: ignore[no-any-return]

    def _new_run(self, parent: Any, name: str, *, run_id: uuid.UUID | None = None,
                 start_time: datetime | None = None, inputs: Any = None,
                 metadata: dict[str, Any] | None = None) -> Any:
        extra = {"metadata": {**self.metadata, **(metadata or {})}}
        kw: dict[str, Any] = {"run_type": "chain", "inputs": _as_inputs(inputs), "extra": extra}
        if start_time is not None:
            kw["start_time"] = start_time
        if parent is not None:
            return parent.create_child(name, run_id=run_id, **kw)
        if run_id is not None:
            kw["id"] = run_id
        if self.project_name:
            kw["project_name"] = self.project_name
        return self._ls.RunTree(name=name, ls_client=self.client, **kw)

    def _parent_from(self, carrier: Mapping[str, str] | None) -> Any:
        """The run a header names, as the parent of what the activity runs."""
        if not carrier:
            return None
        kw: dict[str, Any] = {"ls_client": self.client}
        if self.project_name:
            kw["project_name"] = self.project_name
        return self._ls.RunTree.from_headers(cast(Any, carrier), **kw)

    def _carrier(self, run: Any) -> dict[str, str]:
        """The run as a header: its dotted order, and its project when it is not the
        default. Not its metadata: the header is trace context only."""
        carrier = {"langsmith-trace": str(run.dotted_order)}
        project = getattr(run, "session_name", None)
        if project and project != _default_project():
            carrier["baggage"] = f"langsmith-project={quote(str(project))}"
        return carrier

    @contextlib.contextmanager
    def client_scope(self, name: str, metadata: dict[str, Any], inputs: Any
                     ) -> Iterator[Callable[[Any, str | None], None]]:
        run = self._new_run(self._ls.get_current_run_tree(), name, inputs=inputs, metadata=metadata)
        run.post()
        outcome: dict[str, Any] = {}

        def finish(outputs: Any, error: str | None) -> None:
            outcome.update(outputs=outputs, error=error)

        try:
            with self._context(parent=run):
                yield finish
        except BaseException as exc:
            run.end(error=f"{type(exc).__name__}: {exc}")
            run.patch()
            raise
        run.end(outputs=_as_outputs(outcome.get("outputs")), error=outcome.get("error"))
        run.patch()

    def current_carrier(self) -> dict[str, str] | None:
        run = self._ls.get_current_run_tree()
        return self._carrier(run) if run is not None and run.trace_id else None

    def wf_open(self, name: str, parent: Any, metadata: dict[str, Any], inputs: Any,
                rng: random.Random) -> Any:
        # Only what the children need is worked out here, on the workflow's thread (ids,
        # dotted order: plain strings); the RunTree is built and sent by the sending
        # thread, and not at all while replaying.
        start = temporalio.workflow.now()
        run_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        own = start.strftime("%Y%m%dT%H%M%S%fZ") + str(run_id)
        metadata = {**self.metadata, **metadata}
        project = self.project_name
        if isinstance(parent, _LsRun):
            dotted, trace_id, parent_id = f"{parent.dotted_order}.{own}", parent.trace_id, parent.id
            metadata, project = {**parent.metadata, **metadata}, parent.project
        elif isinstance(parent, dict) and parent.get("langsmith-trace"):
            up = str(parent["langsmith-trace"]).strip()
            segments = up.split(".")
            dotted = f"{up}.{own}"
            trace_id, parent_id = uuid.UUID(segments[0][-36:]), uuid.UUID(segments[-1][-36:])
            project = _baggage_project(parent.get("baggage")) or project
        else:
            dotted, trace_id, parent_id = own, run_id, None
        run = _LsRun(name, run_id, start, dotted, trace_id, parent_id, project, metadata,
                     inputs)
        if not _replaying():
            self._submit(lambda: self._built(run).post())
        return run

    def _built(self, run: _LsRun) -> Any:
        """The RunTree of a run opened by workflow code (on the sending thread)."""
        if run.tree is None:
            kw: dict[str, Any] = {
                "name": run.name, "id": run.id, "run_type": "chain", "start_time": run.start,
                "dotted_order": run.dotted_order, "trace_id": run.trace_id,
                "inputs": _as_inputs(run.inputs), "extra": {"metadata": run.metadata},
                "ls_client": self.client}
            if run.parent_id is not None:
                kw["parent_run_id"] = run.parent_id
            if run.project:
                kw["project_name"] = run.project
            run.tree = self._ls.RunTree(**kw)
        return run.tree

    def wf_close(self, handle: Any, outputs: Any, error: str | None) -> None:
        if _replaying():
            return
        end_time = temporalio.workflow.now()

        def send() -> None:
            # Opened while replaying (its worker was lost mid-node): built now, to patch.
            tree = self._built(handle)
            tree.end(outputs=_as_outputs(outputs), error=error, end_time=end_time)
            tree.patch()

        self._submit(send)

    def wf_carrier(self, handle: Any) -> dict[str, str]:
        carrier = {"langsmith-trace": handle.dotted_order}
        if handle.project and handle.project != _default_project():
            carrier["baggage"] = f"langsmith-project={quote(str(handle.project))}"
        return carrier

    @contextlib.contextmanager
    def activity_scope(self, carrier: dict[str, str] | None, name: str,
                       metadata: dict[str, Any], attempt: int) -> Iterator[None]:
        parent = self._parent_from(carrier)
        if parent is not None and attempt > 1:
            # The node run is the workflow's, one for every attempt; this marks where the
            # attempt after a lost worker or a timeout began.
            marker = parent.create_child(f"attempt {attempt}", "chain",
                                         inputs={"attempt": attempt},
                                         extra={"metadata": metadata})
            marker.post()
            marker.end(outputs={"attempt": attempt})
            marker.patch()
        with self._context(parent=parent, metadata=metadata):
            yield

    @contextlib.contextmanager
    def route_scope(self, name: str, inputs: Any, tags: list[str]
                    ) -> Iterator[Callable[[Any], None]]:
        with self._ls.trace(name, run_type="chain", inputs=_as_inputs(inputs),
                            tags=tags) as run:
            yield lambda outputs: run.end(outputs=_as_outputs(outputs))

    def flush(self) -> None:
        self.drain()
        if self._client is not None:
            self._client.flush()


@dataclasses.dataclass
class _LsRun:
    """A LangSmith run opened by workflow code: what is known on the workflow's thread;
    its RunTree (`tree`) is made on the sending thread."""

    name: str
    id: uuid.UUID
    start: datetime
    dotted_order: str
    trace_id: uuid.UUID
    parent_id: uuid.UUID | None
    project: str | None
    metadata: dict[str, Any]
    inputs: Any  # a dict, a _Later or None
    tree: Any = None


def _baggage_project(baggage: str | None) -> str | None:
    for item in (baggage or "").split(","):
        key, _, value = item.strip().partition("=")
        if key == "langsmith-project" and value:
            return unquote(value)
    return None


def _default_project() -> str:
    return (os.environ.get("LANGSMITH_PROJECT") or os.environ.get("LANGCHAIN_PROJECT")
            or "default")


class _Later:
    """A run's inputs or outputs as plain JSON, made when the run is sent (on the sending
    thread, not the workflow's: a large state costs the workflow nothing). What a run's
    end needs at once, its status and error, is kept beside."""

    __slots__ = ("arg", "error", "fn", "status")

    def __init__(self, fn: Callable[[Any], Any], arg: Any, status: str | None = None,
                 error: Any = None) -> None:
        self.fn, self.arg, self.status, self.error = fn, arg, status, error

    def value(self) -> Any:
        return self.fn(self.arg)


def _now(value: Any) -> Any:
    return value.value() if isinstance(value, _Later) else value


def _status_of(outputs: Any) -> str | None:
    if isinstance(outputs, _Later):
        return outputs.status
    if isinstance(outputs, dict) and "status" in outputs:
        return str(outputs["status"])
    return None


def _as_inputs(value: Any) -> dict[str, Any]:
    value = _now(value)
    if value is None:
        return {}
    return value if isinstance(value, dict) else {"input": value}


def _as_outputs(value: Any) -> dict[str, Any] | None:
    value = _now(value)
    if value is None:
        return None
    return value if isinstance(value, dict) else {"output": value}


class _ChosenIds:
    """An id generator that gives the ids set in `chosen`, else its fallback's: so a span
    opened by workflow code is sent under the ids its children were given."""

    chosen: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar(
        "graphrun_otel_ids", default=None)

    def __init__(self, fallback: Any) -> None:
        self.fallback = fallback

    def generate_span_id(self) -> int:
        ids = self.chosen.get()
        return ids[1] if ids is not None else int(self.fallback.generate_span_id())

    def generate_trace_id(self) -> int:
        ids = self.chosen.get()
        return ids[0] if ids is not None else int(self.fallback.generate_trace_id())


# LangGraph's keys a span does without (its parent span and step say as much): fewer
# attributes, cheaper spans.
_NOT_ATTRIBUTES = frozenset({"langgraph_path", "langgraph_checkpoint_ns", "langgraph_triggers"})


@dataclasses.dataclass
class _OtelSpan:
    name: str
    context: Any  # SpanContext
    parent: Any  # SpanContext or None
    start_ns: int
    attributes: dict[str, Any]


class OpenTelemetryTracing(Backend):
    """OpenTelemetry spans, through `tracer_provider` (default: the global one). Spans of
    workflow code are sent when they end, with the ids their children were given: that
    needs the SDK's TracerProvider (`opentelemetry-sdk`); with another provider only the
    client's and the activities' spans are made."""

    name = "otel"
    header = OTEL_HEADER

    def __init__(self, *, tracer_provider: Any = None) -> None:
        super().__init__()
        from opentelemetry.baggage.propagation import W3CBaggagePropagator
        from opentelemetry.propagators.composite import CompositePropagator
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self._ot = _otel_api()
        self._provider = tracer_provider
        # temporalio's TracingInterceptor propagates with the same two.
        self.propagator = CompositePropagator([TraceContextTextMapPropagator(),
                                               W3CBaggagePropagator()])
        self._sdk: tuple[Any, Any] | None = None  # (provider, its tracer with chosen ids)
        self._tracers: dict[int, tuple[Any, Any]] = {}  # provider -> (provider, tracer)

    def _provider_now(self) -> Any:
        return self._provider or self._ot.trace.get_tracer_provider()

    @property
    def tracer(self) -> Any:
        provider = self._provider_now()
        cached = self._tracers.get(id(provider))
        if cached is None or cached[0] is not provider:
            cached = self._tracers[id(provider)] = (provider, provider.get_tracer("graphrun"))
        return cached[1]

    def _sdk_tracer(self) -> Any:
        provider = self._provider_now()
        provider = getattr(provider, "_tracer_provider", provider)  # temporalio's replay-safe one
        if self._sdk is not None and self._sdk[0] is provider:
            return self._sdk[1]
        sdk = self._ot.SDKTracerProvider
        if sdk is None or not isinstance(provider, sdk):
            return None
        tracer = provider.get_tracer("graphrun.workflow")
        sdk_tracer = cast(Any, tracer)  # the SDK's Tracer keeps its id generator here
        sdk_tracer.id_generator = _ChosenIds(sdk_tracer.id_generator)
        self._sdk = (provider, tracer)
        return tracer

    def _attributes(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """Span attributes: Temporal's ids as temporalio names them, the rest as
        graphrun.<key> (LangGraph's langgraph_node as graphrun.node, and so on)."""
        out: dict[str, Any] = {}
        for k, v in metadata.items():
            if v is None or k in _NOT_ATTRIBUTES:
                continue
            key = (k if k.startswith("temporal")
                   else f"graphrun.{k.removeprefix('langgraph_')}")
            if isinstance(v, str | bool | int | float):
                out[key] = v
            elif isinstance(v, list | tuple) and all(isinstance(x, str) for x in v):
                out[key] = list(v)
            else:
                out[key] = str(v)
        return out

    @contextlib.contextmanager
    def client_scope(self, name: str, metadata: dict[str, Any], inputs: Any
                     ) -> Iterator[Callable[[Any, str | None], None]]:
        ot = self._ot
        with self.tracer.start_as_current_span(name, kind=ot.SpanKind.CLIENT,
                                               attributes=self._attributes(metadata)) as span:
            def finish(outputs: Any, error: str | None) -> None:
                status = _status_of(outputs)
                if status is not None:
                    span.set_attribute("graphrun.status", status)
                if error:
                    span.set_status(ot.Status(ot.StatusCode.ERROR, error))

            yield finish

    def current_carrier(self) -> dict[str, str] | None:
        carrier: dict[str, str] = {}
        self.propagator.inject(carrier)
        return carrier or None

    def _context_of(self, parent: Any) -> Any:
        if isinstance(parent, _OtelSpan):
            return parent.context
        if isinstance(parent, dict):
            context = self._ot.trace.get_current_span(self.propagator.extract(parent)).get_span_context()
            return context if context.is_valid else None
        return None

    def wf_open(self, name: str, parent: Any, metadata: dict[str, Any], inputs: Any,
                rng: random.Random) -> Any:
        SpanContext, TraceFlags = self._ot.SpanContext, self._ot.TraceFlags
        up = self._context_of(parent)
        trace_id = up.trace_id if up is not None else (rng.getrandbits(128) or 1)
        flags = up.trace_flags if up is not None else TraceFlags(TraceFlags.SAMPLED)
        context = SpanContext(trace_id, rng.getrandbits(64) or 1, is_remote=False,
                              trace_flags=flags)
        return _OtelSpan(name, context, up, temporalio.workflow.time_ns(),
                         self._attributes(metadata))

    def wf_close(self, handle: Any, outputs: Any, error: str | None) -> None:
        if _replaying():
            return
        end_ns = temporalio.workflow.time_ns()
        span: _OtelSpan = handle
        status = _status_of(outputs)
        if status is not None:
            span.attributes["graphrun.status"] = status
        self._submit(lambda: self._emit(span, end_ns, error))

    def _emit(self, span: _OtelSpan, end_ns: int, error: str | None) -> None:
        ot = self._ot
        trace, otel_context = ot.trace, ot.context
        tracer = self._sdk_tracer()
        if tracer is None:
            return
        parent = (trace.set_span_in_context(trace.NonRecordingSpan(span.parent),
                                            otel_context.Context())
                  if span.parent is not None else otel_context.Context())
        token = _ChosenIds.chosen.set((span.context.trace_id, span.context.span_id))
        try:
            out = tracer.start_span(span.name, context=parent, kind=ot.SpanKind.INTERNAL,
                                    attributes=span.attributes, start_time=span.start_ns)
        finally:
            _ChosenIds.chosen.reset(token)
        if error:
            out.set_status(ot.Status(ot.StatusCode.ERROR, error))
        out.end(end_time=max(end_ns, span.start_ns))

    def wf_carrier(self, handle: Any) -> dict[str, str]:
        trace = self._ot.trace
        carrier: dict[str, str] = {}
        ctx = trace.set_span_in_context(trace.NonRecordingSpan(handle.context),
                                        self._ot.context.Context())
        self.propagator.inject(carrier, context=ctx)
        return carrier

    @contextlib.contextmanager
    def activity_scope(self, carrier: dict[str, str] | None, name: str,
                       metadata: dict[str, Any], attempt: int) -> Iterator[None]:
        context = self.propagator.extract(carrier) if carrier else None
        info = temporalio.activity.info()
        # The node's span (its parent) has the rest; an attempt says which it is.
        attributes = {"graphrun.node": name, "graphrun.attempt": attempt,
                      "temporalActivityID": info.activity_id,
                      "temporalWorkflowID": info.workflow_id or ""}
        with self.tracer.start_as_current_span(f"RunActivity:{info.activity_type}",
                                               context=context, kind=self._ot.SpanKind.SERVER,
                                               attributes=attributes):
            yield

    @contextlib.contextmanager
    def route_scope(self, name: str, inputs: Any, tags: list[str]
                    ) -> Iterator[Callable[[Any], None]]:
        with self.tracer.start_as_current_span(name, attributes={"graphrun.route": name}):
            yield lambda outputs: None

    def flush(self) -> None:
        self.drain()
        force = getattr(self._provider_now(), "force_flush", None)
        if force is not None:
            force()


# -- the interceptor ------------------------------------------------------------------------
class GraphTracing(temporalio.client.Interceptor, temporalio.worker.Interceptor):
    """Client and worker interceptor: traces invocations, the workflow, nodes and what
    nodes call, with each of `backends` (LangSmithTracing, OpenTelemetryTracing)."""

    def __init__(self, *backends: Backend) -> None:
        if not backends:
            raise ValueError("GraphTracing needs a backend: LangSmithTracing() or "
                             "OpenTelemetryTracing().")
        self.backends: tuple[Backend, ...] = tuple(backends)

    def __repr__(self) -> str:
        return f"GraphTracing({', '.join(b.name for b in self.backends)})"

    # client
    def intercept_client(self, next: temporalio.client.OutboundInterceptor
                         ) -> temporalio.client.OutboundInterceptor:
        return _ClientOutbound(next, self)

    @contextlib.contextmanager
    def invocation(self, graph: str, thread_id: str, inputs: Any, *, what: str = "invoke"
                   ) -> Iterator[Callable[[Any, str | None], None]]:
        """The client's run around one call to a thread: `finish(outputs, error)` records
        how it ended. Headers sent inside carry its context."""
        metadata = {"thread_id": thread_id, "graph": graph, "call": what}
        with contextlib.ExitStack() as stack:
            finishers = [stack.enter_context(b.client_scope(graph, metadata, inputs))
                         for b in self.backends]

            def finish(outputs: Any, error: str | None = None) -> None:
                if hasattr(outputs, "status"):  # a RunResult
                    outputs = _run_outputs(outputs)
                    error = error or _failure(outputs)
                for f in finishers:
                    f(outputs, error)

            yield finish

    def headers(self, headers: Mapping[str, Payload]) -> Mapping[str, Payload]:
        """`headers` with the current context of each backend (a header already there,
        from another tracing interceptor, is left as it is)."""
        out = dict(headers)
        for b in self.backends:
            if b.header in out:
                continue
            carrier = b.current_carrier()
            if carrier:
                out[b.header] = _payload(carrier)
        return out

    def flush(self) -> None:
        """Send what is buffered (call before a process exits)."""
        for b in self.backends:
            b.flush()

    # worker
    def intercept_activity(self, next: temporalio.worker.ActivityInboundInterceptor
                           ) -> temporalio.worker.ActivityInboundInterceptor:
        return _ActivityInbound(next, self)

    def workflow_interceptor_class(self, input: temporalio.worker.WorkflowInterceptorClassInput
                                   ) -> type[temporalio.worker.WorkflowInboundInterceptor]:
        return type("GraphTracingWorkflowInbound", (_WorkflowInbound,), {"_tracing": self})


_JSON_PLAIN = b"json/plain"


def _payload(carrier: Mapping[str, str]) -> Payload:
    """A carrier as a header, in JSON as temporalio's default converter writes a dict (what
    its OpenTelemetry and LangSmith interceptors read), without trying its other
    converters first."""
    return Payload(metadata={"encoding": _JSON_PLAIN},
                   data=json.dumps(carrier, separators=(",", ":")).encode())


def _carrier(headers: Mapping[str, Payload], key: str) -> dict[str, str] | None:
    payload = headers.get(key)
    if not payload:
        return None
    try:
        if payload.metadata.get("encoding") == _JSON_PLAIN:
            value = json.loads(payload.data)
        else:
            value = _payloads.from_payloads([payload])[0]
    except Exception:  # a header we cannot read is no parent, never an error
        return None
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in value.items()}


# The calls that start an invocation of a thread: only these carry the caller's context
# (not the live stream's publish signals a node sends, nor queries).
TRACED_UPDATES = frozenset({"invoke", "update_state", "bulk_update_state"})
TRACED_SIGNALS = frozenset({"resume"})


class _ClientOutbound(temporalio.client.OutboundInterceptor):
    def __init__(self, next: temporalio.client.OutboundInterceptor, root: GraphTracing) -> None:
        super().__init__(next)
        self.root = root

    async def signal_workflow(self, input: temporalio.client.SignalWorkflowInput) -> None:
        if input.signal in TRACED_SIGNALS:
            input.headers = self.root.headers(input.headers)
        await super().signal_workflow(input)

    async def start_workflow_update(self, input: temporalio.client.StartWorkflowUpdateInput
                                    ) -> Any:
        if input.update in TRACED_UPDATES:
            input.headers = self.root.headers(input.headers)
        return await super().start_workflow_update(input)

    async def start_update_with_start_workflow(
            self, input: temporalio.client.StartWorkflowUpdateWithStartInput) -> Any:
        if input.update_workflow_input.update in TRACED_UPDATES:
            input.update_workflow_input.headers = self.root.headers(
                input.update_workflow_input.headers)
        return await super().start_update_with_start_workflow(input)


def node_metadata(call: Any, name: str) -> dict[str, Any]:
    """What a node's run says about it: LangGraph's keys (so LangSmith groups and filters
    as for LangGraph) and graphrun's (graph, checkpoint id, task id)."""
    task = getattr(call, "task", None) or {}
    node = getattr(call, "node", name)
    out: dict[str, Any] = {
        "thread_id": getattr(call, "thread_id", None),
        "graph": getattr(call, "graph", None),
        "langgraph_node": name,
        "langgraph_step": task.get("step"),
        "langgraph_path": task.get("path"),
        "langgraph_checkpoint_ns": task.get("ns") or (f"{node}:{task['id']}"
                                                      if "id" in task else None),
        "checkpoint_id": getattr(call, "checkpoint_id", None) or None,
        "task_id": task.get("id"),
    }
    triggers = task.get("triggers")
    if triggers is None and "path" in task:  # the usual ones are not sent: the graph knows
        with contextlib.suppress(Exception):
            path = task["path"] or [""]
            triggers = list(registry.lookup(str(out["graph"])).spec.usual_triggers(node,
                                                                                   path[0]))
    if triggers:
        out["langgraph_triggers"] = list(triggers)
    return {k: v for k, v in out.items() if v is not None}


class _ActivityInbound(temporalio.worker.ActivityInboundInterceptor):
    def __init__(self, next: temporalio.worker.ActivityInboundInterceptor,
                 root: GraphTracing) -> None:
        super().__init__(next)
        self.root = root

    async def execute_activity(self, input: temporalio.worker.ExecuteActivityInput) -> Any:
        info = temporalio.activity.info()
        if info.activity_type not in NODE_ACTIVITIES or not input.args:
            return await super().execute_activity(input)
        call = input.args[0]
        name = str(getattr(call, "node", info.activity_type))
        metadata = {**node_metadata(call, name), "attempt": info.attempt}
        with contextlib.ExitStack() as stack:
            for b in self.root.backends:
                stack.enter_context(b.activity_scope(_carrier(input.headers, b.header), name,
                                                     metadata, info.attempt))
            token = ROUTE_SCOPE.set(self._route_scope)
            try:
                return await super().execute_activity(input)
            finally:
                ROUTE_SCOPE.reset(token)

    @contextlib.contextmanager
    def _route_scope(self, name: str, inputs: Any, tags: list[str]
                     ) -> Iterator[Callable[[Any], None]]:
        with contextlib.ExitStack() as stack:
            ends = [stack.enter_context(b.route_scope(name, inputs, tags))
                    for b in self.root.backends]

            def finish(outputs: Any) -> None:
                for end in ends:
                    end(outputs)

            yield finish


@dataclasses.dataclass
class _Invocation:
    spans: list[_Span]
    closed: bool = False


class _WorkflowInbound(temporalio.worker.WorkflowInboundInterceptor):
    """Opens a run per invocation of the thread (from its update's or signal's header),
    and a run per node activity under the invocation it runs for."""

    _tracing: ClassVar[GraphTracing]

    def init(self, outbound: temporalio.worker.WorkflowOutboundInterceptor) -> None:
        self._invocations: dict[Any, _Invocation] = {}
        self._rng: random.Random | None = None
        self._graph: bool | None = None
        self._waiting: set[asyncio.Future[None]] = set()
        super().init(_WorkflowOutbound(outbound, self))

    @property
    def _on(self) -> bool:
        """Only graph threads are traced (not the Server API's record workflows)."""
        if self._graph is None:
            self._graph = temporalio.workflow.info().workflow_type == WORKFLOW_TYPE
        return self._graph

    def _random(self) -> random.Random:
        if self._rng is None:  # its own stream: the workflow's random is left as it is
            self._rng = temporalio.workflow.new_random("graphrun-tracing")
        return self._rng

    def _metadata(self) -> dict[str, Any]:
        info = temporalio.workflow.info()
        inst = temporalio.workflow.instance()
        graph, thread_id = (inst.graph_and_thread() if hasattr(inst, "graph_and_thread")
                            else (None, None))
        return {"thread_id": thread_id, "graph": graph,
                "temporalWorkflowID": info.workflow_id, "temporalRunID": info.run_id}

    def _open(self, key: Any, headers: Mapping[str, Payload] | None, how: str,
              inputs: Any = None) -> _Invocation:
        metadata = {**self._metadata(), "trigger": how}
        if isinstance(key, str):
            metadata["run_id"] = key
        spans = []
        for b in self._tracing.backends:
            parent = _carrier(headers, b.header) if headers else None
            spans.append(_Span(b, b.wf_open(WORKFLOW_TYPE, parent, metadata, inputs,
                                            self._random())))
        inv = _Invocation(spans)
        self._invocations[key] = inv
        return inv

    def _close(self, key: Any, outputs: Any, error: str | None) -> None:
        inv = self._invocations.pop(key, None)
        if inv is None or inv.closed:
            return
        inv.closed = True
        error = error or _failure(outputs)
        for s in inv.spans:
            s.backend.wf_close(s.handle, outputs, error)

    def _close_when_done(self, key: Any, number: int) -> None:
        """A run no handler waits for (a resume signal, an expired deadline) ends when the
        thread records its result."""
        inst = temporalio.workflow.instance()

        async def wait() -> None:
            await temporalio.workflow.wait_condition(
                lambda: inst.result_of(number) is not None)
            self._close(key, _run_outputs(inst.result_of(number)), None)

        task = asyncio.ensure_future(wait())
        self._waiting.add(task)  # kept until done (the loop holds tasks weakly)
        task.add_done_callback(self._waiting.discard)

    async def handle_update_handler(self, input: temporalio.worker.HandleUpdateInput) -> Any:
        if not self._on or input.update not in ("invoke", "update_state", "bulk_update_state"):
            return await super().handle_update_handler(input)
        self._open(input.id, input.headers, input.update)
        try:
            result = await super().handle_update_handler(input)
        except BaseException as exc:
            self._close(input.id, None, _error_text(exc))
            raise
        self._close(input.id, _run_outputs(result), None)
        return result

    async def handle_signal(self, input: temporalio.worker.HandleSignalInput) -> None:
        if not self._on or input.signal != "resume":
            await super().handle_signal(input)
            return
        inst = temporalio.workflow.instance()
        before = inst.invocations_taken()
        await super().handle_signal(input)
        number = inst.invocations_taken()
        if number != before:  # the resume was taken in
            key = ("n", number)
            self._open(key, input.headers, "signal")
            self._close_when_done(key, number)

    def node_parent(self, activity: str) -> _Invocation | None:
        """The invocation a node activity starts for: the thread's current run, or for
        update_state's routing, the update being handled."""
        if activity == "route_update":
            update = temporalio.workflow.current_update_info()
            return self._invocations.get(update.id) if update is not None else None
        current = temporalio.workflow.instance().current_invocation()
        if current is None:
            return None
        number, run_id = current
        inv = self._invocations.get(run_id or None)
        if inv is None:
            key = ("n", number)
            inv = self._invocations.get(key)
            if inv is None:  # no header brought it (an expired question's default)
                inv = self._open(key, None, "workflow")
                self._close_when_done(key, number)
        return inv


class _WorkflowOutbound(temporalio.worker.WorkflowOutboundInterceptor):
    def __init__(self, next: temporalio.worker.WorkflowOutboundInterceptor,
                 root: _WorkflowInbound) -> None:
        super().__init__(next)
        self.root = root

    def _open_node(self, input: Any) -> list[_Span] | None:
        if input.activity not in NODE_ACTIVITIES or not input.args or not self.root._on:
            return None
        inv = self.root.node_parent(input.activity)
        if inv is None:
            return None
        call = input.args[0]
        name = input.summary or str(getattr(call, "node", input.activity))
        info = temporalio.workflow.info()
        metadata = {**node_metadata(call, name), "temporalWorkflowID": info.workflow_id,
                    "temporalRunID": info.run_id}
        task = getattr(call, "task", None) or {}
        inputs = _Later(_plain, task.get("input")) if "input" in task else None
        spans = []
        headers = dict(input.headers)
        for parent in inv.spans:
            b = parent.backend
            handle = b.wf_open(name, parent.handle, metadata, inputs, self.root._random())
            headers[b.header] = _payload(b.wf_carrier(handle))
            spans.append(_Span(b, handle))
        input.headers = headers
        return spans

    def _watch(self, handle: Any, spans: list[_Span] | None) -> Any:
        if spans:
            handle.add_done_callback(lambda h: _node_done(h, spans))
        return handle

    def start_activity(self, input: temporalio.worker.StartActivityInput) -> Any:
        spans = self._open_node(input)
        return self._watch(super().start_activity(input), spans)

    def start_local_activity(self, input: temporalio.worker.StartLocalActivityInput) -> Any:
        spans = self._open_node(input)
        return self._watch(super().start_local_activity(input), spans)


def _node_done(handle: Any, spans: list[_Span]) -> None:
    outputs, error = None, None
    if handle.cancelled():
        error = "cancelled"
    elif handle.exception() is not None:
        error = _error_text(handle.exception())
    else:
        outputs = _Later(_node_outputs, handle.result())
    for s in spans:
        s.backend.wf_close(s.handle, outputs, error)


def _error_text(exc: BaseException) -> str:
    cause = exc.cause if isinstance(exc, ActivityError) else exc
    if isinstance(cause, ApplicationError):
        return f"{cause.type or 'Error'}: {cause.message}"
    return f"{type(cause).__name__}: {cause}"


def _plain(v: Any) -> Any:
    """graphrun's typed JSON as plain JSON, building no class (as the CLI's untag)."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if not isinstance(v, dict):
        return v
    tag = v.get(TAG)
    if tag is None:
        return {k: _plain(x) for k, x in v.items()}
    if tag == "dict":
        return {str(_plain(k)): _plain(x) for k, x in v["items"]}
    if tag == "interrupt":
        return {"id": v["id"], "value": _plain(v["value"])}
    if tag == "missing":
        return None
    if "v" in v:
        return _plain(v["v"])
    return {k: _plain(x) for k, x in v.items() if k != TAG}


def _node_outputs(result: Any) -> dict[str, Any] | None:
    """A node's writes (channel: value, as plain JSON) and the questions it asked."""
    writes = getattr(result, "writes", None)
    if writes is None:
        return None
    out: dict[str, Any] = {}
    for w in writes:
        if isinstance(w, list | tuple) and len(w) == 2:
            out[str(w[0])] = _plain(w[1])
    interrupts = getattr(result, "interrupts", None)
    if interrupts:
        out["__interrupt__"] = _plain(list(interrupts))
    return out


def _failure(outputs: Any) -> str | None:
    """A failed run's error, as a run's error text."""
    if _status_of(outputs) != "failed":
        return None
    error = (outputs.error if isinstance(outputs, _Later) else outputs.get("error")) or {}
    return f"{error.get('type', 'Error')}: {error.get('message', '')}"


def _run_outputs(result: Any) -> Any:
    """An invocation's outcome, made plain when sent (see _Later)."""
    status = getattr(result, "status", None)
    if status is None:
        return None if result is None else {"output": str(result)[:200]}
    return _Later(_run_outputs_now, result, status=str(status),
                  error=getattr(result, "error", None))


def _run_outputs_now(result: Any) -> dict[str, Any] | None:
    """An invocation's outcome: its status, the values and the questions (plain JSON)."""
    status = getattr(result, "status", None)
    if status is None:
        return None if result is None else {"output": str(result)[:200]}
    out: dict[str, Any] = {"status": status}
    values = _plain(getattr(result, "values", None))
    if isinstance(values, dict):
        out.update(values)
    elif values is not None:
        out["values"] = values
    if getattr(result, "interrupts", None):
        out["__interrupt__"] = _plain(list(result.interrupts))
    if getattr(result, "error", None):
        out["error"] = result.error
    return out


# -- choosing ---------------------------------------------------------------------------------
TracingLike = Any  # "auto" | None | False | "langsmith" | "otel" | "langsmith,otel" | list | ...


def resolve(tracing: TracingLike) -> GraphTracing | None:
    """A GraphTracing for `tracing`: "auto" (from the environment, see tracing_from_env),
    None/False/"off" (none), backend names ("langsmith", "otel", comma-separated or a
    list), Backend instances, or a GraphTracing (returned as it is)."""
    if tracing is None or tracing is False:
        return None
    if isinstance(tracing, GraphTracing):
        return tracing
    if isinstance(tracing, Backend):
        return GraphTracing(tracing)
    auto = isinstance(tracing, str) and tracing.strip().lower() == "auto"
    if auto:
        names: Sequence[Any] = tracing_from_env()
    elif isinstance(tracing, str):
        names = [n.strip().lower() for n in tracing.split(",") if n.strip()]
    else:
        names = list(tracing)
    backends: list[Backend] = []
    for n in names:
        if isinstance(n, Backend):
            backends.append(n)
            continue
        if n in ("off", "none", ""):
            continue
        if n not in _BACKENDS:
            raise ValueError(f"unknown tracing backend {n!r}: use 'langsmith', 'otel' or 'off'")
        try:
            backends.append(_BACKENDS[n]())
        except ImportError as exc:
            if not auto:
                raise
            # The environment asks for it, the package is not there: say so, run untraced.
            warnings.warn(f"graphrun: {n} tracing is on in the environment but {exc}; "
                          f"pip install 'graphrun[tracing]'", stacklevel=2)
    return GraphTracing(*backends) if backends else None


_BACKENDS: dict[str, Callable[[], Backend]] = {
    "langsmith": LangSmithTracing, "otel": OpenTelemetryTracing,
    "opentelemetry": OpenTelemetryTracing}


def find(interceptors: Sequence[Any]) -> GraphTracing | None:
    """The GraphTracing among a client's interceptors, if any."""
    return next((i for i in interceptors if isinstance(i, GraphTracing)), None)


def of_client(client: temporalio.client.Client) -> GraphTracing | None:
    return find(client.config().get("interceptors") or [])


def with_tracing(client: temporalio.client.Client, tracing: TracingLike
                 ) -> temporalio.client.Client:
    """`client` with `tracing`'s interceptor (the same connection); as it is when tracing
    resolves to none or the client already traces."""
    if of_client(client) is not None:
        return client
    chosen = resolve(tracing)
    if chosen is None:
        return client
    config = client.config()
    config["interceptors"] = [*config.get("interceptors", []), chosen]
    return temporalio.client.Client(**config)


def configure_otel_from_env() -> bool:
    """Give the process an OpenTelemetry SDK TracerProvider that exports over OTLP/HTTP to
    $OTEL_EXPORTER_OTLP_ENDPOINT (service name from $OTEL_SERVICE_NAME, default
    "graphrun"), unless one is set already. For the CLI; True if it set one."""
    from opentelemetry import trace

    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return False
    if not (os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
            or os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")):
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create(
        {"service.name": os.environ.get("OTEL_SERVICE_NAME", "graphrun")}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True


__all__ = ["LANGSMITH_HEADER", "OTEL_HEADER", "Backend", "GraphTracing", "LangSmithTracing",
           "OpenTelemetryTracing", "configure_otel_from_env", "find", "node_metadata",
           "of_client", "resolve", "tracing_from_env", "with_tracing"]
