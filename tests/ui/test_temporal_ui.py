"""The Temporal Web UI shows a paused graphrun thread (the "UI" part of docs/temporal-contract.md).

A real browser (Debian's chromium, driven by the PyPI ``playwright`` package;
never ``playwright install``) opens the dev server's UI on a purchase waiting
for approval and checks what an operator sees there:

* the pending question in the workflow's Current Details (User Metadata tab),
* ``GraphStatus = interrupted`` in the Search Attributes tab, and the thread in
  the workflow list filtered with ``GraphStatus="interrupted"``,
* the Queries tab answering ``get_state``.

Screenshots go to the test's tmp_path; the workflow page is also copied to
/tmp/ui-screenshot.png. Without chromium or playwright the test fails when
$CI is set and is skipped otherwise.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

CHROMIUM = os.environ.get("GRAPHRUN_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SHARED_SCREENSHOT = Path("/tmp/ui-screenshot.png")
# The UI is a single-page app that loads its bundle, then polls the server.
TIMEOUT_MS = 30_000


def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "the Python package 'playwright' is missing (pip install -e '.[dev]')"
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        return f"the chromium binary {CHROMIUM} is missing (apt-get install -y chromium)"
    return None


def _require_browser() -> None:
    missing = _missing()
    if missing is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"UI test cannot run in CI: {missing}", pytrace=False)
    pytest.skip(missing)


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_paused_thread_is_visible_in_the_web_ui(tmp_path: Path) -> None:
    _require_browser()
    from playwright.async_api import async_playwright, expect
    from temporalio.client import Client

    from examples.purchase import graph
    from graphrun.client import GraphClient, data_converter
    from graphrun.devserver import DevServer, temporal_cli_path
    from graphrun.worker import create_worker

    try:
        temporal_cli_path()
    except RuntimeError as exc:
        pytest.skip(str(exc))

    timings: dict[str, float] = {}
    started = time.monotonic()
    # The session fixture's server is headless: this test needs one with the UI.
    async with DevServer(ui=True) as server:
        assert server.ui_url is not None
        timings["server"] = time.monotonic() - started
        client = await Client.connect(server.address, data_converter=data_converter)
        task_queue = f"ui-{uuid.uuid4()}"
        thread_id = f"ui-order-{uuid.uuid4().hex[:12]}"
        async with create_worker(client, {"purchase": graph}, task_queue=task_queue):
            gc = GraphClient(client, task_queue=task_queue)
            out = await gc.graph("purchase").ainvoke(
                {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"},
                {"configurable": {"thread_id": thread_id}},
            )
            [pending] = out["__interrupt__"]
            assert pending.value["question"] == "Approve this purchase?"
            timings["paused"] = time.monotonic() - started

            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = await browser.new_page(viewport={"width": 1400, "height": 1000})
                    page.set_default_timeout(TIMEOUT_MS)
                    shots = tmp_path

                    # 1. The workflow page: the pending question in Current Details.
                    await page.goto(f"{server.ui_url}/namespaces/default/workflows/{thread_id}")
                    await expect(page.get_by_role("heading", name=thread_id)).to_be_visible(
                        timeout=TIMEOUT_MS)
                    await expect(page.get_by_text("Running", exact=True).first).to_be_visible(
                        timeout=TIMEOUT_MS)
                    await page.screenshot(path=shots / "1-workflow.png", full_page=True)

                    await page.get_by_role("tab", name="User Metadata").click()
                    # Current Details are markdown rendered in a sandboxed iframe.
                    details = page.frame_locator("iframe#user-metadata-current-details")
                    await expect(details.get_by_text("Approve this purchase?")).to_be_visible(
                        timeout=TIMEOUT_MS)
                    await expect(details.get_by_text("interrupted").first).to_be_visible(
                        timeout=TIMEOUT_MS)
                    await expect(details.get_by_text(pending.id)).to_be_visible(
                        timeout=TIMEOUT_MS)
                    await page.screenshot(path=shots / "2-current-details.png", full_page=True)
                    shutil.copyfile(shots / "2-current-details.png", SHARED_SCREENSHOT)

                    # 2. Search attributes on the workflow page.
                    await page.get_by_role("tab", name="Search Attributes").click()
                    await expect(page.locator("body")).to_contain_text(
                        '"GraphStatus": "interrupted"', timeout=TIMEOUT_MS)
                    await expect(page.locator("body")).to_contain_text(
                        '"GraphName": "purchase"', timeout=TIMEOUT_MS)
                    await page.screenshot(path=shots / "3-search-attributes.png", full_page=True)

                    # 3. The Queries tab answers get_state.
                    await page.get_by_role("tab", name="Queries").click()
                    await page.get_by_test_id("query-select-button").click()
                    await page.get_by_role("option", name="get_state", exact=True).click()
                    await page.get_by_role("button", name="Run Query").click()
                    result = page.get_by_test_id("query-result")
                    await expect(result).to_contain_text("request_approval", timeout=TIMEOUT_MS)
                    await expect(result).to_contain_text(thread_id, timeout=TIMEOUT_MS)
                    await page.screenshot(path=shots / "4-query-get-state.png", full_page=True)

                    # 4. The workflow list filtered by the search attribute shows the thread.
                    query = quote('GraphStatus="interrupted"')
                    await page.goto(f"{server.ui_url}/namespaces/default/workflows?query={query}")
                    await expect(page.get_by_role("link", name=thread_id)).to_be_visible(
                        timeout=TIMEOUT_MS)
                    await page.screenshot(path=shots / "5-list-interrupted.png", full_page=True)
                    timings["browser"] = time.monotonic() - started
                finally:
                    await browser.close()

            # Leave nothing open: approve, so the thread completes before the worker stops.
            final = await gc.graph("purchase").ainvoke(
                _resume(True), {"configurable": {"thread_id": thread_id}})
            assert final["status"] == "charged"

    print(f"UI test timings (s, cumulative): {timings}; screenshots in {tmp_path}")


def _resume(value: object) -> object:
    from graphrun import Command

    return Command(resume=value)
