"""Custom auth, as LangGraph's server has it: a `langgraph_sdk.Auth` object (langgraph.json
`"auth": {"path": "./auth.py:auth"}`, or `build_app(auth=...)`).

Authentication: `@auth.authenticate` runs on every request (HTTP and websocket) but
`/ok`, the meta routes (`/info`, `/docs`, `/openapi.json`, `/metrics`), CORS preflights and
the user's own routes (unless `http.enable_custom_route_auth`), with the parameters it names
(`request`, `headers`, `authorization`, `path`, `method`, `query_params`, `path_params`,
`scopes`, `scope`, `user`). What it returns is the user: a string (the identity), a dict
with `identity`, an object with `identity`, or `(permissions, user)`; its permissions
are its `permissions` field. `Auth.exceptions.HTTPException` 401/403 answers that status
with `{"detail": ...}`; any other error answers 500 (LangGraph's answers).

Authorization: the most specific `@auth.on...` handler of (resource, action) runs with
the request's `AuthContext` and the `value` LangGraph's server gives it (route modules
call `event` and the helpers below). None or True allows; False, an AssertionError or an
`Auth.exceptions.HTTPException` refuses (403, or its status); a dict is a filter on the
resource's metadata (`{key: value}`, `{"$eq": v}`, `{"$contains": v}`, `$or`, `$and`).
A handler may change `value`: the metadata it stamps is what is stored, a store
namespace it rewrites is the one used.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Match

from graphrun.users import AuthUser

_log = logging.getLogger(__name__)

CONTEXT = "graphrun.auth"  # the request's (user, permissions), in its ASGI scope
OPEN_PATHS = frozenset({"/ok", "/info", "/docs", "/docs/oauth2-redirect", "/redoc",
                        "/openapi.json"})
PARAMETERS = ("request", "body", "user", "path", "method", "scopes", "path_params",
              "query_params", "headers", "authorization", "scope")
MAX_DEPTH = 2  # of $or / $and in a filter, as LangGraph's server


class Denied(Exception):
    """An authentication or authorization refusal: its status and detail."""

    def __init__(self, status: int, detail: Any, headers: Mapping[str, str] | None = None
                 ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = dict(headers) if headers else None


async def denied_response(request: Any, exc: Exception) -> Response:
    assert isinstance(exc, Denied)
    return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=exc.headers)


@dataclass
class AuthOptions:
    """langgraph.json's `auth`: the `Auth` object, and LangGraph's other keys."""

    auth: Any
    disable_studio_auth: bool = False
    openapi: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _auth_class() -> Any:
    from langgraph_sdk import Auth

    return Auth


class Authz:
    """An `Auth` object, ready to authenticate requests and run its handlers."""

    def __init__(self, auth: Any, *, studio: bool = False) -> None:
        Auth = _auth_class()
        if not isinstance(auth, Auth):
            raise TypeError(f"auth: expected a langgraph_sdk.Auth, got {type(auth).__name__}")
        self.auth = auth
        self.studio = studio  # `x-auth-scheme: langsmith` is LangGraph Studio (graphrun dev)
        fn = auth._authenticate_handler
        self.params: set[str] = _parameters(fn) if fn is not None else set()
        self.fn: Callable[..., Awaitable[Any]] | None = None
        if fn is not None:
            self.fn = fn if inspect.iscoroutinefunction(fn) else functools.partial(
                run_in_threadpool, fn)

    # -- authentication ----------------------------------------------------------------
    async def authenticate(self, scope: dict[str, Any]) -> tuple[Any, list[str]]:
        """(user, permissions) of a request, or Denied."""
        headers = dict(scope.get("headers") or [])
        if self.studio and headers.get(b"x-auth-scheme") == b"langsmith":
            from langgraph_sdk.auth.types import StudioUser

            return StudioUser("langgraph-studio-user"), []
        if self.fn is None:  # handlers without @auth.authenticate: nobody in particular
            return AuthUser({"identity": "", "is_authenticated": False}), []
        try:
            if "request" in self.params and scope["type"] != "http":
                raise Denied(403, "The auth handler takes a `request`, which a websocket "
                             "does not have: take `headers`, `authorization`, `scope` or "
                             "`scopes` instead.")
            result = await self.fn(**self._arguments(scope, headers))
        except Denied:
            raise
        except StarletteHTTPException as exc:
            raise Denied(exc.status_code, exc.detail, exc.headers) from None
        except _auth_class().exceptions.HTTPException as exc:
            if exc.status_code in (401, 403):
                raise Denied(exc.status_code, str(exc.detail)) from None
            _log.error("auth handler raised HTTPException %s", exc.status_code, exc_info=exc)
            raise Denied(500, "Internal Server Error") from None
        except ValueError as exc:  # LangGraph's server answers any ValueError with a 400
            raise Denied(400, str(exc)) from None
        except Exception as exc:
            _log.error("auth handler failed", exc_info=exc)
            raise Denied(500, "Internal Server Error") from None
        try:
            return normalize(result)
        except ValueError as exc:
            raise Denied(400, str(exc)) from None

    def _arguments(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> dict[str, Any]:
        p = self.params
        args: dict[str, Any] = {}
        if "scope" in p:
            args["scope"] = scope
        if "request" in p:
            args["request"] = Request(scope)
        if "user" in p:
            args["user"] = scope.get("user")
        if "scopes" in p:
            auth = scope.get("auth")
            args["scopes"] = list(getattr(auth, "scopes", None) or [])
        if "path_params" in p:
            args["path_params"] = dict(scope.get("path_params") or {})
        if "path" in p:
            args["path"] = scope["path"]
        if "query_params" in p:
            args["query_params"] = QueryParams(scope.get("query_string") or b"")
        if "headers" in p:
            args["headers"] = headers
        if "authorization" in p:
            value = headers.get(b"authorization")
            args["authorization"] = value.decode() if value is not None else None
        if "method" in p:
            args["method"] = scope.get("method", "GET")  # a websocket's handshake is a GET
        return args

    # -- authorization -----------------------------------------------------------------
    def handler(self, resource: str, action: str) -> Callable[..., Awaitable[Any]] | None:
        """The handler of (resource, action): the most specific one registered."""
        handlers = self.auth._handlers
        for key in ((resource, action), (resource, "*"), ("*", action), ("*", "*")):
            if key in handlers:
                found: Callable[..., Awaitable[Any]] = handlers[key][-1]
                return found
        if self.auth._global_handlers:
            glob: Callable[..., Awaitable[Any]] = self.auth._global_handlers[-1]
            return glob
        return None

    async def run(self, user: Any, permissions: Sequence[str], resource: str, action: str,
                  value: dict[str, Any]) -> dict[str, Any] | None:
        handler = self.handler(resource, action)
        if handler is None:
            return None
        Auth = _auth_class()
        ctx = Auth.types.AuthContext(user=user, permissions=list(permissions),
                                     resource=resource, action=action)
        try:
            result = await handler(ctx=ctx, value=value)
        except Auth.exceptions.HTTPException as exc:
            raise Denied(exc.status_code, exc.detail, exc.headers) from None
        except AssertionError as exc:
            raise Denied(403, str(exc)) from None
        if result is None or result is True:
            return None
        if result is False:
            raise Denied(403, "Forbidden")
        if not isinstance(result, dict):
            raise Denied(500, "Auth handler returned invalid result. Expected filter dict, "
                         f"None, or boolean. Got {type(result)} instead.")
        check_filter(result)
        return result or None


def _parameters(fn: Callable[..., Any]) -> set[str]:
    names = inspect.signature(fn).parameters
    unsupported = [n for n, p in names.items()
                   if n not in PARAMETERS and p.default is inspect.Parameter.empty
                   and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    if unsupported:
        raise ValueError(f"The authenticate handler takes {unsupported}, which graphrun "
                         f"cannot give it; it may take {list(PARAMETERS)}.")
    # `body` is accepted but not given, as on LangGraph's server.
    return {n for n in names if n in PARAMETERS and n != "body"}


def normalize(result: Any) -> tuple[Any, list[str]]:
    """(user, permissions) of what `@auth.authenticate` returned, as LangGraph reads it."""
    if isinstance(result, tuple):
        if len(result) != 2:
            raise ValueError(f"Expected a tuple with two elements (permissions, user), got "
                             f"{len(result)}")
        permissions, user = result
    elif hasattr(result, "permissions") and not isinstance(result, Mapping):
        permissions, user = result.permissions, result
    elif isinstance(result, Mapping) and "permissions" in result:
        permissions, user = result["permissions"], result
    else:
        permissions, user = [], result
    if isinstance(user, str):
        user = AuthUser({"identity": user})
    elif isinstance(user, Mapping) and "identity" in user:
        user = AuthUser(dict(user))
    elif hasattr(user, "identity"):
        user = user if _is_user_like(user) else AuthUser(user)
    else:
        raise ValueError("Expected a BaseUser instance with required property: identity "
                         "(str). Optional properties are: is_authenticated (bool, defaults "
                         "to True) and display_name (str, defaults to identity). Got "
                         f"{type(user)} instead")
    return user, list(permissions or [])


def _is_user_like(user: Any) -> bool:
    return all(hasattr(user, a) for a in ("identity", "is_authenticated", "display_name"))


def user_json(user: Any) -> dict[str, Any] | None:
    """The user as a run's config carries it (`langgraph_auth_user`): a JSON object."""
    if user is None:
        return None
    if isinstance(user, AuthUser) or callable(getattr(user, "dict", None)):
        data = user.dict()
    else:
        data = AuthUser(user).dict()
    out: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return out


