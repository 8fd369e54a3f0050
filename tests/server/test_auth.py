"""Custom auth as LangGraph's server has it (graphrun.server.auth): the auth.py files of
LangGraph's custom-auth tutorials ("Set up custom authentication", "Make conversations
private", "Connect an authentication provider": its Supabase server is a local stub
here), served by graphrun from a langgraph.json, called with langgraph_sdk and httpx."""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from graphrun.server.config import auth_options, load_config
from tests.server.conftest import _ApiHost

GRAPH = '''
from typing import Any
from typing_extensions import TypedDict
from langchain_core.runnables import RunnableConfig
from graphrun import START, StateGraph

class S(TypedDict, total=False):
    messages: list
    user_id: str
    user: Any
    permissions: Any

def whoami(state: S, config: RunnableConfig) -> dict:
    c = config["configurable"]
    return {"user_id": c.get("langgraph_auth_user_id"), "user": c.get("langgraph_auth_user"),
            "permissions": c.get("langgraph_auth_permissions")}

graph = StateGraph(S).add_node("whoami", whoami).add_edge(START, "whoami").compile()
'''

# -- the tutorials' auth.py, as published ------------------------------------------------
SET_UP_CUSTOM_AUTH = '''
from langgraph_sdk import Auth

# This is our toy user database. Do not do this in production
VALID_TOKENS = {
    "user1-token": {"id": "user1", "name": "Alice"},
    "user2-token": {"id": "user2", "name": "Bob"},
}

# The "Auth" object is a container that LangGraph will use to mark our authentication function
auth = Auth()


# The `authenticate` decorator tells LangGraph to call this function as middleware
# for every request. This will determine whether the request is allowed or not
@auth.authenticate
async def get_current_user(authorization: str | None) -> Auth.types.MinimalUserDict:
    """Check if the user's token is valid."""
    assert authorization
    scheme, token = authorization.split()
    assert scheme.lower() == "bearer"
    # Check if token is valid
    if token not in VALID_TOKENS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Invalid token")

    # Return user info if valid
    user_data = VALID_TOKENS[token]
    return {
        "identity": user_data["id"],
    }
'''

MAKE_CONVERSATIONS_PRIVATE = '''
from langgraph_sdk import Auth

# Keep our test users from the previous tutorial
VALID_TOKENS = {
    "user1-token": {"id": "user1", "name": "Alice"},
    "user2-token": {"id": "user2", "name": "Bob"},
}

auth = Auth()


@auth.authenticate
async def get_current_user(authorization: str | None) -> Auth.types.MinimalUserDict:
    """Our authentication handler from the previous tutorial."""
    assert authorization
    scheme, token = authorization.split()
    assert scheme.lower() == "bearer"

    if token not in VALID_TOKENS:
        raise Auth.exceptions.HTTPException(status_code=401, detail="Invalid token")

    user_data = VALID_TOKENS[token]
    return {
        "identity": user_data["id"],
    }


@auth.on
async def add_owner(
    ctx: Auth.types.AuthContext,  # Contains info about the current user
    value: dict,  # The resource being created/accessed
):
    """Make resources private to their creator."""
    filters = {"owner": ctx.user.identity}
    metadata = value.setdefault("metadata", {})
    metadata.update(filters)

    # Only let users see their own resources
    return filters

# Keep our previous handlers...

from langgraph_sdk import Auth

@auth.on.threads.create
async def on_thread_create(
    ctx: Auth.types.AuthContext,
    value: Auth.types.on.threads.create.value,
):
    """Add owner when creating threads."""
    # Add owner metadata to the thread being created
    # This metadata is stored with the thread and persists
    metadata = value.setdefault("metadata", {})
    metadata["owner"] = ctx.user.identity


    # Return filter to restrict access to just the creator
    return {"owner": ctx.user.identity}

@auth.on.threads.read
async def on_thread_read(
    ctx: Auth.types.AuthContext,
    value: Auth.types.on.threads.read.value,
):
    """Only let users read their own threads."""
    return {"owner": ctx.user.identity}

@auth.on.assistants
async def on_assistants(
    ctx: Auth.types.AuthContext,
    value: Auth.types.on.assistants.value,
):
    # For illustration purposes, we will deny all requests
    # that touch the assistants resource
    raise Auth.exceptions.HTTPException(
        status_code=403,
        detail="User lacks the required permissions.",
    )

# Assumes you organize information in store like (user_id, resource_type, resource_id)
@auth.on.store()
async def authorize_store(ctx: Auth.types.AuthContext, value: dict):
    # The "namespace" field for each store item is a tuple you can think of as the directory of an item.
    namespace: tuple = value["namespace"]
    assert namespace[0] == ctx.user.identity, "Not authorized"
'''

