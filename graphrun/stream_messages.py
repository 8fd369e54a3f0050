"""The 'messages' stream mode: chat-model messages and tokens from inside nodes.

As LangGraph does it: a LangChain callback handler is put in the node's config
(and in LangChain's context, so a model called without `config` finds it too).
It streams `(message_chunk, metadata)` for each token of a streaming chat model,
the whole message of a model that does not stream, and the messages a node
returns that nobody streamed yet. Needs langchain-core (`graphrun[messages]`).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk

from graphrun._lc_private import StreamingCallbackHandler, V2StreamingCallbackHandler
from graphrun.types import Command

NOSTREAM = "nostream"  # LangGraph's tag: a model tagged so is not streamed


class StreamMessages(BaseCallbackHandler, StreamingCallbackHandler[Any]):
    """Sends ("messages", (message, metadata)) to `emit` for one task."""

    run_inline = True  # in the node's thread, so chunks keep their order

    def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]
                         ) -> AsyncIterator[Any]:
        return output

    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        return output

    def __init__(self, emit: Callable[[tuple[str, Any]], None], metadata: dict[str, Any],
                 seen: Sequence[Any] = ()) -> None:
        self.emit = emit
        self.base = metadata
        self.runs: dict[UUID, dict[str, Any]] = {}
        self.seen: set[str] = {m.id for m in _messages(seen) if m.id is not None}

    def _send(self, metadata: dict[str, Any], message: BaseMessage, *, dedupe: bool = False
              ) -> None:
        if dedupe and message.id in self.seen:
            return
        if message.id is None:
            message.id = str(uuid.uuid4())
        self.seen.add(message.id)
        self.emit(("messages", (message, metadata)))

    def on_chat_model_start(self, serialized: dict[str, Any], messages: Any, *, run_id: UUID,
                            tags: list[str] | None = None,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if NOSTREAM not in (tags or []):
            self.runs[run_id] = {**self.base, **(metadata or {})}  # the model's own wins
            # The model's tags, but LangGraph's step bookkeeping ones, as LangGraph does.
            if user_tags := [t for t in tags or () if not t.startswith("seq:step")]:
                self.runs[run_id]["tags"] = user_tags

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, run_id: UUID,
                         **kwargs: Any) -> None:
        if isinstance(chunk, ChatGenerationChunk) and run_id in self.runs:
            self._send(self.runs[run_id], chunk.message)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        metadata = self.runs.pop(run_id, None)
        if metadata is not None and response.generations and response.generations[0]:
            generation = response.generations[0][0]
            if isinstance(generation, ChatGeneration):
                self._send(metadata, generation.message, dedupe=True)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.runs.pop(run_id, None)

    def push(self, message: BaseMessage) -> None:
        """A message a node pushed itself (`push_message`)."""
        self._send(self.base, message)

    def node_returned(self, output: Any) -> None:
        """The messages in a node's return value that were not streamed yet."""
        for message in _messages(output):
            self._send(self.base, message, dedupe=True)


class StreamMessagesV2(StreamMessages, V2StreamingCallbackHandler):
    """The 'messages' mode of `stream_events(version="v3")`, as LangGraph's v2 handler:
    a chat model streams content-block events (`message-start`, `content-block-delta`,
    ..., `message-finish`), sent as `(event, metadata)` with the model's run id in the
    metadata; a message nobody streamed is sent whole (with the model's run id when a
    model said it, none when a node returned it); tool results are left to the tools and
    values channels."""

    def __init__(self, emit: Callable[[tuple[str, Any]], None], metadata: dict[str, Any],
                 seen: Sequence[Any] = ()) -> None:
        # Here `run_id` is the model's alone (the invocation's, from its configurable,
        # would mark what a node returned as a model's message).
        super().__init__(emit, {k: v for k, v in metadata.items() if k != "run_id"}, seen)
        self.streamed: set[UUID] = set()

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, run_id: UUID,
                         **kwargs: Any) -> None:
        pass  # v1 chunks: a model streams here through on_stream_event instead

    def on_stream_event(self, event: Any, *, run_id: UUID, **kwargs: Any) -> None:
        metadata = self.runs.get(run_id)
        if metadata is None:
            return
        if event.get("event") == "message-start":
            self.streamed.add(run_id)
            if mid := event.get("id") or event.get("message_id"):  # the node may return it
                self.seen.add(mid)
        self.emit(("messages", (event, {**metadata, "run_id": str(run_id)})))

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if run_id in self.streamed:
            self.streamed.discard(run_id)
            metadata = self.runs.pop(run_id, None)
            generation = response.generations[0][0] if response.generations and (
                response.generations[0]) else None
            if metadata is not None and isinstance(generation, ChatGeneration):
                if generation.message.id is None:
                    generation.message.id = str(uuid.uuid4())
                self.seen.add(generation.message.id)
            return
        metadata = self.runs.get(run_id)
        if metadata is not None:  # a model that did not stream: its message whole, by run
            self.runs[run_id] = {**metadata, "run_id": str(run_id)}
        super().on_llm_end(response, run_id=run_id, **kwargs)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.streamed.discard(run_id)
        super().on_llm_error(error, run_id=run_id, **kwargs)

    def _send(self, metadata: dict[str, Any], message: BaseMessage, *, dedupe: bool = False
              ) -> None:
        if not isinstance(message, ToolMessage):
            super()._send(metadata, message, dedupe=dedupe)


def _messages(value: Any) -> Iterator[BaseMessage]:
    """Messages in a node's input or output: values, lists, Command updates."""
    if isinstance(value, BaseMessage):
        yield value
    elif isinstance(value, Command):
        yield from _messages(value.update)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _messages(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _messages(v)
    elif hasattr(value, "model_fields") and not isinstance(value, BaseMessage):
        for name in type(value).model_fields:
            yield from _messages(getattr(value, name, None))