def identity_of(user: Any) -> str | None:
    try:
        return str(user.identity)
    except (AttributeError, NotImplementedError):
        return getattr(user, "display_name", None)


# -- the middleware ------------------------------------------------------------------------
class AuthMiddleware:
    """Authenticates each HTTP request and websocket (pure ASGI: streams pass through)."""

    def __init__(self, app: Any, authz: Authz, user_routes: Sequence[Any] = ()) -> None:
        self.app = app
        self.authz = authz
        self.user_routes = list(user_routes)

    def _open(self, scope: dict[str, Any]) -> bool:
        if scope["type"] == "http" and scope["method"] == "OPTIONS":
            return True  # CORS preflights (a CORS middleware outside answers them)
        if scope["path"] in OPEN_PATHS:
            return True
        return any(r.matches(scope)[0] == Match.FULL for r in self.user_routes)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket") or self._open(scope):
            await self.app(scope, receive, send)
            return
        try:
            user, permissions = await self.authz.authenticate(scope)
        except Denied as exc:
            if scope["type"] == "websocket":  # refused before the handshake: 4000 + status
                await send({"type": "websocket.close", "code": 4000 + exc.status,
                            "reason": str(exc.detail)[:120]})
                return
            response = JSONResponse({"detail": exc.detail}, status_code=exc.status,
                                    headers=exc.headers)
            await response(scope, receive, send)
            return
        from starlette.authentication import AuthCredentials

        scope["user"] = user
        scope["auth"] = AuthCredentials(permissions)
        scope[CONTEXT] = (user, permissions)
        await self.app(scope, receive, send)


