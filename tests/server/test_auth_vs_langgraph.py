"""LangGraph's custom-auth tutorials on two servers: each tutorial's project (graph.py,
auth.py, langgraph.json, as tests/server/test_auth.py makes it) served by LangGraph's own
server (`langgraph dev`, in-memory) and by graphrun's API, driven by one script of
requests (langgraph_sdk and httpx: no token, a bad token, two users' tokens), whose
answers must be the same on both: status codes, error details, the threads, assistants,
crons and store items each user sees, counts, and the user a run sees."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from graphrun.devserver import DevServer
from tests.server.test_auth import (
    CONNECT_AN_AUTHENTICATION_PROVIDER,
    MAKE_CONVERSATIONS_PRIVATE,
    SET_UP_CUSTOM_AUTH,
    USERS,
    _host,
    _project,
    _Supabase,
    _unset,
)

pytest.importorskip("langgraph_api", reason="comparing with LangGraph's server needs "
                    "`langgraph dev` (pip install 'langgraph-cli[inmem]')")

START_TIMEOUT = 180.0  # seconds `langgraph dev` may take to answer GET /ok (~2-5 s here)
pytestmark = pytest.mark.timeout(300)  # a test's setup starts both servers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the two servers ------------------------------------------------------------------------
def _langgraph_project(root: Path, auth_py: str, env: dict[str, str] | None = None) -> Path:
    """test_auth.py's project, its graph built with LangGraph's StateGraph: `langgraph dev`
    loads LangGraph's graphs only, and graphrun converts them."""
    config = _project(root, auth_py, env)
    graph = root / "graph.py"
    graph.write_text(graph.read_text().replace("from graphrun import START, StateGraph",
                                               "from langgraph.graph import START, StateGraph"))
    return config


class _LangGraphDev:
    """`langgraph dev` on a free port, offline: no tracing, no analytics, no license or
    LangSmith key (so no metadata submissions), no browser, no reload."""

    def __init__(self, config: Path) -> None:
        self.port = _free_port()
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_"))}
        env.update(LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false",
                   LANGGRAPH_CLI_NO_ANALYTICS="1", PYTHONUNBUFFERED="1")
        self.log = config.parent / "langgraph-dev.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "langgraph_cli", "dev", "--no-browser",
                 "--no-reload", "--port", str(self.port), "--config", str(config)],
                cwd=config.parent, env=env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        self.started = time.monotonic()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait(self) -> float:
        """Wait for GET /ok; the seconds it took since the start."""
        deadline = self.started + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if httpx.get(f"{self.url}/ok", timeout=2).status_code == 200:
                    return time.monotonic() - self.started
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.close()
        raise RuntimeError(f"langgraph dev did not start:\n{self.log.read_text()[-4000:]}")

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


def _serve_both(root: Path, auth_py: str,
                env: dict[str, str] | None = None) -> Iterator[dict[str, str]]:
    """The project served by `langgraph dev` and by graphrun's API (over a Temporal dev
    server of its own, so its searches see this tutorial's threads only, as a fresh
    `langgraph dev` does)."""
    config = _langgraph_project(root, auth_py, env)
    langgraph = _LangGraphDev(config)
    try:
        with DevServer(ui=False) as temporal:
            host = _host(temporal, config)
            try:
                seconds = langgraph.wait()
                print(f"langgraph dev answered /ok in {seconds:.1f}s")
                yield {"langgraph": langgraph.url, "graphrun": host.url}
            finally:
                host.close()
    finally:
        langgraph.close()


