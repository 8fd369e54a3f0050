"""A fake LangSmith endpoint on loopback: it keeps what the `langsmith` client posts.

The client sends runs in whichever way the server's `/info` allows: multipart ingest
(`POST /runs/multipart`, the default, zstd-compressed when compression is on), JSON
batches (`POST /runs/batch`), or one run at a time (`POST /runs`, `PATCH /runs/{id}`).
All are read here into one record per run: the post's fields with every later patch
merged over them, in arrival order.

    with FakeLangSmith() as ls:
        client = ls.client()                  # a langsmith.Client posting here
        ...
        ls.wait_for(lambda runs: ...)
        ls.tree(trace_id)                     # [(depth, name, run_type), ...]
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _clear_env_cache() -> None:
    import langsmith.utils

    for name in ("get_env_var", "get_tracer_project"):
        cached = getattr(langsmith.utils, name, None)
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()


class FakeLangSmith:
    def __init__(self, *, multipart: bool = True, env: bool = False, keep: bool = True) -> None:
        """`env`: also point LANGSMITH_ENDPOINT/API_KEY here and set LANGSMITH_TRACING
        while open (langsmith caches what it reads of them: cleared on exit). `keep=False`
        reads and drops what arrives (a sink, for benchmarks)."""
        self.multipart = multipart
        self.env = env
        self.keep = keep
        self.lock = threading.Lock()
        self.runs: dict[str, dict[str, Any]] = {}
        self.posts: dict[str, int] = {}  # run id -> times posted (a duplicate shows here)
        self.requests: list[str] = []  # "METHOD path" of every request, in order
        self._server: ThreadingHTTPServer | None = None
        self._saved_env: dict[str, str | None] = {}

    # -- life ---------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeLangSmith:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "zstd":
                    import zstandard

                    data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
                return data

            def _answer(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                fake.requests.append(f"GET {self.path}")
                if self.path.startswith("/info"):
                    self._answer(200, {"version": "0.10.0", "batch_ingest_config": {
                        "use_multipart_endpoint": fake.multipart, "scale_up_qsize_trigger": 1000,
                        "scale_up_nthreads_limit": 16, "scale_down_nempty_trigger": 4,
                        "size_limit": 100, "size_limit_bytes": 20_971_520}})
                else:
                    self._answer(404, {"detail": "not found"})

            def do_POST(self) -> None:
                fake.requests.append(f"POST {self.path}")
                body = self._body()
                if not fake.keep:
                    pass
                elif self.path.startswith("/runs/multipart"):
                    fake._multipart(self.headers.get("Content-Type", ""), body)
                elif self.path.startswith("/runs/batch"):
                    batch = json.loads(body)
                    for run in batch.get("post") or []:
                        fake._post(run)
                    for run in batch.get("patch") or []:
                        fake._patch(run)
                elif self.path.rstrip("/") == "/runs":
                    fake._post(json.loads(body))
                self._answer(202, {})

            def do_PATCH(self) -> None:
                fake.requests.append(f"PATCH {self.path}")
                body = json.loads(self._body())
                if self.path.startswith("/runs/"):
                    body.setdefault("id", self.path.rsplit("/", 1)[-1])
                    fake._patch(body)
                self._answer(202, {})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        if self.env:
            env = {"LANGSMITH_ENDPOINT": self.url, "LANGSMITH_API_KEY": "lsv2-fake-key",
                   "LANGSMITH_TRACING": "true", "LANGSMITH_PROJECT": "graphrun-tests"}
            for k, v in env.items():
                self._saved_env[k] = os.environ.get(k)
                os.environ[k] = v
            _clear_env_cache()
        return self

    def client(self) -> Any:
        import langsmith

        return langsmith.Client(api_url=self.url, api_key="lsv2-fake-key")

    def __exit__(self, *exc: Any) -> None:
        for k, v in self._saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        if self._saved_env:
            _clear_env_cache()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # -- what arrives -------------------------------------------------------------------
    def _post(self, run: dict[str, Any]) -> None:
        with self.lock:
            rid = str(run["id"])
            self.posts[rid] = self.posts.get(rid, 0) + 1
            self.runs[rid] = {**self.runs.get(rid, {}), **run}

    def _patch(self, run: dict[str, Any]) -> None:
        with self.lock:
            rid = str(run["id"])
            merged = self.runs.setdefault(rid, {"id": rid})
            for k, v in run.items():
                if k == "extra" and isinstance(v, dict):
                    merged["extra"] = {**(merged.get("extra") or {}), **v}
                elif v is not None:
                    merged[k] = v

    def _multipart(self, content_type: str, body: bytes) -> None:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + body)
        parts: dict[str, dict[str, Any]] = {}  # "post.<id>" -> fields
        order: list[str] = []
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition") or ""
            kind, _, rest = name.partition(".")
            rid, _, field = rest.partition(".")
            if kind not in ("post", "patch") or not rid:
                continue
            key = f"{kind}.{rid}"
            if key not in parts:
                parts[key] = {"id": rid}
                order.append(key)
            payload = part.get_payload(decode=True) or b"null"
            value = json.loads(payload)
            if field:  # post.<id>.inputs, .outputs, .events, .extra ...
                parts[key][field] = value
            else:
                parts[key].update(value)
        for key in order:
            (self._post if key.startswith("post.") else self._patch)(parts[key])

    # -- reading ------------------------------------------------------------------------
    def snapshot(self) -> dict[str, dict[str, Any]]:
        with self.lock:
            return {k: dict(v) for k, v in self.runs.items()}

    def wait_for(self, done: Callable[[dict[str, dict[str, Any]]], bool],
                 timeout: float = 15.0) -> dict[str, dict[str, Any]]:
        """The runs once `done(runs)` holds (the client posts in the background)."""
        deadline = time.monotonic() + timeout
        while True:
            runs = self.snapshot()
            if done(runs):
                return runs
            if time.monotonic() > deadline:
                names = sorted(f"{r.get('name')}:{str(r.get('trace_id'))[:8]}"
                               for r in runs.values())
                raise AssertionError(f"timed out waiting for runs; have {names}")
            time.sleep(0.05)

    @staticmethod
    def children(runs: dict[str, dict[str, Any]], parent: str | None) -> list[dict[str, Any]]:
        kids = [r for r in runs.values()
                if (str(r["parent_run_id"]) if r.get("parent_run_id") else None) == parent]
        return sorted(kids, key=lambda r: (str(r.get("dotted_order") or ""),
                                           str(r.get("start_time"))))

    @classmethod
    def walk(cls, runs: dict[str, dict[str, Any]], root: str, depth: int = 0
             ) -> Iterator[tuple[int, dict[str, Any]]]:
        yield depth, runs[root]
        for kid in cls.children(runs, root):
            yield from cls.walk(runs, str(kid["id"]), depth + 1)

    @classmethod
    def tree(cls, runs: dict[str, dict[str, Any]], root: str) -> list[tuple[int, str, str]]:
        """(depth, name, run_type) in order: the shape of the trace under `root`."""
        return [(d, str(r.get("name")), str(r.get("run_type")))
                for d, r in cls.walk(runs, root)]

    @staticmethod
    def roots(runs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted((r for r in runs.values() if not r.get("parent_run_id")),
                      key=lambda r: str(r.get("start_time")))


def main() -> None:
    """`python -m tests.temporal.fake_langsmith [--sink]`: serve until stdin closes, after
    printing the URL (benchmarks run it in a process of its own)."""
    import sys

    with FakeLangSmith(keep="--sink" not in sys.argv) as fake:
        print(fake.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