# -- what the routes call -------------------------------------------------------------------
def _authz(conn: HTTPConnection) -> Authz | None:
    return getattr(conn.app.state, "authz", None)


def active(conn: HTTPConnection) -> bool:
    """Whether requests to this app are authorized by handlers."""
    return _authz(conn) is not None and CONTEXT in conn.scope


async def event(conn: HTTPConnection, resource: str, action: str, value: dict[str, Any]
                ) -> dict[str, Any] | None:
    """Run the handler of (resource, action) on `value` (which it may change): its
    filter, or None. Raises Denied."""
    authz = _authz(conn)
    context = conn.scope.get(CONTEXT)
    if authz is None or context is None:
        return None
    user, permissions = context
    return await authz.run(user, permissions, resource, action, value)


def as_id(value: str | None) -> Any:
    """An id as LangGraph's server hands it to a handler: a UUID (when it is one)."""
    if value is None:
        return None
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return value


def run_keys(conn: HTTPConnection) -> dict[str, Any]:
    """The user, its id and permissions, as a run's `configurable` carries them."""
    context = conn.scope.get(CONTEXT) if _authz(conn) is not None else None
    if context is None:
        return {}
    user, permissions = context
    return {"langgraph_auth_user": user_json(user),
            "langgraph_auth_user_id": identity_of(user),
            "langgraph_auth_permissions": list(permissions)}


