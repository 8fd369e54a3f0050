"""Helpers for the `graphrun` command tests: run the real command as subprocesses."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from graphrun.devserver import DevServer

REPO = Path(__file__).resolve().parents[2]

# The command must not pick up a developer's own Temporal settings (or keys).
_CLEAN_ENV = {k: v for k, v in os.environ.items()
              if not k.startswith(("TEMPORAL_", "GRAPHRUN_TASK_QUEUE", "GRAPHRUN_ENCRYPTION_KEYS",
                                   "GRAPHRUN_CODEC_TOKEN", "GRAPHRUN_PAYLOAD_"))}


def usage_errors(monkeypatch: Any, capsys: Any, base: Sequence[str],
                 cases: Sequence[tuple[Sequence[str], dict[str, str], str]]) -> None:
    """Each (flags, environment, says) case of `graphrun *base *flags` stops with exit code
    2 and `says` on stderr: run in this process, so no start-up per case."""
    from graphrun.cli import main

    for flags, env, says in cases:
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            code = main([*base, *flags])
        err = capsys.readouterr().err
        assert code == 2 and says in err, (flags, env, code, err)


def graphrun_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "graphrun.cli", *args]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> Result:
    proc = subprocess.run(graphrun_cmd(*args), cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**_CLEAN_ENV, **(env or {})})
    return Result(proc.returncode, proc.stdout, proc.stderr)


@dataclass
class Background:
    """A long-running `graphrun` subprocess whose stdout lines we can wait for."""

    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    _q: queue.Queue[str | None] = field(default_factory=queue.Queue)

    @classmethod
    def start(cls, *args: str, cwd: Path = REPO, env: dict[str, str] | None = None
              ) -> Background:
        proc = subprocess.Popen(graphrun_cmd(*args), cwd=cwd, env={**_CLEAN_ENV, **(env or {})},
                                text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        bg = cls(proc)
        threading.Thread(target=bg._pump, daemon=True).start()
        return bg

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._q.put(line.rstrip("\n"))
        self._q.put(None)

    def wait_for(self, text: str, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._q.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no line with {text!r} within {timeout}s; got "
                                     f"{self.lines}") from None
            if line is None:
                raise AssertionError(f"process exited ({self.proc.wait()}) before printing "
                                     f"{text!r}; output: {self.lines}")
            self.lines.append(line)
            if text in line:
                return line

    def interrupt(self, timeout: float = 10) -> tuple[int, float]:
        """SIGINT; returns (exit code, seconds it took to stop)."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"did not stop within {timeout}s after SIGINT") from None
        return code, time.monotonic() - t0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@dataclass
class CLIWorker:
    address: str
    task_queue: str
    process: Background

    def run(self, *args: str, **kw: object) -> Result:
        """Run `graphrun ARGS --address ... --task-queue ...` against this worker."""
        return run_cli(*args, "--address", self.address, "--task-queue", self.task_queue,
                       **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def cli_worker(dev_server: DevServer) -> Iterator[CLIWorker]:
    """`graphrun worker --graph examples.purchase:graph` on its own task queue."""
    tq = f"cli-{uuid.uuid4()}"
    bg = Background.start("worker", "--graph", "examples.purchase:graph",
                          "--address", dev_server.address, "--task-queue", tq)
    try:
        bg.wait_for("ready")
        yield CLIWorker(dev_server.address, tq, bg)
        code, took = bg.interrupt()
        assert code == 0, bg.lines
        assert took < 10
    finally:
        bg.kill()
