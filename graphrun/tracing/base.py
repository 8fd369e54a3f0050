"""What every tracing backend shares: the Backend interface, its sending thread, and the
outputs that are made plain only when sent."""

from __future__ import annotations

import contextlib
import logging
import random
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ClassVar

import temporalio.workflow

logger = logging.getLogger("graphrun.tracing")


class Backend:
    """One tracing system. Client and activity sides trace live; the workflow side opens
    runs with deterministic ids and sends nothing while replaying."""

    name: ClassVar[str]
    header: ClassVar[str]

    def __init__(self) -> None:
        # Runs opened by workflow code are sent from one thread, in order (post before
        # patch), never from the workflow's thread: it must not block on I/O.
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _submit(self, fn: Callable[[], None]) -> None:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"graphrun-{self.name}")
        future = self._executor.submit(fn)
        future.add_done_callback(_log_failure)

    def drain(self) -> None:
        """Wait for what workflow code handed to the sending thread."""
        with self._lock:
            executor = self._executor
        if executor is not None:
            executor.submit(lambda: None).result(timeout=30)

    # client side: a live run around the call, current while it lasts
    def client_scope(self, name: str, metadata: dict[str, Any], inputs: Any
                     ) -> contextlib.AbstractContextManager[Callable[[Any, str | None], None]]:
        raise NotImplementedError

    def current_carrier(self) -> dict[str, str] | None:
        """The current context, to send in a header."""
        raise NotImplementedError

    # workflow side
    def wf_open(self, name: str, parent: Any, metadata: dict[str, Any], inputs: Any,
                rng: random.Random) -> Any:
        """A run under `parent` (a carrier from a header, a handle from wf_open, or None),
        with an id from `rng`; sent unless replaying."""
        raise NotImplementedError

    def wf_close(self, handle: Any, outputs: Any, error: str | None) -> None:
        raise NotImplementedError

    def wf_carrier(self, handle: Any) -> dict[str, str]:
        raise NotImplementedError

    # activity side: the node's user code runs inside this
    def activity_scope(self, carrier: dict[str, str] | None, name: str,
                       metadata: dict[str, Any], attempt: int
                       ) -> contextlib.AbstractContextManager[None]:
        raise NotImplementedError

    def route_scope(self, name: str, inputs: Any, tags: list[str]
                    ) -> contextlib.AbstractContextManager[Callable[[Any], None]]:
        """A routing function's run, inside its node's activity scope (LangGraph shows
        each as a chain run under its node): `finish(outputs)` records what it chose."""
        raise NotImplementedError

    def flush(self) -> None:
        self.drain()


def _log_failure(future: Future[None]) -> None:
    exc = future.exception()
    if exc is not None:
        logger.warning("graphrun tracing: sending a run failed: %s", exc)


def replaying() -> bool:
    return temporalio.workflow.unsafe.is_replaying_history_events()


class Later:
    """A run's inputs or outputs as plain JSON, made when the run is sent (on the sending
    thread, not the workflow's: a large state costs the workflow nothing). What a run's
    end needs at once, its status and error, is kept beside."""

    __slots__ = ("arg", "error", "fn", "status")

    def __init__(self, fn: Callable[[Any], Any], arg: Any, status: str | None = None,
                 error: Any = None) -> None:
        self.fn, self.arg, self.status, self.error = fn, arg, status, error

    def value(self) -> Any:
        return self.fn(self.arg)


def status_of(outputs: Any) -> str | None:
    if isinstance(outputs, Later):
        return outputs.status
    if isinstance(outputs, dict) and "status" in outputs:
        return str(outputs["status"])
    return None
