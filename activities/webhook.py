"""The webhook activity: a finished run POSTed, as LangGraph's server posts it, to the
URL its creator gave."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from typing import Any

from temporalio import activity

from graphrun import registry, serde
from graphrun.payloads import WebhookCall
from graphrun.server.shapes import jsonable

TIMEOUT = 20.0


@activity.defn(name="send_webhook")
async def send_webhook(call: WebhookCall) -> int:
    """POST the run (its record, `values` as JSON, `error` if it failed); the status."""
    values = serde.loads(call.values, registry.lookup(call.graph).spec.types)
    body: dict[str, Any] = {**call.run, "thread_id": call.thread_id,
                            "values": jsonable(values)}
    if call.error:
        body["error"] = call.error
    return await asyncio.to_thread(_post, call.url, json.dumps(body).encode())


def _post(url: str, data: bytes) -> int:
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
        return int(answer.status)
