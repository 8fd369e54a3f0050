"""@task calls made from inside a running task (LangGraph's Functional API tasks).

A call is a task of its own in the caller's step. Its id comes from the caller's id and
the call's position, so a caller that runs again (on resume, or on Temporal after each
round of calls) makes the same calls under the same ids and gets the results of those that
finished back instead of running them again (a call kept from the checkpoint streams its
start, as LangGraph's does). One that was interrupted or failed before this run runs again.

How a call without a saved outcome runs depends on the driver:
- in-process (inline): at once, in a thread (or a task of the running loop for an async
  caller), as LangGraph does; its outcome travels in the caller's `TaskResult.calls`.
- on Temporal: it is not run in the caller's activity. The caller stops at the first
  `result()` it cannot have (`CallsPending`) and its result lists the calls it awaits.
  The workflow runs each call as an activity that runs the caller again down to that
  call (`TaskCall.target`), then runs the caller again with the calls' outcomes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from datetime import UTC, datetime
from typing import Any

from graphrun import cache as caching
from graphrun.channels import MISSING
from graphrun.checkpoint import Task, TaskCall, TaskResult, interrupt_id, task_id
from graphrun.errors import (
    CallsPending,
    GraphInterrupt,
    NodeFailedError,
    TargetReached,
)
from graphrun.limits import alimited, current_slots, limited
from graphrun.runner import (
    TaskContext,
    awaiting_calls,
    run_within,
    task_config,
)
from graphrun.runtime import injected
from graphrun.task import CURRENT, current_task
from graphrun.types import (
    NS_END,
    NS_SEP,
    PUSH,
    RETURN,
    PendingTask,
    RetryPolicy,
    TaskError,
    TimeoutPolicy,
    matching_policy,
    retry_delay,
)


def call_task(name: str, fn: Callable[..., Any], args: tuple[Any, ...],
              kwargs: dict[str, Any], retry: Sequence[RetryPolicy],
              cache_policy: Any = None, timeout: TimeoutPolicy | None = None) -> TaskFuture:
    """Call `fn` as the task `name` of the running task; returns its future."""
    ctx = current_task()
    if ctx is None:
        raise RuntimeError(
            f"task '{name}' was called outside a running graph. Call @task functions inside "
            f"an @entrypoint or a graph node while it runs.")
    # The task's own policy, else its entrypoint's (LangGraph's graph-wide cache_policy).
    policy = cache_policy if cache_policy is not None else getattr(ctx.graph, "cache_policy",
                                                                   None)
    idx, ctx.call_counter = ctx.call_counter, ctx.call_counter + 1
    call = _call(ctx, name, idx, timeout)
    saved: PendingTask | None = ctx.calls.get(call.id)
    if saved is not None and _stands(ctx, call, saved):
        if ctx.call.fresh_calls is not None and call.id not in ctx.call.fresh_calls:
            # Kept from the checkpoint: it starts, and gives its saved result (LangGraph).
            _task_chunk(ctx, {"input": (args, kwargs), "triggers": call.triggers}, call)
        return TaskFuture(call, outcome=saved)
    if ctx.target:  # Temporal: this run is for one call
        if ctx.target[0] != call.id:
            return TaskFuture(call, ctx=ctx)  # another round's call: its result never read

        def run() -> TaskResult:
            return run_call(_context(ctx, call, saved), fn, args, kwargs, retry, policy)

        async def arun() -> TaskResult:
            return await arun_call(_context(ctx, call, saved), fn, args, kwargs, retry, policy)

        raise TargetReached(run, arun)
    if ctx.inline_calls:
        return _start(ctx, call, saved, fn, args, kwargs, retry, policy)
    ctx.awaiting.append(call)
    return TaskFuture(call, ctx=ctx)


def _call(ctx: TaskContext, name: str, idx: int, timeout: TimeoutPolicy | None = None
          ) -> Task:
    caller = ctx.call.task
    cid = task_id(ctx.call.checkpoint_id, caller.ns, caller.step, name, PUSH,
                  f"{caller.id}:{idx}")
    prefix = caller.ns.rsplit(NS_SEP, 1)[0] + NS_SEP if NS_SEP in caller.ns else ""
    return Task(id=cid, name=name, path=(PUSH, idx, caller.id), triggers=(PUSH,),
                input=None, ns=f"{prefix}{name}{NS_END}{cid}", step=caller.step,
                timeout=timeout.to_data() if timeout is not None else None)


def _stands(ctx: TaskContext, call: Task, saved: PendingTask) -> bool:
    """Whether a call's saved outcome is its result. One this run made stands; of those
    on the checkpoint, a call that finished stands, and one that was interrupted or
    failed runs again, answered or not, as LangGraph's does (its answer may be for a
    call it made in turn, and what it did before interrupt() is done again)."""
    fresh = ctx.call.fresh_calls
    if fresh is None:  # an older workflow's call: it ran again once answered
        return saved.status != "interrupted" or (
            not ctx.inline_calls and not _answered(ctx, call, saved))
    return saved.status == "done" or call.id in fresh


def _answered(ctx: TaskContext, call: Task, saved: PendingTask) -> bool:
    """Whether an interrupted call has an answer in this run (by id, or the single one)."""
    if interrupt_id(call.ns, len(saved.resume)) in ctx.resume_map:
        return True
    c: TaskContext | None = ctx
    while c is not None:
        if c.null_resume is not MISSING:
            return True
        c = c.parent
    return False


def _context(ctx: TaskContext, call: Task, saved: PendingTask | None) -> TaskContext:
    resume = list(saved.resume) if saved is not None else []
    answer = ctx.resume_map.get(interrupt_id(call.ns, len(resume)), MISSING)
    if answer is not MISSING:
        resume.append(answer)
    tc = TaskCall(task=call, resume=resume, context=ctx.call.context,
                  messages=ctx.call.messages, tools=ctx.call.tools, debug=ctx.call.debug,
                  checkpoints=ctx.call.checkpoints, checkpoint_id=ctx.call.checkpoint_id,
                  parents=ctx.call.parents,
                  durability=ctx.call.durability, calls=dict(ctx.calls),
                  fresh_calls=ctx.call.fresh_calls)
    inline = not ctx.target
    return TaskContext(
        graph=ctx.graph, call=tc, config=task_config(tc, ctx.config), resume=resume,
        null_resume=MISSING, resume_map=ctx.resume_map, nested={}, live=ctx.live,
        calls=ctx.calls, target=ctx.target[1:], inline_calls=ctx.inline_calls, parent=ctx,
        store=ctx.store,
        # In-process a call's chunks and nested calls join its caller's; a call run by
        # itself on Temporal reports its own.
        custom=ctx.custom if inline else [], sub_events=ctx.sub_events if inline else [],
        finished_calls=ctx.finished_calls if inline else [])


def _start(ctx: TaskContext, call: Task, saved: PendingTask | None, fn: Callable[..., Any],
           args: tuple[Any, ...], kwargs: dict[str, Any], retry: Sequence[RetryPolicy],
           policy: Any) -> TaskFuture:
    """Run a call now, beside its caller (in-process)."""
    c = _context(ctx, call, saved)
    if inspect.iscoroutinefunction(fn):
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is not None:
            # A call takes one of the run's max_concurrency slots, as LangGraph's does.
            task = loop.create_task(alimited(current_slots(),
                                             arun_call(c, fn, args, kwargs, retry, policy)),
                                    context=contextvars.copy_context())
            return TaskFuture(call, ctx=ctx, running=task)
    future: concurrent.futures.Future[TaskResult] = concurrent.futures.Future()
    context, slots = contextvars.copy_context(), current_slots()

    def work() -> None:
        try:
            future.set_result(context.run(limited, slots, run_call, c, fn, args, kwargs,
                                          retry, policy))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=work, name=f"task-{call.name}", daemon=True).start()
    return TaskFuture(call, ctx=ctx, running=future)


# -- running one call -------------------------------------------------------------------
def run_call(c: TaskContext, fn: Callable[..., Any], args: tuple[Any, ...],
             kwargs: dict[str, Any], retry: Sequence[RetryPolicy],
             policy: Any = None) -> TaskResult:
    """Run a call, or take its writes from the cache (graphrun.cache)."""
    cache = caching.active()
    key = caching.call_key(policy, fn, args, kwargs) if cache is not None else None
    if (writes := caching.get(cache, key, c.graph.types)) is not None:
        return _cached(c, writes, args, kwargs)
    result = _run_call(c, fn, args, kwargs, retry)
    caching.put(cache, key, result, None if c.inline_calls else c.graph.types)
    return result


async def arun_call(c: TaskContext, fn: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: dict[str, Any], retry: Sequence[RetryPolicy],
                    policy: Any = None) -> TaskResult:
    cache = caching.active()
    key = caching.call_key(policy, fn, args, kwargs) if cache is not None else None
    if (writes := await caching.aget(cache, key, c.graph.types)) is not None:
        return _cached(c, writes, args, kwargs)
    result = await _arun_call(c, fn, args, kwargs, retry)
    await caching.aput(cache, key, result, None if c.inline_calls else c.graph.types)
    return result


def _cached(c: TaskContext, writes: list[tuple[str, Any]], args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> TaskResult:
    """A cache hit: streamed as an update marked cached, with no result chunk (LangGraph)."""
    t = c.call.task
    _task_chunk(c, {"input": (args, kwargs), "triggers": t.triggers})
    result = caching.hit(t.id, writes)
    if c.inline_calls:  # on Temporal the workflow streams it
        c.sub_event(("updates", {t.name: result.update, "__metadata__": {"cached": True}}))
        c.finished_calls.append((t, result))
    return result


def _run_call(c: TaskContext, fn: Callable[..., Any], args: tuple[Any, ...],
              kwargs: dict[str, Any], retry: Sequence[RetryPolicy]) -> TaskResult:
    attempt, base = 0, c.config
    while True:
        attempt += 1
        token = _enter(c, attempt, args, kwargs)
        run = _traced(c, base, fn, args, kwargs)
        try:
            with _entered(c, run):
                given = _injecting(c, fn, args, kwargs)
                out = asyncio.run(_timed(c, fn(*args, **given))) if inspect.iscoroutinefunction(
                    fn) else fn(*args, **given)
            run = _ended(run, None, out)
            return _done(c, out)
        except BaseException as exc:
            run = _ended(run, exc, None)
            result, delay = _outcome(c, exc, retry, attempt)
            if result is not None:
                return result
        finally:
            CURRENT.reset(token)
        time.sleep(delay)


async def _arun_call(c: TaskContext, fn: Callable[..., Any], args: tuple[Any, ...],
                     kwargs: dict[str, Any], retry: Sequence[RetryPolicy]) -> TaskResult:
    attempt, base = 0, c.config
    while True:
        attempt += 1
        token = _enter(c, attempt, args, kwargs)
        run = await _atraced(c, base, fn, args, kwargs)
        try:
            with _entered(c, run):
                out = fn(*args, **_injecting(c, fn, args, kwargs))
                if inspect.isawaitable(out):
                    out = await _timed(c, out)
            run = await _aended(run, None, out)
            return _done(c, out)
        except TargetReached as reached:
            result: TaskResult = await reached.arun()
            return result
        except BaseException as exc:
            run = await _aended(run, exc, None)
            result_, delay = _outcome(c, exc, retry, attempt)
            if result_ is not None:
                return result_
        finally:
            CURRENT.reset(token)
        await asyncio.sleep(delay)


async def _timed(c: TaskContext, work: Awaitable[Any]) -> Any:
    """A call's work under its `@task(timeout=...)`, if it has one (as a node's)."""
    policy = TimeoutPolicy.from_data(c.call.task.timeout)
    return await (work if policy is None else run_within(work, policy, c.call.task.name, c))


def _injecting(c: TaskContext, fn: Callable[..., Any], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` plus what LangGraph injects into a task by parameter name (`config`,
    `writer`, `store`, `runtime`); an argument the caller gave stands."""
    names = tuple(n for n in injected(fn) if n != "error" and n not in kwargs)
    if not names:
        return kwargs
    try:
        bound = inspect.signature(fn).bind_partial(*args).arguments
    except (TypeError, ValueError):
        bound = {}
    names = tuple(n for n in names if n not in bound)
    return {**c.kwargs(names), **kwargs} if names else kwargs


