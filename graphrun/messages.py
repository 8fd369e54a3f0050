"""LangGraph's message state: `add_messages`, `MessagesState`, `REMOVE_ALL_MESSAGES`.

A port of `langgraph.graph.message` (upstream langchain-ai/langgraph,
libs/langgraph/langgraph/graph/message.py) on langchain-core, with the same
semantics: both sides may be one message or a list, in any form langchain-core's
`convert_to_messages` takes ((role, text) tuples, dicts, strings, messages, chunks);
a message whose id is already in the list replaces it; `RemoveMessage(id=...)`
deletes one (an unknown id is a `ValueError`) and `RemoveMessage(id=REMOVE_ALL_MESSAGES)`
drops everything before it; `add_messages(format="langchain-openai")` returns a
reducer that also converts the merged list to OpenAI's content format (this needs
langchain-core>=0.3.11; older versions raise ImportError where upstream warns).
Install with `pip install 'graphrun[messages]'`. `MessageGraph` (deprecated
upstream, whose whole state is a list) is not provided.

Ids: upstream gives a message without an id `str(uuid.uuid4())`, set on the message
object itself. graphrun sets it in place too, but the id is never random: reducers run
inside the Temporal workflow and again on every replay, where a random id would differ
from the first run's (and a later `RemoveMessage` naming it would fail). So an id is an
xxh3-128 digest, formatted as a UUID with the version 4 bits set, of the thread (on
Temporal its workflow id, in its workflow, queries and activities alike; in-process the
thread id the driver runs, reads or updates) and of where the message comes from:
  - a node's message: the task's id (unique per thread and step) and the message's place
    among the task's writes. The runner sets it when the node returns, before its routing
    functions look at the state (`stamp_writes`), so the routing view, the 'updates'
    chunk, a paused step's pending writes and the state all show the id the state keeps
    (LangGraph's own routing view sets it in place just as early);
  - any other (the graph's input, `update_state`, `Command(update=...)`, a call outside
    a graph): what `add_messages` merges it after (the ids of `left`), its index, its
    type and its fields (`model_dump()` as JSON; a value that is not JSON by its type name).
The same merge gives the same ids wherever and however often it runs, and a new message
never takes the id of one in the list. Called outside a graph (or in a run without a
thread id), no thread is mixed in. (With the 'messages' stream mode, a node's message
streamed without an id gets a random one first, as in LangGraph; on Temporal the
activity's result records it.)

`add_messages` sets the id on the caller's message object (as upstream does, so an
invoke's input shows it afterwards), except in merges graphrun only looks at
(`graphrun.channels.VIEWING`: a routing function's view, a paused step's state, a query):
there it gives the state a copy, so looking at a thread never changes it.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Annotated, Any, Literal, cast, overload

import xxhash

try:
    from langchain_core.messages import (
        AnyMessage,
        BaseMessage,
        BaseMessageChunk,
        MessageLikeRepresentation,
        RemoveMessage,
        convert_to_messages,
        message_chunk_to_message,
    )
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        "graphrun.messages needs langchain-core (>=0.3): pip install 'graphrun[messages]'"
    ) from exc
from typing_extensions import TypedDict

from graphrun.channels import VIEWING
from graphrun.runtime import MERGING_THREAD
from graphrun.task import current_task

__all__ = ("REMOVE_ALL_MESSAGES", "AnyMessage", "MessagesState", "add_messages",
           "push_message", "stamp_writes")

Messages = list[MessageLikeRepresentation] | MessageLikeRepresentation
Reducer = Callable[[Messages, Messages], list[BaseMessage]]

REMOVE_ALL_MESSAGES = "__remove_all__"


@overload
def add_messages(left: Messages, right: Messages, *,
                 format: Literal["langchain-openai"] | None = None) -> list[BaseMessage]: ...
@overload
def add_messages(left: None = None, right: None = None, *,
                 format: Literal["langchain-openai"] | None = None) -> Reducer: ...
def add_messages(left: Messages | None = None, right: Messages | None = None, *,
                 format: Literal["langchain-openai"] | None = None
                 ) -> list[BaseMessage] | Reducer:
    """Merges two lists of messages, updating existing messages by ID.

    By default, this ensures the state is "append-only", unless the new message
    has the same ID as an existing message. Called with neither list (e.g.
    `add_messages(format="langchain-openai")`), returns the reducer with that format.

    Args:
        left: The base list of messages.
        right: The list of messages (or single message) to merge into the base list.
        format: `None` returns messages as they are. `"langchain-openai"` returns
            them with their contents in OpenAI's format (strings, `text` and
            `image_url` blocks; tool results as `ToolMessage`s).

    Returns:
        A new list with the messages from `right` merged into `left`. A message in
        `right` with the id of a message in `left` replaces it.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> merged = add_messages([HumanMessage("Hello", id="1")], [AIMessage("Hi!", id="2")])
        >>> [(m.id, m.content) for m in merged]
        [('1', 'Hello'), ('2', 'Hi!')]
        >>> [(m.id, m.content) for m in add_messages(merged, HumanMessage("Hello again", id="1"))]
        [('1', 'Hello again'), ('2', 'Hi!')]
    """
    if left is not None and right is not None:
        return _add_messages(left, right, format=format)
    if left is not None or right is not None:
        raise ValueError(
            f"Must specify non-null arguments for both 'left' and 'right'. Only "
            f"received: '{'left' if left is not None else 'right'}'.")
    return partial(_add_messages, format=format)


def _add_messages(left: Messages, right: Messages, *,
                  format: Literal["langchain-openai"] | None = None) -> list[BaseMessage]:
    remove_all_idx = None
    # coerce to list, then to messages
    left_msgs = _coerce(left if isinstance(left, list) else [left])
    right_msgs = _coerce(right if isinstance(right, list) else [right])
    # assign missing ids (deterministic: see the module docstring)
    _fill_ids(left_msgs, right_msgs)
    for idx, m in enumerate(right_msgs):
        if isinstance(m, RemoveMessage) and m.id == REMOVE_ALL_MESSAGES:
            remove_all_idx = idx

    if remove_all_idx is not None:
        return right_msgs[remove_all_idx + 1:]

    # merge
    merged = left_msgs.copy()
    merged_by_id = {m.id: i for i, m in enumerate(merged)}
    ids_to_remove = set()
    for m in right_msgs:
        if (existing_idx := merged_by_id.get(m.id)) is not None:
            if isinstance(m, RemoveMessage):
                ids_to_remove.add(m.id)
            else:
                ids_to_remove.discard(m.id)
                merged[existing_idx] = m
        else:
            if isinstance(m, RemoveMessage):
                raise ValueError(
                    f"Attempting to delete a message with an ID that doesn't exist ('{m.id}')")
            merged_by_id[m.id] = len(merged)
            merged.append(m)
    merged = [m for m in merged if m.id not in ids_to_remove]

    if format == "langchain-openai":
        merged = _format_messages(merged)
    elif format:
        raise ValueError(f"Unrecognized {format=}. Expected one of 'langchain-openai', None.")
    return merged


class MessagesState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _coerce(messages: Sequence[MessageLikeRepresentation]) -> list[BaseMessage]:
    return [message_chunk_to_message(cast(BaseMessageChunk, m))
            for m in convert_to_messages(messages)]


def _format_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    try:
        from langchain_core.messages import convert_to_openai_messages
    except ImportError as exc:  # upstream warns and returns the messages unformatted
        raise ImportError("add_messages(format='langchain-openai') needs langchain-core>=0.3.11: "
                          "pip install -U langchain-core") from exc
    return _coerce(convert_to_openai_messages(messages))


# -- deterministic ids ----------------------------------------------------------------
def _fill_ids(left: list[BaseMessage], right: list[BaseMessage]) -> None:
    """Give every message without an id one (see the module docstring): a hash of the
    thread, the ids before it, its index and its fields. Set in place, except in a view."""
    if all(m.id is not None for m in (*left, *right)):
        return
    in_place = not VIEWING.get()
    context = xxhash.xxh3_128(_thread_salt())
    for i, m in enumerate(left):
        mid = m.id
        if mid is None:
            mid = _new_id(context, i, m)
            left[i] = _with_id(m, mid, in_place)
        context.update(b"\0" + mid.encode())
    for i, m in enumerate(right):  # every new message sees the whole left side
        if m.id is None:
            right[i] = _with_id(m, _new_id(context, i, m), in_place)


def _with_id(m: BaseMessage, mid: str, in_place: bool) -> BaseMessage:
    if in_place:
        m.id = mid
        return m
    return m.model_copy(update={"id": mid})


def is_reducer(fn: Any) -> bool:
    """Whether a channel's reducer is `add_messages` (in any format)."""
    return fn is add_messages or getattr(fn, "func", None) is _add_messages


