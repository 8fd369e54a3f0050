"""build_app: the ASGI app, its middleware (auth, CORS) and the one place that maps
graphrun's errors to HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from importlib import metadata
from typing import Any, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response
from temporalio.service import RPCError

from graphrun import errors
from graphrun.client import GraphClient
from graphrun.server import assistants, crons, mcp, protocol, runs, threads
from graphrun.server import metrics as api_metrics
from graphrun.server import store as store_api
from graphrun.server.context import Conflict, GraphUnserved, NotFound, Server, Unavailable
from graphrun.server.http import HttpOptions
from graphrun.server.webhooks import WebhookPolicy

_log = logging.getLogger(__name__)

try:
    VERSION = metadata.version("graphrun")
except metadata.PackageNotFoundError:  # run from a source tree that is not installed
    VERSION = "0.0.0"
# Headers a browser client must be allowed to read (LangGraph's SDK reads them).
EXPOSED = ["Content-Location", "Location", "X-Pagination-Next"]


@contextlib.asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    if app.state.check_search_attributes:
        await _require_setup(app.state.server.gc)
    user_app = app.state.http.app
    async with (user_app.router.lifespan_context(user_app) if user_app is not None
                else contextlib.nullcontext()):
        yield
    protocol.close(app)  # the threads' event feeds stop reading with the app


async def _require_setup(gc: GraphClient | None) -> None:
    """At start: the namespace has graphrun's search attributes (SetupError, naming
    `graphrun setup`, if not). A Temporal that does not answer yet is not an error: the
    API answers 503 until it does."""
    from graphrun.namespace import require_search_attributes

    if gc is None or not gc.search_attributes:
        return
    try:
        await require_search_attributes(gc.client)
    except errors.SetupError:
        raise
    except Exception as exc:
        _log.warning("graphrun API: could not check the namespace's search attributes "
                     "at start (%s)", exc)


HEALTH_TIMEOUT = 2.0  # seconds: a load balancer's probe gets its answer within this


async def health_checks(gc: GraphClient, *, workers: bool = False) -> dict[str, str]:
    """"healthy" or why not, for Temporal (a gRPC health check) and, if asked, the
    workers (one has polled the task queue for workflow tasks lately)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    client = gc.client
    out: dict[str, str] = {}
    try:
        serving = await asyncio.wait_for(client.service_client.check_health(
            timeout=timedelta(seconds=HEALTH_TIMEOUT)), HEALTH_TIMEOUT)
        out["temporal"] = "healthy" if serving else "unhealthy: not serving"
    except Exception as exc:  # refused, unreachable, timed out
        out["temporal"] = f"unhealthy: {type(exc).__name__}"
    if workers:
        if out["temporal"] != "healthy":
            out["workers"] = "unknown: Temporal does not answer"
            return out
        try:
            found = await asyncio.wait_for(client.workflow_service.describe_task_queue(
                DescribeTaskQueueRequest(namespace=client.namespace,
                                         task_queue=TaskQueue(name=gc.task_queue),
                                         task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)),
                HEALTH_TIMEOUT)
            out["workers"] = ("healthy" if found.pollers else
                              f"unhealthy: no worker polls task queue {gc.task_queue!r}")
        except Exception as exc:
            out["workers"] = f"unhealthy: {type(exc).__name__}"
    return out


