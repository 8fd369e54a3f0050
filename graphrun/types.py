"""Small, plain data types shared by the graph API, the engine and the drivers.

Nothing here does I/O; every type is either a frozen dataclass or a NamedTuple. The
names LangGraph keeps in `langgraph.types` are here too: `GraphOutput`, `TracePolicy`,
the v2 `StreamPart` typed dicts and `StreamWriter` (graphrun.stream_parts), and
`interrupt` (graphrun.runner's, imported on first use).
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import timedelta
from typing import Any, ClassVar, Generic, Literal, NamedTuple, TypeVar

from graphrun.errors import NodeCancelledError

# Re-exported (`X as X`), as langgraph.types has them.
from graphrun.stream_parts import CheckpointPayload as CheckpointPayload
from graphrun.stream_parts import CheckpointStreamPart as CheckpointStreamPart
from graphrun.stream_parts import CheckpointTask as CheckpointTask
from graphrun.stream_parts import CustomStreamPart as CustomStreamPart
from graphrun.stream_parts import DebugPayload as DebugPayload
from graphrun.stream_parts import DebugStreamPart as DebugStreamPart
from graphrun.stream_parts import MessagesStreamPart as MessagesStreamPart
from graphrun.stream_parts import StreamPart as StreamPart
from graphrun.stream_parts import StreamWriter as StreamWriter
from graphrun.stream_parts import TaskPayload as TaskPayload
from graphrun.stream_parts import TaskResultPayload as TaskResultPayload
from graphrun.stream_parts import TasksStreamPart as TasksStreamPart
from graphrun.stream_parts import UpdatesStreamPart as UpdatesStreamPart
from graphrun.stream_parts import ValuesStreamPart as ValuesStreamPart

START = "__start__"
END = "__end__"

# Reserved channel and write names (the same strings LangGraph uses).
INTERRUPT = "__interrupt__"
RESUME = "__resume__"
ERROR = "__error__"
TASKS = "__pregel_tasks"
PUSH = "__pregel_push"
RETURN = "__return__"  # the channel a @task call's result is written to
PULL = "__pregel_pull"
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
NS_SEP = "|"
NS_END = ":"


@dataclass(frozen=True)
class Send:
    """Run `node` with `arg` as its input in the next step (map-reduce fan-out).

    Example:
        >>> def fan_out(state):
        ...     return [Send("grade", {"item": x}) for x in state["items"]]
    """

    node: str
    arg: Any
    # This task's limits instead of the node's (a TimeoutPolicy, or seconds to run).
    timeout: TimeoutPolicy | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        t: Any = self.timeout  # seconds or a timedelta are taken too, as in LangGraph
        if isinstance(t, (int, float, timedelta)) and not isinstance(t, bool):
            object.__setattr__(self, "timeout", TimeoutPolicy(run_timeout=t))
        elif t is not None and not isinstance(t, TimeoutPolicy):
            raise TypeError(f"Send(timeout=...) takes a TimeoutPolicy or seconds, got "
                            f"{type(t).__name__}")

    def __repr__(self) -> str:
        return f"Send(node={self.node!r}, arg={self.arg!r})"


N = TypeVar("N")


@dataclass(frozen=True)
class Command(Generic[N]):
    """Update state, jump to nodes, and/or answer interrupts in one step.

    Returned from a node: `Command(update={...}, goto="next")`.
    Passed to `invoke`: `Command(resume=value)` answers the pending `interrupt()`;
    `Command(resume={interrupt_id: value, ...})` answers several by id.

    Example:
        >>> graph.invoke(Command(resume=True), config)  # doctest: +SKIP
    """

    graph: str | None = None
    update: Any = None
    resume: Any = None
    goto: str | Send | Sequence[str | Send] = ()

    PARENT: ClassVar[str] = "__parent__"

    def __repr__(self) -> str:  # the fields that are set, as LangGraph shows them
        parts = (f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                 if getattr(self, f.name))
        return f"Command({', '.join(parts)})"

    def gotos(self) -> list[str | Send]:
        if isinstance(self.goto, (str, Send)):
            return [self.goto]
        return list(self.goto)


@dataclass(frozen=True)
class Interrupt:
    """A question a node asked with `interrupt()`; `id` answers it by id."""

    value: Any
    id: str = "placeholder-id"
    response_schema: dict[str, Any] | None = None
    # A deadline (seconds) enforced by a durable timer on Temporal; on expiry the
    # thread resumes with `default`, or is marked failed when there is none.
    timeout: float | None = field(default=None, compare=False)
    default: Any = field(default=None, compare=False)
    has_default: bool = field(default=False, compare=False)

    def __repr__(self) -> str:  # LangGraph's, plus a deadline when there is one
        extra = f", timeout={self.timeout!r}" if self.timeout is not None else ""
        return (f"Interrupt(value={self.value!r}, id={self.id!r}, "
                f"response_schema={self.response_schema!r}{extra})")


OutputT = TypeVar("OutputT")


@dataclass(frozen=True)
class GraphOutput(Generic[OutputT]):
    """What `invoke(..., version="v2")` returns (LangGraph's `GraphOutput`): the output
    (a pydantic model or dataclass for such an output schema) and the interrupts.

    graphrun's own class, not a subclass of LangGraph's: graphrun never imports LangGraph
    outside its bridge, and a frozen dataclass cannot be registered as a virtual subclass.
    Code that checks `isinstance(out, GraphOutput)` imports it from here, as LangGraph code
    imports it from `langgraph.types`; fields and behaviour are the same.
    """

    value: OutputT
    interrupts: tuple[Interrupt, ...] = ()

    def __getitem__(self, key: str) -> Any:  # LangGraph keeps dict access, deprecated
        warnings.warn("Accessing GraphOutput via `result[key]` is deprecated. Use "
                      "`result.value` or `result.interrupts`.", DeprecationWarning,
                      stacklevel=2)
        if key == INTERRUPT:
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        warnings.warn("Accessing GraphOutput via `key in result` is deprecated. Use "
                      "`result.value` or `result.interrupts`.", DeprecationWarning,
                      stacklevel=2)
        if key == INTERRUPT:
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


@dataclass(frozen=True)
class TracePolicy:
    """What tracers record of a node's own run (LangGraph's `TracePolicy`).

    `process_inputs` / `process_outputs` get the node's input / output and return what
    tracers (LangChain `BaseTracer`s, LangSmith's among them) record on the node's run
    instead; other callback handlers, streams and the graph itself see the real values.
    A processor that raises is logged and the real value recorded: it never fails the
    node. Runs the node's code makes (a chat model, a subgraph) are not affected. As in
    LangGraph a processor runs whether or not anything traces, so keep it cheap and
    free of side effects; it must not mutate its argument.
    """

    process_inputs: Callable[[Any], Any] | None = None
    process_outputs: Callable[[Any], Any] | None = None


def omit_payload(_value: Any) -> dict[str, Any]:
    """A `TracePolicy` processor that records an empty payload (the run and its timing
    stay)."""
    return {}


def __getattr__(name: str) -> Any:
    if name == "interrupt":  # graphrun.runner imports this module: not at import time
        from graphrun.runner import interrupt

        return interrupt
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _default_retry_on(exc: BaseException) -> bool:
    """LangGraph's default: retry connection errors and HTTP 5xx (or no response), not
    programming errors; everything else is retried."""
    if isinstance(exc, ConnectionError):
        return True
    if type(exc).__module__.split(".")[0] in ("httpx", "requests") and hasattr(exc, "response"):
        code = getattr(exc.response, "status_code", None)
        return code is None or 500 <= code < 600
    return not isinstance(
        exc,
        (ValueError, TypeError, ArithmeticError, ImportError, LookupError, NameError,
         SyntaxError, RuntimeError, ReferenceError, StopIteration, StopAsyncIteration,
         OSError))


@dataclass(frozen=True)
class RetryPolicy:
    """How a failing node is retried (mapped to Temporal's RetryPolicy on Temporal)."""

    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    max_attempts: int = 3
    jitter: bool = True
    retry_on: type[BaseException] | Sequence[type[BaseException]] | Callable[
        [BaseException], bool
    ] = _default_retry_on

    def should_retry(self, exc: BaseException) -> bool:
        retry_on: Any = self.retry_on
        if isinstance(retry_on, Sequence):
            return isinstance(exc, tuple(retry_on))
        if isinstance(retry_on, type) and issubclass(retry_on, BaseException):
            return isinstance(exc, retry_on)
        if callable(retry_on):
            return bool(retry_on(exc))
        raise TypeError("retry_on must be an Exception class, a list or tuple of Exception "
                        f"classes, or a callable; got {self.retry_on!r}")


def matching_policy(policies: Sequence[RetryPolicy], exc: BaseException
                    ) -> RetryPolicy | None:
    """The first policy that retries `exc` (LangGraph's rule for a list of policies)."""
    if isinstance(exc, NodeCancelledError):  # a node that cancels itself means it
        return None
    return next((p for p in policies if p.should_retry(exc)), None)


def retry_delay(policy: RetryPolicy, attempt: int, jitter: float = 0.0) -> float:
    """Seconds to wait after failed attempt number `attempt` (1-based); `jitter` in [0, 1)."""
    interval = min(policy.max_interval,
                   policy.initial_interval * policy.backoff_factor ** (attempt - 1))
    return interval + jitter if policy.jitter else interval


def _freeze(obj: Any, depth: int = 10) -> Any:
    """A hashable twin of `obj`: mappings sorted by key (LangGraph's, for cache keys)."""
    if isinstance(obj, Hashable) or depth <= 0:
        return obj
    if isinstance(obj, Mapping):
        return tuple(sorted((k, _freeze(v, depth - 1)) for k, v in obj.items()))
    if isinstance(obj, Sequence):
        return tuple(_freeze(x, depth - 1) for x in obj)
    if hasattr(obj, "tobytes"):  # numpy and the like
        return type(obj).__name__, obj.tobytes(), getattr(obj, "shape", None)
    return obj


def default_cache_key(*args: Any, **kwargs: Any) -> str | bytes:
    """The input's pickle (LangGraph's default, so both compute the same keys)."""
    return pickle.dumps((_freeze(args), _freeze(kwargs)), protocol=5, fix_imports=False)


@dataclass(frozen=True)
class CachePolicy:
    """Cache a node's or a task's writes by its input (LangGraph's `CachePolicy`).

    The node runs only when the graph's cache (`compile(cache=...)`, any LangGraph
    `BaseCache`) has no entry for its key: `key_func(input)` (a task's: its arguments).
    `ttl`: seconds an entry lives; None keeps it until the cache is cleared.
    """

    key_func: Callable[..., str | bytes] = default_cache_key
    ttl: int | None = None


class TaskError(str):
    """A failed task's error as LangGraph shows it, `Type('message')`; the parts are kept
    as `.error_type` and `.error_message`."""

    error_type: str
    error_message: str

    def __new__(cls, error_type: str, error_message: str) -> TaskError:
        text = super().__new__(cls, f"{error_type}({error_message!r})")
        text.error_type, text.error_message = error_type, error_message
        return text


class StateUpdate(NamedTuple):
    """One update of `bulk_update_state`: `values` written as if `as_node` returned them."""

    values: Any
    as_node: str | None = None
    task_id: str | None = None


@dataclass(frozen=True)
class TimeoutPolicy:
    """Time limits for one attempt of an async node (LangGraph's `TimeoutPolicy`).

    `run_timeout` caps the attempt's wall-clock time; `idle_timeout` the time it may
    go without progress (a 'custom' stream write or `graphrun.heartbeat()`). On
    Temporal they also become the activity's start-to-close and heartbeat timeouts.
    """

    run_timeout: float | timedelta | None = None
    idle_timeout: float | timedelta | None = None
    refresh_on: Literal["auto", "heartbeat"] = "auto"

    def __post_init__(self) -> None:
        for name in ("run_timeout", "idle_timeout"):  # eager, as LangGraph's
            v = getattr(self, name)
            if v is not None and (v.total_seconds() if isinstance(v, timedelta) else v) <= 0:
                raise ValueError(f"{name} must be greater than 0")

    def seconds(self) -> tuple[float | None, float | None]:
        def s(v: float | timedelta | None) -> float | None:
            return v.total_seconds() if isinstance(v, timedelta) else v
        return s(self.run_timeout), s(self.idle_timeout)

    def to_data(self) -> list[Any]:
        """As plain data, [run seconds, idle seconds, refresh_on] (tasks and the wire)."""
        return [*self.seconds(), self.refresh_on]

    @classmethod
    def from_data(cls, v: Any) -> TimeoutPolicy | None:
        if v is None:
            return None
        run, idle, refresh_on = v
        return cls(run_timeout=run, idle_timeout=idle,
                   refresh_on="heartbeat" if refresh_on == "heartbeat" else "auto")


class PregelTask(NamedTuple):
    """A task of a checkpoint, as shown by `get_state().tasks`."""

    id: str
    name: str
    path: tuple[Any, ...]
    error: TaskError | None = None
    interrupts: tuple[Interrupt, ...] = ()
    state: Any = None
    result: Any = None


class StateSnapshot(NamedTuple):
    """The state of a thread at one checkpoint."""

    values: dict[str, Any]
    next: tuple[str, ...]
    config: dict[str, Any]
    metadata: dict[str, Any] | None
    created_at: str | None
    parent_config: dict[str, Any] | None
    tasks: tuple[PregelTask, ...]
    interrupts: tuple[Interrupt, ...] = ()


StreamMode = Literal["values", "updates"]


@dataclass
class PendingTask:
    """What a finished, interrupted or failed task left on its checkpoint.

    Successful siblings of an interrupted task keep their writes here so they are
    not run again on resume; an interrupted task keeps its answers (`resume`) and
    the saved state of any subgraph it called (`nested`).
    """

    status: Literal["done", "interrupted", "failed"]
    writes: list[tuple[str, Any]] = field(default_factory=list)
    interrupts: list[Interrupt] = field(default_factory=list)
    resume: list[Any] = field(default_factory=list)
    nested: dict[str, Any] = field(default_factory=dict)
    error: dict[str, str] | None = None