def stamp_writes(channels: Mapping[str, Any], writes: Sequence[tuple[str, Any]],
                 task_id: str) -> None:
    """Give the messages a task writes to an `add_messages` channel their ids, in place:
    a hash of the thread, the task id and the message's place among the writes. Only
    message objects: a dict or tuple becomes a new message at each merge."""
    salt = None
    for w, (chan, value) in enumerate(writes):
        if not is_reducer(getattr(channels.get(chan), "reducer", None)):
            continue
        items = value if isinstance(value, list) else [value]
        for i, m in enumerate(items):
            if isinstance(m, BaseMessage) and m.id is None:
                salt = _thread_salt() if salt is None else salt
                digest = xxhash.xxh3_128_digest(salt + f"\0{task_id}\0{w}\0{i}".encode())
                m.id = str(uuid.UUID(bytes=digest, version=4))


def _new_id(context: Any, index: int, m: BaseMessage) -> str:
    h = context.copy()
    h.update(f"\0{index}\0".encode())
    try:
        h.update(json.dumps(m.model_dump(), sort_keys=True, default=_type_name).encode())
    except (TypeError, ValueError):  # e.g. dict keys of mixed types
        h.update(m.type.encode())
    return str(uuid.UUID(bytes=h.digest(), version=4))


def _type_name(value: Any) -> str:
    return f"<{type(value).__qualname__}>"