# -- filters ---------------------------------------------------------------------------------
def check_filter(filters: Mapping[str, Any], depth: int = 0) -> None:
    """Refuse (500, as LangGraph's server) a filter it would refuse."""
    if depth > MAX_DEPTH:
        raise Denied(500, "Your auth handler returned a filter with too many nested "
                     "operators. The maximum depth for nested operators is 2. Please "
                     "simplify your filter.")
    for key, value in filters.items():
        if key in ("$or", "$and"):
            if not isinstance(value, list) or len(value) < 2:
                raise Denied(500, f"Your auth handler returned a filter with an invalid "
                             f"{key} operator. The {key} operator must be a list of at "
                             f"least 2 filter objects. Check the filter returned by your "
                             f"auth handler.")
            for group in value:
                if not isinstance(group, dict):
                    raise Denied(500, f"{key}: each group is a filter object.")
                check_filter(group, depth + 1)
        elif isinstance(value, dict):
            if not value:
                raise Denied(500, f"filter on {key!r}: an empty operator object.")
            op = next(iter(value))
            if op not in ("$eq", "$contains"):
                raise Denied(500, f"filter on {key!r}: operator {op!r} is not supported "
                             f"(use $eq or $contains).")


def matches(metadata: Mapping[str, Any] | None, filters: Mapping[str, Any] | None) -> bool:
    """Whether metadata passes a handler's filter (LangGraph's semantics)."""
    if not filters:
        return True
    metadata = metadata or {}
    for key, value in filters.items():
        if key == "$or":
            if not any(matches(metadata, g) for g in value):
                return False
        elif key == "$and":
            if not all(matches(metadata, g) for g in value):
                return False
        elif isinstance(value, dict):
            op = next(iter(value))
            want = value[op]
            if key not in metadata:
                return False
            if op == "$eq":
                if metadata[key] != want:
                    return False
            else:  # $contains: an element, or every element of a list
                have = metadata[key]
                if not isinstance(have, list):
                    return False
                wanted = want if isinstance(want, list) else [want]
                if any(w not in have for w in wanted):
                    return False
        elif key not in metadata or metadata[key] != value:
            return False
    return True


