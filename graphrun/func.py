"""LangGraph's Functional API: `@entrypoint` and `@task`, on both drivers.

    from graphrun.func import entrypoint, task

    @task
    def charge(order: dict) -> str:
        return payments.charge(order["amount"])        # a side effect: a task

    @entrypoint(checkpointer=InMemorySaver())
    def purchase(order: dict) -> dict:
        ok = interrupt({"approve": order["amount"]})   # pauses the thread
        return {"receipt": charge(order).result() if ok else None}

An entrypoint is a graph of one node, named after its function. The node reads the
input and what the thread saved last time (`previous`), and writes the return value
(the thread's state, as `get_state().values` shows it) and what to save for next time
(the same value, or `entrypoint.final(value=..., save=...)`). Calling a task returns a
future; each call is a task of its own in the entrypoint's step, and its outcome is kept
until the step ends, so a resumed entrypoint gets finished calls back without running
them again, calls made inside calls included; a call that was interrupted or failed runs
again, as in LangGraph (see `graphrun.calls`).

The rule (LangGraph's, and on Temporal it matters more): the entrypoint's body runs
again on resume, and on Temporal once more after each round of task calls, so its
side effects belong in tasks, and the calls it makes may depend only on its input, its
answers to `interrupt()` and the results of earlier calls. A body that makes other
calls when it runs again fails the run with `CallMismatchError`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Generic, TypeVar

from graphrun.cache import CACHE_NS_WRITES, identifier
from graphrun.calls import TaskFuture, call_task
from graphrun.channels import EphemeralValue, LastValue, Topic
from graphrun.graph import (
    StateGraph,
    activity_timeout_of,
    coerce_timeout,
    heartbeat_timeout_of,
    is_async_callable,
)
from graphrun.local import CompiledStateGraph
from graphrun.spec import ROOT, GraphSpec, NodeSpec, declared_types
from graphrun.types import END, START, TASKS, RetryPolicy, TimeoutPolicy

__all__ = ["entrypoint", "task"]

PREVIOUS = "__previous__"  # what the thread saved for its next run (LangGraph's name)
_INJECTABLE = ("config", "writer", "store", "runtime")

R = TypeVar("R")
S = TypeVar("S")


class _Task:
    """A function decorated with @task: calling it inside a running graph returns a
    future of its result."""

    def __init__(self, func: Callable[..., Any], name: str,
                 retry_policy: Sequence[RetryPolicy], cache_policy: Any = None,
                 timeout: TimeoutPolicy | None = None) -> None:
        self.func = func
        self.timeout = timeout
        self.name = name
        self.retry_policy = tuple(retry_policy)
        self.cache_policy = cache_policy
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any, **kwargs: Any) -> TaskFuture:
        return call_task(self.name, self.func, args, kwargs, self.retry_policy,
                         self.cache_policy, self.timeout)

    def clear_cache(self, cache: Any) -> None:
        """Drop this task's cached results from `cache` (a LangGraph `BaseCache`)."""
        if self.cache_policy is not None:
            cache.clear([(CACHE_NS_WRITES, identifier(self.func))])

    async def aclear_cache(self, cache: Any) -> None:
        if self.cache_policy is not None:
            await cache.aclear([(CACHE_NS_WRITES, identifier(self.func))])


def task(__func: Callable[..., Any] | None = None, *, name: str | None = None,
         retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
         cache_policy: Any = None,
         timeout: float | timedelta | TimeoutPolicy | None = None, **_: Any) -> Any:
    """Make a function a task: called inside an @entrypoint (or a graph node) it runs as
    a task of its own, returns a future, and its result is kept with the thread.

    `@task`, `@task()`, `@task(name=..., retry_policy=...)` or `task(fn, name=...)`.
    A task's arguments and result stay in the worker that runs it; the result must
    be JSON-serialisable data (or a declared class) to be kept on Temporal.
    `cache_policy=CachePolicy(...)`: results are cached by the call's arguments in the
    entrypoint's `cache` (see graphrun.cache).
    `timeout`: each attempt's limits (seconds, a timedelta or a `TimeoutPolicy`); past
    them the call fails with `NodeTimeoutError` (retried if its retry policy says so).
    Async functions only: a sync function cannot be cancelled.
    """
    policy = coerce_timeout(timeout)
    retry: Sequence[RetryPolicy] = (() if retry_policy is None else
                                    (retry_policy,) if isinstance(retry_policy, RetryPolicy)
                                    else tuple(retry_policy))

    def wrap(fn: Callable[..., Any]) -> _Task:
        _async_for_timeout(fn, policy, "task", name)
        return _Task(fn, name or _name_of(fn), retry, cache_policy, policy)

    return wrap if __func is None else wrap(__func)