CONNECT_AN_AUTHENTICATION_PROVIDER = '''
import os
import httpx
from langgraph_sdk import Auth

auth = Auth()

# This is loaded from the `.env` file you created above
SUPABASE_URL = os.environ["SUPABASE_URL"]
SUPABASE_SERVICE_KEY = os.environ["SUPABASE_SERVICE_KEY"]


@auth.authenticate
async def get_current_user(authorization: str | None):
    """Validate JWT tokens and extract user information."""
    assert authorization
    scheme, token = authorization.split()
    assert scheme.lower() == "bearer"

    try:
        # Verify token with auth provider
        async with httpx.AsyncClient() as client:
            response = await client.get(
                f"{SUPABASE_URL}/auth/v1/user",
                headers={
                    "Authorization": authorization,
                    "apiKey": SUPABASE_SERVICE_KEY,
                },
            )
            assert response.status_code == 200
            user = response.json()
            return {
                "identity": user["id"],  # Unique user identifier
                "email": user["email"],
                "is_authenticated": True,
            }
    except Exception as e:
        raise Auth.exceptions.HTTPException(status_code=401, detail=str(e))

# ... the rest is the same as before

# Keep our resource authorization from the previous tutorial
@auth.on
async def add_owner(ctx, value):
    """Make resources private to their creator using resource metadata."""
    filters = {"owner": ctx.user.identity}
    metadata = value.setdefault("metadata", {})
    metadata.update(filters)
    return filters
'''

# -- graphrun's own: the corners the tutorials do not reach --------------------------------
CORNERS = '''
from langgraph_sdk import Auth

auth = Auth()

@auth.authenticate
async def who(headers: dict, path: str, method: str):
    name = headers.get(b"x-user")
    if not name:
        raise Auth.exceptions.HTTPException(status_code=401, detail="who are you?")
    return {"identity": name.decode(), "permissions": ["read", "write"], "team": "blue"}

@auth.on.threads.create
async def create(ctx, value):
    if ctx.user.identity == "mallory":
        return False
    assert ctx.user.identity != "eve", "eve may not create threads"
    metadata = value.setdefault("metadata", {})
    metadata["owner"] = ctx.user.identity
    metadata["team"] = ctx.user.team

@auth.on(resources=["threads"], actions=["read", "search", "update", "delete", "create_run"])
async def mine_or_shared(ctx, value):
    return {"$or": [{"owner": ctx.user.identity}, {"shared": {"$eq": True}}]}
'''


def _project(root: Path, auth_py: str, env: dict[str, str] | None = None) -> Path:
    (root / "graph.py").write_text(GRAPH)
    (root / "src" / "security").mkdir(parents=True)
    (root / "src" / "security" / "auth.py").write_text(auth_py)
    config = {"dependencies": ["."], "graphs": {"agent": "./graph.py:graph"},
              "auth": {"path": "src/security/auth.py:auth"}}
    if env:
        config["env"] = env
    (root / "langgraph.json").write_text(json.dumps(config))
    return root / "langgraph.json"


def _host(dev_server: Any, config: Path) -> _ApiHost:
    from langgraph.store.memory import InMemoryStore

    return _ApiHost(dev_server.address, load_config(config), api_keys=(),
                    auth=auth_options(config), store=InMemoryStore())


def _as(url: str, token: str) -> Any:
    return get_client(url=url, headers={"Authorization": f"Bearer {token}"})


def _status(exc: BaseException) -> int:
    response = getattr(exc, "response", None)
    assert response is not None, exc
    status: int = response.status_code
    return status


async def _refused(coro: Any) -> int:
    try:
        await coro
    except httpx.HTTPStatusError as exc:
        return _status(exc)
    raise AssertionError("expected a refusal")


