"""graphrun's errors, the same from the in-process and the Temporal driver.

    GraphrunError
    ├── GraphValidationError (ValueError)   the graph cannot be compiled
    ├── InvalidUpdateError                  a step's writes cannot be applied
    ├── InvalidResumeError (RuntimeError)   a resume does not match what is pending
    │   └── ResumeValidationError (pydantic's ValidationError)  an answer fails its schema
    ├── EmptyInputError (ValueError)        nothing to run
    ├── GraphRecursionError (RecursionError) too many supersteps
    ├── NodeFailedError                     a node exhausted its retries
    ├── ReportedError                       an exception known by its type's name and message
    ├── NodeTimeoutError                    an attempt ran past its TimeoutPolicy
    ├── NodeCancelledError                  a node raised asyncio.CancelledError itself
    ├── StepTimeoutError (TimeoutError)     a superstep ran past the graph's step_timeout
    ├── GraphNotFoundError (LookupError)    the worker does not serve the graph
    ├── UndeclaredTypeError (ValueError)    data names a class the graph did not declare
    ├── InputLimitError (ValueError)        an input or answer is too large or too deep
    ├── EncryptionKeyError (ValueError)     a payload's key id is unknown, or a key is malformed
    └── SetupError                          the namespace lacks graphrun's search attributes

`GraphInterrupt` is not an error: it is how `interrupt()` unwinds a node.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticCustomError


class GraphrunError(Exception):
    """Base class of graphrun's errors."""


class GraphValidationError(GraphrunError, ValueError):
    """The graph is malformed; the message says how to fix it."""


