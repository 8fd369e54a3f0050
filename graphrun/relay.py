"""LangChain callbacks across the Temporal boundary: nodes run on workers, handlers live
with the caller.

A caller whose config has callbacks (`RemoteGraph.ainvoke`/`astream` with
`config["callbacks"]`, `astream_events`, `astream_log`) sends its run with
`callbacks="runs"` (or `"stream"` when a handler streams). Each node's activity then runs
the node under a `Relay` handler, which turns every callback event of the node's runs
(the task's chain run, the chat models, tools and routing functions under it) into plain
data. With "runs" the events travel batched, once (graphrun.relay_wire): the caller of
`ainvoke` reads them by query when the run stops, the caller of `astream` as each task
ends, from the thread's live stream. With "stream" (a `StreamingRelay`: tokens and
outputs are streamed too) each event is published live as it happens. The caller's
`Replay` calls its own handlers with each event, as if the node had run in its process:
the same parents and names, with the caller's tags and metadata on every run, under the
graph's run the caller opened, and `GraphCallbackHandler`s told when the run paused and
resumed (`on_interrupt`, `on_resume`).

Data never chooses code here: an event's `kind` picks one of the fixed callback methods
below (unknown kinds are dropped), and its values are what the live stream decodes
(plain data and the graph's declared types; a value of another class is sent as its
`repr`). A node Temporal runs again reports its second attempt as runs of its own, as
LangGraph reports a retried task; a task that runs in rounds (an @entrypoint waiting for
its @task calls, each an activity of its own) is one run, its calls' runs under it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any
from uuid import UUID, uuid5

from graphrun import serde
from graphrun.callbacks import AVAILABLE, GraphRun, is_tracer, tap_output
from graphrun.declared import DeclaredTypes
from graphrun.errors import GraphInterrupt, NodeFailedError
from graphrun.relay_wire import ROOT, Packer, task_run_id
from graphrun.stream import EVENTS
from graphrun.types import Interrupt

__all__ = ["AVAILABLE", "EVENTS", "Relay", "Replay", "worker_run"]

_STEP_TAG = re.compile(r"^(graph|seq):step:\d+$")
MAX_REPR = 2000

if AVAILABLE:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.callbacks.manager import (
        AsyncCallbackManagerForChainRun,
        ahandle_event,
    )
    from langchain_core.outputs import (
        ChatGeneration,
        ChatGenerationChunk,
        Generation,
        GenerationChunk,
        LLMResult,
    )

    from graphrun._lc_private import StreamingCallbackHandler
else:  # pragma: no cover - relaying needs langchain-core on both sides
    BaseCallbackHandler = object  # type: ignore[assignment,misc]
    StreamingCallbackHandler = object  # type: ignore[assignment,misc]


# -- the worker's side ------------------------------------------------------------------
class Relay(BaseCallbackHandler):
    """A callback handler that publishes what it hears as data (a node activity's)."""

    raise_error = False
    run_inline = True  # in order: a run's start before its children's
    # A TracePolicy's recorded input/output comes as `traced_inputs`/`traced_outputs`
    # beside the real one (graphrun.callbacks): sent on for the caller's tracers.
    relays_traced = True

    def __init__(self, publish: Callable[[dict[str, Any]], None], types: DeclaredTypes,
                 packer: Packer | None = None) -> None:
        self._publish = publish
        self._types = types
        self._packer = packer or Packer()

    def _value(self, v: Any) -> Any:
        """`v` when the caller can decode it (plain data, declared classes), else its repr."""
        try:
            serde.dumps(v, self._types)
        except (TypeError, ValueError):
            return repr(v)[:MAX_REPR]
        return v

    def _send(self, kind: str, run_id: UUID, parent_run_id: UUID | None, **fields: Any
              ) -> None:
        self._publish(self._packer.pack(kind, run_id, parent_run_id,
                                        {k: self._value(v) for k, v in fields.items()}))

    def _start(self, kind: str, run_id: UUID, parent_run_id: UUID | None, tags: Any,
               metadata: Any, kwargs: dict[str, Any], **fields: Any) -> None:
        self._send(kind, run_id, parent_run_id, tags=list(tags or ()),
                   metadata=dict(metadata or {}), name=kwargs.get("name"),
                   run_type=kwargs.get("run_type"), **fields)

    # chains (the task's run, routing functions, Runnables a node calls)
    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, tags: Any = None,
                       metadata: Any = None, **kwargs: Any) -> None:
        self._start("chain_start", run_id, parent_run_id, tags, metadata, kwargs,
                    serialized=serialized, inputs=inputs, **_traced(kwargs, "traced_inputs"))

    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        self._send("chain_end", run_id, parent_run_id, outputs=outputs,
                   **_traced(kwargs, "traced_outputs"))

    def on_chain_error(self, error: BaseException, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._send("chain_error", run_id, parent_run_id, error=_error_data(error))

    # chat models and LLMs
    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID,
                            parent_run_id: UUID | None = None, tags: Any = None,
                            metadata: Any = None, **kwargs: Any) -> None:
        self._start("chat_model_start", run_id, parent_run_id, tags, metadata, kwargs,
                    serialized=serialized, messages=messages,
                    invocation_params=kwargs.get("invocation_params"))

    def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID,
                     parent_run_id: UUID | None = None, tags: Any = None,
                     metadata: Any = None, **kwargs: Any) -> None:
        self._start("llm_start", run_id, parent_run_id, tags, metadata, kwargs,
                    serialized=serialized, prompts=list(prompts),
                    invocation_params=kwargs.get("invocation_params"))

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, run_id: UUID,
                         parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        self._send("llm_new_token", run_id, parent_run_id, token=token, message=message,
                   text=None if message is not None or chunk is None else chunk.text)

    def on_llm_end(self, response: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                   **kwargs: Any) -> None:
        generations = [[{"message": g.message} if hasattr(g, "message")
                        else {"text": g.text, "info": g.generation_info} for g in batch]
                       for batch in response.generations]
        self._send("llm_end", run_id, parent_run_id, generations=generations,
                   llm_output=response.llm_output)

    def on_llm_error(self, error: BaseException, *, run_id: UUID,
                     parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._send("llm_error", run_id, parent_run_id, error=_error_data(error))

    # tools and retrievers
    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, tags: Any = None,
                      metadata: Any = None, inputs: Any = None, **kwargs: Any) -> None:
        self._start("tool_start", run_id, parent_run_id, tags, metadata, kwargs,
                    serialized=serialized, input_str=input_str, inputs=inputs,
                    tool_call_id=kwargs.get("tool_call_id"))

    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                    **kwargs: Any) -> None:
        self._send("tool_end", run_id, parent_run_id, output=output)

    def on_tool_error(self, error: BaseException, *, run_id: UUID,
                      parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._send("tool_error", run_id, parent_run_id, error=_error_data(error))

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, tags: Any = None,
                           metadata: Any = None, **kwargs: Any) -> None:
        self._start("retriever_start", run_id, parent_run_id, tags, metadata, kwargs,
                    serialized=serialized, query=query)

    def on_retriever_end(self, documents: Any, *, run_id: UUID,
                         parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._send("retriever_end", run_id, parent_run_id, documents=[
            {"page_content": d.page_content, "metadata": d.metadata, "id": d.id}
            for d in documents])

    def on_retriever_error(self, error: BaseException, *, run_id: UUID,
                           parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        self._send("retriever_error", run_id, parent_run_id, error=_error_data(error))

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, tags: Any = None,
                        metadata: Any = None, **kwargs: Any) -> None:
        self._send("custom_event", run_id, None, name=name, data=data,
                   tags=list(tags or ()), metadata=dict(metadata or {}))


class StreamingRelay(Relay, StreamingCallbackHandler):  # type: ignore[type-arg]
    """A Relay for a caller whose handlers stream (astream_events, astream_log): as a
    streaming handler it makes chat models stream their tokens and tasks their output,
    as they would in the caller's process, and relays those too."""

    async def tap_output_aiter(self, run_id: UUID, output: AsyncIterator[Any]
                               ) -> AsyncIterator[Any]:
        async for chunk in output:  # LangGraph's tasks stream theirs: on_chain_stream
            self._send("chain_stream", run_id, None, chunk=chunk)
            yield chunk

    def tap_output_iter(self, run_id: UUID, output: Iterator[Any]) -> Iterator[Any]:
        for chunk in output:
            self._send("chain_stream", run_id, None, chunk=chunk)
            yield chunk


def _traced(kwargs: dict[str, Any], key: str) -> dict[str, Any]:
    return {key: kwargs[key]} if key in kwargs else {}


def _error_data(error: BaseException) -> dict[str, Any]:
    interrupts = getattr(error, "interrupts", None)
    if type(error).__name__ == "GraphInterrupt" and interrupts is not None:
        return {"type": "GraphInterrupt",
                "interrupts": [i for i in interrupts if isinstance(i, Interrupt)]}
    return {"type": type(error).__name__, "message": str(error)[:MAX_REPR]}


def worker_run(publish: Callable[[dict[str, Any]], None], types: DeclaredTypes, *,
               streaming: bool, packer: Packer | None = None, attempt: int = 1) -> GraphRun:
    """The graph run a node activity runs its task under (with `arun_task`, as the
    caller's async run would), so that the task's run and all below it are relayed: a
    stand-in for the caller's run (ROOT), which the caller opened. The task's run has
    the id `task_run_id` gives its `attempt`; `packer` makes the events compact."""
    relay = (StreamingRelay if streaming else Relay)(publish, types, packer)
    manager = AsyncCallbackManagerForChainRun(
        run_id=ROOT, handlers=[relay], inheritable_handlers=[relay], parent_run_id=None)
    run = GraphRun(manager, {}, is_async=True)
    run.task_run_id = lambda task: task_run_id(task.id, attempt)
    return run


# -- the caller's side ------------------------------------------------------------------
class Replay:
    """Calls `handlers` with each relayed event, under the caller's run `root`, adding
    the caller's inheritable `tags` and `metadata` to every run; `run`, the caller's
    graph run, tells its GraphCallbackHandlers of the run's pauses and resumes."""

    def __init__(self, root: UUID, handlers: list[Any], tags: list[str],
                 metadata: dict[str, Any], run: GraphRun | None = None) -> None:
        self.root, self.handlers = root, handlers
        self.tags, self.metadata = tags, metadata
        self.run = run
        self._open: set[UUID] = set()  # runs started and not ended

    @classmethod
    def under(cls, run: GraphRun) -> Replay:
        """Replaying to the handlers of the caller's graph run."""
        manager = run.manager
        return cls(run.run_id, list(manager.inheritable_handlers),
                   list(manager.inheritable_tags or ()),
                   dict(manager.inheritable_metadata or {}), run)

    def _id(self, value: str | None) -> UUID | None:
        """A relayed run's id here: ROOT is the caller's run; a task's run (its id made
        from the task's, so the same again when the task runs again on resume) gets an
        id of this call's own."""
        if value is None:
            return None
        run_id = UUID(value)
        if run_id == ROOT:
            return self.root
        return uuid5(self.root, value) if run_id.version == 5 else run_id

    def _tags(self, tags: list[str]) -> list[str]:
        """The caller's tags among the worker's where LangChain puts inherited tags:
        after the run's own step tag (graph:step:N, seq:step:N), before the rest."""
        own = [t for t in tags if t not in self.tags]
        head = own[:1] if own and _STEP_TAG.match(own[0]) else []
        return [*head, *self.tags, *own[len(head):]]

    async def __call__(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        if event.get("kind") in _LIFECYCLE:
            await self._lifecycle(event)
            return
        if event.get("kind") not in _KINDS or not self.handlers:
            return
        method, ignore, args = _KINDS[event["kind"]]
        try:
            run_id = self._id(event["run_id"])
            positional, named = args(event)
        except (KeyError, TypeError, ValueError):
            return  # not an event a Relay sent
        if run_id is None or not self._opens(event["kind"], run_id):
            return
        kwargs: dict[str, Any] = {"run_id": run_id, **named}
        if "tags" in event:  # a start: the caller's tags and metadata, then the worker's
            kwargs["tags"] = self._tags(event["tags"])
            kwargs["metadata"] = {**self.metadata, **event["metadata"]}
        if event["kind"] != "custom_event":
            kwargs["parent_run_id"] = self._id(event.get("parent_run_id"))
        if event["kind"] == "chain_stream":
            await tap_output(_Run(run_id, self.handlers), positional[0])
            return
        traced = _TRACED.get(event["kind"])
        if traced is None or traced not in event:
            await ahandle_event(self.handlers, method, ignore, *positional, **kwargs)
            return
        # A TracePolicy's: tracers record its value, the others get the real one; tracers
        # start last and end first (LangGraph's order).
        tracers = [h for h in self.handlers if is_tracer(h)]
        others = [h for h in self.handlers if h not in tracers]
        groups: list[tuple[list[Any], list[Any]]] = [
            (others, positional), (tracers, [*positional[:-1], event[traced]])]
        for handlers, values in (groups if traced == "traced_inputs" else groups[::-1]):
            await ahandle_event(handlers, method, ignore, *values, **kwargs)


    def _opens(self, kind: str, run_id: UUID) -> bool:
        """Whether to pass the event on: a task's run that is open already (it started in
        an earlier round of the task) is not started again."""
        if kind.endswith("_start"):
            if run_id in self._open:
                return False
            self._open.add(run_id)
        elif kind.endswith(("_end", "_error")):
            self._open.discard(run_id)
        return True

    async def _lifecycle(self, event: dict[str, Any]) -> None:
        """The run paused (its interrupts, or a breakpoint) or resumed: told to the graph
        run's GraphCallbackHandlers, as in-process."""
        if self.run is None:
            return
        checkpoint_id = str(event.get("checkpoint_id") or "")
        if event["kind"] == "graph_resume":
            await self.run.aresumed(checkpoint_id)
            return
        status = event.get("status")
        interrupts = tuple(i for i in event.get("interrupts") or () if isinstance(i, Interrupt))
        await self.run.ainterrupted(status if status in _PAUSES else "pending", checkpoint_id,
                                    interrupts)


_LIFECYCLE = ("graph_resume", "graph_interrupt")  # made by the workflow, not a Relay
_PAUSES = ("pending", "interrupt_before", "interrupt_after")


class _Run:
    """What `tap_output` needs of a run manager."""

    def __init__(self, run_id: UUID, handlers: list[Any]) -> None:
        self.run_id, self.handlers = run_id, handlers


def _error(event: dict[str, Any]) -> BaseException:
    data = event["error"]
    if data.get("type") == "GraphInterrupt":
        return GraphInterrupt([i for i in data.get("interrupts", ()) if isinstance(i, Interrupt)])
    return NodeFailedError(event.get("name") or "?", str(data.get("type")),
                           str(data.get("message")))


def _start_named(event: dict[str, Any]) -> dict[str, Any]:
    named = {"name": event.get("name")}
    if event.get("run_type"):
        named["run_type"] = event["run_type"]
    if event.get("invocation_params") is not None:
        named["invocation_params"] = event["invocation_params"]
    return named


def _token(e: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    message = e.get("message")
    chunk = (ChatGenerationChunk(message=message) if message is not None
             else GenerationChunk(text=e["text"]) if e.get("text") is not None else None)
    return [e["token"]], {"chunk": chunk}


def _llm_result(e: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    generations = [[ChatGeneration(message=g["message"]) if "message" in g
                    else Generation(text=g["text"], generation_info=g.get("info"))
                    for g in batch] for batch in e["generations"]]
    return [LLMResult(generations=generations, llm_output=e.get("llm_output"))], {}


def _documents(e: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    from langchain_core.documents import Document

    return [[Document(page_content=d["page_content"], metadata=d.get("metadata") or {},
                      id=d.get("id")) for d in e["documents"]]], {}


def _v(key: str) -> Callable[[dict[str, Any]], Any]:
    return lambda e: e.get(key)


# The kinds that may carry a TracePolicy's value for tracers, and its key.
_TRACED = {"chain_start": "traced_inputs", "chain_end": "traced_outputs"}

# kind -> (handler method, its ignore flag, the method's arguments from the event)
_Args = Callable[[dict[str, Any]], tuple[list[Any], dict[str, Any]]]
_KINDS: dict[str, tuple[str, str | None, _Args]] = {
    "chain_start": ("on_chain_start", "ignore_chain", lambda e: (
        [e.get("serialized"), _v("inputs")(e)], _start_named(e))),
    "chain_end": ("on_chain_end", "ignore_chain", lambda e: ([_v("outputs")(e)], {})),
    "chain_error": ("on_chain_error", "ignore_chain", lambda e: ([_error(e)], {})),
    "chain_stream": ("", None, lambda e: ([_v("chunk")(e)], {})),
    "chat_model_start": ("on_chat_model_start", "ignore_chat_model", lambda e: (
        [e.get("serialized"), _v("messages")(e)], _start_named(e))),
    "llm_start": ("on_llm_start", "ignore_llm", lambda e: (
        [e.get("serialized"), list(e["prompts"])], _start_named(e))),
    "llm_new_token": ("on_llm_new_token", "ignore_llm", _token),
    "llm_end": ("on_llm_end", "ignore_llm", _llm_result),
    "llm_error": ("on_llm_error", "ignore_llm", lambda e: ([_error(e)], {})),
    "tool_start": ("on_tool_start", "ignore_agent", lambda e: (
        [e.get("serialized"), str(e.get("input_str"))],
        {**_start_named(e), "inputs": _v("inputs")(e),
         **({"tool_call_id": e["tool_call_id"]} if e.get("tool_call_id") else {})})),
    "tool_end": ("on_tool_end", "ignore_agent", lambda e: ([_v("output")(e)], {})),
    "tool_error": ("on_tool_error", "ignore_agent", lambda e: ([_error(e)], {})),
    "retriever_start": ("on_retriever_start", "ignore_retriever", lambda e: (
        [e.get("serialized"), str(e.get("query"))], _start_named(e))),
    "retriever_end": ("on_retriever_end", "ignore_retriever", _documents),
    "retriever_error": ("on_retriever_error", "ignore_retriever",
                        lambda e: ([_error(e)], {})),
    "custom_event": ("on_custom_event", "ignore_custom_event", lambda e: (
        [str(e["name"]), _v("data")(e)], {})),
}




# -- astream_events v2 from relayed events (the Server API's `events` stream mode) ----------
class EventStream:
    """LangChain's astream_events v2 events of a run whose nodes ran on workers: the
    graph's own run (`start`, `end`) and the relayed ones, as `astream_events` gives them.
    Built on LangChain's own v2 handler, its events collected instead of queued."""

    def __init__(self, run_id: UUID, name: str, metadata: dict[str, Any]) -> None:
        from graphrun._lc_private import astream_events_handler

        class Collect(astream_events_handler()):  # type: ignore[misc]
            def _send(self, event: Any, event_type: str) -> None:
                if self.root_event_filter.include_event(event, event_type):
                    out.append(event)

        out: list[Any] = []
        self._out = out
        self._handler = Collect()
        self.run_id, self.name, self.metadata = run_id, name, metadata
        self.replay = Replay(run_id, [self._handler], [], metadata)

    def _take(self) -> list[Any]:
        taken = list(self._out)
        self._out.clear()
        return taken

    async def start(self, input: Any) -> list[Any]:
        await self._handler.on_chain_start({}, input, run_id=self.run_id, tags=[],
                                           metadata=self.metadata, name=self.name)
        return self._take()

    async def relayed(self, event: Any) -> list[Any]:
        await self.replay(event)
        return self._take()

    async def end(self, output: Any) -> list[Any]:
        if self.run_id in self._handler.run_map:
            await self._handler.on_chain_end(output, run_id=self.run_id)
        return self._take()