def build_app(gc: GraphClient, graphs: Mapping[str, Any], *,
              api_keys: Sequence[str] | None = None,
              cors_origins: Sequence[str] = (), cors_localhost: bool = False,
              store: Any = None, check_search_attributes: bool = True,
              refresh_on_read: bool = True, http: HttpOptions | None = None,
              private_network: bool = False, auth: Any = None,
              studio_auth: bool = False, webhooks: WebhookPolicy | None = None
              ) -> FastAPI:
    """The LangGraph Server API for `graphs` (graph id -> compiled graph) on `gc`'s Temporal.

    `api_keys` (default: `GRAPHRUN_API_KEY`, comma-separated): every route but `/ok`
    then needs one, as `x-api-key` or `Authorization: Bearer`. `cors_origins` (and
    `cors_localhost`, any port on localhost, for `graphrun dev`) may call it from a
    browser. `store` (a LangGraph `BaseStore`) is served at `/store/...`
    (graphrun.server.store). At start (the ASGI lifespan), the app checks that the
    namespace has graphrun's search attributes and fails with `SetupError` naming
    `graphrun setup` if not; `check_search_attributes=False` skips that (it is skipped
    too when `gc` keeps none: `GraphClient(search_attributes=False)`).
    `refresh_on_read`: reading a thread that has a TTL starts its TTL again (LangGraph's
    `checkpointer.ttl.refresh_on_read`); the TTL of new threads is `gc.default_ttl`.
    `http`: langgraph.json's `http` (graphrun.server.http): the user's app, whose routes
    come first, CORS options (they replace `cors_origins`), parts of the API turned off,
    the headers a run's config carries. MCP is served at `/mcp` (graphrun.server.mcp)
    unless `http.disable_mcp`; the API's metrics at `/metrics` (graphrun.server.metrics)
    unless `http.disable_meta`. `private_network`: answer CORS preflights with
    `Access-Control-Allow-Private-Network` (a public page, e.g. LangGraph Studio, calling
    a server on this machine; `graphrun dev` sets it) for the origins allowed.
    `auth`: custom auth, a `langgraph_sdk.Auth` (or langgraph.json's `auth` as
    graphrun.server.config.auth_options reads it): its `@auth.authenticate` runs on every
    request and its `@auth.on...` handlers authorize each access (graphrun.server.auth);
    it replaces the API keys. `studio_auth` (`graphrun dev`, unless the config's
    `disable_studio_auth`): a request with `x-auth-scheme: langsmith` is LangGraph
    Studio's, as on `langgraph dev`. `webhooks`: langgraph.json's `webhooks`
    (graphrun.server.webhooks): what a run's webhook URL may be, the headers and fields
    it is sent with; LangGraph's defaults (no loopback targets) without it.
    """
    http = http or HttpOptions()
    off = http.disabled
    app = FastAPI(title="graphrun", description="The LangGraph Server API, served from "
                  "Temporal by graphrun.", version=VERSION, lifespan=_lifespan,
                  **cast(dict[str, Any], {"docs_url": None, "redoc_url": None,
                                          "openapi_url": None} if "meta" in off else {}))
    app.state.http = http
    app.state.webhooks = webhooks or WebhookPolicy()
    app.state.server = Server(gc, graphs)
    app.state.server.refresh_on_read = refresh_on_read
    app.state.check_search_attributes = check_search_attributes
    app.state.store = store
    keys = [k.strip() for k in (api_keys if api_keys is not None else
                                os.environ.get("GRAPHRUN_API_KEY", "").split(",")) if k.strip()]
    authz = _custom_auth(app, auth, keys if api_keys is not None else None, studio_auth, http)
    if authz is not None:
        keys = []  # custom auth decides who calls
    app.state.api_keys = keys  # websockets (protocol.py) check them: the middleware is HTTP's
    if keys:
        app.middleware("http")(_auth(keys))
    if http.cors is not None:
        app.add_middleware(CORSMiddleware, **http.cors)
    elif cors_origins or cors_localhost:  # a browser app (Agent Inbox) calls from its origin
        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins),
                           allow_origin_regex=(r"http://(localhost|127\.0\.0\.1)(:\d+)?"
                                               if cors_localhost else None),
                           allow_methods=["*"], allow_headers=["*"], expose_headers=EXPOSED,
                           allow_private_network=private_network)
    for exc_type, status in _STATUS.items():
        app.add_exception_handler(exc_type, _error(status))
    app.add_exception_handler(RequestValidationError, _invalid)
    app.add_exception_handler(RPCError, _temporal)
    app.add_exception_handler(RuntimeError, _runtime)

    @app.get("/ok")
    async def ok(request: Request, check_workers: int = 0) -> JSONResponse:
        """Temporal answers (and, with `?check_workers=1`, a worker polls the task
        queue): 200 `{"ok": true, "services": {...}}`, else 503 saying which did not."""
        services = await health_checks(app.state.server.gc, workers=bool(check_workers))
        healthy = all(v == "healthy" for v in services.values())
        return JSONResponse({"ok": healthy, "services": services},
                            status_code=200 if healthy else 503)

    if "meta" not in off:
        @app.get("/info")
        async def info() -> dict[str, Any]:
            return {"version": VERSION, "langgraph_py_version": _langgraph_version(),
                    "flags": {"assistants": "assistants" not in off,
                              "crons": "runs" not in off, "langsmith": False,
                              "strict_resume": True}}

    if "assistants" not in off:
        app.include_router(assistants.router)
    if "threads" not in off:
        app.include_router(threads.router)
    if "runs" not in off:  # crons are runs' too; and the v3 protocol starts runs
        app.include_router(crons.router)  # before runs: /runs/crons is not a run id
        app.include_router(runs.router)
        # v3 streaming: /threads/{id}/commands, .../stream/events
        app.include_router(protocol.router)
    if "store" not in off:
        app.include_router(store_api.router)
    if "mcp" not in off:  # the assistants as MCP tools (graphrun.server.mcp)
        app.include_router(mcp.router)
    if http.app is not None:  # the user's routes come first, as on LangGraph's server
        app.router.routes[0:0] = list(http.app.routes)
        app.user_middleware[0:0] = list(getattr(http.app, "user_middleware", ()))
    if "meta" not in off:  # GET /metrics, the outermost middleware counting for it
        api_metrics.install(app)
    return app


