"""A worker's health and readiness over HTTP, for Kubernetes probes and load balancers.

    GET /healthz   200 while the process answers (liveness)
    GET /readyz    200 while the worker polls its task queue and Temporal answers a health
                   check within 2 s; 503 before it starts, while it drains on SIGTERM, and
                   when Temporal does not answer (readiness)

`graphrun worker --health-bind HOST:PORT` serves it; a program that runs `create_worker`
itself serves it with `async with WorkerHealth(worker, client, "0.0.0.0:8081"):`. Plain
asyncio: two fixed routes need no web framework in every worker image.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta
from types import TracebackType
from typing import Any

__all__ = ["WorkerHealth", "parse_bind"]

CHECK_TIMEOUT = timedelta(seconds=2)


def parse_bind(bind: str) -> tuple[str, int]:
    """HOST:PORT (`:8081` is every interface); ValueError saying what is wrong."""
    host, sep, port = bind.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{bind!r}: expected HOST:PORT, e.g. 0.0.0.0:8081")
    return host.strip("[]") or "0.0.0.0", int(port)


class WorkerHealth:
    """Serves /healthz and /readyz for `worker` (a temporalio Worker) on `bind`."""

    def __init__(self, worker: Any, client: Any, bind: str) -> None:
        self._worker = worker
        self._client = client
        self._host, self._port = parse_bind(bind)
        self._server: asyncio.Server | None = None
        self.draining = False  # set when shutdown begins: not ready, still alive

    @property
    def port(self) -> int:
        """The port served (the one given, or the one the OS chose for port 0)."""
        if self._server is None or not self._server.sockets:
            return self._port
        return int(self._server.sockets[0].getsockname()[1])

    async def __aenter__(self) -> WorkerHealth:
        self._server = await asyncio.start_server(self._answer, self._host, self._port)
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def ready(self) -> tuple[bool, str]:
        """(ready, why): the worker runs, is not draining, and Temporal answers."""
        if self.draining:
            return False, "draining: the worker is shutting down"
        if not self._worker.is_running:
            return False, "the worker is not running"
        try:
            ok = await self._client.service_client.check_health(timeout=CHECK_TIMEOUT)
        except Exception as exc:  # unreachable, refused, timed out
            return False, f"Temporal did not answer a health check: {type(exc).__name__}"
        return (True, "ready") if ok else (False, "Temporal reports it is not serving")

    async def _answer(self, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), 5)
            parts = line.decode("latin-1").split()
            path = parts[1].split("?")[0] if len(parts) >= 2 else ""
            if parts[:1] not in (["GET"], ["HEAD"]):
                code, body = 405, "GET /healthz or /readyz"
            elif path == "/healthz":
                code, body = 200, "ok"
            elif path == "/readyz":
                ok, why = await self.ready()
                code, body = (200 if ok else 503), why
            else:
                code, body = 404, "GET /healthz or /readyz"
            reason = {200: "OK", 404: "Not Found", 405: "Method Not Allowed",
                      503: "Service Unavailable"}[code]
            data = (body + "\n").encode()
            writer.write(f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\n"
                         f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
                         .encode() + (data if parts[:1] != ["HEAD"] else b""))
            await writer.drain()
        except (TimeoutError, ConnectionError, UnicodeDecodeError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
