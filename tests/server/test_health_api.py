"""`GET /ok` checks Temporal, and with `?check_workers=1` that a worker polls the task
queue: 200 when they answer, 503 within about 2 s when they do not (a load balancer's
probe must not hang on a Temporal that is gone)."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest

from graphrun.client import GraphClient, data_converter
from graphrun.devserver import DevServer

pytestmark = pytest.mark.temporal


def _app(gc: GraphClient) -> httpx.AsyncClient:
    from graphrun.server import build_app
    from tests.server.conftest import GRAPHS

    return httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gc, GRAPHS)),
                             base_url="http://api")


async def test_ok_when_temporal_and_a_worker_answer(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url) as http:
        plain = await http.get("/ok")
        workers = await http.get("/ok", params={"check_workers": 1})
    assert (plain.status_code, plain.json()) == (
        200, {"ok": True, "services": {"temporal": "healthy"}})
    assert (workers.status_code, workers.json()) == (
        200, {"ok": True, "services": {"temporal": "healthy", "workers": "healthy"}})


async def test_no_worker_on_the_queue_is_503_when_asked(temporal_client: Any) -> None:
    queue = f"nobody-{uuid.uuid4()}"
    async with _app(GraphClient(temporal_client, task_queue=queue)) as http:
        assert (await http.get("/ok")).status_code == 200  # Temporal alone is fine
        r = await http.get("/ok", params={"check_workers": 1})
    assert r.status_code == 503
    assert r.json() == {"ok": False, "services": {
        "temporal": "healthy",
        "workers": f"unhealthy: no worker polls task queue {queue!r}"}}


async def test_temporal_down_is_503_within_two_seconds() -> None:
    from temporalio.client import Client

    async with DevServer(ui=False) as server:  # a Temporal that then goes away
        client = await Client.connect(server.address, data_converter=data_converter)
    async with _app(GraphClient(client, task_queue="q")) as http:
        t0 = time.monotonic()
        r = await http.get("/ok", params={"check_workers": 1})
        took = time.monotonic() - t0
    assert r.status_code == 503 and took < 2.5, (r.text, took)
    body = r.json()
    assert body["ok"] is False
    assert body["services"]["temporal"].startswith("unhealthy: ")
    assert body["services"]["workers"] == "unknown: Temporal does not answer"
