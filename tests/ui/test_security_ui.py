"""The Temporal Web UI on encrypted threads and on hostile data (docs/security/).

A real browser (Debian's chromium through the PyPI ``playwright`` package, as in
test_temporal_ui.py; never ``playwright install``) opens a dev server whose UI
decodes payloads with ``graphrun codec-server`` (``--ui-codec-endpoint``):

* an encrypted thread paused for approval: while the codec server answers, the
  workflow input, the current details and the ``get_state`` query are readable
  (a distinctive string from the state shows); when it refuses (a bearer token
  the UI does not send), the UI says it cannot reach the codec server and shows
  ciphertext, and the string appears nowhere;
* a plain thread whose question and a refused signal hold code fences, HTML and a
  ``<script>``: Current Details show them as literal text and no element is built
  from them.

Screenshots go to the test's tmp_path. Without chromium or playwright the tests
fail when $CI is set and are skipped otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import pytest

CHROMIUM = os.environ.get("GRAPHRUN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]
TIMEOUT_MS = 30_000
KEYS = {"ui-k1": bytes(range(7, 39))}
SECRET = "Kestrel-7731-SECRET"          # in the encrypted thread's state and question
NASTY = ("``` fenced ```\n<b>bold</b> <img src=x onerror=window.__pwned=1> "
         "<script>window.__pwned=1</script>")


def _require_browser() -> None:
    missing = None
    if importlib.util.find_spec("playwright") is None:
        missing = "the Python package 'playwright' is missing (pip install -e '.[dev]')"
    elif not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        missing = f"the chromium binary {CHROMIUM} is missing (apt-get install -y chromium)"
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"UI test cannot run in CI: {missing}", pytrace=False)
    pytest.skip(missing)


class Card(TypedDict):
    card: str
    status: str


def _ask(state: Card) -> Card:
    from graphrun import interrupt

    answer = interrupt({"question": f"Charge {state['card']}?"})
    return {"card": state["card"], "status": f"answered:{answer}"}


def _graph(name: str) -> Any:
    from graphrun import END, START, StateGraph

    builder = StateGraph(Card)
    builder.add_node("ask", _ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(name=name)


@dataclass
class UI:
    server: Any          # DevServer, its UI decoding through `codec`
    codec: Any           # CodecServer
    url: str


@pytest.fixture(scope="module")
async def ui() -> AsyncIterator[UI]:
    _require_browser()
    from graphrun.codec import EncryptionCodec
    from graphrun.codec_server import CodecServer
    from graphrun.devserver import DevServer, _free_port, temporal_cli_path

    try:
        temporal_cli_path()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    # The UI's origin must be known before the codec server starts (CORS), and the
    # codec server's address before the dev server starts (--ui-codec-endpoint).
    ui_port = _free_port("127.0.0.1")
    with CodecServer(EncryptionCodec(KEYS), port=0,
                     origins=[f"http://127.0.0.1:{ui_port}"]) as codec:
        async with DevServer(ui=True, ui_port=ui_port, codec_endpoint=codec.url) as server:
            assert server.ui_url is not None
            yield UI(server, codec, server.ui_url)


async def _browser(pw: Any) -> Any:
    from playwright.async_api import expect

    # The UI is a single-page app that loads its bundle, then polls the server.
    expect.set_options(timeout=TIMEOUT_MS)
    return await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@pytest.mark.slow
@pytest.mark.timeout(180)
async def test_encrypted_thread_is_readable_only_through_the_codec_server(
        ui: UI, tmp_path: Path) -> None:
    from playwright.async_api import async_playwright, expect
    from temporalio.client import Client

    from graphrun import Command
    from graphrun.client import GraphClient, data_converter
    from graphrun.worker import create_worker

    started = time.monotonic()
    client = await Client.connect(ui.server.address,
                                  data_converter=data_converter(encryption=KEYS))
    task_queue, name = f"ui-enc-{uuid.uuid4()}", f"ui-enc-{uuid.uuid4().hex[:8]}"
    tid = f"ui-enc-{uuid.uuid4().hex[:10]}"
    cfg = {"configurable": {"thread_id": tid}}
    async with create_worker(client, {name: _graph(name)}, task_queue=task_queue):
        gc = GraphClient(client, task_queue=task_queue)
        out = await gc.graph(name).ainvoke({"card": SECRET, "status": "new"}, cfg)
        assert out["__interrupt__"][0].value == {"question": f"Charge {SECRET}?"}

        async with async_playwright() as pw:
            browser = await _browser(pw)
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(TIMEOUT_MS)
                workflow_url = f"{ui.url}/namespaces/default/workflows/{tid}"

                # 1. The codec server answers: input, details and get_state are readable.
                await page.goto(workflow_url)
                await expect(page.get_by_role("heading", name=tid)).to_be_visible()
                # The workflow input (a StartRequest) shows as JSON, not ciphertext.
                await expect(page.locator("body")).to_contain_text(f'"thread_id": "{tid}"')
                await page.get_by_role("tab", name="User Metadata").click()
                details = page.frame_locator("iframe#user-metadata-current-details")
                await expect(details.locator("body")).to_contain_text(f"Charge {SECRET}?")
                await page.screenshot(path=tmp_path / "1-decoded-details.png", full_page=True)
                await page.get_by_role("tab", name="Queries").click()
                await page.get_by_test_id("query-select-button").click()
                await page.get_by_role("option", name="get_state", exact=True).click()
                await page.get_by_role("button", name="Run Query").click()
                result = page.get_by_test_id("query-result")
                await expect(result).to_contain_text(SECRET)
                await expect(result).to_contain_text("interrupted")
                await page.screenshot(path=tmp_path / "2-decoded-query.png", full_page=True)

                # 2. The codec server refuses (a token the UI does not send): ciphertext only.
                ui.codec.token = "the-ui-does-not-have-this"
                try:
                    await page.goto(workflow_url)
                    await expect(page.locator("#content").get_by_text(
                        "Codec Server could not connect")).to_be_visible()
                    await expect(page.get_by_role("heading", name=tid)).to_be_visible()
                    await page.get_by_role("tab", name="User Metadata").click()
                    details = page.frame_locator("iframe#user-metadata-current-details")
                    await expect(details.locator("body")).to_contain_text("No Current Details")
                    # The queries the UI lists come from an (encrypted) query result too.
                    await page.get_by_role("tab", name="Queries").click()
                    await page.wait_for_timeout(1000)
                    await page.screenshot(path=tmp_path / "3-refused-queries.png",
                                          full_page=True)
                    assert SECRET not in await page.locator("body").inner_text()
                    # The input shows as base64 ciphertext.
                    await page.get_by_role("tab", name="Timeline").click()
                    await expect(page.locator("body")).to_contain_text("Input")
                    await page.screenshot(path=tmp_path / "4-refused-input.png", full_page=True)
                    assert f'"thread_id": "{tid}"' not in await page.locator("body").inner_text()
                    assert SECRET not in await page.content()
                finally:
                    ui.codec.token = None
            finally:
                await browser.close()

        final = await gc.graph(name).ainvoke(Command(resume="ok"), cfg)
        assert final == {"card": SECRET, "status": "answered:ok"}
    print(f"codec UI test took {time.monotonic() - started:.1f}s; screenshots in {tmp_path}")


@pytest.mark.timeout(180)
async def test_markup_in_the_question_and_a_refused_signal_stays_text(
        ui: UI, tmp_path: Path) -> None:
    from playwright.async_api import async_playwright, expect
    from temporalio.client import Client

    from graphrun import Command
    from graphrun.client import GraphClient, data_converter
    from graphrun.worker import create_worker

    client = await Client.connect(ui.server.address, data_converter=data_converter)
    task_queue, name = f"ui-md-{uuid.uuid4()}", f"ui-md-{uuid.uuid4().hex[:8]}"
    tid = f"ui-md-{uuid.uuid4().hex[:10]}"
    cfg = {"configurable": {"thread_id": tid}}
    async with create_worker(client, {name: _graph(name)}, task_queue=task_queue):
        gc = GraphClient(client, task_queue=task_queue)
        await gc.graph(name).ainvoke({"card": NASTY, "status": "new"}, cfg)
        # A signal of the wrong shape is refused, and the refusal (quoting it) is shown.
        handle = client.get_workflow_handle(tid)
        await handle.signal("resume", {"not-resume": NASTY})
        deadline = time.monotonic() + 10
        while not (await handle.query("get_state", None))["refused"]:
            assert time.monotonic() < deadline, "the bad signal was not recorded"
            await _sleep(0.1)

        async with async_playwright() as pw:
            browser = await _browser(pw)
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 1400})
                page.set_default_timeout(TIMEOUT_MS)
                await page.goto(f"{ui.url}/namespaces/default/workflows/{tid}")
                await expect(page.get_by_role("heading", name=tid)).to_be_visible()
                await page.get_by_role("tab", name="User Metadata").click()
                frame_el = page.locator("iframe#user-metadata-current-details")
                details = page.frame_locator("iframe#user-metadata-current-details")
                body = details.locator("body")
                await expect(body).to_contain_text("Last refused resume")
                await page.screenshot(path=tmp_path / "details.png", full_page=True)
                text = await body.inner_text()
                # The data shows as literal text: fences, tags and the script.
                for literal in ("``` fenced ```", "<b>bold</b>",
                                "<img src=x onerror=window.__pwned=1>",
                                "<script>window.__pwned=1</script>"):
                    assert text.count(literal) >= 2, (literal, text)   # question + refusal
                # ...and nothing from it became an element or ran.
                assert await details.locator("b", has_text="bold").count() == 0
                assert await details.locator("img").count() == 0
                assert await details.locator("script", has_text="__pwned").count() == 0
                frame = await (await frame_el.element_handle()).content_frame()
                assert frame is not None
                await page.wait_for_timeout(500)   # an onerror would have fired by now
                assert await frame.evaluate("() => typeof window.__pwned") == "undefined"
                assert await page.evaluate("() => typeof window.__pwned") == "undefined"
            finally:
                await browser.close()

        await gc.graph(name).ainvoke(Command(resume="ok"), cfg)


async def _sleep(seconds: float) -> None:
    import asyncio

    await asyncio.sleep(seconds)