# -- the script: requests, and their answers normalized ---------------------------------
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class _Script:
    """Requests to one server, and their answers with ids replaced by names given here
    (`name`), as (step, answer) pairs."""

    def __init__(self, url: str, names: dict[str, str] | None = None) -> None:
        self.url = url
        self.names: dict[str, str] = dict(names or {})
        self.answers: list[tuple[str, Any]] = []

    def name(self, ident: str, name: str) -> None:
        self.names[ident] = name

    def norm(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {self.norm(k): self.norm(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.norm(v) for v in value]
        if isinstance(value, str):
            for ident, name in self.names.items():
                value = value.replace(ident, f"<{name}>")
            return UUID.sub("<id>", value)
        return value

    def client(self, token: str | None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return get_client(url=self.url, headers=headers)

    async def sdk(self, step: str, call: Awaitable[Any],
                  pick: Callable[[Any], Any] = lambda out: out) -> Any:
        """An SDK call: its answer picked by `pick`, or its refusal (status, detail)."""
        try:
            out = await call
        except httpx.HTTPStatusError as exc:
            self.answers.append((step, self.norm(_refusal(exc.response))))
            return None
        self.answers.append((step, self.norm(pick(out))))
        return out

    async def raw(self, step: str, method: str, path: str, token: str | None = None,
                  headers: dict[str, str] | None = None, details: bool = False,
                  **kwargs: Any) -> httpx.Response:
        """A request through httpx: its status and, for a refusal, its detail."""
        sent = dict(headers or {})
        if token:
            sent["Authorization"] = f"Bearer {token}"
        async with httpx.AsyncClient(base_url=self.url, timeout=30) as http:
            response = await http.request(method, path, headers=sent, **kwargs)
        self.answers.append((step, self.norm(_refusal(response, details)
                                             if response.status_code >= 400
                                             else response.status_code)))
        return response


def _refusal(response: httpx.Response, details: bool = False) -> tuple[int, Any]:
    """A refusal's status and `detail`. Not a 500's body (LangGraph's is Starlette's plain
    text), nor a 404's detail unless `details`: LangGraph words it by route and store
    ("Thread with ID X not found", "Thread X not found", "Not Found", ...); a missing
    thread's is compared in test_a_missing_threads_404_says_so_in_langgraphs_words."""
    if response.status_code >= 500 or (response.status_code == 404 and not details):
        return (response.status_code, None)
    try:
        body = response.json()
    except (json.JSONDecodeError, ValueError):
        return (response.status_code, response.text)
    return (response.status_code, body.get("detail") if isinstance(body, dict) else body)


def _ids(script: _Script) -> Callable[[list[dict[str, Any]]], list[str]]:
    """A search's answer: the names of what it found, in its order."""
    def pick(found: Any) -> list[str]:
        rows = found["items"] if isinstance(found, dict) and "items" in found else found
        keys = ("thread_id", "assistant_id", "cron_id", "key")
        return [script.norm(next(r[k] for k in keys if k in r)) for r in rows]
    return pick


async def _gone(get: Callable[[str], Awaitable[Any]], ident: str, timeout: float = 30) -> None:
    """Wait until `get(ident)` answers 404 (or `timeout` passes: the next step shows it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            await get(ident)
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code == 404:
                return
        await asyncio.sleep(0.1)


async def _listed(client: Any, thread_id: str, timeout: float = 10) -> None:
    """Wait until a search finds `thread_id`: graphrun searches in Temporal's visibility,
    which lags a write by a moment (docs/server/index.md: "Visibility lags writes by a moment")."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if thread_id in {t["thread_id"] for t in await client.threads.search(limit=100)}:
            return
        await asyncio.sleep(0.05)


def _user_fields(out: Any) -> Any:
    return {k: out.get(k) for k in ("user_id", "user", "permissions")}


def _metadata(thing: Any) -> Any:
    return thing["metadata"]


def _compare(answers: dict[str, list[tuple[str, Any]]]) -> None:
    langgraph, graphrun = answers["langgraph"], answers["graphrun"]
    assert [s for s, _ in langgraph] == [s for s, _ in graphrun]
    differ = [f"{step}:\n  langgraph dev: {a!r}\n  graphrun:      {b!r}"
              for (step, a), (_, b) in zip(langgraph, graphrun, strict=True) if a != b]
    assert not differ, "answers differ:\n" + "\n".join(differ)


async def _both(servers: dict[str, str],
                script: Callable[[_Script], Awaitable[None]]) -> dict[str, list[Any]]:
    answers = {}
    for server, url in servers.items():
        run = _Script(url)
        await script(run)
        answers[server] = run.answers
    return answers


MESSAGES = {"messages": [{"role": "user", "content": "Hello!"}]}


async def _alice_runs_on_her_thread(s: _Script, topic: str) -> tuple[Any, Any, str]:
    """The tutorials' opening: a thread created without a token and with a bad one, then
    alice's thread, and her run on it. Alice's client, bob's, and her thread's id."""
    await s.raw("POST /threads, no token", "POST", "/threads", json={})
    await s.raw("POST /threads, bad token", "POST", "/threads", token="nope", json={})
    alice, bob = s.client("user1-token"), s.client("user2-token")
    thread = await s.sdk("alice creates a thread", alice.threads.create(
        metadata={"topic": topic}), _metadata)
    tid = thread["thread_id"]
    s.name(tid, "alice's thread")
    await s.sdk("alice runs on it", alice.runs.wait(tid, "agent", input=MESSAGES),
                _user_fields)
    return alice, bob, tid


# -- 1. Set up custom authentication -------------------------------------------------------
@pytest.fixture(scope="module")
def tutorial_1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    yield from _serve_both(tmp_path_factory.mktemp("vs1"), SET_UP_CUSTOM_AUTH)


async def _set_up_custom_authentication(s: _Script) -> None:
    await s.raw("GET /ok, no token", "GET", "/ok")
    # An Authorization header that is not "Bearer <token>":
    # test_a_value_error_in_authenticate_is_a_400.
    await s.raw("POST /threads/search, no token", "POST", "/threads/search", json={})
    alice, bob, tid = await _alice_runs_on_her_thread(s, "hello")
    await s.sdk("bob runs on it", bob.runs.wait(tid, "agent", input=MESSAGES), _user_fields)
    await s.sdk("bob gets alice's thread", bob.threads.get(tid),
                lambda t: (t["thread_id"], t["metadata"].get("topic")))
    bobs = await s.sdk("bob creates a thread", bob.threads.create(), _metadata)
    s.name(bobs["thread_id"], "bob's thread")
    await _listed(bob, bobs["thread_id"])
    await s.sdk("alice searches threads", alice.threads.search(limit=100), _ids(s))
    await s.sdk("bob searches threads", bob.threads.search(limit=100), _ids(s))
    await s.sdk("alice counts threads", alice.threads.count())
    await s.sdk("bob updates alice's thread", bob.threads.update(tid, metadata={"x": 1}),
                lambda t: {k: t["metadata"].get(k) for k in ("topic", "x")})
    await s.sdk("bob reads alice's runs", bob.runs.list(tid), len)
    await s.sdk("alice searches assistants", alice.assistants.search(),
                lambda found: sorted(a["graph_id"] for a in found))
    made = await s.sdk("alice creates an assistant", alice.assistants.create(
        "agent", metadata={"k": "v"}), _metadata)
    s.name(made["assistant_id"], "alice's assistant")
    await s.sdk("bob gets alice's assistant", bob.assistants.get(made["assistant_id"]),
                _metadata)
    await s.sdk("bob counts assistants", bob.assistants.count())
    await s.sdk("alice puts a store item", alice.store.put_item(["user1", "notes"], "k",
                                                                 {"text": "mine"}))
    await s.sdk("bob gets it", bob.store.get_item(["user1", "notes"], "k"),
                lambda item: item["value"])
    await s.sdk("bob searches the store", bob.store.search_items(["user1"]), _ids(s))
    await s.sdk("bob deletes alice's thread", bob.threads.delete(tid))
    await s.sdk("alice gets it", alice.threads.get(tid), lambda t: t["thread_id"])
    await s.raw("GET it through httpx", "GET", f"/threads/{tid}", token="user1-token")


async def test_set_up_custom_authentication(tutorial_1: dict[str, str]) -> None:
    _compare(await _both(tutorial_1, _set_up_custom_authentication))


# -- 2. Make conversations private ---------------------------------------------------------
@pytest.fixture(scope="module")
def tutorial_2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    yield from _serve_both(tmp_path_factory.mktemp("vs2"), MAKE_CONVERSATIONS_PRIVATE)


async def _make_conversations_private(s: _Script) -> None:
    alice, bob, tid = await _alice_runs_on_her_thread(s, "private")
    await s.sdk("alice gets it", alice.threads.get(tid),
                lambda t: (t["thread_id"], t["metadata"]))
    for step, call in [
            ("bob gets alice's thread", bob.threads.get(tid)),
            ("bob gets its state", bob.threads.get_state(tid)),
            ("bob gets its history", bob.threads.get_history(tid)),
            ("bob updates it", bob.threads.update(tid, metadata={"x": 1})),
            ("bob lists its runs", bob.runs.list(tid)),
            ("bob creates a run on it", bob.runs.create(tid, "agent", input={})),
            ("bob waits for a run on it", bob.runs.wait(tid, "agent", input={})),
            ("bob deletes it", bob.threads.delete(tid))]:
        await s.sdk(step, call, lambda out: "answered")
    await s.raw("bob GETs it through httpx", "GET", f"/threads/{tid}", token="user2-token")
    bobs = await s.sdk("bob creates a thread", bob.threads.create(), _metadata)
    s.name(bobs["thread_id"], "bob's thread")
    await s.sdk("bob runs on it", bob.runs.wait(bobs["thread_id"], "agent", input=MESSAGES),
                _user_fields)
    await s.sdk("alice searches threads", alice.threads.search(limit=100), _ids(s))
    await s.sdk("bob searches threads", bob.threads.search(limit=100), _ids(s))
    await s.sdk("alice counts threads", alice.threads.count())
    await s.sdk("bob counts threads", bob.threads.count())
    await s.sdk("alice lists her runs", alice.runs.list(tid), len)
    await s.sdk("alice updates her thread", alice.threads.update(tid, metadata={"x": 1}),
                lambda t: {k: t["metadata"].get(k) for k in ("owner", "topic", "x")})
    await s.sdk("alice creates an assistant", alice.assistants.create("agent"))
    await s.sdk("alice searches assistants", alice.assistants.search())
    await s.raw("alice searches assistants through httpx", "POST", "/assistants/search",
                token="user1-token", json={})
    await s.sdk("alice puts into her namespace", alice.store.put_item(
        ["user1", "notes"], "k", {"text": "mine"}))
    await s.sdk("alice gets it", alice.store.get_item(["user1", "notes"], "k"),
                lambda item: item["value"])
    await s.sdk("alice searches her namespace", alice.store.search_items(["user1"]), _ids(s))
    await s.sdk("alice puts into bob's", alice.store.put_item(["user2", "notes"], "k",
                                                               {"x": 1}))
    await s.sdk("bob gets alice's item", bob.store.get_item(["user1", "notes"], "k"))
    await s.sdk("bob searches alice's namespace", bob.store.search_items(["user1"]))
    await s.sdk("bob deletes alice's item", bob.store.delete_item(["user1", "notes"], "k"))
    await s.sdk("alice deletes her thread", alice.threads.delete(tid))
    await s.sdk("alice searches threads again", alice.threads.search(limit=100), _ids(s))


async def test_make_conversations_private(tutorial_2: dict[str, str]) -> None:
    _compare(await _both(tutorial_2, _make_conversations_private))


# -- 3. Connect an authentication provider (the local stand-in for Supabase) ---------------
@pytest.fixture(scope="module")
def tutorial_3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    supabase = ThreadingHTTPServer(("127.0.0.1", 0), _Supabase)
    threading.Thread(target=supabase.serve_forever, daemon=True).start()
    env = {"SUPABASE_URL": f"http://127.0.0.1:{supabase.server_address[1]}",
           "SUPABASE_SERVICE_KEY": "service-key"}
    _unset(env)  # langgraph.json's env does not replace what the process has
    try:
        yield from _serve_both(tmp_path_factory.mktemp("vs3"),
                               CONNECT_AN_AUTHENTICATION_PROVIDER, env)
    finally:
        supabase.shutdown()
        _unset(env)


async def _connect_an_authentication_provider(s: _Script) -> None:
    s.name(USERS["alice-jwt"]["id"], "alice")
    s.name(USERS["bob-jwt"]["id"], "bob")
    await s.raw("POST /threads, no token", "POST", "/threads", json={})
    await s.raw("POST /threads, a forged token", "POST", "/threads", token="forged",
                json={})
    alice, bob = s.client("alice-jwt"), s.client("bob-jwt")
    thread = await s.sdk("alice creates a thread", alice.threads.create(), _metadata)
    tid = thread["thread_id"]
    s.name(tid, "alice's thread")
    await s.sdk("bob gets it", bob.threads.get(tid))
    await s.sdk("bob updates it", bob.threads.update(tid, metadata={"x": 1}))
    await s.sdk("bob deletes it", bob.threads.delete(tid))
    await s.sdk("alice runs on it", alice.runs.wait(tid, "agent", input=MESSAGES),
                _user_fields)
    await s.sdk("bob runs on it", bob.runs.wait(tid, "agent", input=MESSAGES))
    mine = await s.sdk("alice creates an assistant", alice.assistants.create(
        "agent", metadata={"k": "v"}), _metadata)
    aid = mine["assistant_id"]
    s.name(aid, "alice's assistant")
    await s.sdk("alice searches assistants", alice.assistants.search(), _ids(s))
    await s.sdk("bob searches assistants", bob.assistants.search(), _ids(s))
    await s.sdk("alice counts assistants", alice.assistants.count())
    await s.sdk("bob counts assistants", bob.assistants.count())
    await s.sdk("bob gets alice's assistant", bob.assistants.get(aid))
    await s.sdk("bob updates alice's assistant", bob.assistants.update(aid, metadata={"x": 1}))
    await s.sdk("bob deletes alice's assistant", bob.assistants.delete(aid))
    # A stateless run's thread, kept (without "keep": test_a_stateless_runs_thread_goes_with_it), is
    # the user's. The run's metadata: its owner's, and its assistant's.
    run = await s.sdk("alice runs statelessly", alice.runs.create(
        None, aid, input=MESSAGES, on_completion="keep"), _metadata)
    s.name(run["thread_id"], "alice's stateless run's thread")
    await s.sdk("alice joins it", alice.runs.join(run["thread_id"], run["run_id"]),
                _user_fields)
    await s.sdk("bob gets its thread", bob.threads.get(run["thread_id"]))
    # Its metadata, not its user_id: docs/server/auth.md, "Where it differs from LangGraph's server":
    # "a cron shows `user_id: null`" (LangGraph's shows the creator's identity).
    cron = await s.sdk("alice creates a cron", alice.crons.create(
        aid, schedule="0 0 1 1 *", input=MESSAGES), _metadata)
    s.name(cron["cron_id"], "alice's cron")
    await s.sdk("alice searches crons", alice.crons.search(), _ids(s))
    await s.sdk("bob searches crons", bob.crons.search(), _ids(s))
    await s.sdk("bob deletes alice's cron", bob.crons.delete(cron["cron_id"]))
    await s.sdk("alice deletes her cron", alice.crons.delete(cron["cron_id"]))
    await s.sdk("alice puts a store item", alice.store.put_item(
        ["shared"], "a", {"owner": USERS["alice-jwt"]["id"], "text": "alice's"}))
    await s.sdk("bob puts one", bob.store.put_item(
        ["shared"], "b", {"owner": USERS["bob-jwt"]["id"], "text": "bob's"}))
    await s.sdk("alice searches the store", alice.store.search_items(["shared"]), _ids(s))
    await s.sdk("bob searches the store", bob.store.search_items(["shared"]), _ids(s))
    bobs = await s.sdk("bob creates a thread", bob.threads.create(), _metadata)
    s.name(bobs["thread_id"], "bob's thread")
    await _listed(bob, bobs["thread_id"])
    await s.sdk("alice searches threads", alice.threads.search(limit=100), _ids(s))
    await s.sdk("bob searches threads", bob.threads.search(limit=100), _ids(s))
    await s.sdk("alice counts threads", alice.threads.count())


async def test_connect_an_authentication_provider(tutorial_3: dict[str, str]) -> None:
    _compare(await _both(tutorial_3, _connect_an_authentication_provider))


# -- details found different once, the same now -------------------------------------------
async def test_a_value_error_in_authenticate_is_a_400(tutorial_1: dict[str, str]) -> None:
    async def script(s: _Script) -> None:
        # The tutorial's `scheme, token = authorization.split()` on one word.
        await s.raw("POST /threads, not a bearer", "POST", "/threads", json={},
                    headers={"Authorization": "user1-token"})
    _compare(await _both(tutorial_1, script))


async def test_a_missing_threads_404_says_so_in_langgraphs_words(tutorial_1: dict[str, str]) -> None:
    async def script(s: _Script) -> None:
        await s.raw("GET a missing thread", "GET", "/threads/00000000-0000-4000-8000-000000000000",
                    token="user1-token", details=True)
    _compare(await _both(tutorial_1, script))


async def test_a_runs_metadata_merges_its_assistants_threads_and_own(tutorial_3: dict[str, str]) -> None:
    async def script(s: _Script) -> None:
        s.name(USERS["alice-jwt"]["id"], "alice")
        alice = s.client("alice-jwt")
        mine = await alice.assistants.create("agent", metadata={"k": "v"})
        s.name(mine["assistant_id"], "the assistant")
        thread = await alice.threads.create(metadata={"topic": "t"})
        await s.sdk("a run's metadata", alice.runs.create(
            thread["thread_id"], mine["assistant_id"], input=MESSAGES, metadata={"r": 1}),
            _metadata)
    _compare(await _both(tutorial_3, script))


async def test_a_stateless_runs_thread_goes_with_it(tutorial_3: dict[str, str]) -> None:
    async def script(s: _Script) -> None:
        alice = s.client("alice-jwt")
        run = await alice.runs.create(None, "agent", input=MESSAGES)
        with contextlib.suppress(httpx.HTTPStatusError):  # its thread already deleted
            await alice.runs.join(run["thread_id"], run["run_id"])
        await _gone(alice.threads.get, run["thread_id"], timeout=5)
        await s.sdk("its thread after the run", alice.threads.get(run["thread_id"]),
                    lambda thread: "kept")
    _compare(await _both(tutorial_3, script))