def _async_for_timeout(fn: Any, timeout: TimeoutPolicy | None, kind: str,
                       name: str | None) -> None:
    if timeout is not None and not is_async_callable(fn):
        raise ValueError(
            f"{kind} '{name or _name_of(fn)}': timeouts are only supported for async nodes "
            f"(a sync function cannot be cancelled). Make it async, or drop the timeout.")


def _name_of(fn: Any) -> str:
    if isinstance(fn, functools.partial):
        return _name_of(fn.func)
    return getattr(fn, "__name__", None) or type(fn).__name__


class entrypoint:
    """Make a function a graph: `@entrypoint(checkpointer=...)`.

    The function takes the input as its first argument, and may ask for `previous`
    (what the last run saved), `config`, `writer`, `store` and `runtime` by name.
    It returns the output, or `entrypoint.final(value=..., save=...)` to return one
    value and save another for the next run.
    """

    @dataclass
    class final(Generic[R, S]):
        """Return `value` from the entrypoint and save `save` as the next run's
        `previous`."""

        value: R
        save: S

    def __init__(self, checkpointer: Any = None, store: Any = None, cache: Any = None,
                 context_schema: Any = None, *, name: str | None = None,
                 retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                 types: Iterable[type] = (), cache_policy: Any = None,
                 timeout: float | timedelta | TimeoutPolicy | None = None, **_: Any) -> None:
        """`name`: the name a Temporal worker serves the graph under (the function's
        name by default; its node keeps the function's name). `types`: classes its
        data may hold beyond those its annotations declare (see StateGraph.compile).
        `cache` (a LangGraph `BaseCache`) keeps the results of tasks with a
        `cache_policy`; this `cache_policy` applies to the entrypoint and every task
        without one of its own. `timeout`: the entrypoint's limits per attempt, as
        @task's (on Temporal also its activity's timeouts)."""
        self.timeout = coerce_timeout(timeout)
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.cache_policy = cache_policy
        self.context_schema = context_schema
        self.name = name
        self.retry_policy = (() if retry_policy is None else
                             (retry_policy,) if isinstance(retry_policy, RetryPolicy)
                             else tuple(retry_policy))
        self.types = tuple(types)

    def __call__(self, func: Callable[..., Any]) -> CompiledStateGraph:
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError(
                f"@entrypoint does not support generator functions ({_name_of(func)}); "
                f"return a value, and stream with get_stream_writer() instead.")
        _async_for_timeout(func, self.timeout, "entrypoint", None)
        spec = EntrypointSpec.of(func, name=self.name, context_schema=self.context_schema,
                                 retry_policy=self.retry_policy, types=self.types,
                                 cache_policy=self.cache_policy)
        if self.timeout is not None:  # as add_node(timeout=...): on Temporal, the activity's
            spec = dataclasses.replace(spec, nodes={n: dataclasses.replace(
                node, timeout_policy=self.timeout, timeout=activity_timeout_of(self.timeout),
                heartbeat_timeout=heartbeat_timeout_of(self.timeout))
                for n, node in spec.nodes.items()})
        if self.checkpointer not in (None, True, False) and not callable(
                getattr(self.checkpointer, "thread", None)):
            raise TypeError(
                "Invalid checkpointer provided: it must be graphrun's InMemorySaver (or "
                "None). On Temporal the workflow keeps the thread: pass none.")
        return CompiledStateGraph(spec, checkpointer=self.checkpointer, store=self.store,
                                  cache=self.cache)