class InvalidUpdateError(GraphrunError):
    """A node's writes cannot be applied to the state."""

    def __init__(self, message: str, *, channel: str | None = None,
                 step: int | None = None, nodes: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.channel = channel
        self.step = step
        self.nodes = tuple(nodes)


class InvalidResumeError(GraphrunError, RuntimeError):
    """A resume names no pending interrupt, or is ambiguous, or fails its schema.

    The thread is left exactly as it was.
    """

    def __init__(self, message: str, *, pending_ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.pending_ids = tuple(pending_ids)


class ResumeValidationError(InvalidResumeError, ValidationError):
    """An answer that fails its interrupt's `response_schema`.

    It is pydantic's ValidationError too (what LangGraph raises), with pydantic's
    `errors()` and title: rebuilt from them, so a Temporal client gets the same.
    """

    context: str = ""
    pending_ids: tuple[str, ...] = ()
    _answer: dict[str, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # made by `of`: ValidationError's __new__ holds the errors

    @classmethod
    def of(cls, answer: Mapping[str, Any]) -> ResumeValidationError:
        """From `answer_errors`' JSON of pydantic's error."""
        exc = cls.from_exception_data(str(answer.get("title", "")), [
            {"type": PydanticCustomError(str(e["type"]), str(e["msg"])),
             "loc": tuple(e.get("loc", ())), "input": e.get("input")}
            for e in answer.get("errors", ())])
        exc.context = str(answer.get("context", ""))
        exc._answer = dict(answer)
        return exc

    def answer(self) -> dict[str, Any]:
        """The JSON data it was made of (`answer_errors`)."""
        return self._answer

    def __str__(self) -> str:
        return f"{self.context}: {ValidationError.__str__(self)}"


def answer_errors(exc: BaseException, context: str) -> dict[str, Any] | None:
    """Pydantic's ValidationError as JSON data, to rebuild it elsewhere; `context` says
    which answer it refused."""
    if not isinstance(exc, ValidationError):
        return None
    return {"context": context, "title": exc.title, "errors": [
        {"type": e["type"], "loc": list(e["loc"]), "msg": e["msg"], "input": _plain(e["input"])}
        for e in exc.errors(include_url=False, include_context=False)]}


def invalid_resume(message: str, answer: Mapping[str, Any] | None = None) -> InvalidResumeError:
    """The error of a refused answer: a ResumeValidationError when pydantic's errors say
    why (`answer`), else an InvalidResumeError."""
    if answer:
        return ResumeValidationError.of(answer)
    return InvalidResumeError(message)


def _plain(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


class EmptyInputError(GraphrunError, ValueError):
    """The graph was invoked with no input and has nothing to continue."""


class GraphRecursionError(GraphrunError, RecursionError):
    """The run took more supersteps than `recursion_limit` allows."""


class NodeFailedError(GraphrunError):
    """A node raised and exhausted its retries.

    The thread keeps its checkpoint and the writes of the node's finished
    siblings; invoking it with `None` after a fix runs the failed node again.

    When the node's error is one of Python's built-in exceptions, it is an instance of
    that class too (`except ValueError` catches it on both drivers, as LangGraph's
    callers expect). The class comes from a fixed table of built-ins, never from a
    name that arrives as data: a user's own class is known by `error_type` alone.
    """

    def __new__(cls, node: str, error_type: str, error_message: str) -> NodeFailedError:
        joined = _also_builtin(cls, NodeFailedError, error_type)
        made: NodeFailedError = super(NodeFailedError, joined).__new__(
            joined, node, error_type, error_message)
        return made

    def __init__(self, node: str, error_type: str, error_message: str) -> None:
        message = f"node '{node}' failed: {error_type}: {error_message}"
        super().__init__(message)
        self.args = (message,)  # OSError's kind would keep its constructor's arguments
        self.node = node
        self.error_type = error_type
        self.error_message = error_message

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> Any:
        return NodeFailedError, (self.node, self.error_type, self.error_message)


def _builtin_errors() -> dict[str, type[Exception]]:
    """Python's built-in exception classes a NodeFailedError may also be: those built
    from a message (not the Unicode errors, groups or warnings), and not the ones that
    steer control flow (StopIteration)."""
    skip = (Warning, UnicodeError, StopIteration, StopAsyncIteration, ExceptionGroup)
    return {name: cls for name, cls in vars(builtins).items()
            if isinstance(cls, type) and issubclass(cls, Exception)
            and not issubclass(cls, skip)}


_BUILTIN_ERRORS = _builtin_errors()


def _also_builtin(cls: type[Any], base: type[Any], error_type: str) -> type[Any]:
    """`base` made an instance of the built-in exception `error_type` names too, if any
    (only `base` itself, not a user's subclass of it)."""
    builtin = _BUILTIN_ERRORS.get(error_type)
    return cls if cls is not base or builtin is None else _joined(base, builtin)


_JOINED: dict[tuple[type[Any], type[Exception]], type[Any]] = {}


def _joined(base: type[Any], builtin: type[Exception]) -> type[Any]:
    key = (base, builtin)
    if key not in _JOINED:  # one class per pair, so `type(a) is type(b)` holds
        _JOINED.setdefault(key, type(base.__name__, (base, builtin), {
            "__module__": __name__, "__qualname__": f"{base.__name__}[{builtin.__name__}]"}))
    return _JOINED[key]


class GraphNotFoundError(GraphrunError, LookupError):
    """No graph of that name is registered."""


class EncryptionKeyError(GraphrunError, ValueError):
    """A payload was encrypted with a key this process does not have, or a key is malformed.

    `key_id` names the key (None when the problem is not about one key).
    """

    def __init__(self, message: str, *, key_id: str | None = None) -> None:
        super().__init__(message)
        self.key_id = key_id


class SetupError(GraphrunError):
    """The namespace is not set up for graphrun: a search attribute graphrun writes is
    missing or of another kind. The message names them, and `graphrun setup` (or, on
    Temporal Cloud, tcld and the Cloud UI) fixes it (graphrun.namespace)."""


class ReportedError(GraphrunError):
    """An exception known by its type's name and message only: what an error handler
    gets as `error.error` where the exception itself could not come along (on Temporal,
    where the handler runs in an activity of its own, or on a resume after the handler
    failed). `str()` is the exception's message. Like NodeFailedError, it is an instance
    of the built-in exception class it names, if any; no other class is rebuilt."""

    def __new__(cls, error_type: str, error_message: str) -> ReportedError:
        joined = _also_builtin(cls, ReportedError, error_type)
        made: ReportedError = super(ReportedError, joined).__new__(joined, error_type,
                                                                   error_message)
        return made

    def __init__(self, error_type: str, error_message: str) -> None:
        super().__init__(error_message)
        self.args = (error_message,)
        self.error_type = error_type
        self.error_message = error_message

    def __str__(self) -> str:
        return self.error_message

    def __repr__(self) -> str:
        return f"{self.error_type}({self.error_message!r})"

    def __reduce__(self) -> Any:
        return ReportedError, (self.error_type, self.error_message)


@dataclass(frozen=True)
class NodeError:
    """What a node's error handler is given (as its `error` parameter): which node
    failed, and with what exception, once its retries were used up (a ReportedError
    where only its type's name and message are known)."""

    node: str
    error: BaseException


class NodeTimeoutError(GraphrunError):
    """A node's attempt ran past its `TimeoutPolicy` (LangGraph's error and message).

    Not a `TimeoutError` (an OSError), so the default retry policy retries it.
    """

    def __init__(self, node: str, elapsed: float, *, kind: str,
                 idle_timeout: float | None = None, run_timeout: float | None = None) -> None:
        limit = idle_timeout if kind == "idle" else run_timeout
        if kind not in ("idle", "run") or limit is None:
            raise ValueError(f"{kind}_timeout is required when kind={kind!r}")
        what = "idle timeout" if kind == "idle" else "run timeout"
        extra = " without making progress" if kind == "idle" else ""
        super().__init__(f"Node '{node}' exceeded its {what} of {limit:.3f}s{extra} "
                         f"(elapsed: {elapsed:.3f}s).")
        self.node, self.elapsed, self.kind, self.timeout = node, elapsed, kind, limit
        self.idle_timeout, self.run_timeout = idle_timeout, run_timeout


class NodeCancelledError(GraphrunError):
    """A node's own code raised `asyncio.CancelledError` (LangGraph's error).

    A cancellation graphrun or Temporal asked for still unwinds as one; a node that
    raises it itself fails like any other error, and is not retried.
    """

    def __init__(self, node: str, message: str | None = None) -> None:
        super().__init__(message or f"Node {node!r} raised asyncio.CancelledError")
        self.node = node


class StepTimeoutError(GraphrunError, TimeoutError):
    """A superstep ran past the graph's `step_timeout` (LangGraph raises TimeoutError).

    The step's unfinished tasks were cancelled; what finished is kept as pending writes,
    so invoking the thread again with None runs only the unfinished tasks.
    """

    def __init__(self, message: str, *, step: int | None = None,
                 nodes: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.step, self.nodes = step, tuple(nodes)


class ThreadBusyError(GraphrunError, RuntimeError):
    """A run sent with `multitask="reject"` to a thread that has a run pending or running."""


class RunNotFoundError(GraphrunError, LookupError):
    """No run of that id on the thread (or it finished and can no longer be cancelled)."""


class UndeclaredTypeError(GraphrunError, ValueError):
    """Data names a class the graph did not declare; nothing was built or called.

    Decoding builds only the classes reachable from the graph's schemas, those
    given to `compile(types=[...])` and LangChain's message classes.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path

    @classmethod
    def naming(cls, path: str, action: str = "rebuild") -> UndeclaredTypeError:
        return cls(f"refused to {action} a value of type {path!r}: the graph does not declare "
                   f"it. Declare it in the state schema, or pass it to compile(types=[...]) "
                   f"(and, for a client that reads it, GraphClient(types=[...])).", path=path)


class InputLimitError(GraphrunError, ValueError):
    """An input, answer or update is larger or nested deeper than the limit allows."""


class GraphInterrupt(Exception):
    """Raised by `interrupt()` to unwind a node; the driver turns it into a pause.

    Like LangGraph's, a bare `except Exception` around `interrupt()` swallows it:
    keep `interrupt()` out of such blocks.
    """

    def __init__(self, interrupts: Sequence[Any] = ()) -> None:
        super().__init__(interrupts)
        self.interrupts = tuple(interrupts)


class GraphDrained(Exception):
    """The run stopped at a step boundary because its `RunControl` asked it to drain
    (e.g. on SIGTERM). Its checkpoint is saved: `invoke(None, config)` goes on."""

    def __init__(self, reason: str = "shutdown") -> None:
        self.reason = reason
        super().__init__(f"Graph drained: {reason}")


class ParentCommand(Exception):
    """Carries a `Command(graph=Command.PARENT)` from a subgraph to its parent."""

    def __init__(self, command: Any) -> None:
        super().__init__(command)
        self.command = command


class CallMismatchError(GraphrunError):
    """A node ran again and did not make the @task call it made before at that point.

    A node that calls tasks runs again on resume (and, on Temporal, after each round of
    calls), and gets each call's saved result back by the call's position. The calls it
    makes must therefore depend only on its input, its answers and earlier results.
    """


class CallsPending(BaseException):
    """Unwinds a node that needs the result of a @task call that has not run yet (on
    Temporal); a BaseException so a node's `except Exception` does not swallow it."""


class TargetReached(BaseException):
    """Unwinds a node that reached the call this run is for (Temporal); `run`/`arun`
    run that call and give its result."""

    def __init__(self, run: Any, arun: Any) -> None:
        super().__init__()
        self.run = run
        self.arun = arun
