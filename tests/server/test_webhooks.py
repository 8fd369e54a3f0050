"""Webhooks under langgraph.json's `webhooks` (URL policy, headers, allowed fields), a
cron's webhook and multitask strategy, and request fields: honoured or a 422 naming
them."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client
from temporalio.client import Client

from graphrun.server.config import ConfigError, webhook_policy
from graphrun.server.webhooks import WebhookPolicy
from tests.server.conftest import _ApiHost
from tests.server.test_crons_api import fire
from tests.server.test_runs_routes import TICKER

PURCHASE = {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}
TOKEN = f"secret-{uuid.uuid4().hex[:8]}"


class _Receiver:
    """An HTTP server on this machine that keeps what it is POSTed, headers and body."""

    def __init__(self) -> None:
        got: list[tuple[dict[str, str], Any]] = []

        class Hook(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.got = got
        self.server = HTTPServer(("127.0.0.1", 0), Hook)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    async def next(self, timeout: float = 20) -> tuple[dict[str, str], Any]:
        for _ in range(int(timeout / 0.05)):
            if self.got:
                return self.got.pop(0)
            await asyncio.sleep(0.05)
        raise AssertionError("no webhook arrived")


@pytest.fixture(scope="module")
def hooked(dev_server: Any) -> Iterator[str]:
    """An API whose langgraph.json allows loopback webhooks, sends a header from the
    environment and only three fields."""
    os.environ["LG_WEBHOOK_TOKEN"] = TOKEN
    policy = WebhookPolicy.from_config({
        "url": {"disable_loopback": False},
        "headers": {"Authorization": "Bearer ${{ env.LG_WEBHOOK_TOKEN }}", "X-Static": "s"},
        "allowed_fields": ["run_id", "status", "values"]})
    from examples import purchase

    host = _ApiHost(dev_server.address, {"ticker": TICKER, "purchase": purchase.graph},
                    api_keys=(), webhooks=policy)
    yield host.url
    host.close()


async def test_a_webhook_gets_its_headers_and_only_the_allowed_fields(hooked: str) -> None:
    hook = _Receiver()
    try:
        client = get_client(url=hooked)
        tid = str(uuid.uuid4())
        run = await client.runs.create(tid, "ticker", input={"n": 1, "pause": 0},
                                       webhook=hook.url, if_not_exists="create")
        headers, body = await hook.next()
        assert headers["authorization"] == f"Bearer {TOKEN}"
        assert headers["x-static"] == "s"
        assert set(body) == {"run_id", "status", "values"}
        assert body["run_id"] == run["run_id"] and body["status"] == "success"
        assert body["values"]["done"] == 1
    finally:
        hook.server.shutdown()


async def test_a_cron_posts_each_firing_and_interrupts_the_running_run(
        hooked: str, temporal_client: Client) -> None:
    hook = _Receiver()
    client = get_client(url=hooked)
    try:
        tid = (await client.threads.create())["thread_id"]
        long = await client.runs.create(tid, "ticker", input={"n": 40, "pause": 0.2})
        for _ in range(100):  # running
            if (await client.runs.get(tid, long["run_id"]))["status"] == "running":
                break
            await asyncio.sleep(0.05)
        cron: Any = await client.crons.create_for_thread(
            tid, "ticker", schedule="0 9 * * *", input={"n": 1, "pause": 0},
            webhook=hook.url, multitask_strategy="interrupt")
        try:
            result = await fire(temporal_client, cron["cron_id"])
        finally:
            await client.crons.delete(cron["cron_id"])
        assert result["status"] == "success"
        _, body = await hook.next()
        assert body["status"] == "success" and body["values"]["done"] == 1
        # The run the cron found running was interrupted, as a run with the strategy does.
        assert (await client.runs.get(tid, long["run_id"]))["status"] == "interrupted"
        statuses = {r["run_id"]: r for r in await client.runs.list(tid)}
        fired = [r for rid, r in statuses.items() if rid != long["run_id"]]
        assert [r["multitask_strategy"] for r in fired] == ["interrupt"]
    finally:
        hook.server.shutdown()


async def test_the_url_policy(hooked: str, api_url: str) -> None:
    default = WebhookPolicy()  # LangGraph's defaults: no loopback, no link-local
    for url in ("http://localhost:9/x", "http://127.0.0.1:9/x", "http://[::1]:9/x",
                "http://169.254.169.254/latest/meta-data", "file:///etc/passwd", "/internal"):
        with pytest.raises(ValueError):
            await default.check(url)
    await default.check("https://93.184.215.14/x")  # a public address
    await default.check("http://10.1.2.3/x")  # private addresses are allowed by default
    with pytest.raises(ValueError, match="does not resolve"):  # as LangGraph: refused
        await default.check("http://x.invalid/")
    strict = WebhookPolicy.from_config({"url": {
        "require_https": True, "allowed_domains": ["hooks.example.com", "*.corp.example"],
        "allowed_ports": [443], "max_url_length": 60, "disable_private_ips": True}})
    for allowed in ("https://hooks.example.com/x", "https://a.corp.example/x"):
        # past the policy's checks; this machine resolves no public names
        with pytest.raises(ValueError, match="does not resolve"):
            await strict.check(allowed)
    for url, says in (("http://hooks.example.com/x", "https"),
                      ("https://corp.example/x", "allowed_domains"),
                      ("https://evil.example/x", "allowed_domains"),
                      ("https://hooks.example.com:8443/x", "allowed_ports"),
                      ("https://hooks.example.com/" + "x" * 60, "longer"),
                      ("https://10.1.2.3/x", "allowed_domains")):
        with pytest.raises(ValueError, match=says):
            await strict.check(url)
    private = WebhookPolicy(disable_private_ips=True)
    with pytest.raises(ValueError, match="private"):
        await private.check("http://10.1.2.3/x")

    # Through the API: the policy's answer is a 422 that says why.
    async with httpx.AsyncClient(base_url=hooked) as http:
        r = await http.post("/runs", json={"assistant_id": "purchase", "input": PURCHASE,
                                           "webhook": "http://169.254.169.254/x"})
        assert r.status_code == 422 and "link-local" in r.text
        r = await http.post("/runs/crons", json={"assistant_id": "purchase",
                                                 "schedule": "0 9 * * *",
                                                 "webhook": "ftp://x.example/"})
        assert r.status_code == 422 and "http(s)" in r.text


def test_bad_webhooks_config_is_an_error_naming_the_key(tmp_path: Any) -> None:
    cases = [({"url": {"allowed_domains": ["a*.example"]}}, "allowed_domains"),
             ({"url": {"allowed_ports": ["443"]}}, "allowed_ports"),
             ({"allowed_fields": ["run_id", "secret"]}, "allowed_fields"),
             ({"headers": {"X": "${{ env.HOME }}"}}, "env_prefix"),
             ({"headers": {"X": "${{ env.LG_WEBHOOK_NOT_SET_ANYWHERE }}"}}, "no LG_WEBHOOK"),
             ({"nope": 1}, "unknown keys")]
    for webhooks, says in cases:
        path = tmp_path / "langgraph.json"
        path.write_text(json.dumps({"graphs": {}, "webhooks": webhooks}))
        with pytest.raises(ConfigError, match=says):
            webhook_policy(path)


async def test_request_fields_are_honoured_or_refused_by_name(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        # LangGraph's clients send these: honoured (a checkpoint every step is "sync").
        r = await http.post("/runs/wait", json={"assistant_id": "purchase", "input": PURCHASE,
                                                "durability": "exit",
                                                "checkpoint_during": False,
                                                "strict_resume": True})
        assert r.status_code == 200, r.text
        for field, value, says in (("feedback_keys", ["score"], "LangSmith"),
                                   ("langsmith_tracer", {"project_name": "p"}, "worker"),
                                   ("strict_resume", False, "strict_resume"),
                                   ("no_such_field", 1, "no_such_field")):
            r = await http.post("/runs/wait", json={"assistant_id": "purchase",
                                                    "input": PURCHASE, field: value})
            assert r.status_code == 422 and says in r.text, (field, r.text)
        r = await http.post("/threads", json={"metadata": {}, "colour": "red"})
        assert r.status_code == 422 and "'colour' is not a field" in r.text
        r = await http.post("/assistants/search", json={"limit": 1, "extract": {}})
        assert r.status_code == 422


async def test_search_extract_and_state_select(api_url: str) -> None:
    client = get_client(url=api_url)
    tag = uuid.uuid4().hex
    tid = str(uuid.uuid4())
    await client.runs.wait(tid, "purchase", input=PURCHASE, if_not_exists="create",
                           metadata={"tag": tag})
    await client.threads.update(tid, metadata={"tag": tag})
    [found] = await client.threads.search(
        metadata={"tag": tag}, select=["thread_id"],
        extract={"item": "values.item", "first_next": "interrupts", "nothing": "values.x[3]"})
    assert set(found) == {"thread_id", "extracted"}
    assert found["extracted"]["item"] == PURCHASE["item"]
    assert found["extracted"]["nothing"] is None
    async with httpx.AsyncClient(base_url=api_url) as http:
        r = await http.post("/threads/search", json={"extract": {"a": "values..x"}})
        assert r.status_code == 422 and "not a path" in r.text
        r = await http.post("/threads/search", json={
            "extract": {f"a{i}": "values.x" for i in range(11)}})
        assert r.status_code == 422
    state = await client.threads.get_state(tid, select=["values.amount", "next"])
    assert state == {"values": {"amount": PURCHASE["amount"]}, "next": ["request_approval"]}
    history = await client.threads.get_history(tid, select=["checkpoint"], limit=2)
    assert len(history) == 2 and all(set(h) == {"checkpoint"} for h in history)