@dataclass(frozen=True)
class EntrypointSpec(GraphSpec):
    """The one-node graph of an @entrypoint: its node reads the input (START) and
    `previous`, and writes the output (the state's one value) and what to save."""

    entry_input: Any = Any  # the function's annotations, for the JSON Schemas
    entry_output: Any = Any
    # The name of its runs for LangChain callbacks: LangGraph's ("LangGraph"), unless
    # `@entrypoint(name=...)` names it.
    run_name: str | None = None
    cache_policy: Any = None  # for the entrypoint and its tasks without one of their own

    @property
    def root_model_schema(self) -> bool:
        return False

    @property
    def input_type(self) -> Any:
        return self.entry_input

    @property
    def output_type(self) -> Any:
        return self.entry_output

    @property
    def read_keys(self) -> tuple[str, ...]:
        return (START, PREVIOUS)

    def shown_input(self, task: Any) -> Any:
        return task.input.get(START) if isinstance(task.input, dict) else task.input

    def shown_result(self, writes: Sequence[tuple[str, Any]]) -> dict[str, Any] | None:
        # LangGraph's entrypoint writes what it returns to END, even None.
        returned = [v for c, v in writes if c == ROOT]
        return {END: returned[-1]} if returned else {}

    def traced_input(self, task: Any) -> Any:
        """The node's input as its run shows it (graphrun.callbacks): the entrypoint's."""
        return self.shown_input(task)

    def make_input(self, values: dict[str, Any], node: str | None = None,
                   schema: Any = None) -> Any:
        return values

    def update_to_writes(self, node: str, update: Any) -> list[tuple[str, Any]]:
        if node in (START, "input", "__input__"):
            return [(START, update)]
        if isinstance(update, entrypoint.final):
            return [(ROOT, update.value), (PREVIOUS, update.save)]
        return [(ROOT, update), (PREVIOUS, update)]

    @classmethod
    def of(cls, func: Callable[..., Any], *, name: str | None, context_schema: Any,
           retry_policy: Sequence[RetryPolicy], types: Iterable[type],
           cache_policy: Any = None) -> EntrypointSpec:
        node_name = _name_of(func)
        params = inspect.signature(func).parameters
        if not params:
            raise TypeError(f"@entrypoint function {node_name} must take the input as its "
                            f"first argument.")
        hints = _hints(func)
        first = next(iter(params))
        injects = tuple(n for n in _INJECTABLE if n in params)
        node = NodeSpec(name=node_name, fn=_node(func, "previous" in params),
                        retry_policy=tuple(retry_policy), injects=injects,
                        is_async=inspect.iscoroutinefunction(func), cache_policy=cache_policy)
        builder = StateGraph(hints.get(first, Any), context_schema=context_schema)
        channels = {START: EphemeralValue(START), ROOT: LastValue(ROOT),
                    PREVIOUS: LastValue(PREVIOUS), TASKS: Topic(TASKS)}
        annotations = [hints.get(first), hints.get("return"), context_schema]
        return cls(
            name=name or node_name, builder=builder, nodes={node_name: node}, channels=channels,
            triggers={node_name: (START,)}, edges={}, joins={}, branches={},
            interrupt_before=(), interrupt_after=(), strict_resume=True,
            local_activities=False, state_keys=(ROOT,), input_keys=(START,),
            output_keys=(ROOT,), types=declared_types([a for a in annotations if a], types),
            trigger_channels=frozenset({START}), entry_input=hints.get(first, Any),
            entry_output=hints.get("return", Any), run_name=name or "LangGraph",
            cache_policy=cache_policy)


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(func)
    except Exception:
        return {}
    ret = hints.get("return")
    if ret is entrypoint.final:
        hints["return"] = Any
    elif typing.get_origin(ret) is entrypoint.final:  # final[value, save]: the value's type
        hints["return"] = typing.get_args(ret)[0]
    return hints


def _node(func: Callable[..., Any], wants_previous: bool) -> Callable[..., Any]:
    def args(values: Mapping[str, Any], injected: dict[str, Any]) -> dict[str, Any]:
        return {**injected, **({"previous": values.get(PREVIOUS)} if wants_previous else {})}

    if inspect.iscoroutinefunction(func):
        async def anode(values: Mapping[str, Any], **injected: Any) -> Any:
            return await func(values.get(START), **args(values, injected))
        return _as(anode, func)

    def node(values: Mapping[str, Any], **injected: Any) -> Any:
        return func(values.get(START), **args(values, injected))
    return _as(node, func)


def _as(node: Callable[..., Any], func: Callable[..., Any]) -> Callable[..., Any]:
    """The node named as its function, so its cache namespace is the function's (LangGraph)."""
    node.__module__ = getattr(func, "__module__", node.__module__)
    node.__qualname__ = getattr(func, "__qualname__", node.__qualname__)
    return node