def visibility_filter(filters: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A filter for graphrun.visibility (threads, assistants): refused (501) when it
    uses `$contains`, which the index cannot answer."""
    if filters and _uses_contains(filters):
        raise Denied(501, "graphrun cannot search by a filter with $contains (the "
                     "metadata index keeps a list whole, not its elements): return "
                     "{key: value} / $eq / $or / $and filters for searches.")
    return filters


def _uses_contains(filters: Mapping[str, Any]) -> bool:
    for key, value in filters.items():
        if key in ("$or", "$and") and any(_uses_contains(g) for g in value):
            return True
        if isinstance(value, dict) and "$contains" in value:
            return True
    return False


# -- threads ---------------------------------------------------------------------------------
async def thread(conn: HTTPConnection, thread_id: str, action: str,
                 value: dict[str, Any] | None = None, *, missing_ok: bool = False,
                 status: int = 404) -> dict[str, Any] | None:
    """The thread handler's check of one thread: its filter must match the thread's
    metadata, else NotFound (404, as LangGraph's server; `status` 409 raises Conflict).
    `missing_ok`: a thread that does not exist passes (a run creates it)."""
    if not active(conn):
        return None
    filters = await event(conn, "threads", action,
                          value if value is not None else {"thread_id": as_id(thread_id)})
    await thread_matches(conn, thread_id, filters, missing_ok=missing_ok, status=status)
    return filters


async def thread_matches(conn: HTTPConnection, thread_id: str,
                         filters: Mapping[str, Any] | None, *, missing_ok: bool = False,
                         status: int = 404) -> None:
    """NotFound (or Conflict, `status` 409) unless the thread's metadata passes `filters`."""
    if not filters:
        return
    from graphrun.server.context import Conflict, NotFound
    from graphrun.server.threads import describe, metadata_of, thread_not_found

    try:
        desc = await describe(conn.app.state.server.gc, thread_id)
    except NotFound:
        if missing_ok:
            return
        raise
    if not matches(await metadata_of(desc), filters):
        if status == 409:
            raise Conflict(f"Thread {thread_id!r} already exists.")
        raise thread_not_found(thread_id)


async def thread_create(conn: HTTPConnection, thread_id: str, metadata: dict[str, Any],
                        if_exists: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """`threads.create`: the metadata the new thread gets (as the handler leaves it) and
    the handler's filter, which an existing thread of that id must pass (else 409)."""
    if not active(conn):
        return metadata, None
    value = {"thread_id": as_id(thread_id), "metadata": metadata, "if_exists": if_exists}
    filters = await event(conn, "threads", "create", value)
    return dict(value.get("metadata") or {}), filters


async def thread_patch(conn: HTTPConnection, thread_id: str, body: Any) -> None:
    """`threads.update` on a patch: the metadata merged is what the handler leaves."""
    if not active(conn):
        return
    value = {"thread_id": as_id(thread_id), "metadata": body.metadata}
    await thread(conn, thread_id, "update", value)
    body.metadata = value.get("metadata") or {}


async def thread_prune(conn: HTTPConnection, thread_ids: Sequence[str]) -> None:
    """`threads.delete` on a prune: every thread must pass its filter (else 404)."""
    if not active(conn):
        return
    filters = await event(conn, "threads", "delete",
                          {"thread_ids": [as_id(t) for t in thread_ids]})
    for t in thread_ids:
        await thread_matches(conn, t, filters, missing_ok=True)


async def thread_search(conn: HTTPConnection, body: Any, *, count: bool = False
                        ) -> Mapping[str, Any] | None:
    """The search handler on a thread search (or count): the metadata it stamps on the
    search filters it too (as LangGraph's); its filter, for graphrun.visibility."""
    if not active(conn):
        return None
    value = {"metadata": dict(body.metadata or {}), "values": dict(body.values or {}),
             "status": body.status, "limit": 0 if count else body.limit,
             "offset": 0 if count else body.offset}
    filters = await event(conn, "threads", "search", value)
    body.metadata = value.get("metadata") or None
    return visibility_filter(filters)


# -- runs ------------------------------------------------------------------------------------
async def run(conn: HTTPConnection, run: Any) -> dict[str, Any]:
    """`threads.create_run` for a run about to be sent (runs.py's `NewRun`): the run's
    metadata as the handler leaves it, the thread's and the assistant's filters checked
    (404), a new thread created owned as the handler says; the keys the run's config
    carries (the user)."""
    if not active(conn):
        return {}
    from graphrun.server.context import NotFound
    from graphrun.server.threads import metadata_of

    body = run.body
    stateless = run.stateless
    keys = run_keys(conn)
    config = {**(body.config or {})}
    config["configurable"] = {**(config.get("configurable") or {}), **keys}
    value = {
        "thread_id": None if stateless else as_id(run.thread_id),
        "assistant_id": as_id(run.assistant_id), "run_id": as_id(run.run_id),
        "status": "pending", "metadata": dict(body.metadata or {}),
        "prevent_insert_if_inflight": False,
        "multitask_strategy": body.multitask_strategy,
        "if_not_exists": body.if_not_exists, "after_seconds": body.after_seconds or 0,
        "kwargs": {"input": body.input,
                   "command": body.command.model_dump() if body.command else None,
                   "config": config, "context": body.context,
                   "stream_mode": body.stream_mode,
                   "interrupt_before": body.interrupt_before,
                   "interrupt_after": body.interrupt_after, "webhook": body.webhook,
                   "feedback_keys": None, "temporary": stateless,
                   "subgraphs": getattr(body, "stream_subgraphs", False)}}
    filters = await event(conn, "threads", "create_run", value)
    metadata = value.get("metadata") or {}
    run.body = body.model_copy(update={"metadata": metadata})
    assistant = await _assistant_of(conn, run.assistant_id)
    if assistant is not None and (assistant.get("metadata") or {}).get(
            "created_by") != "system":
        read = await event(conn, "assistants", "read", {"assistant_id": as_id(run.assistant_id)})
        if read and not matches(assistant.get("metadata"), read):
            raise NotFound("Thread or assistant not found.")
    desc = await run.existing()
    if desc is not None:
        if filters and not matches(await metadata_of(desc), filters):
            raise NotFound("Thread or assistant not found.")
    elif body.if_not_exists == "create" and _auth_has(conn, "threads", "create_run"):
        # The thread the run creates carries the run's metadata (LangGraph's): the owner
        # a handler stamps is the thread's. The run's start sets it, in the same call.
        run.thread_metadata = {"graph_id": run.graph, "assistant_id": run.assistant_id,
                               **((body.config or {}).get("metadata") or {}), **metadata}
    return keys


def _auth_has(conn: HTTPConnection, resource: str, action: str) -> bool:
    authz = _authz(conn)
    return authz is not None and authz.handler(resource, action) is not None


async def _assistant_of(conn: HTTPConnection, assistant_id: str) -> dict[str, Any] | None:
    from graphrun.server import assistants

    try:
        found: dict[str, Any] = await assistants.lookup(conn.app.state.server, assistant_id)
        return found
    except Exception:
        return None


# -- assistants ------------------------------------------------------------------------------
async def assistant(conn: HTTPConnection, assistant_id: str, action: str,
                    value: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The assistants handler's check of one assistant: its filter must match the
    assistant's metadata, else 404."""
    if not active(conn):
        return None
    from graphrun.server import assistants

    filters = await event(conn, "assistants", action,
                          value if value is not None else {"assistant_id": as_id(assistant_id)})
    if filters:
        found = await assistants.lookup(conn.app.state.server, assistant_id)
        if not matches(found.get("metadata"), filters):
            raise assistants.AssistantNotFound(f"Assistant {assistant_id!r} not found.")
    return filters


async def assistant_write(conn: HTTPConnection, assistant_id: str, action: str, body: Any
                          ) -> dict[str, Any] | None:
    """`assistants.create` / `assistants.update` on a body: the config, context, metadata
    and name the handler leaves are the body's. Its filter: an update's must match the
    assistant (404); a create's, an assistant that exists already (409)."""
    if not active(conn):
        return None
    value: dict[str, Any] = {"assistant_id": as_id(assistant_id), "graph_id": body.graph_id,
                             "config": dict(body.config or {}),
                             "context": body.context if body.context is None else dict(
                                 body.context),
                             "metadata": dict(body.metadata or {}), "name": body.name}
    if action == "create":
        value["name"] = body.name or "Untitled"
        filters = await event(conn, "assistants", "create", value)
    else:
        filters = await assistant(conn, assistant_id, "update", value)
    for key in ("config", "context", "metadata", "name"):
        setattr(body, key, value.get(key) if key != "metadata" else value.get(key) or None)
    return filters


async def assistant_search(conn: HTTPConnection, body: Any, *, count: bool = False
                           ) -> Mapping[str, Any] | None:
    if not active(conn):
        return None
    value = {"graph_id": body.graph_id, "metadata": dict(body.metadata or {}),
             "limit": 0 if count else body.limit, "offset": 0 if count else body.offset}
    filters = await event(conn, "assistants", "search", value)
    body.metadata = value.get("metadata") or None
    return visibility_filter(filters)


# -- crons -----------------------------------------------------------------------------------
async def cron(conn: HTTPConnection, cron_id: str, action: str,
               value: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The crons handler's check of one cron (404 when its metadata does not match)."""
    if not active(conn):
        return None
    from graphrun.server import crons
    from graphrun.server.context import NotFound

    filters = await event(conn, "crons", action,
                          value if value is not None else {"cron_id": as_id(cron_id)})
    if filters:
        server = conn.app.state.server
        found = await crons.read_cron(server, crons.schedule_of(server, cron_id))
        if not matches(found.get("metadata"), filters):
            raise NotFound(f"Cron {cron_id!r} not found.")
    return filters


async def cron_create(conn: HTTPConnection, cron_id: str, thread_id: str | None, body: Any
                      ) -> None:
    """`crons.create` (and, for a thread's cron, `threads.read` of the thread: 404): the
    metadata the handler leaves is the cron's; its firings' config carries the user."""
    if not active(conn):
        return
    value = {"payload": body.model_dump(mode="json", exclude_none=True),
             "schedule": body.schedule, "cron_id": as_id(cron_id),
             "thread_id": as_id(thread_id), "user_id": identity_of(conn.scope[CONTEXT][0]),
             "end_time": getattr(body, "end_time", None),
             "metadata": dict(body.metadata or {})}
    await event(conn, "crons", "create", value)
    body.metadata = value.get("metadata") or None
    if thread_id is not None:
        await thread(conn, thread_id, "read", {"thread_id": as_id(thread_id),
                                               "metadata": body.metadata})
    config = dict(body.config or {})
    config["configurable"] = {**(config.get("configurable") or {}), **run_keys(conn)}
    body.config = config


async def cron_update(conn: HTTPConnection, cron_id: str, body: Any) -> None:
    """`crons.update`: its filter must match the cron (404); the metadata it leaves."""
    if not active(conn):
        return
    given = body.model_dump(mode="json", include=body.model_fields_set)
    value = {"cron_id": as_id(cron_id), "schedule": given.get("schedule"),
             "end_time": given.get("end_time"), "enabled": given.get("enabled"),
             "on_run_completed": given.get("on_run_completed"), "payload": given}
    if body.metadata is not None:
        value["metadata"] = body.metadata
    await cron(conn, cron_id, "update", value)
    if "metadata" in value:
        body.metadata = value["metadata"]
    if body.config is not None:  # the firings' config keeps carrying the user
        body.config = {**body.config, "configurable": {
            **(body.config.get("configurable") or {}), **run_keys(conn)}}


async def cron_filter(conn: HTTPConnection, body: Any, *, count: bool = False
                      ) -> Callable[[list[dict[str, Any]]], Awaitable[list[dict[str, Any]]]]:
    """What a cron search keeps: crons whose metadata matches the crons filter and whose
    thread (if any) matches the threads search filter."""
    async def keep_all(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return found

    if not active(conn):
        return keep_all
    value = {"assistant_id": as_id(body.assistant_id), "thread_id": as_id(body.thread_id),
             "limit": 0 if count else getattr(body, "limit", 0),
             "offset": 0 if count else getattr(body, "offset", 0),
             "metadata": dict(body.metadata or {})}
    filters = await event(conn, "crons", "search", value)
    body.metadata = value.get("metadata") or None
    thread_filters = await event(conn, "threads", "search", {})

    async def keep(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from graphrun.server.context import NotFound
        from graphrun.server.threads import describe, metadata_of

        out = []
        for c in found:
            if not matches(c.get("metadata"), filters):
                continue
            if thread_filters and c.get("thread_id"):
                try:
                    desc = await describe(conn.app.state.server.gc, c["thread_id"])
                except NotFound:
                    continue
                if not matches(await metadata_of(desc), thread_filters):
                    continue
            out.append(c)
        return out

    return keep


# -- store -----------------------------------------------------------------------------------
def _namespace(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or any(
            not isinstance(label, str) or not label or "." in label for label in value):
        raise ValueError(f"Namespace labels are non-empty strings without periods: "
                         f"{value!r:.120}")
    return tuple(value)


async def store(conn: HTTPConnection, action: str, value: dict[str, Any]
                ) -> dict[str, Any] | None:
    """The store handler on `value` (namespace a tuple, as LangGraph gives it): its
    filter (a search's), `value` as it leaves it, the namespace checked again."""
    if not active(conn):
        return None
    filters = await event(conn, "store", action, value)
    for key in ("namespace", "suffix"):
        if key in value and value[key] is not None:
            value[key] = _namespace(value[key])
    return filters
