"""The OpenTelemetry backend: spans through a TracerProvider, in the header format of
`temporalio.contrib.opentelemetry` (W3C trace context)."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast

import temporalio.activity
import temporalio.workflow

from graphrun.tracing.base import Backend, replaying, status_of

OTEL_HEADER = "_tracer-data"  # temporalio.contrib.opentelemetry's header


def _otel_api() -> Any:
    """OpenTelemetry's names, imported once: workflow code must not import (in the
    sandbox each import statement costs far more than the call it serves)."""
    from types import SimpleNamespace

    from opentelemetry import context, trace
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    sdk: Any = None
    with contextlib.suppress(ImportError):  # the API alone: no workflow spans (see below)
        from opentelemetry.sdk.trace import TracerProvider as sdk
    return SimpleNamespace(context=context, trace=trace, SpanContext=SpanContext,
                           SpanKind=SpanKind, Status=Status, StatusCode=StatusCode,
                           TraceFlags=TraceFlags, SDKTracerProvider=sdk)


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
                status = status_of(outputs)
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
        if replaying():
            return
        end_ns = temporalio.workflow.time_ns()
        span: _OtelSpan = handle
        status = status_of(outputs)
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
