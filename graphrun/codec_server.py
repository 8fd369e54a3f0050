"""A Temporal remote codec server, so the Web UI and the `temporal` CLI can read encrypted threads.

The keys stay in this process; the browser sends it the encrypted payloads it
shows and gets them back decrypted. The protocol is Temporal's:

    POST .../decode   body: Payloads as proto JSON, {"payloads": [{"metadata": {...}, "data": "..."}]}
    POST .../encode   the same, the other way (the UI encodes what it sends, e.g. a signal)

Only the last part of the path counts, so the server can sit under any prefix.
Requests carry ``X-Namespace``; browsers first send a CORS preflight (OPTIONS).
Answers: 200 with Payloads, 400 for a body that is not Payloads JSON or does not
decode (an unknown key id), 401 without the bearer token (when one is set), 403
for an origin or namespace that is not allowed, 404 for any other path.

Run it with ``graphrun codec-server`` (keys from ``GRAPHRUN_ENCRYPTION_KEYS``)::

    graphrun codec-server --port 8081 --origin http://localhost:8233
    temporal server start-dev --ui-codec-endpoint http://localhost:8081

or, with a running UI, set *Codec Server* in the UI's data encoder settings to
``http://localhost:8081``. ``temporal workflow show --codec-endpoint
http://localhost:8081`` uses it from the CLI (add ``--codec-auth "Bearer TOKEN"``
when the server has a token).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

from google.protobuf import json_format
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.converter import PayloadCodec

__all__ = [
    "DEFAULT_ORIGIN",
    "DEFAULT_PORT",
    "MAX_BODY_BYTES",
    "TOKEN_ENV",
    "CodecServer",
]

DEFAULT_PORT = 8081
DEFAULT_ORIGIN = "http://localhost:8233"
"""The Web UI of `temporal server start-dev` (and of `graphrun dev`)."""
TOKEN_ENV = "GRAPHRUN_CODEC_TOKEN"
MAX_BODY_BYTES = 16 * 1024 * 1024
"""Largest request body accepted (Temporal's own payload limit is 2 MB per payload)."""

_ALLOW_HEADERS = "content-type, x-namespace, authorization"
logger = logging.getLogger("graphrun.codec_server")


class CodecServer:
    """Serves a PayloadCodec over HTTP (Temporal's remote codec protocol).

    Use it as a context manager, which serves from a background thread, or call
    :meth:`serve_forever`.

    Args:
        codec: the codec, e.g. ``graphrun.codec.EncryptionCodec(keys)``.
        host: interface to bind; keep the default loopback unless a proxy with TLS
            fronts it.
        port: TCP port; 0 picks a free one (see :attr:`url`).
        origins: browser origins allowed by CORS (the Web UI's address, exactly as
            the browser shows it: scheme, host and port).
        token: when set, requests must carry ``Authorization: Bearer <token>``.
        namespaces: when set, only requests whose ``X-Namespace`` is one of these.
    """

    def __init__(self, codec: PayloadCodec, *, host: str = "127.0.0.1",
                 port: int = DEFAULT_PORT, origins: Iterable[str] = (DEFAULT_ORIGIN,),
                 token: str | None = None, namespaces: Iterable[str] | None = None) -> None:
        self.codec = codec
        self.origins = frozenset(o.rstrip("/") for o in origins)
        self.token = token or None
        self.namespaces = None if namespaces is None else frozenset(namespaces)
        self._httpd = _HTTPServer((host, port), _Handler, self)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://host:port`` the server listens on."""
        host, port = self._httpd.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        return f"http://{host}:{port}"

    def serve_forever(self) -> None:
        """Serve until :meth:`shutdown` (from another thread) or KeyboardInterrupt."""
        self._httpd.serve_forever(poll_interval=0.2)

    def start(self) -> Self:
        """Serve from a daemon thread."""
        self._thread = threading.Thread(target=self.serve_forever, name="graphrun-codec-server",
                                        daemon=True)
        self._thread.start()
        return self

    def shutdown(self) -> None:
        """Stop serving and close the socket."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.shutdown()

    # -- request checks, kept off the handler so they read as the protocol ----------------
    def allowed_origin(self, origin: str | None) -> bool:
        return origin is not None and origin.rstrip("/") in self.origins

    def authorized(self, header: str | None) -> bool:
        if self.token is None:
            return True
        scheme, _, value = (header or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode(), self.token.encode())


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 owner: CodecServer) -> None:
        self.owner = owner
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    server_version = "graphrun-codec"

    # -- CORS --------------------------------------------------------------------------
    def _cors_headers(self) -> None:
        origin = self.headers.get("Origin")
        if self.server.owner.allowed_origin(origin):
            assert origin is not None
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Access-Control-Allow-Credentials", "true")
        self.send_header("Vary", "Origin")

    def do_OPTIONS(self) -> None:
        # A preflight never carries credentials: answer it without the token check.
        allowed = self.server.owner.allowed_origin(self.headers.get("Origin"))
        self.send_response(HTTPStatus.NO_CONTENT if allowed else HTTPStatus.FORBIDDEN)
        self._cors_headers()
        if allowed:
            self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
            self.send_header("Access-Control-Allow-Headers", _ALLOW_HEADERS)
            self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    # -- encode / decode ------------------------------------------------------------------
    def do_POST(self) -> None:
        owner = self.server.owner
        path = self.path.split("?", 1)[0].rstrip("/")
        op: Callable[[Sequence[Payload]], Awaitable[list[Payload]]]
        if path.endswith("/decode"):
            op = owner.codec.decode
        elif path.endswith("/encode"):
            op = owner.codec.encode
        else:
            self._drain()
            return self._error(HTTPStatus.NOT_FOUND, "POST to .../encode or .../decode")
        origin = self.headers.get("Origin")
        if origin is not None and not owner.allowed_origin(origin):
            self._drain()
            return self._error(HTTPStatus.FORBIDDEN, f"origin {origin!r} is not allowed; "
                               f"start the codec server with --origin {origin}")
        if not owner.authorized(self.headers.get("Authorization")):
            self._drain()
            return self._error(HTTPStatus.UNAUTHORIZED, "missing or wrong bearer token",
                               {"WWW-Authenticate": 'Bearer realm="graphrun-codec"'})
        namespace = self.headers.get("X-Namespace")
        if owner.namespaces is not None and namespace not in owner.namespaces:
            self._drain()
            return self._error(HTTPStatus.FORBIDDEN, f"namespace {namespace!r} is not served")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.close_connection = True
            return self._error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE if length > 0
                               else HTTPStatus.BAD_REQUEST,
                               f"body must be 0..{MAX_BODY_BYTES} bytes with a Content-Length")
        body = self.rfile.read(length)
        try:
            payloads = json_format.Parse(body, Payloads())
        except (json_format.ParseError, UnicodeDecodeError) as exc:
            return self._error(HTTPStatus.BAD_REQUEST, f"body is not Payloads JSON: {exc}")
        try:
            # A fresh loop per request: handlers run on their own threads.
            out = asyncio.run(op(list(payloads.payloads)))
        except Exception as exc:
            logger.warning("codec %s failed (namespace %s): %s", path, namespace, exc)
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        self._send_json(HTTPStatus.OK, json_format.MessageToJson(Payloads(payloads=out)))

    def do_GET(self) -> None:
        self._error(HTTPStatus.METHOD_NOT_ALLOWED, "POST to .../encode or .../decode",
                    {"Allow": "POST, OPTIONS"})

    def _drain(self) -> None:
        # Read an unused body so a kept-alive connection stays in step.
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if 0 < length <= MAX_BODY_BYTES:
            self.rfile.read(length)
        elif length:
            self.close_connection = True

    def _error(self, status: HTTPStatus, message: str,
               headers: dict[str, str] | None = None) -> None:
        self._send_json(status, json.dumps({"message": message}), headers)

    def _send_json(self, status: HTTPStatus, text: str,
                   headers: dict[str, str] | None = None) -> None:
        data = text.encode()
        self.send_response(status)
        self._cors_headers()
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        logger.info("%s %s", self.address_string(), format % args)
