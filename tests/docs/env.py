"""What a page's code needs besides Temporal, set up unseen: `<!-- setup: NAME -->` on a
page runs NAME(page) here around the page's python blocks (see test_code_blocks.py).

Each NAME is a generator: what comes before its `yield` runs before the page's first
block, what comes after it once the page is done. Services listen on free loopback ports;
the page reads them from the variables its own code reads (`LANGSMITH_ENDPOINT`,
`OTEL_EXPORTER_OTLP_ENDPOINT`, `AWS_ENDPOINT_URL`, ...), as it would in production.
"""

from __future__ import annotations

import json
import re
import secrets
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest


@dataclass
class PageEnv:
    temporal_address: str          # the docs' dev server (TEMPORAL_ADDRESS is set to it)
    monkeypatch: pytest.MonkeyPatch  # variables and attributes set here are undone after
    tmp_path: Path                 # a directory of the page's own


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- tracing and metrics -------------------------------------------------------------------

def langsmith(page: PageEnv) -> Iterator[None]:
    """LangSmith's variables point at a fake LangSmith on loopback, which keeps the runs."""
    from tests.temporal.fake_langsmith import FakeLangSmith

    with FakeLangSmith(env=True, keep=False):
        yield


class _Otlp(BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that takes every export and keeps nothing."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


def otlp(page: PageEnv) -> Iterator[None]:
    """OTEL_EXPORTER_OTLP_ENDPOINT is an OTLP/HTTP receiver on loopback. The tracer provider
    the page makes global is shut down after it and the global is cleared again."""
    from opentelemetry import trace
    from opentelemetry.util._once import Once

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Otlp)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page.monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT",
                            f"http://127.0.0.1:{server.server_address[1]}")
    try:
        yield
    finally:
        provider = trace.get_tracer_provider()
        if hasattr(provider, "shutdown"):
            provider.shutdown()
        trace._TRACER_PROVIDER = None             # type: ignore[attr-defined]
        trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()


def metrics_port(page: PageEnv) -> Iterator[None]:
    """METRICS_BIND, where the page serves Prometheus metrics: a free loopback port."""
    page.monkeypatch.setenv("METRICS_BIND", f"127.0.0.1:{_free_port()}")
    yield


# -- payload storage -----------------------------------------------------------------------

def working_dir(page: PageEnv) -> Iterator[None]:
    """The page runs in a directory of its own (its relative paths land there)."""
    page.monkeypatch.chdir(page.tmp_path)
    yield


def s3(page: PageEnv) -> Iterator[None]:
    """An S3-compatible server (moto's) on loopback with the bucket `graphrun-payloads`;
    AWS's variables (endpoint, region, credentials) point at it, as for MinIO."""
    import boto3
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        for name, value in {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
                            "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
                            "AWS_ACCESS_KEY_ID": "docs", "AWS_SECRET_ACCESS_KEY": "docs"}.items():
            page.monkeypatch.setenv(name, value)
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
            page.monkeypatch.delenv(name, raising=False)
        boto3.client("s3").create_bucket(Bucket="graphrun-payloads")
        yield
    finally:
        server.stop()


# -- a chat model --------------------------------------------------------------------------

def _model() -> Any:
    """examples/agent_approval.py's stand-in model (tool calls for "Pay INV-7 from ACME,
    1200 EUR", a short answer otherwise), streaming its answer word by word."""
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    from examples.agent_approval import InvoiceModel

    class StreamingModel(InvoiceModel):
        def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                    **kwargs: Any) -> Iterator[ChatGenerationChunk]:
            reply = self._generate(messages, stop, run_manager, **kwargs).generations[0].message
            if reply.tool_calls:
                yield ChatGenerationChunk(message=AIMessageChunk(
                    content="", id=reply.id, tool_call_chunks=[
                        {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"],
                         "index": i} for i, c in enumerate(reply.tool_calls)]))
                return
            for word in re.findall(r"\S+\s*", str(reply.content)):
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=word, id=reply.id))
                if run_manager is not None:
                    run_manager.on_llm_new_token(word, chunk=chunk)
                yield chunk

    return StreamingModel()


def chat_model(page: PageEnv) -> Iterator[None]:
    """`init_chat_model("provider:model")`, and `create_agent("provider:model", ...)`, give a
    local stand-in model whatever they name: no provider package, key or network."""
    import langchain.agents.factory
    import langchain.chat_models
    import langchain.chat_models.base

    def init_chat_model(model: str | None = None, **kwargs: Any) -> Any:
        return _model()

    for module in (langchain.chat_models, langchain.chat_models.base,
                   langchain.agents.factory):
        page.monkeypatch.setattr(module, "init_chat_model", init_chat_model)
    yield


# -- the Server API ------------------------------------------------------------------------

def _api(page: PageEnv, **app_options: Any) -> Iterator[None]:
    """`graphrun serve` in-process (uvicorn on a free port, and a worker) serving the
    examples' purchase and approval agent (its model streaming its words, as a chat
    model's do); API_URL is where it listens."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from examples import agent_approval, purchase
    from tests.server.conftest import _ApiHost

    agent = create_agent(
        _model(), [agent_approval.lookup_vendor, agent_approval.pay_invoice],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"pay_invoice": True})])
    host = _ApiHost(page.temporal_address, {"purchase": purchase.graph, "agent": agent},
                    **app_options)
    page.monkeypatch.setenv("API_URL", host.url)
    try:
        yield
    finally:
        host.close()


def api_server(page: PageEnv) -> Iterator[None]:
    """The Server API at API_URL, open (no API key)."""
    page.monkeypatch.delenv("GRAPHRUN_API_KEY", raising=False)
    yield from _api(page, api_keys=[])


def api_server_with_key(page: PageEnv) -> Iterator[None]:
    """The Server API at API_URL, with GRAPHRUN_API_KEY set (as `graphrun serve` reads it)."""
    page.monkeypatch.setenv("GRAPHRUN_API_KEY", secrets.token_hex(16))
    yield from _api(page)


# -- connections ---------------------------------------------------------------------------

def temporal_profile(page: PageEnv) -> Iterator[None]:
    """A temporal.toml (TEMPORAL_CONFIG_FILE) whose profile `prod` is the docs' server."""
    config = page.tmp_path / "temporal.toml"
    config.write_text(f'[profile.prod]\naddress = "{page.temporal_address}"\n'
                      f'namespace = "default"\n')
    page.monkeypatch.setenv("TEMPORAL_CONFIG_FILE", str(config))
    for name in ("TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_PROFILE"):
        page.monkeypatch.delenv(name, raising=False)   # the profile says where, not these
    yield
