"""Agent Chat UI (LangChain's chat front end, github.com/langchain-ai/agent-chat-ui, on
`useStream` of @langchain/langgraph-sdk) chats with an agent served by graphrun, in
chromium through playwright (docs/server/index.md, "Use LangGraph's clients").

Opt-in (GRAPHRUN_AGENT_CHAT_UI=1): the first run installs the app's npm packages (pnpm)
and `next dev` compiles it, which takes minutes. What it does:

* fetches Agent Chat UI at ``COMMIT`` once into ``$GRAPHRUN_AGENT_CHAT_UI_CACHE``
  (default ``~/.cache/graphrun-agent-chat-ui``) ``/<commit>-<steps>/``: from the git
  repository named by ``$GRAPHRUN_AGENT_CHAT_UI_GIT`` (``git archive``) if set, else
  GitHub's tarball; installs pnpm (the app's packageManager, from npm into a folder of
  its own: corepack refuses a registry that answers without signatures) and runs
  ``pnpm install --frozen-lockfile``. The npm package ``@fontsource-variable/inter``
  goes next to it;
* serves an agent of LangChain's ``create_agent`` with ``HumanInTheLoopMiddleware``
  (payments wait for an approval) whose chat model streams its answers token by token,
  through graphrun's API with CORS for localhost, on the session's dev server;
* runs the app with ``next dev`` (webpack) on 127.0.0.1 as the Agent Inbox test does,
  ``next/font/google`` answered offline by font_mock.cjs with the font file's path; in
  chromium every host but 127.0.0.1 fails to resolve; the API and the assistant are
  given in the page's query (``apiUrl``, ``assistantId``);
* sends a message and watches the answer stream in; approves the payment in the
  approval the app renders; sees the final answer; regenerates it (a fork: the branch
  switcher shows 2 / 2); opens the thread again from the history list; and checks
  through LangGraph's Python SDK that the thread ended as LangGraph's server would have
  it.

Every request the page sends to the API (with the answers of its streams) and the
page's console are written to ``tmp_path`` (requests.json, with screenshots) and
printed with -s. Without chromium, playwright, node or npm the test fails when $CI is
set and is skipped otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import time
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.ui.agent_inbox.test_agent_inbox import (
    CHROMIUM,
    CHROMIUM_ARGS,
    COMPILE_TIMEOUT,
    FONT_FILE,
    INSTALL_TIMEOUT,
    TIMEOUT_MS,
    App,
    _font,
    _installed,
    _local,
    _next_dev,
    _run,
)

HERE = Path(__file__).parent
COMMIT = "fdc87e65307581b02898d33c62b3f285e56bd85b"   # main, 2026-07-25
TARBALL = f"https://codeload.github.com/langchain-ai/agent-chat-ui/tar.gz/{COMMIT}"
PNPM = "pnpm@10.5.1"   # the app's packageManager
INSTALL_STEPS = "1"    # bump when _install changes
GRAPH_ID = "chat_agent"


def _need(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"the Agent Chat UI test cannot run: {what}", pytrace=False)
    pytest.skip(what)


def _require_tools() -> None:
    if importlib.util.find_spec("playwright") is None:
        _need("the Python package 'playwright' is missing (pip install -e '.[dev]')")
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        _need(f"the chromium binary {CHROMIUM} is missing (apt-get install -y chromium)")
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            _need(f"'{tool}' is not on PATH (node >= 18.18 with npm)")


# --- Agent Chat UI, installed once per commit -------------------------------------------

def _cache() -> Path:
    root = Path(os.environ.get("GRAPHRUN_AGENT_CHAT_UI_CACHE",
                               Path.home() / ".cache" / "graphrun-agent-chat-ui"))
    return root / f"{COMMIT}-{INSTALL_STEPS}"


def _source(into: Path) -> None:
    """The app's source at COMMIT, from a local git repository or GitHub's tarball."""
    git_dir = os.environ.get("GRAPHRUN_AGENT_CHAT_UI_GIT")
    if git_dir:
        archive = subprocess.run(["git", "--git-dir", git_dir, "archive", COMMIT],
                                 capture_output=True, timeout=300)
        if archive.returncode != 0:
            pytest.fail(f"git archive {COMMIT} of {git_dir} failed: "
                        f"{archive.stderr.decode(errors='replace')}", pytrace=False)
        into.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(into, filter="data")
        return
    with urllib.request.urlopen(TARBALL, timeout=120) as answer:
        data = answer.read()
    unpacked = into.with_name(into.name + ".x")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        top = tar.getnames()[0].split("/")[0]
        tar.extractall(unpacked, filter="data")
    (unpacked / top).rename(into)
    unpacked.rmdir()


def _install(target: Path) -> None:
    app, tools, fonts = target / "app", target / "pnpm", target / "fonts"
    _source(app)
    env = {**os.environ, "NEXT_TELEMETRY_DISABLED": "1", "CI": "1"}
    tools.mkdir()
    _run(["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(tools),
          PNPM], cwd=tools)
    pnpm = tools / "node_modules" / "pnpm" / "bin" / "pnpm.cjs"
    # "Ignored build scripts: esbuild, unrs-resolver": neither is needed by `next dev`.
    _run(["node", str(pnpm), "install", "--frozen-lockfile", "--reporter=append-only"],
         cwd=app, env=env)
    _font(fonts)


def agent_chat_ui() -> Path:
    """The cache folder: app/ (source + node_modules), pnpm/, fonts/."""
    return _installed(_cache(), _install)


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """`next dev` on the cached app."""
    _require_tools()
    started = time.monotonic()
    target = agent_chat_ui()
    installed = time.monotonic() - started
    print(f"\nAgent Chat UI: installed or found in {installed:.0f}s ({target})")
    log = tmp_path_factory.mktemp("agent-chat-ui") / "next-dev.log"
    env = {**os.environ, "NEXT_TELEMETRY_DISABLED": "1",
           "NEXT_FONT_GOOGLE_MOCKED_RESPONSES": str(HERE / "font_mock.cjs"),
           "GRAPHRUN_FONT_FILE": str(target / "fonts" / FONT_FILE)}
    # One `next dev` at a time on the shared folder (it writes .next/ there).
    with open(target / "next-dev.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield from _next_dev(target / "app", env, log, started + installed)


# --- The agent and its API ----------------------------------------------------------------

PAID: list[dict[str, Any]] = []
"""Invoices the agent's tool paid (the tool runs on the worker, in this process)."""

