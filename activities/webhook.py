"""The webhook activity: a finished run POSTed, as LangGraph's server posts it, to the
URL its creator gave."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from typing import Any

from temporalio import activity

from graphrun import registry, serde
from graphrun.payloads import WebhookCall
from graphrun.server.shapes import jsonable
from graphrun.server.webhooks import render_headers

TIMEOUT = 20.0


@activity.defn(name="send_webhook")
async def send_webhook(call: WebhookCall) -> int:
    """POST the run (its record, `values` as JSON, `error` if it failed); the status."""
    values = serde.loads(call.values, registry.lookup(call.graph).spec.types)
    body: dict[str, Any] = {**call.run, "thread_id": call.thread_id,
                            "values": jsonable(values)}
    if call.error:
        body["error"] = call.error
    fields = call.options.get("allowed_fields")
    if fields is not None:  # langgraph.json's webhooks.allowed_fields
        body = {k: v for k, v in body.items() if k in fields}
    # Header templates are filled in here, from this worker's environment: the run's
    # history holds their names, never the secrets.
    headers = render_headers(call.options.get("headers") or {},
                             call.options.get("env_prefix", "LG_WEBHOOK_"), os.environ)
    return await asyncio.to_thread(_post, call.url, json.dumps(body).encode(), headers)


def _post(url: str, data: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={**headers, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
        return int(answer.status)