# -- 1. Set up custom authentication -------------------------------------------------------
@pytest.fixture(scope="module")
def tutorial_1(dev_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    host = _host(dev_server, _project(tmp_path_factory.mktemp("auth1"), SET_UP_CUSTOM_AUTH))
    yield host.url
    host.close()


async def test_set_up_custom_authentication(tutorial_1: str) -> None:
    async with httpx.AsyncClient(base_url=tutorial_1) as raw:
        assert (await raw.get("/ok")).status_code == 200  # open, as LangGraph's
        # The tutorial's `assert authorization` fails: LangGraph's server answers 500.
        assert (await raw.post("/threads", json={})).status_code == 500
        bad = await raw.post("/threads", json={}, headers={"Authorization": "Bearer nope"})
        assert (bad.status_code, bad.json()) == (401, {"detail": "Invalid token"})
    client = _as(tutorial_1, "user1-token")
    thread = await client.threads.create()
    out = await client.runs.wait(thread["thread_id"], "agent",
                                 input={"messages": [{"role": "user", "content": "Hello!"}]})
    assert out["user_id"] == "user1"
    assert out["user"] == {"identity": "user1", "is_authenticated": True,
                           "display_name": "user1"}
    assert out["permissions"] == []
    # Without authorization handlers, users share everything (the tutorial's point).
    assert (await _as(tutorial_1, "user2-token").threads.get(thread["thread_id"]))


# -- 2. Make conversations private ---------------------------------------------------------
@pytest.fixture(scope="module")
def tutorial_2(dev_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    host = _host(dev_server, _project(tmp_path_factory.mktemp("auth2"),
                                      MAKE_CONVERSATIONS_PRIVATE))
    yield host.url
    host.close()


async def test_make_conversations_private(tutorial_2: str) -> None:
    alice, bob = _as(tutorial_2, "user1-token"), _as(tutorial_2, "user2-token")
    alice_thread = await alice.threads.create()
    assert alice_thread["metadata"]["owner"] == "user1"
    out = await alice.runs.wait(alice_thread["thread_id"], "agent", input={
        "messages": [{"role": "user", "content": "Hi, this is Alice's private chat"}]})
    assert out["user_id"] == "user1"
    tid = alice_thread["thread_id"]
    # Bob cannot see, change, run on or delete Alice's thread: 404, as LangGraph's.
    for attempt in (bob.threads.get(tid), bob.threads.get_state(tid),
                    bob.threads.get_history(tid), bob.threads.update(tid, metadata={"x": 1}),
                    bob.runs.list(tid), bob.runs.create(tid, "agent", input={}),
                    bob.runs.wait(tid, "agent", input={}), bob.threads.delete(tid)):
        assert await _refused(attempt) == 404
    bob_thread = await bob.threads.create()
    await bob.runs.wait(bob_thread["thread_id"], "agent", input={"messages": []})
    alice_ids = {t["thread_id"] for t in await alice.threads.search(limit=100)}
    bob_ids = {t["thread_id"] for t in await bob.threads.search(limit=100)}
    assert tid in alice_ids and tid not in bob_ids
    assert bob_thread["thread_id"] in bob_ids and bob_thread["thread_id"] not in alice_ids
    assert await alice.threads.count() == len(alice_ids)
    assert len(await alice.runs.list(tid)) == 1
    # Assistants: the handler refuses every request (403).
    assert await _refused(alice.assistants.create("agent")) == 403
    assert await _refused(alice.assistants.search()) == 403
    # The store: the namespace's first label must be the user's (AssertionError: 403).
    await alice.store.put_item(["user1", "notes"], "k", {"text": "mine"})
    assert (await alice.store.get_item(["user1", "notes"], "k"))["value"] == {"text": "mine"}
    assert await _refused(alice.store.put_item(["user2", "notes"], "k", {"x": 1})) == 403
    assert await _refused(bob.store.get_item(["user1", "notes"], "k")) == 403
    assert await _refused(bob.store.search_items(["user1"])) == 403
    async with httpx.AsyncClient(base_url=tutorial_2) as raw:
        r = await raw.get(f"/threads/{tid}", headers={"Authorization": "Bearer user2-token"})
        assert r.status_code == 404
        r = await raw.post("/assistants/search", json={},
                           headers={"Authorization": "Bearer user1-token"})
        assert (r.status_code, r.json()) == (403, {"detail": "User lacks the required "
                                                             "permissions."})


# -- 3. Connect an authentication provider (a local stand-in for Supabase) ------------------
USERS = {"alice-jwt": {"id": f"a-{uuid.uuid4()}", "email": "alice@example.com"},
         "bob-jwt": {"id": f"b-{uuid.uuid4()}", "email": "bob@example.com"}}


class _Supabase(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # GET /auth/v1/user, as Supabase answers it
        token = (self.headers.get("Authorization") or "").split(" ")[-1]
        user = USERS.get(token) if self.path == "/auth/v1/user" and self.headers.get(
            "apiKey") == "service-key" else None
        body = json.dumps(user or {"msg": "invalid JWT"}).encode()
        self.send_response(200 if user else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def tutorial_3(dev_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    supabase = ThreadingHTTPServer(("127.0.0.1", 0), _Supabase)
    threading.Thread(target=supabase.serve_forever, daemon=True).start()
    env = {"SUPABASE_URL": f"http://127.0.0.1:{supabase.server_address[1]}",
           "SUPABASE_SERVICE_KEY": "service-key"}
    _unset(env)  # langgraph.json's env does not replace what the process has
    host = _host(dev_server, _project(tmp_path_factory.mktemp("auth3"),
                                      CONNECT_AN_AUTHENTICATION_PROVIDER, env))
    yield host.url
    host.close()
    supabase.shutdown()
    _unset(env)


def _unset(env: dict[str, str]) -> None:
    """Forget a tutorial's env (an earlier one's server is gone) in this process."""
    for key in env:
        os.environ.pop(key, None)


async def test_connect_an_authentication_provider(tutorial_3: str) -> None:
    alice, bob = _as(tutorial_3, "alice-jwt"), _as(tutorial_3, "bob-jwt")
    a_id, b_id = USERS["alice-jwt"]["id"], USERS["bob-jwt"]["id"]
    thread = await alice.threads.create()
    assert await _refused(get_client(url=tutorial_3).threads.create()) == 500  # as LangGraph
    assert await _refused(_as(tutorial_3, "forged").threads.create()) == 401
    assert await _refused(bob.threads.get(thread["thread_id"])) == 404
    out = await alice.runs.wait(thread["thread_id"], "agent", input={"messages": []})
    assert out["user_id"] == a_id
    assert out["user"] == {"identity": a_id, "is_authenticated": True, "display_name": a_id,
                           "email": "alice@example.com"}
    # Assistants: each user's own (stamped, filtered through visibility); 404 for others.
    mine = await alice.assistants.create("agent", metadata={"k": "v"})
    assert mine["metadata"] == {"k": "v", "owner": a_id}
    assert [a["assistant_id"] for a in await alice.assistants.search()] == [
        mine["assistant_id"]]
    assert await bob.assistants.search() == []  # the graph's own assistant has no owner
    assert await _refused(bob.assistants.get(mine["assistant_id"])) == 404
    assert await alice.assistants.count() == 1
    # Runs on a new thread (stateless): the thread the run makes is the user's.
    run = await alice.runs.create(None, mine["assistant_id"], input={"messages": []})
    assert run["metadata"]["owner"] == a_id
    # Crons: each user's own.
    cron = await alice.crons.create(mine["assistant_id"], schedule="0 0 1 1 *", input={})
    assert cron["metadata"]["owner"] == a_id
    try:
        assert [c["cron_id"] for c in await alice.crons.search()] == [cron["cron_id"]]
        assert await bob.crons.search() == []
        assert await _refused(bob.crons.delete(cron["cron_id"])) == 404
    finally:
        await alice.crons.delete(cron["cron_id"])
    # The store: a search is filtered by the handler's filter on the items' values.
    await alice.store.put_item(["shared"], "a", {"owner": a_id, "text": "alice's"})
    await bob.store.put_item(["shared"], "b", {"owner": b_id, "text": "bob's"})
    seen = (await alice.store.search_items(["shared"]))["items"]
    assert [i["key"] for i in seen] == ["a"]
    # Bob's search sees his threads only.
    await bob.threads.create()
    assert thread["thread_id"] not in {t["thread_id"] for t in await bob.threads.search()}


# -- graphrun's corners: False, assert, $or through visibility, permissions, websockets ----
@pytest.fixture(scope="module")
def corners(dev_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    host = _host(dev_server, _project(tmp_path_factory.mktemp("auth4"), CORNERS))
    yield host.url
    host.close()


def _user(url: str, name: str) -> Any:
    return get_client(url=url, headers={"x-user": name})


async def test_refusals_filters_and_the_users_permissions(corners: str) -> None:
    async with httpx.AsyncClient(base_url=corners) as raw:
        r = await raw.post("/threads", json={})
        assert (r.status_code, r.json()) == (401, {"detail": "who are you?"})
        r = await raw.post("/threads", json={}, headers={"x-user": "mallory"})
        assert (r.status_code, r.json()) == (403, {"detail": "Forbidden"})
        r = await raw.post("/threads", json={}, headers={"x-user": "eve"})
        assert (r.status_code, r.json()) == (403, {"detail": "eve may not create threads"})
    tag = str(uuid.uuid4())
    alice, bob = _user(corners, f"alice-{tag}"), _user(corners, f"bob-{tag}")
    private = await alice.threads.create(metadata={"tag": tag})
    shared = await alice.threads.create(metadata={"tag": tag, "shared": True})
    assert private["metadata"] == {"tag": tag, "owner": f"alice-{tag}", "team": "blue"}
    # $or: Bob sees the shared thread (search and count, through visibility), not the other.
    seen = [t["thread_id"] for t in await bob.threads.search(metadata={"tag": tag})]
    assert seen == [shared["thread_id"]]
    assert await bob.threads.count(metadata={"tag": tag}) == 1
    assert await alice.threads.count(metadata={"tag": tag}) == 2
    assert await _refused(bob.threads.get(private["thread_id"])) == 404
    out = await bob.runs.wait(shared["thread_id"], "agent", input={"messages": []})
    assert out["user_id"] == f"bob-{tag}"
    assert out["permissions"] == ["read", "write"]
    assert out["user"]["team"] == "blue"


async def test_a_websocket_is_authenticated_and_authorized(corners: str) -> None:
    import websockets

    alice = _user(corners, "alice-ws")
    thread = await alice.threads.create()
    ws_url = corners.replace("http://", "ws://") + f"/threads/{thread['thread_id']}/stream/events"
    # Refused before the handshake (uvicorn answers a close before accept with 403).
    with pytest.raises(websockets.InvalidStatus) as refused:
        await websockets.connect(ws_url)
    assert refused.value.response.status_code == 403
    async with websockets.connect(ws_url, additional_headers={"x-user": "bob-ws"}) as ws:
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404
    async with websockets.connect(ws_url, additional_headers={"x-user": "alice-ws"}) as ws:
        await ws.send(json.dumps({"id": 1, "method": "subscription.subscribe",
                                  "params": {"channels": ["values"]}}))
        assert json.loads(await ws.recv())["type"] == "success"


async def test_a_users_threads_outlive_retention(tutorial_2: str, dev_server: Any) -> None:
    """A thread a user's run creates carries its owner from the run's start; once every
    closed execution is deleted (as retention does) it is still hers alone."""
    from temporalio.client import Client

    from tests.temporal.test_thread_life import _delete_closed_executions

    alice, bob = _as(tutorial_2, "user1-token"), _as(tutorial_2, "user2-token")
    tag = uuid.uuid4().hex
    tid = str(uuid.uuid4())
    await alice.runs.wait(tid, "agent", input={"messages": []}, if_not_exists="create",
                          metadata={"tag": tag})
    await _delete_closed_executions(await Client.connect(dev_server.address))
    thread = await alice.threads.get(tid)
    assert thread["metadata"]["owner"] == "user1" and thread["metadata"]["tag"] == tag
    assert [t["thread_id"] for t in await alice.threads.search(metadata={"tag": tag})] == [tid]
    assert await alice.threads.count(metadata={"tag": tag}) == 1
    assert await bob.threads.count(metadata={"tag": tag}) == 0
    assert await _refused(bob.threads.get(tid)) == 404
    out = await alice.runs.wait(tid, "agent", input={"messages": []})
    assert out["user_id"] == "user1"


# -- Studio's requests and auth.openapi ----------------------------------------------------
SECURITY = {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "security": [{"bearer": []}]}


def _studio_host(dev_server: Any, root: Path, disable: bool) -> _ApiHost:
    config = _project(root, SET_UP_CUSTOM_AUTH)
    data = json.loads(config.read_text())
    data["auth"].update({"disable_studio_auth": disable, "openapi": SECURITY})
    config.write_text(json.dumps(data))
    return _ApiHost(dev_server.address, load_config(config), api_keys=(),
                    auth=auth_options(config), studio_auth=True)  # as graphrun dev


async def test_studio_requests_and_the_openapi_security(
        dev_server: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    studio = {"x-auth-scheme": "langsmith"}
    hosts = {disable: _studio_host(dev_server, tmp_path_factory.mktemp(f"studio{disable}"),
                                   disable) for disable in (False, True)}
    try:
        async with httpx.AsyncClient(base_url=hosts[False].url) as raw:
            # LangGraph Studio's requests pass as its user, as on `langgraph dev`.
            made = await raw.post("/threads", json={}, headers=studio)
            assert made.status_code == 200, made.text
            out = await raw.post(f"/threads/{made.json()['thread_id']}/runs/wait", json={
                "assistant_id": "agent", "input": {"messages": []}}, headers=studio)
            assert out.json()["user_id"] == "langgraph-studio-user"
            spec = (await raw.get("/openapi.json")).json()
            assert spec["components"]["securitySchemes"] == SECURITY["securitySchemes"]
            assert spec["security"] == SECURITY["security"]
        async with httpx.AsyncClient(base_url=hosts[True].url) as raw:
            # disable_studio_auth: the header is nothing; the tutorial's handler refuses.
            refused = await raw.post("/threads", json={}, headers=studio)
            assert refused.status_code == 500
    finally:
        for host in hosts.values():
            host.close()