ANSWERS: list[str] = []
"""The agent's answers after a payment, one per call of the model (regenerate: two)."""

DELAY = 0.12   # seconds between two streamed tokens


def _agent() -> Any:
    """LangChain's `create_agent` with `HumanInTheLoopMiddleware` (pay_invoice waits for
    a decision), on a chat model that streams its words one by one."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
    from langchain_core.tools import tool

    @tool
    def pay_invoice(invoice: str, amount: float) -> str:
        """Pay an invoice. Needs a human's approval."""
        PAID.append({"invoice": invoice, "amount": amount})
        return f"Paid {invoice}: {amount:.2f} EUR"

    class StreamingInvoiceModel(BaseChatModel):
        """To a request naming an invoice: a sentence and the call of pay_invoice; once
        the tool answered: a summary, numbered by how many were given."""

        @property
        def _llm_type(self) -> str:
            return "streaming-invoice-model"

        def bind_tools(self, tools: Any, **kwargs: Any) -> StreamingInvoiceModel:
            return self

        def _reply(self, messages: list[BaseMessage]) -> tuple[str, list[dict[str, Any]]]:
            last = messages[-1]
            if isinstance(last, ToolMessage):
                ANSWERS.append(str(last.content))
                return (f"Done: {last.content}. The transfer leaves today, answer "
                        f"number {len(ANSWERS)} of this agent.", [])
            request = re.search(r"(INV-\d+) from (\w+), ([\d.]+)", last.text)
            if request is None:
                return "Which invoice should I pay?", []
            invoice, vendor, amount = request.groups()
            return (f"I will pay {invoice} to {vendor} once you approve it.",
                    [{"id": f"call_{invoice}", "name": "pay_invoice",
                      "args": {"invoice": invoice, "amount": float(amount)}}])

        def _generate(self, messages: list[BaseMessage], stop: Any = None,
                      run_manager: Any = None, **kwargs: Any) -> ChatResult:
            text, calls = self._reply(messages)
            return ChatResult(generations=[ChatGeneration(
                message=AIMessage(content=text, tool_calls=calls))])

        def _stream(self, messages: list[BaseMessage], stop: Any = None,
                    run_manager: Any = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
            text, calls = self._reply(messages)
            for word in re.findall(r"\S+\s*", text):
                time.sleep(DELAY)
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=word))
                if run_manager is not None:
                    run_manager.on_llm_new_token(word, chunk=chunk)
                yield chunk
            if calls:
                yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[
                    {"id": c["id"], "name": c["name"], "args": json.dumps(c["args"]),
                     "index": i} for i, c in enumerate(calls)]))

    return create_agent(StreamingInvoiceModel(), [pay_invoice], middleware=[
        HumanInTheLoopMiddleware(interrupt_on={"pay_invoice": True})], name=GRAPH_ID)


