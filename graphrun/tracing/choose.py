"""Choosing the backends: from a name, a list, Backend instances or the environment, and
giving a Temporal client the interceptor."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import temporalio.client

from graphrun.tracing.base import Backend
from graphrun.tracing.interceptors import GraphTracing
from graphrun.tracing.langsmith import LangSmithTracing
from graphrun.tracing.otel import OpenTelemetryTracing

TracingLike = Any  # "auto" | None | False | "langsmith" | "otel" | "langsmith,otel" | list | ...


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