def _custom_auth(app: FastAPI, auth: Any, keys: Sequence[str] | None, studio: bool,
                 http: HttpOptions) -> Any:
    """Custom auth's middleware, refusals and OpenAPI security, on `app` (or None)."""
    app.state.authz = None
    if auth is None:
        return None
    from graphrun.server import auth as custom

    if keys:
        raise ValueError("build_app: give api_keys or auth, not both: custom auth decides "
                         "who calls.")
    if os.environ.get("GRAPHRUN_API_KEY", "").strip():
        _log.warning("graphrun API: custom auth is on; GRAPHRUN_API_KEY is not used")
    options = auth if isinstance(auth, custom.AuthOptions) else custom.AuthOptions(auth)
    authz = custom.Authz(options.auth, studio=studio and not options.disable_studio_auth)
    app.state.authz = authz
    # The user's own routes are open unless http.enable_custom_route_auth (LangGraph's).
    user_routes = list(http.app.routes) if http.app is not None and \
        not http.custom_route_auth else []
    if "meta" not in http.disabled:  # /metrics is open as the other meta routes are
        user_routes.append(api_metrics.OPEN_ROUTE)
    app.add_middleware(custom.AuthMiddleware, authz=authz, user_routes=user_routes)
    app.add_exception_handler(custom.Denied, custom.denied_response)
    if options.openapi:
        _secure_openapi(app, options.openapi)
    return authz


def _secure_openapi(app: FastAPI, security: Mapping[str, Any]) -> None:
    """langgraph.json `auth.openapi`: its `securitySchemes` and `security` in the spec."""
    plain = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            spec = plain()
            if security.get("securitySchemes"):
                spec.setdefault("components", {})["securitySchemes"] = dict(
                    security["securitySchemes"])
            if security.get("security") is not None:
                spec["security"] = list(security["security"])
            app.openapi_schema = spec
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _langgraph_version() -> str | None:
    try:
        return metadata.version("langgraph")
    except metadata.PackageNotFoundError:
        return None


def _auth(keys: list[str]) -> Callable[..., Awaitable[Response]]:
    async def check(request: Request, call_next: Callable[..., Awaitable[Response]]
                    ) -> Response:
        if request.url.path == "/ok" or request.method == "OPTIONS":
            return await call_next(request)
        given = request.headers.get("x-api-key") or ""
        bearer = request.headers.get("authorization", "")
        if bearer.lower().startswith("bearer "):
            given = given or bearer[7:]
        if not any(hmac.compare_digest(given.encode(), k.encode()) for k in keys):
            return JSONResponse({"detail": "Missing or invalid API key: send x-api-key or "
                                           "Authorization: Bearer."}, status_code=401)
        return await call_next(request)

    return check


_STATUS: dict[type[Exception], int] = {
    NotFound: 404, errors.GraphNotFoundError: 422, GraphUnserved: 424, Conflict: 409,
    Unavailable: 503,
    errors.InvalidResumeError: 400, errors.EmptyInputError: 422,
    errors.InvalidUpdateError: 422, errors.UndeclaredTypeError: 422,
    errors.InputLimitError: 413, errors.RunNotFoundError: 404, errors.ThreadBusyError: 409,
    ValueError: 422,
}


def _error(status: int) -> Callable[[Request, Exception], Awaitable[Response]]:
    async def handle(request: Request, exc: Exception) -> Response:
        return JSONResponse({"detail": str(exc)}, status_code=status)

    return handle


async def _invalid(request: Request, exc: Exception) -> Response:
    detail: Any = str(exc)
    if isinstance(exc, RequestValidationError):
        detail = [{"loc": list(e.get("loc", ())), "msg": _message(e),
                   "type": e.get("type", "")} for e in exc.errors()]
    return JSONResponse({"detail": detail}, status_code=422)


def _message(error: Mapping[str, Any]) -> str:
    if error.get("type") == "extra_forbidden":  # shapes.RequestBody
        return f"{list(error.get('loc', ()))[-1]!r} is not a field this server takes"
    return str(error.get("msg", ""))


async def _runtime(request: Request, exc: Exception) -> Response:
    # temporalio's client raises RuntimeError("Failed client connect: ...") when it
    # cannot (re)connect: Temporal is down, as an RPCError says when it is reached.
    if str(exc).startswith("Failed client connect"):
        return await _temporal(request, exc)
    raise exc


async def _temporal(request: Request, exc: Exception) -> Response:
    return JSONResponse({"detail": f"Temporal did not answer: {exc}"}, status_code=503)