@pytest.fixture(scope="module")
def chat_api(dev_server: Any) -> Iterator[str]:
    """graphrun's API (CORS for localhost) and a worker serving the agent."""
    from tests.server.conftest import _ApiHost

    host = _ApiHost(dev_server.address, {GRAPH_ID: _agent()}, cors_localhost=True)
    yield host.url
    host.close()


# --- The test --------------------------------------------------------------------------------

# Installed in the page: every distinct text of the line that starts with the watched
# words, as the page shows it (a MutationObserver sees each render).
WATCH = """() => {
  window.__seen = [];
  window.__watch = (start) => { window.__start = start; window.__seen = []; };
  const look = () => {
    if (!window.__start) return;
    const lines = document.body.innerText.split("\\n")
      .filter((l) => l.startsWith(window.__start));
    const line = lines[lines.length - 1];
    if (line && line !== window.__seen[window.__seen.length - 1]) window.__seen.push(line);
  };
  new MutationObserver(look).observe(document.body,
    {subtree: true, childList: true, characterData: true});
}"""


@dataclass
class Log:
    page: list[dict[str, Any]] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)

    def runs(self) -> list[dict[str, Any]]:
        """The bodies of the page's runs (POST .../runs/stream), in order."""
        return [json.loads(e["body"]) for e in self.page
                if e["method"] == "POST" and e["url"].endswith("/runs/stream")]


