"""`GET /metrics`: the API's requests by route template, their durations, the streams open
now and the runs started, scraped from an API server over the session's dev server; who
may read it; and `graphrun serve --metrics-bind`, Temporal's metrics of its client."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from examples import purchase
from graphrun.client import GraphClient
from tests.server.conftest import _ApiHost, slow

pytestmark = pytest.mark.temporal

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture(scope="module")
def api(dev_server: Any) -> Iterator[str]:
    """An API server of its own: no other module's requests in its counts."""
    host = _ApiHost(dev_server.address, graphs={"slow": slow, "purchase": purchase.graph})
    yield host.url
    host.close()


def _parse(text: str) -> Samples:
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def _scrape(http: httpx.AsyncClient) -> Samples:
    r = await http.get("/metrics")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=")
    return _parse(r.text)


def _value(samples: Samples, name: str, **labels: str) -> float:
    """The sample with exactly these labels; 0 when there is none yet."""
    return samples.get((name, frozenset(labels.items())), 0.0)


async def _until(http: httpx.AsyncClient, check: Callable[[Samples], bool],
                 timeout: float = 5.0) -> Samples:
    deadline = time.monotonic() + timeout
    while True:
        samples = await _scrape(http)
        if check(samples) or time.monotonic() > deadline:
            return samples
        await asyncio.sleep(0.05)


REQUESTS = "graphrun_api_http_requests_total"
DURATION = "graphrun_api_http_request_duration_seconds"
STREAMS = "graphrun_api_streams_open"
RUNS = "graphrun_api_runs_started_total"


