"""What a node can ask for besides its state: `Runtime`, `get_runtime`, `get_stream_writer`,
`get_store`.

As in LangGraph, a node (or a routing function) receives these by parameter
name: `config`, `runtime` (a `Runtime` with the run's `context` and a
`stream_writer`), `writer` and `store`. `invoke(..., context=...)` sets the
context; with `StateGraph(State, context_schema=Ctx)` a dict is made into `Ctx`.
`store` is LangGraph's long-term memory store (any object with LangGraph's `BaseStore`
interface): `compile(store=...)` / `entrypoint(store=...)` in-process, the worker's
(`create_worker(..., store=...)`) on Temporal; it is never sent to Temporal.
On Temporal the context travels to the node's activity, so it must be data (a
dict, dataclass or pydantic model declared by `context_schema`), not a live
connection.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from graphrun.task import current_task

ContextT = TypeVar("ContextT")

# Parameters injected by name (LangGraph's list); anything else is not passed.
INJECTED = ("config", "runtime", "writer", "store", "error")


# The thread whose state reducers merge, set by the in-process driver: graphrun.messages
# mixes it into the ids it gives messages. (On Temporal the workflow id stands in.)
MERGING_THREAD: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "graphrun_merging_thread", default=None)


@contextlib.contextmanager
def merging_thread(thread_id: Any) -> Iterator[None]:
    token = MERGING_THREAD.set(None if thread_id is None else str(thread_id))
    try:
        yield
    finally:
        MERGING_THREAD.reset(token)


def _no_op(chunk: Any) -> None:
    """Writes nowhere: nothing streams the 'custom' mode."""


@dataclass(frozen=True)
class ExecutionInfo:
    """Where and which try a node runs (LangGraph's `runtime.execution_info`)."""

    checkpoint_id: str = ""
    checkpoint_ns: str = ""
    task_id: str = ""
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None

    def patch(self, **overrides: Any) -> ExecutionInfo:
        return dataclasses.replace(self, **overrides)


@dataclass(frozen=True)
class ServerInfo:
    """What a run started by the LangGraph Server API knows of it (LangGraph's): the
    assistant and graph, and the authenticated user; `Runtime.server_info` is None for
    other runs."""

    assistant_id: str
    graph_id: str
    user: Any = None


def server_info_of(configurable: Mapping[str, Any]) -> ServerInfo | None:
    """Built from the configurable keys the Server API sets (`assistant_id`, `graph_id`,
    `langgraph_auth_user`), as LangGraph builds it; None without them."""
    assistant_id, graph_id = configurable.get("assistant_id"), configurable.get("graph_id")
    from graphrun.users import user_of

    # The API carries the user as JSON: AuthUser gives it `.identity` and `["identity"]`.
    user = user_of(configurable.get("langgraph_auth_user"))
    if assistant_id is None and graph_id is None and user is None:
        return None
    return ServerInfo(assistant_id=str(assistant_id or ""), graph_id=str(graph_id or ""),
                      user=user)


class RunControl:
    """Cooperative draining of one run (LangGraph's): `request_drain()` (from a node, a
    signal handler, another thread) makes the run stop at its next step boundary with
    `GraphDrained`, its checkpoint saved, so `invoke(None, config)` goes on later. A
    drain asked for during the last step lets the run finish. In-process runs only
    (`invoke(..., control=RunControl())`); one control per run."""

    __slots__ = ("_drain_reason",)

    def __init__(self) -> None:
        self._drain_reason: str | None = None

    def request_drain(self, reason: str = "shutdown") -> None:
        self._drain_reason = reason  # one attribute write: safe from any thread

    @property
    def drain_requested(self) -> bool:
        return self._drain_reason is not None

    @property
    def drain_reason(self) -> str | None:
        return self._drain_reason


@dataclass(frozen=True)
class Runtime(Generic[ContextT]):
    """Run-scoped context and utilities, given to nodes that take `runtime`."""

    context: ContextT = field(default=None)  # type: ignore[assignment]
    store: Any = None
    stream_writer: Callable[[Any], None] = _no_op
    previous: Any = None
    execution_info: ExecutionInfo = field(default_factory=ExecutionInfo)
    server_info: ServerInfo | None = None  # runs the Server API started (server_info_of)
    control: RunControl | None = None  # the run's RunControl, when it was given one

    def override(self, **changes: Any) -> Runtime[ContextT]:
        return dataclasses.replace(self, **changes)

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """`other`'s values where it has them, else this runtime's (LangGraph's)."""
        return Runtime(
            context=other.context or self.context, store=other.store or self.store,
            stream_writer=(other.stream_writer if other.stream_writer is not _no_op
                           else self.stream_writer),
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control)


def injected(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The names among `INJECTED` that `fn` takes as keyword-capable parameters."""
    target = fn if inspect.isroutine(fn) else getattr(fn, "__call__", fn)  # noqa: B004
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return ()
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(n for n in INJECTED if n in params and params[n].kind in kinds)


def coerce_context(schema: Any, context: Any) -> Any:
    """A dict context made into the graph's `context_schema` (a dataclass or model)."""
    if schema is None or not isinstance(context, dict):
        return context
    if hasattr(schema, "model_validate"):
        return schema.model_validate(context)
    if dataclasses.is_dataclass(schema) and isinstance(schema, type):
        return schema(**context)
    return context


def get_runtime(context_schema: Any = None) -> Runtime[Any]:
    """The current node's `Runtime` (call it inside a node)."""
    ctx = current_task()
    if ctx is None:
        raise RuntimeError("get_runtime() was called outside a graph node.")
    return ctx.runtime()


def get_stream_writer() -> Callable[[Any], None]:
    """A function that sends a chunk to the 'custom' stream mode (a no-op outside a run)."""
    ctx = current_task()
    return ctx.runtime().stream_writer if ctx is not None else _no_op


def get_config() -> dict[str, Any]:
    """The current node's config (call it inside a node)."""
    ctx = current_task()
    if ctx is None:
        raise RuntimeError("get_config() was called outside a graph node.")
    return ctx.config


def get_store() -> Any:
    """The store of the current run (LangGraph's `get_store()`; call it inside a node or
    task): the graph's `compile(store=...)`, or on Temporal the worker's; None if none."""
    ctx = current_task()
    if ctx is None:
        raise RuntimeError("get_store() was called outside a graph node.")
    return ctx.store