@contextlib.asynccontextmanager
async def _browser(api: str, shots: Path) -> AsyncIterator[tuple[Any, Log]]:
    """Chromium with a page whose requests to the API are logged; on the way out the log
    (with the answers of the page's streams) and the console go to shots/requests.json."""
    from playwright.async_api import async_playwright, expect

    log = Log()
    async with async_playwright() as pw:
        expect.set_options(timeout=TIMEOUT_MS)
        # Offline: every host but 127.0.0.1 fails to resolve.
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=[
            *CHROMIUM_ARGS, "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        page = await browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT_MS)

        def seen(request: Any) -> None:
            if request.url.startswith(api):
                log.page.append({"method": request.method, "url": request.url[len(api):],
                                 "body": request.post_data, "request": request})

        def failed(request: Any) -> None:
            if not _local(request.url):
                log.blocked.append(request.url)

        page.on("request", seen)
        page.on("requestfailed", failed)
        page.on("console", lambda m: log.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: log.console.append(f"pageerror: {e}"))
        try:
            yield page, log
            for entry in log.page:
                response = await entry["request"].response()
                entry["status"] = response.status if response else (
                    entry["request"].failure or "no response")
                if response and "event-stream" in (response.headers.get("content-type")
                                                   or ""):
                    try:
                        entry["answer"] = (await response.text())[:3000]
                    except Exception as exc:  # the page may have let go of it
                        entry["answer"] = f"({exc})"
        finally:
            with contextlib.suppress(Exception):
                await page.screenshot(path=shots / "last.png")
            for entry in log.page:
                entry.pop("request", None)
            (shots / "requests.json").write_text(json.dumps(
                {"page": log.page, "blocked": log.blocked, "console": log.console[-80:]},
                indent=1))
            print(f"\nrequests and console: {shots / 'requests.json'}")
            for e in log.page:
                print(f"  {e['method']:7} {e['url']} -> {e.get('status')} "
                      f"{(e['body'] or '')[:200]}")
            await browser.close()
    # Every request the page sent was answered (but those a navigation cut short).
    assert all((isinstance(e["status"], int) and e["status"] < 400)
               or e["status"] == "net::ERR_ABORTED" for e in log.page), log.page


async def _open(page: Any, app: App, api: str, **query: str) -> None:
    """The app on the API and the agent; returns once React runs (the page's first
    request to the API, GET /info, is sent from an effect)."""
    q = urllib.parse.urlencode({"apiUrl": api, "assistantId": GRAPH_ID,
                                "chatHistoryOpen": "true", **query})
    async with page.expect_request(lambda r: r.url == f"{api}/info"):
        await page.goto(f"{app.url}/?{q}")
    await page.evaluate(WATCH)


async def _streamed(page: Any, full: str, replacing: str | None = None) -> list[str]:
    """What the page showed of the message being watched until it read `full`: the
    answer arrives in parts (several texts, each a beginning of the next), after the
    message it replaces, if any."""
    from playwright.async_api import expect

    await expect(page.get_by_text(full, exact=True)).to_be_visible()
    seen: list[str] = await page.evaluate("window.__seen")
    if replacing is not None and seen and seen[0] == replacing:
        seen = seen[1:]
    assert seen[-1] == full, seen
    assert len(seen) >= 3, f"the answer did not stream in: {seen}"
    assert all(full.startswith(part) for part in seen[:-1]), seen
    assert len(seen[0]) < len(full) // 2, seen
    return seen


async def _settled(client: Any, thread_id: str) -> dict[str, Any]:
    for _ in range(100):
        thread = await client.threads.get(thread_id)
        if thread["status"] != "busy":
            return dict(thread)
        await asyncio.sleep(0.1)
    return dict(thread)


@pytest.mark.timeout(INSTALL_TIMEOUT + COMPILE_TIMEOUT + 600)
async def test_agent_chat_ui_streams_approves_regenerates_and_reopens(
        chat_app: App, chat_api: str, tmp_path: Path) -> None:
    from langgraph_sdk import get_client
    from playwright.async_api import expect

    started = time.monotonic()
    client = get_client(url=chat_api)
    invoice = f"INV-{int(time.time() * 1000) % 10**8}"
    request = f"Pay {invoice} from ACME, 1200 EUR"
    asking = f"I will pay {invoice} to ACME once you approve it."
    paid = f"Paid {invoice}: 1200.00 EUR"
    n = len(ANSWERS)

    def answer(k: int) -> str:
        return f"Done: {paid}. The transfer leaves today, answer number {k} of this agent."

    async with _browser(chat_api, tmp_path) as (page, log):
        await _open(page, chat_app, chat_api)
        await page.screenshot(path=tmp_path / "1-empty.png")

        # A message: a new thread, the answer streams in, then the approval it asks for.
        await page.evaluate("window.__watch('I will pay')")
        await page.get_by_placeholder("Type your message...").fill(request)
        await page.get_by_role("button", name="Send").click()
        await _streamed(page, asking)
        approve = page.get_by_role("button", name="Approve", exact=True)
        await expect(approve).to_be_visible()
        # LangChain v1's approval request, as the app renders it: the call's arguments,
        # editable, with Approve and a rejection form.
        await expect(page.get_by_text("Edit/Approve", exact=True)).to_be_visible()
        await expect(page.locator("textarea").first).to_have_value(invoice)
        await expect(page.get_by_role("button", name="Submit rejection")).to_be_visible()
        await page.screenshot(path=tmp_path / "2-approval.png")
        assert PAID == [] or PAID[-1]["invoice"] != invoice
        thread_id = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)[
            "threadId"][0]
        assert (await client.threads.get(thread_id))["status"] == "interrupted"

        # Approve: the tool runs, the final answer streams in.
        await page.evaluate("window.__watch('Done:')")
        await approve.click()
        await _streamed(page, answer(n + 1))
        await expect(approve).to_have_count(0)
        await expect(page.get_by_text(paid, exact=True)).to_be_visible()   # the tool's
        await page.screenshot(path=tmp_path / "3-answer.png")

        # Regenerate the answer: a fork from the checkpoint before it (2 / 2).
        await page.evaluate("window.__watch('Done:')")
        last = page.get_by_text(answer(n + 1), exact=True)
        await last.hover()
        await page.get_by_role("button", name="Refresh").last.click()
        await _streamed(page, answer(n + 2), replacing=answer(n + 1))
        await expect(page.get_by_text(answer(n + 1), exact=True)).to_have_count(0)
        await expect(page.get_by_text("2 / 2", exact=True)).to_be_visible()
        await page.screenshot(path=tmp_path / "4-regenerated.png")
        # The first branch is still there.
        await page.get_by_text(answer(n + 2), exact=True).hover()
        await page.get_by_text("2 / 2", exact=True).locator(
            "xpath=preceding-sibling::button").click()
        await expect(page.get_by_text(answer(n + 1), exact=True)).to_be_visible()
        await expect(page.get_by_text("1 / 2", exact=True)).to_be_visible()
        await page.get_by_text("1 / 2", exact=True).locator(
            "xpath=following-sibling::button").click()
        await expect(page.get_by_text(answer(n + 2), exact=True)).to_be_visible()

        # A new page: the thread is in the history list, labelled with its first message;
        # opened from there, its messages are shown again.
        await _open(page, chat_app, chat_api)
        entry = page.get_by_role("button", name=request, exact=True)
        await expect(entry).to_be_visible()
        await expect(page.get_by_text(answer(n + 2), exact=True)).to_have_count(0)
        await page.screenshot(path=tmp_path / "5-history.png")
        await entry.click()
        await expect(page).to_have_url(re.compile(f"threadId={thread_id}"))
        await expect(page.get_by_text(asking, exact=True)).to_be_visible()
        await expect(page.get_by_text(paid, exact=True)).to_be_visible()
        await expect(page.get_by_text(answer(n + 2), exact=True)).to_be_visible()
        await expect(page.get_by_text("2 / 2", exact=True)).to_be_visible()
        await page.screenshot(path=tmp_path / "6-reopened.png")

    # What the page sent: a new thread's run with its message, streaming values and
    # message tokens; the approval as LangChain v1's decision; regenerate without input
    # from the checkpoint before the answer.
    first, approval, again = log.runs()
    assert "messages-tuple" in first["stream_mode"], first
    assert first["input"]["messages"][-1]["content"] == [{"type": "text", "text": request}]
    assert approval["command"] == {"resume": {"decisions": [{"type": "approve"}]}}
    assert again.get("input") is None and again["checkpoint"], again

    # The thread as LangGraph's server has it: idle, the tool ran once (one approval),
    # the answer regenerated on a fork of the checkpoint after the tool.
    thread = await _settled(client, thread_id)
    assert thread["status"] == "idle" and not thread["interrupts"], thread
    assert [p for p in PAID if p["invoice"] == invoice] == [
        {"invoice": invoice, "amount": 1200.0}]
    messages = thread["values"]["messages"]
    assert [m["type"] for m in messages] == ["human", "ai", "tool", "ai"], messages
    assert messages[1]["content"] == asking
    assert [c["name"] for c in messages[1]["tool_calls"]] == ["pay_invoice"]
    assert messages[2]["content"] == paid
    assert messages[3]["content"] == answer(n + 2)
    state = await client.threads.get_state(thread_id)
    assert state["next"] == [] and state["tasks"] == [], state
    history = await client.threads.get_history(thread_id, limit=50)
    (tmp_path / "history.json").write_text(json.dumps([
        {"id": h["checkpoint"]["checkpoint_id"], "parent": (h["parent_checkpoint"] or {})
         .get("checkpoint_id"), "next": h["next"], "metadata": h["metadata"],
         "last": (h["values"].get("messages") or [{}])[-1].get("content")} for h in history],
        indent=1))

    def first_seen(text: str) -> dict[str, Any]:
        """The checkpoint the model's answer `text` was written in."""
        return min((h for h in history if h["values"].get("messages")
                    and h["values"]["messages"][-1]["content"] == text),
                   key=lambda h: h["metadata"]["step"])

    one, two = first_seen(answer(n + 1)), first_seen(answer(n + 2))
    by_id = {h["checkpoint"]["checkpoint_id"]: h for h in history}
    # The first answer follows the checkpoint after the tool; regenerating it from there
    # (the page's checkpoint) first saves a copy of it, source "fork" (as LangGraph's
    # loop does when it replays a checkpoint), and the second answer follows the copy.
    tool = by_id[one["parent_checkpoint"]["checkpoint_id"]]
    assert again["checkpoint"]["checkpoint_id"] == tool["checkpoint"]["checkpoint_id"]
    assert tool["next"] == ["model"] and tool["metadata"]["source"] == "loop", tool
    copy = by_id[two["parent_checkpoint"]["checkpoint_id"]]
    assert copy["metadata"]["source"] == "fork" and copy["next"] == ["model"], copy
    assert copy["parent_checkpoint"]["checkpoint_id"] == tool["checkpoint"]["checkpoint_id"]
    assert copy["values"] == tool["values"]
    assert len(history) == 10, history   # 5 up to the tool's, 2 per answer, the copy
    runs = await client.runs.list(thread_id)
    assert sorted(r["status"] for r in runs) == ["success"] * 3, runs
    print(f"browser part: {time.monotonic() - started:.0f}s")