async def test_requests_are_counted_by_route_template(api: str) -> None:
    async with httpx.AsyncClient(base_url=api, timeout=30) as http:
        before = await _scrape(http)
        tid = (await http.post("/threads", json={})).json()["thread_id"]
        for _ in range(2):
            assert (await http.get(f"/threads/{tid}")).status_code == 200
        missing = str(uuid.uuid4())
        assert (await http.get(f"/threads/{missing}")).status_code == 404
        assert (await http.get("/no/such/route")).status_code == 404
        wait = await http.post(f"/threads/{tid}/runs/wait",
                               json={"assistant_id": "slow", "input": {"seconds": 0}})
        assert wait.json()["done"] == ["after", "wait"]
        assert (await http.get("/ok")).status_code == 200
        text = (await http.get("/metrics")).text
    after = _parse(text)

    def delta(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    one = "/threads/{thread_id}"
    assert delta(REQUESTS, method="POST", route="/threads", status="200") == 1
    assert delta(REQUESTS, method="GET", route=one, status="200") == 2
    assert delta(REQUESTS, method="GET", route=one, status="404") == 1
    assert delta(REQUESTS, method="GET", route="unmatched", status="404") == 1
    assert delta(REQUESTS, method="POST", route="/threads/{thread_id}/runs/wait",
                 status="200") == 1
    # The histogram: a count and buckets per method and route, whatever the status.
    assert delta(f"{DURATION}_count", method="GET", route=one) == 3
    assert delta(f"{DURATION}_bucket", method="GET", route=one, le="+Inf") == 3
    assert delta(f"{DURATION}_bucket", method="GET", route=one, le="10.0") == 3
    assert delta(f"{DURATION}_sum", method="GET", route=one) > 0
    assert delta(RUNS, graph="slow") == 1
    # Never a path asked for (ids stay out of the labels), nor the probes and scrapes.
    assert tid not in text and missing not in text and "/no/such/route" not in text
    routes = {dict(labels).get("route") for name, labels in after if name == REQUESTS}
    assert not routes & {"/ok", "/metrics"}


async def test_streams_open_now_by_kind(api: str) -> None:
    import websockets

    sse = {"kind": "sse", "route": "/threads/{thread_id}/runs/stream"}
    ws = {"kind": "websocket", "route": "/threads/{thread_id}/stream/events"}
    async with httpx.AsyncClient(base_url=api, timeout=30) as http:
        tid = (await http.post("/threads", json={})).json()["thread_id"]
        before = _value(await _scrape(http), RUNS, graph="slow")
        body = {"assistant_id": "slow", "input": {"seconds": 1.0}, "stream_mode": "values"}
        async with http.stream("POST", f"/threads/{tid}/runs/stream", json=body) as r:
            lines = r.aiter_lines()
            assert await anext(lines) == "event: metadata"  # the stream is open
            during = await _scrape(http)
            assert _value(during, STREAMS, **sse) == 1
            assert _value(during, RUNS, graph="slow") == before + 1
            events = [line async for line in lines if line.startswith("event: ")]
        assert events and set(events) == {"event: values"}
        closed = await _until(http, lambda s: _value(s, STREAMS, **sse) == 0)
        assert _value(closed, STREAMS, **sse) == 0

        url = api.replace("http://", "ws://") + f"/threads/{tid}/stream/events"
        async with websockets.connect(url) as socket:
            await socket.send(json.dumps({"id": 1, "method": "subscription.subscribe",
                                          "params": {"channels": ["values"]}}))
            assert json.loads(await socket.recv())["type"] == "success"
            assert _value(await _scrape(http), STREAMS, **ws) == 1
        closed = await _until(http, lambda s: _value(s, STREAMS, **ws) == 0)
        assert _value(closed, STREAMS, **ws) == 0
        assert _value(closed, STREAMS, **sse) == 0


async def test_json_format_as_langgraphs(api: str) -> None:
    async with httpx.AsyncClient(base_url=api, timeout=30) as http:
        await http.post("/assistants/search", json={})
        r = await http.get("/metrics", params={"format": "json"})
        assert r.headers["content-type"] == "application/json"
        body = r.json()["api"]
        # An unknown format is Prometheus' text, as on LangGraph's server.
        other = await http.get("/metrics", params={"format": "yaml"})
    rows = body["http_requests_total"]
    assert {"method": "POST", "path": "/assistants/search", "status": 200} in [
        {k: v for k, v in row.items() if k != "count"} for row in rows]
    assert all(isinstance(row["count"], int) and row["count"] >= 1 for row in rows)
    assert set(body) == {"http_requests_total", "streams_open", "runs_started_total"}
    assert other.headers["content-type"].startswith("text/plain")
    assert "graphrun_api_http_requests_total{" in other.text


def _app(client: Any, **options: Any) -> httpx.AsyncClient:
    from graphrun.server import build_app

    app = build_app(GraphClient(client, task_queue="q"), {}, check_search_attributes=False,
                    **options)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://api")


async def test_who_may_read_it(temporal_client: Any) -> None:
    """As the other meta routes: a key with API keys, open with custom auth (as on
    LangGraph's server), gone with `disable_meta`. Each app counts its own requests."""
    from langgraph_sdk import Auth

    from graphrun.server.http import HttpOptions

    async with _app(temporal_client, api_keys=["k1"]) as keyed:
        assert (await keyed.get("/threads/x")).status_code == 401
        assert (await keyed.get("/metrics")).status_code == 401
        r = await keyed.get("/metrics", headers={"Authorization": "Bearer k1"})
        assert r.status_code == 200
    refused = _parse(r.text)
    assert _value(refused, REQUESTS, method="GET", route="/threads/{thread_id}",
                  status="401") == 1

    auth = Auth()

    @auth.authenticate
    async def nobody(headers: dict[bytes, bytes]) -> str:
        raise Auth.exceptions.HTTPException(status_code=401, detail="who are you?")

    async with _app(temporal_client, auth=auth) as custom:
        assert (await custom.post("/threads/search", json={})).status_code == 401
        r = await custom.get("/metrics")
        assert r.status_code == 200
    fresh = _parse(r.text)
    assert _value(fresh, REQUESTS, method="POST", route="/threads/search", status="401") == 1
    assert _value(fresh, REQUESTS, method="GET", route="/threads/{thread_id}",
                  status="401") == 0  # the other app's

    async with _app(temporal_client, http=HttpOptions(disabled=frozenset({"meta"}))) as off:
        assert (await off.get("/metrics")).status_code == 404


async def test_serve_metrics_bind(dev_server: Any) -> None:
    """`graphrun serve --metrics-bind`: Temporal's metrics of the API's client."""
    from tests.cli.helpers import Background, free_port
    from tests.temporal.test_metrics import scrape

    port, bind = free_port(), free_port()
    api = Background.start("serve", "--graph", "examples.purchase:graph",
                           "--address", dev_server.address,
                           "--task-queue", f"metrics-{uuid.uuid4()}", "--port", str(port),
                           "--metrics-bind", f"127.0.0.1:{bind}", "--tracing", "off")
    try:
        assert f"http://127.0.0.1:{port}/metrics" in api.wait_for("API metrics:")
        assert f"http://127.0.0.1:{bind}/metrics" in api.wait_for("Temporal client metrics:")
        url = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=url, timeout=10) as http:
            for _ in range(200):
                try:
                    if (await http.get("/ok")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.05)
            assert (await http.post("/threads/search", json={})).status_code == 200
            ours = await _scrape(http)
        assert _value(ours, REQUESTS, method="POST", route="/threads/search",
                      status="200") == 1
        text = await asyncio.to_thread(scrape, bind)
        calls = {dict(labels).get("operation") for name, labels in _parse(text)
                 if name.startswith("temporal_request")}
        assert "ListWorkflowExecutions" in calls, sorted(c for c in calls if c)
    finally:
        api.kill()
