"""The API's own metrics, served at `GET /metrics` for Prometheus (`?format=json` gives
the request counts as LangGraph's server does).

    graphrun_api_http_requests_total{method, route, status}     counter
    graphrun_api_http_request_duration_seconds{method, route}   histogram: until the
                                                                response ends (a stream:
                                                                until it closes)
    graphrun_api_streams_open{kind, route}                      gauge: SSE responses
                                                                (kind "sse") and
                                                                websockets ("websocket")
                                                                open now
    graphrun_api_runs_started_total{graph}                      counter: runs this process
                                                                sent that a thread took

`route` is the route's template (`/threads/{thread_id}/runs`), never the path asked for,
`unmatched` for a path no route has: the series stay few whatever clients ask. `/ok`
and `/metrics` themselves (probes and scrapes) are not counted. Each app keeps its own
registry (with the process's `process_*` and `python_*` collectors), so several apps in
one process do not share series. Temporal's SDK metrics of the process's client are
served apart, by `graphrun serve --metrics-bind` (graphrun.metrics.prometheus_runtime).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Annotated, Any

from fastapi import Query
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.exposition import choose_encoder
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match, Route

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

NOT_COUNTED = frozenset({"/ok", "/metrics"})  # load balancers' probes, Prometheus' scrapes
UNMATCHED = "unmatched"  # the route label of a path no route has
# Seconds. A request answers in milliseconds; a stream lasts as long as its run or reader.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
           300.0, 1800.0, 3600.0, float("inf"))


class ApiMetrics:
    """One app's metrics, in a registry of its own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        for collector in (ProcessCollector, PlatformCollector, GCCollector):
            collector(registry=self.registry)
        self.requests = Counter(
            "graphrun_api_http_requests", "HTTP requests answered, by method, route "
            "template and status code.", ["method", "route", "status"],
            registry=self.registry)
        self.duration = Histogram(
            "graphrun_api_http_request_duration_seconds", "Time from an HTTP request to "
            "the end of its response (a stream: until it closes), by method and route "
            "template.", ["method", "route"], buckets=BUCKETS, registry=self.registry)
        self.streams = Gauge(
            "graphrun_api_streams_open", "Streams open now: SSE responses (kind sse) and "
            "websockets (kind websocket), by route template.", ["kind", "route"],
            registry=self.registry)
        self.runs = Counter(
            "graphrun_api_runs_started", "Runs this API process sent that a thread took, "
            "by graph.", ["graph"], registry=self.registry)

    def json(self) -> dict[str, Any]:
        """`?format=json`: LangGraph's `{"api": {"http_requests_total": [...]}}` (its
        `path` is the route template), with the streams open and the runs started."""
        requests, streams, runs = [], [], []
        for family in self.registry.collect():
            for s in family.samples:
                if s.name == "graphrun_api_http_requests_total":
                    requests.append({"method": s.labels["method"], "path": s.labels["route"],
                                     "status": int(s.labels["status"]), "count": int(s.value)})
                elif s.name == "graphrun_api_streams_open":
                    streams.append({**s.labels, "count": int(s.value)})
                elif s.name == "graphrun_api_runs_started_total":
                    runs.append({**s.labels, "count": int(s.value)})
        return {"api": {"http_requests_total": requests, "streams_open": streams,
                        "runs_started_total": runs}}


def of(app: Any) -> ApiMetrics | None:
    """The app's metrics, None when it keeps none (`disable_meta`)."""
    return getattr(app.state, "metrics", None)


def run_started(app: Any, graph: str) -> None:
    """Count a run a thread took (graphrun.server.runs)."""
    metrics = of(app)
    if metrics is not None:
        metrics.runs.labels(graph=graph).inc()


def install(app: Any) -> ApiMetrics:
    """Keep `app`'s metrics and serve them at `GET /metrics`. Call it once the app's
    other middleware is added: its own is then the outermost, so that the requests
    other middleware refuses (a missing API key) or answers (a CORS preflight) count."""
    metrics = app.state.metrics = ApiMetrics()
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_api_route("/metrics", serve, methods=["GET"], tags=["meta"])
    return metrics


