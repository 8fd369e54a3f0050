"""The `version="v2"` stream parts as types: LangGraph's `StreamPart` typed dicts.

`stream`/`astream(..., version="v2")` yield `{"type": mode, "ns": ns, "data": chunk}`
(plus `"interrupts"` for `values`); `part["type"]` narrows a `StreamPart` to one of them.
Typing only: the parts are plain dicts. Re-exported by `graphrun.types`, where LangGraph
keeps them in `langgraph.types`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, Literal, NotRequired, TypeVar

from typing_extensions import TypeAliasType, TypedDict

if TYPE_CHECKING:  # langchain-core is the `messages` extra; these are annotations only
    from langchain_core.messages import AnyMessage

    from graphrun.types import Interrupt, StateSnapshot

__all__ = ["CheckpointPayload", "CheckpointStreamPart", "CheckpointTask", "CustomStreamPart",
           "DebugPayload", "DebugStreamPart", "MessagesStreamPart", "StreamPart",
           "StreamWriter", "TaskPayload", "TaskResultPayload", "TasksStreamPart",
           "UpdatesStreamPart", "ValuesStreamPart"]

StateT = TypeVar("StateT")
OutputT = TypeVar("OutputT")

StreamWriter = Callable[[Any], None]
"""What a node asking for `writer` gets: it writes one chunk to the 'custom' stream."""


class TaskPayload(TypedDict):
    """A task starting ('tasks' mode)."""

    id: str
    name: str
    input: Any
    triggers: list[str]
    metadata: NotRequired[dict[str, Any]]


class TaskResultPayload(TypedDict):
    """A task's result ('tasks' mode): its writes by channel, or its error."""

    id: str
    name: str
    error: str | None
    interrupts: list[dict[str, Any]]
    result: dict[str, Any]


class CheckpointTask(TypedDict):
    """A task of a `CheckpointPayload`: `error`, or `result` and `interrupts`, when known."""

    id: str
    name: str
    error: NotRequired[str]
    result: NotRequired[Any]
    interrupts: NotRequired[list[dict[str, Any]]]
    state: StateSnapshot | dict[str, Any] | None


class CheckpointPayload(TypedDict, Generic[StateT]):
    """A checkpoint ('checkpoints' mode), shaped as `get_state()` shows it."""

    config: dict[str, Any] | None
    metadata: dict[str, Any]
    values: StateT
    next: list[str]
    parent_config: dict[str, Any] | None
    tasks: list[CheckpointTask]


class _DebugCheckpointPayload(TypedDict, Generic[StateT]):
    step: int
    timestamp: str
    type: Literal["checkpoint"]
    payload: CheckpointPayload[StateT]


class _DebugTaskPayload(TypedDict):
    step: int
    timestamp: str
    type: Literal["task"]
    payload: TaskPayload


class _DebugTaskResultPayload(TypedDict):
    step: int
    timestamp: str
    type: Literal["task_result"]
    payload: TaskResultPayload


DebugPayload = TypeAliasType(
    "DebugPayload",
    _DebugCheckpointPayload[StateT] | _DebugTaskPayload | _DebugTaskResultPayload,
    type_params=(StateT,),
)
"""A 'debug' chunk: a checkpoint, a task or a task's result; `type` tells which."""


class ValuesStreamPart(TypedDict, Generic[OutputT]):
    """`stream_mode="values"`: the state after a step, and the interrupts pending."""

    type: Literal["values"]
    ns: tuple[str, ...]
    data: OutputT
    interrupts: tuple[Interrupt, ...]


class UpdatesStreamPart(TypedDict):
    """`stream_mode="updates"`: what each node returned, by node name."""

    type: Literal["updates"]
    ns: tuple[str, ...]
    data: dict[str, Any]


class MessagesStreamPart(TypedDict):
    """`stream_mode="messages"`: a chat model's message (chunk) and its metadata."""

    type: Literal["messages"]
    ns: tuple[str, ...]
    data: tuple[AnyMessage, dict[str, Any]]


class CustomStreamPart(TypedDict):
    """`stream_mode="custom"`: what a node wrote with its `StreamWriter`."""

    type: Literal["custom"]
    ns: tuple[str, ...]
    data: Any


class CheckpointStreamPart(TypedDict, Generic[StateT]):
    """`stream_mode="checkpoints"`."""

    type: Literal["checkpoints"]
    ns: tuple[str, ...]
    data: CheckpointPayload[StateT]


class TasksStreamPart(TypedDict):
    """`stream_mode="tasks"`: a task starting, or its result."""

    type: Literal["tasks"]
    ns: tuple[str, ...]
    data: TaskPayload | TaskResultPayload


class DebugStreamPart(TypedDict, Generic[StateT]):
    """`stream_mode="debug"`."""

    type: Literal["debug"]
    ns: tuple[str, ...]
    data: DebugPayload[StateT]


StreamPart = TypeAliasType(
    "StreamPart",
    ValuesStreamPart[OutputT] | UpdatesStreamPart | MessagesStreamPart | CustomStreamPart
    | CheckpointStreamPart[StateT] | TasksStreamPart | DebugStreamPart[StateT],
    type_params=(StateT, OutputT),
)
"""Any v2 stream part; `part["type"]` narrows it."""