# -- a call's run, for LangChain callbacks (graphrun.callbacks), in-process ------------------
def _call_config(c: TaskContext, base: dict[str, Any]) -> dict[str, Any] | None:
    """The config a call's run starts from (its caller's, as LangGraph's), or None when
    its caller has no run."""
    if c.parent is None or c.parent.run is None:
        return None
    t, caller = c.call.task, c.parent.call.task
    return {**base, "run_name": t.name,
            "metadata": {**base.get("metadata", {}), "langgraph_checkpoint_ns": t.ns,
                         # LangGraph's: (PUSH, the caller's path, the call's index, True)
                         "langgraph_path": (PUSH, caller.path, t.path[1], True)}}


def _call_input(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        return dict(inspect.signature(fn).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        return {"args": args, **kwargs}


def _traced(c: TaskContext, base: dict[str, Any], fn: Callable[..., Any],
            args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    cfg = _call_config(c, base)
    if cfg is None:
        return None
    from graphrun import callbacks as tracing

    c.run, c.config = tracing.start_run(cfg, _call_input(fn, args, kwargs), c.call.task.name)
    return c.run


async def _atraced(c: TaskContext, base: dict[str, Any], fn: Callable[..., Any],
                   args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    cfg = _call_config(c, base)
    if cfg is None:
        return None
    from graphrun import callbacks as tracing

    c.run, c.config = await tracing.astart_run(cfg, _call_input(fn, args, kwargs),
                                               c.call.task.name)
    return c.run


def _entered(c: TaskContext, run: Any) -> Any:
    if run is None:
        return contextlib.nullcontext()
    from graphrun import callbacks as tracing

    return tracing.entered(c.config)


def _ended(run: Any, error: BaseException | None, output: Any) -> Any:
    """End a call's run (if it has one); returns None, for `run = _ended(run, ...)`."""
    if run is not None:
        from graphrun import callbacks as tracing

        tracing.end_run(run, error, output)
    return None


async def _aended(run: Any, error: BaseException | None, output: Any) -> Any:
    if run is not None:
        from graphrun import callbacks as tracing

        await tracing.aend_run(run, error, output, stream=tracing.streams_to(run))
    return None


def _enter(c: TaskContext, attempt: int, args: tuple[Any, ...], kwargs: dict[str, Any]
           ) -> contextvars.Token[TaskContext | None]:
    """Make `c` the running task for one attempt; the first says the call started."""
    token = CURRENT.set(c)
    if attempt == 1:
        _task_chunk(c, {"input": (args, kwargs), "triggers": c.call.task.triggers})
    return token


def _done(c: TaskContext, out: Any) -> TaskResult:
    t = c.call.task
    if c.awaiting or c.target:
        return awaiting_calls(c)
    if c.inline_calls:  # on Temporal the workflow streams a call's update
        c.sub_event(("updates", {t.name: out}))  # as it finishes, before its caller's
    result = TaskResult(task_id=t.id, writes=[(RETURN, out)], update=out,
                        resume=list(c.resume), custom=[] if c.inline_calls else c.custom,
                        took_null_resume=c.took_null_resume)
    return _record(c, result)


def _outcome(c: TaskContext, exc: BaseException, retry: Sequence[RetryPolicy],
             attempt: int) -> tuple[TaskResult | None, float]:
    """The call's result for an exception it raised, or None and the delay to retry."""
    t = c.call.task
    if isinstance(exc, TargetReached):
        return exc.run(), 0.0
    if isinstance(exc, CallsPending) or ((c.awaiting or c.target)
                                         and isinstance(exc, Exception)):
        return awaiting_calls(c), 0.0
    if isinstance(exc, GraphInterrupt):
        return _record(c, TaskResult(task_id=t.id, interrupts=list(exc.interrupts),
                                     paused=True, resume=list(c.resume),
                                     took_null_resume=c.took_null_resume)), 0.0
    if not isinstance(exc, Exception):
        raise exc
    policy = matching_policy(retry, exc)
    if policy is not None and attempt < policy.max_attempts:
        c.call_counter = 0  # the retry makes the same calls again
        return None, retry_delay(policy, attempt)
    return _record(c, TaskResult(task_id=t.id, exception=exc, resume=list(c.resume),
                                 error={"type": type(exc).__name__, "message": str(exc)})), 0.0


def _record(c: TaskContext, result: TaskResult) -> TaskResult:
    """A call's outcome: streamed as its result chunk; in-process, kept for its caller."""
    _task_chunk(c, {
        "error": (result.exception if result.exception is not None else  # as LangGraph's
                  TaskError(result.error["type"], result.error["message"]))
        if result.error else None,
        "result": {RETURN: dict(result.writes).get(RETURN)} if result.writes else {},
        "interrupts": [{"value": i.value, "id": i.id} for i in result.interrupts]})
    if c.inline_calls:
        c.finished_calls.append((c.call.task, result))
    return result


def _task_chunk(c: TaskContext, payload: dict[str, Any], call: Task | None = None) -> None:
    """A call's 'tasks' chunk (its start, or its result), and its 'debug' chunk: the
    call `c` runs, or `call`, made in `c`."""
    t = call or c.call.task
    payload = {"id": t.id, "name": t.name, **payload}
    c.sub_event(("tasks", payload))
    if c.call.debug:
        c.sub_event(("debug", {"step": t.step, "timestamp": datetime.now(UTC).isoformat(),
                               "type": "task_result" if "result" in payload else "task",
                               "payload": payload}))


# -- the future a call returns --------------------------------------------------------------
class TaskFuture:
    """What calling a @task returns: `.result()` (or `await`) gives its value.

    A failed call raises its error (in-process, the exception itself; on Temporal a
    `NodeFailedError` naming the task); an interrupted one pauses its caller too.
    """

    def __init__(self, call: Task, *, outcome: PendingTask | TaskResult | None = None,
                 ctx: TaskContext | None = None, running: Any = None) -> None:
        self._call = call
        self._outcome = outcome
        self._ctx = ctx
        self._running = running
        self._cancelled = False

    def done(self) -> bool:
        return self._outcome is not None or (self._running is not None and self._running.done())

    def cancel(self) -> bool:
        """Cancel a call that has not finished (on Temporal: not run yet)."""
        if self._outcome is not None:
            return False
        if self._running is not None:
            return bool(self._running.cancel())
        if self._ctx is not None and self._call in self._ctx.awaiting:
            self._ctx.awaiting.remove(self._call)  # it will not be run
            self._cancelled = True
            return True
        return False

    def cancelled(self) -> bool:
        return self._cancelled or bool(self._running is not None and self._running.cancelled())

    def result(self, timeout: float | None = None) -> Any:
        if self._cancelled:
            raise concurrent.futures.CancelledError()
        if self._outcome is None:
            if isinstance(self._running, concurrent.futures.Future):
                self._outcome = self._running.result(timeout)
            elif self._running is not None:
                if not self._running.done():
                    raise RuntimeError(
                        f"task '{self._call.name}' is async: await its future in an async "
                        f"entrypoint instead of calling .result().")
                self._outcome = self._running.result()
            else:
                raise CallsPending()
        return _value(self._call, self._outcome)

    def __await__(self) -> Generator[Any, None, Any]:
        if self._cancelled:
            raise asyncio.CancelledError()
        if self._outcome is None:
            if self._running is None:
                raise CallsPending()
            running = (asyncio.wrap_future(self._running)
                       if isinstance(self._running, concurrent.futures.Future)
                       else self._running)
            self._outcome = yield from running.__await__()
        return _value(self._call, self._outcome)


def _value(call: Task, outcome: PendingTask | TaskResult) -> Any:
    if isinstance(outcome, TaskResult):
        if outcome.error:
            if outcome.exception is not None:
                raise outcome.exception
            raise NodeFailedError(call.name, outcome.error["type"], outcome.error["message"])
        if outcome.interrupts:
            raise GraphInterrupt(outcome.interrupts)
        return dict(outcome.writes).get(RETURN)
    if outcome.status == "failed":
        err = outcome.error or {}
        raise NodeFailedError(call.name, err.get("type", "Exception"), err.get("message", ""))
    if outcome.status == "interrupted":
        raise GraphInterrupt(outcome.interrupts)
    return dict(outcome.writes).get(RETURN)