def _thread_salt() -> bytes:
    """The Temporal workflow id in its workflow; else the thread the in-process driver
    merges for; else the workflow id in its activity; else nothing.

    Looked up in `sys.modules` so this module never imports temporalio itself: if
    temporalio is not loaded, this cannot be running on Temporal.
    """
    wf = sys.modules.get("temporalio.workflow")
    if wf is not None and wf.in_workflow():  # whatever the context holds: replay-safe
        return str(wf.info().workflow_id).encode()
    thread_id = MERGING_THREAD.get()  # a graph run in-process (also one a node runs)
    if thread_id is not None:
        return thread_id.encode()
    act = sys.modules.get("temporalio.activity")
    if act is not None and act.in_activity():
        return str(act.info().workflow_id or "").encode()
    return b""


def push_message(message: Any, *, state_key: str | None = "messages") -> BaseMessage:
    """Send a message to the 'messages' stream now and write it to `state_key`, from inside
    a node (LangGraph's `push_message`). The message needs an id."""
    ctx = current_task()
    if ctx is None:
        raise RuntimeError("push_message() was called outside a graph node.")
    pushed = _coerce([message])[0]
    if pushed.id is None:
        raise ValueError("Message ID is required")
    if ctx.messages is not None:
        ctx.messages.push(pushed)
    if state_key:
        ctx.pushed.append((state_key, pushed))
    return pushed