async def serve(request: Request, fmt: Annotated[str, Query(alias="format")] = "prometheus"
                ) -> Response:
    """The API's metrics: Prometheus' text format (OpenMetrics when the scraper asks for
    it), or `?format=json`; an unknown format is Prometheus' (as on LangGraph's server).

    Auth: `/metrics` is a meta route, as on LangGraph's server, and is treated as the
    other meta routes (`/info`, `/docs`) are here: with API keys (`GRAPHRUN_API_KEY`) it
    needs one like every route but `/ok` (Prometheus sends it as a bearer token:
    `authorization: {credentials: ...}` in its scrape config); with custom auth it is
    open, as LangGraph's server has it (a scraper is not one of the auth handler's
    users, and the series carry no user's data: methods, route templates, status codes,
    graph ids). `http.disable_meta` turns it off with the other meta routes.
    """
    metrics = of(request.app)
    assert metrics is not None  # the route exists only with them
    if fmt == "json":
        return JSONResponse(metrics.json())
    encode, content_type = choose_encoder(request.headers.get("accept", ""))
    return Response(encode(metrics.registry), media_type=content_type)


# Matches /metrics only: custom auth lets it through, as the other meta routes
# (graphrun.server.app).
OPEN_ROUTE = Route("/metrics", serve, methods=["GET"])


def route_of(scope: Scope, routes: Callable[[], list[Any]]) -> str:
    """The template of the route that answers `scope` (the router leaves it in the
    scope; a request refused before routing is matched against `routes()`), or
    UNMATCHED."""
    route = scope.get("route")
    if route is None:  # as the router chooses: the first full match, else the first partial
        partial = None
        for candidate in routes():
            match = candidate.matches(scope)[0]
            if match == Match.FULL:
                route = candidate
                break
            if match == Match.PARTIAL and partial is None:
                partial = candidate
        route = route or partial
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else UNMATCHED


def _flat_routes(app: Any) -> list[Any]:
    """The app's routes, those of the routers it includes among them."""
    routes = list(getattr(getattr(app, "router", None), "routes", ()))
    try:  # a recent FastAPI keeps an included router whole: its routes are in it
        from fastapi.routing import iter_route_contexts
    except ImportError:
        return routes
    return list(iter_route_contexts(routes))


class MetricsMiddleware:
    """Counts each HTTP request and times it until its response ends; counts the SSE
    responses and websockets open (pure ASGI: streams pass through as they are)."""

    def __init__(self, app: Any, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics
        self._routes: list[Any] | None = None  # the app's, once a refusal needs them

    def _route(self, scope: Scope) -> str:
        def routes() -> list[Any]:
            if self._routes is None:
                self._routes = _flat_routes(scope.get("app"))
            return self._routes

        return route_of(scope, routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        http = scope["type"] == "http"
        if not (http or scope["type"] == "websocket") or (http and scope["path"] in NOT_COUNTED):
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # unless a response starts
        stream: Any = None  # the gauge's child while an SSE response or a websocket is open

        async def sent(message: Message) -> None:
            nonlocal status, stream
            if message["type"] == "http.response.start":
                status = int(message["status"])
            if stream is None and (kind := _stream_kind(message)) is not None:
                stream = self.metrics.streams.labels(kind=kind, route=self._route(scope))
                stream.inc()
            await send(message)

        try:
            await self.app(scope, receive, sent)
        finally:
            if stream is not None:
                stream.dec()
            if http:  # a request is counted and timed; a websocket is a stream only
                route = self._route(scope)
                method = scope.get("method", "")
                self.metrics.requests.labels(method=method, route=route,
                                             status=str(status)).inc()
                self.metrics.duration.labels(method=method, route=route).observe(
                    time.perf_counter() - start)


def _stream_kind(message: Message) -> str | None:
    """The kind of stream a message opens: a websocket accepted, or an SSE response."""
    if message["type"] == "websocket.accept":
        return "websocket"
    if message["type"] == "http.response.start" and _is_sse(message):
        return "sse"
    return None


def _is_sse(start: Message) -> bool:
    for key, value in start.get("headers") or ():
        if key.lower() == b"content-type":
            return bytes(value).split(b";")[0].strip().lower() == b"text/event-stream"
    return False
