"""A browser app on another origin drives the API with LangGraph's JS SDK.

Chromium (Debian's, through the PyPI ``playwright`` package as in tests/ui; never
``playwright install``) opens tests/server/js/page.html, served from a local HTTP server
on its own port together with the SDK bundled for browsers by esbuild
(tests/server/js/support.py; npm packages cached outside the repo). The page calls an
API host built with ``build_app(..., cors_localhost=True)`` (as ``graphrun dev`` serves
it; support.shared_host, shared with tests/server/js/test_js_sdk.py): it runs a purchase to its question, finds the thread by status, answers it in a
streamed run (Server-Sent Events read by the SDK) and shows the final state. The test
asserts what the page reports and shows, the CORS headers of the stream, and that the
same page cannot read conftest's ``api_url`` host, which allows no other origin.

Without chromium or playwright the test fails when $CI is set and is skipped otherwise
(as in tests/ui); without node it fails.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import time
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.server.js import support

CHROMIUM = os.environ.get("GRAPHRUN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic"]
TIMEOUT_MS = 30_000
PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
QUESTION = {"question": "Approve this purchase?", "item": "GPU rental, 8 hours",
            "amount": 96.0}

pytestmark = pytest.mark.timeout(600)  # the first npm install may take minutes


def _require_browser() -> None:
    missing = None
    if importlib.util.find_spec("playwright") is None:
        missing = "the Python package 'playwright' is missing (pip install -e '.[dev]')"
    elif not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        missing = f"the chromium binary {CHROMIUM} is missing (apt-get install -y chromium)"
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"browser test cannot run in CI: {missing}", pytrace=False)
    pytest.skip(missing)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def app_origin() -> Iterator[str]:
    """The page and the SDK bundle, on a port (an origin) of their own."""
    _require_browser()
    bundle = support.sdk_bundle()
    site = bundle.parent / "site"
    site.mkdir(exist_ok=True)
    for name, source in (("index.html", support.JS_DIR / "page.html"),
                         ("langgraph-sdk.js", bundle)):
        (site / name).write_bytes(source.read_bytes())
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def js_api(dev_server: Any) -> Iterator[str]:
    yield support.shared_host(dev_server.address).url
    support.close_shared()


async def test_page_on_another_origin_answers_a_question(
        app_origin: str, js_api: str, api_url: str, tmp_path: Path) -> None:
    from playwright.async_api import async_playwright, expect

    assert urlsplit(app_origin).port != urlsplit(js_api).port  # two origins
    started = time.monotonic()
    console: list[str] = []
    requests: list[str] = []
    streams: list[dict[str, Any]] = []

    async def on_response(response: Any) -> None:
        if response.url.endswith("/runs/stream"):
            streams.append({"status": response.status, **await response.all_headers()})

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
            page.on("request", lambda r: requests.append(f"{r.method} {r.url}"))
            page.on("response", on_response)
            await page.goto(f"{app_origin}/index.html?api={quote(js_api)}"
                            f"&blocked={quote(api_url)}")
            await expect(page.locator("body")).to_have_attribute(
                "data-state", "done", timeout=TIMEOUT_MS)
            report = await page.evaluate("window.report")
            await page.screenshot(path=tmp_path / "page.png", full_page=True)
            seen = f"report={report}\nconsole={console}\nrequests={requests}"
            assert "error" not in report, seen

            assert report["origin"] == app_origin
            assert report["question"] == QUESTION, seen
            assert report["listed_interrupted"] is True
            events = report["events"]
            assert events[0][0] == "metadata", seen
            assert {name for name, _ in events[1:]} == {"updates", "values"}, seen
            assert [data for name, data in events if name == "updates"] == [
                {"request_approval": {"status": "approved"}},
                {"charge_card": {"status": "charged"}}]
            assert [data for name, data in events if name == "values"][-1] == {
                **PURCHASE, "status": "charged"}
            assert report["final"] == {"status": "idle",
                                       "values": {**PURCHASE, "status": "charged"}}

            # What the page shows.
            await expect(page.locator("#question")).to_have_text("Approve this purchase?")
            await expect(page.locator("#order-status")).to_have_text("charged")
            await expect(page.locator("#thread-status")).to_have_text("idle")
            await expect(page.locator("#events li")).to_have_count(len(events))

            # The stream crossed origins as SSE, allowed by CORS for this origin only.
            [stream] = streams
            assert stream["status"] == 200
            assert stream["content-type"].startswith("text/event-stream")
            assert stream["access-control-allow-origin"] == app_origin
            # conftest's host allows no other origin: the browser withholds its answer.
            assert report["blocked"] and "Failed to fetch" in report["blocked"], seen
            blocked = f"{api_url}/threads/search"
            assert [m for m in console if m.startswith("error") and blocked not in m
                    and "net::ERR_FAILED" not in m] == [], seen  # the rest went clean
            assert all(r.split(" ", 1)[1].startswith("http://127.0.0.1:") for r in requests)
        finally:
            await browser.close()
    assert time.monotonic() - started < 30
