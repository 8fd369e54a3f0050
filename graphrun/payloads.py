"""Every pydantic model that crosses Temporal, and nothing else.

Values inside (state, writes, answers) are typed JSON from `graphrun.serde`,
so the wire stays plain JSON: `temporal workflow signal --name resume
--input '{"resume": true}'` works from any shell or language. New fields get
defaults; no model forbids extra fields, so an older worker accepts a newer one.
A field left at its default is not sent (graphrun's converter writes only the fields
that were set, and `_Wire` sets only those that differ from their defaults).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict
from temporalio.contrib.workflow_streams import WorkflowStreamState

from graphrun import serde
from graphrun.channels import MISSING
from graphrun.checkpoint import Task, TaskCall, TaskResult
from graphrun.declared import DeclaredTypes
from graphrun.errors import NodeError, ReportedError
from graphrun.types import PUSH


class _Wire(BaseModel):
    model_config = ConfigDict(frozen=True)

    def __init__(self, **data: Any) -> None:
        # What equals its default is left unset, so the wire does not carry it.
        defaults = _defaults(type(self))
        super().__init__(**{k: v for k, v in data.items()
                            if defaults.get(k, _REQUIRED) is _REQUIRED or v != defaults[k]})


_REQUIRED = object()


@functools.cache
def _defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """Each field's default (read-only here), looked up once per model class."""
    return {k: _REQUIRED if f.is_required() else f.get_default(call_default_factory=True)
            for k, f in cls.model_fields.items()}


class NodeCall(_Wire):
    """The node activity's input: one task and its answers so far."""

    graph: str
    node: str
    task_id: str = ""  # no longer sent: the task says (kept to read older calls)
    step: int = 0
    thread_id: str
    task: dict[str, Any]  # engine.Task, as typed JSON
    resume: list[Any] = []
    null_resume: Any = None
    has_null_resume: bool = False
    resume_map: dict[str, Any] = {}
    nested: dict[str, Any] = {}
    config: dict[str, Any] = {}
    context: Any = None  # the run's runtime context, typed JSON
    stream: bool = False  # the caller streams: send back subgraphs' chunks too
    messages: bool = False  # ... and chat models' messages ('messages' mode)
    messages_v2: bool = False  # ... as content-block events (stream_events(version="v3"))
    tools: bool = False  # ... and its tool calls' lifecycle events ('tools' mode)
    debug: bool = False  # ... and 'debug' chunks of @task calls and subgraphs
    checkpoints: bool = False  # ... and subgraphs' 'checkpoints' chunks
    checkpoint_id: str = ""  # the checkpoint the task runs from
    parents: dict[str, str] = {}  # TaskCall.parents (a root graph's task has none)
    stream_to: str = ""  # publish what the node streams live (graphrun.stream)
    calls: dict[str, Any] = {}  # outcomes of the step's @task calls so far, typed JSON
    target: list[str] = []  # run the task down to this @task call, and run that call
    fresh_calls: list[str] | None = None  # TaskCall.fresh_calls (None: an older workflow)
    remaining_steps: int | None = None  # for graphs whose nodes read it (GraphSpec.counts_steps)
    state_by_query: bool = False  # a Send task's state: ask the workflow (task_state query)
    # Publish the task's callback events live (graphrun.relay): "runs", or "stream" for
    # a caller whose handlers stream (astream_events): outputs and tokens streamed too.
    callbacks: str = ""
    subgraph_checkpoints: dict[str, str] = {}  # TaskCall.subgraph_checkpoints
    # An error handler's task: the error it handles, {"node", "type", "message"}.
    node_error: dict[str, str] | None = None
    # The workflow runs a failed node's error handler as a task of its own; older
    # workflows (False) ask the node's activity to run it in the failed task.
    handler_apart: bool = False
    durability: str | None = None  # the run's (TaskCall.durability): its subgraphs keep it


class NodeResult(_Wire):
    """The node activity's output. Interrupts are data here, never exceptions."""

    writes: list[Any] = []
    update: Any = None
    interrupts: list[dict[str, Any]] = []
    resume: list[Any] = []
    nested: dict[str, Any] = {}
    invalid_resume: str | None = None
    invalid_answer: dict[str, Any] | None = None
    custom: list[Any] = []  # chunks the node sent to the 'custom' stream, typed JSON
    paused: bool = False  # stopped inside without an interrupt (a subgraph's breakpoint)
    sub_events: list[Any] = []  # its subgraphs' stream chunks, typed JSON (when streaming)
    awaiting: list[dict[str, Any]] = []  # @task calls to run before the task runs again
    took_null_resume: bool = False  # a call used the run's single answer
    cached: bool = False  # the writes came from the worker's cache: no node code ran
    # The task's callback events for a caller with handlers (graphrun.relay_wire.batch).
    runs: dict[str, Any] | None = None


# -- a task across the activity boundary: TaskCall -> NodeCall -> TaskCall, TaskResult ->
# NodeResult -> TaskResult, written once each (a field of TaskCall or TaskResult that
# crosses is added here and in the model above).
def node_call(call: TaskCall, task: dict[str, Any], *, counts_steps: bool,
              **where: Any) -> NodeCall:
    """The node activity's input for `call`: `task` is its task as the wire has it
    (serde.task_to_wire), `where` the fields that say where it runs and how it streams."""
    return NodeCall(
        task=task, resume=serde.dumps(call.resume),
        null_resume=serde.dumps(None if call.null_resume is MISSING else call.null_resume),
        has_null_resume=call.null_resume is not MISSING, nested=serde.dumps(call.nested),
        context=serde.dumps(call.context), messages=call.messages,
        messages_v2=call.messages_v2, tools=call.tools, debug=call.debug,
        checkpoints=call.checkpoints, checkpoint_id=call.checkpoint_id, parents=call.parents,
        calls=serde.dumps(call.calls), target=call.target,
        fresh_calls=call.fresh_calls,
        subgraph_checkpoints=call.subgraph_checkpoints,
        remaining_steps=call.remaining_steps if counts_steps else None,
        node_error=_error_to_wire(call.node_error), durability=call.durability, **where)


def _error_to_wire(e: NodeError | None) -> dict[str, str] | None:
    if e is None:
        return None
    error = e.error
    if isinstance(error, ReportedError):  # rebuilt from data already: its own parts
        return {"node": e.node, "type": error.error_type, "message": error.error_message}
    return {"node": e.node, "type": type(error).__name__, "message": str(error)}


def _error_from_wire(d: dict[str, str] | None) -> NodeError | None:
    """The error an error handler handles, from data: its class is not rebuilt (data
    never names code), a ReportedError names it."""
    if d is None:
        return None
    return NodeError(d["node"], ReportedError(d["type"], d["message"]))


def task_call(call: NodeCall, task: Task, types: DeclaredTypes, *, attempt: int,
              first_attempt_time: float | None) -> TaskCall:
    """The TaskCall a node activity runs, decoded into the graph's declared `types`."""
    return TaskCall(
        task=task, resume=serde.loads(call.resume, types),
        null_resume=(serde.loads(call.null_resume, types) if call.has_null_resume
                     else MISSING),
        nested=serde.loads(call.nested, types), context=serde.loads(call.context, types),
        messages=call.messages, messages_v2=call.messages_v2, tools=call.tools,
        debug=call.debug, checkpoints=call.checkpoints, checkpoint_id=call.checkpoint_id,
        parents=dict(call.parents), attempt=attempt,
        first_attempt_time=first_attempt_time, calls=serde.loads(call.calls, types),
        target=list(call.target), subgraph_checkpoints=dict(call.subgraph_checkpoints),
        fresh_calls=None if call.fresh_calls is None else list(call.fresh_calls),
        remaining_steps=25 if call.remaining_steps is None else call.remaining_steps,
        node_error=_error_from_wire(call.node_error), durability=call.durability)


def node_result(result: TaskResult, types: DeclaredTypes, *, stream: bool,
                runs: dict[str, Any] | None = None) -> NodeResult:
    """The node activity's output for `result` (its subgraphs' chunks only when the caller
    streams), with its callback events `runs`. Raises what serde refuses to store."""
    return NodeResult(  # writes as [channel, value] pairs; the workflow reads no more
        writes=[[c, serde.dumps(v, types)] for c, v in result.writes],
        interrupts=[serde.interrupt_to_json(i) for i in result.interrupts],
        resume=serde.dumps(result.resume, types), nested=serde.dumps(result.nested, types),
        invalid_resume=result.invalid_resume, invalid_answer=result.invalid_answer,
        custom=serde.dumps(result.custom, types), paused=result.paused,
        sub_events=serde.dumps(result.sub_events, types) if stream else [],
        awaiting=[{"name": t.name, **serde.task_to_wire(t, (PUSH,))}
                  for t in result.awaiting],
        took_null_resume=result.took_null_resume, cached=result.cached, runs=runs)


def task_result(res: NodeResult, task_id: str, loads: Callable[..., Any]) -> TaskResult:
    """The TaskResult of a node activity's output; `loads(data, decode=serde.loads)`
    decodes into the graph's declared classes (the workflow's own decoder)."""
    return TaskResult(
        task_id=task_id, writes=[tuple(w) for w in loads(res.writes)],
        update=loads(res.update),
        interrupts=[loads(i, serde.interrupt_from_json) for i in res.interrupts],
        resume=loads(res.resume), nested=loads(res.nested),
        invalid_resume=res.invalid_resume, invalid_answer=res.invalid_answer,
        custom=loads(res.custom),
        paused=res.paused, sub_events=[tuple(e) for e in loads(res.sub_events)],
        awaiting=[serde.task_from_wire(d, str(d["name"]), (PUSH,)) for d in res.awaiting],
        took_null_resume=res.took_null_resume, cached=res.cached)


class UpdateCall(_Wire):
    """The routing activity's input: `update_state` values written as `node`."""

    graph: str
    node: str
    thread_id: str
    values: Any = None  # typed JSON
    state: Any = None  # typed JSON of the state the update applies to
    checkpoint_ns: str = ""  # the node is the subgraph's at this namespace


class ResumeSignal(_Wire):
    """`{"resume": value}` or `{"resume": {"<interrupt id>": value, ...}}`."""

    resume: Any = None


class InvokeRequest(_Wire):
    """The `invoke` update: new input, None (continue), or a Command (typed JSON)."""

    input: Any = None
    checkpoint_id: str | None = None
    config: dict[str, Any] = {}
    stream: bool = False  # return the run's stream chunks too (for astream)
    stream_modes: list[str] = []  # the modes streamed ('checkpoints'/'debug' cost extra)
    stream_to: str = ""  # publish the chunks live, tagged with this id (graphrun.stream)
    interrupt_before: list[str] | None = None  # this run's breakpoints, if given
    interrupt_after: list[str] | None = None
    context: Any = None  # invoke(..., context=...), typed JSON
    # The run's record, kept by the thread (the `runs` query): plain JSON the workflow
    # stores and shows, never reads to decide anything (assistant_id, metadata, ...).
    run: dict[str, Any] = {}
    # What to do with runs already on the thread: "" waits its turn, "reject" refuses
    # this run if one is pending or running, "interrupt" stops them (their checkpoints
    # kept), "rollback" stops them and drops what they wrote.
    multitask: str = ""
    webhook: str = ""  # POSTed the run's record and values when it ends (send_webhook)
    # its headers (templates), env prefix and allowed fields (graphrun.server.webhooks)
    webhook_options: dict[str, Any] = {}
    delete_after: bool = False  # a stateless run's thread: deleted once the run has ended
    after_seconds: float = 0  # the run waits this long before it starts
    callbacks: str = ""  # relay the nodes' callback events live: "runs" or "stream"
    messages_v2: bool = False  # 'messages' as content-block events (stream_events v3)
    # Subgraphs' own checkpoints to run from, by namespace (a subgraph's config).
    subgraph_checkpoints: dict[str, str] = {}
    step_timeout: float | None = None  # RemoteGraph.step_timeout: seconds a superstep may take
    # "exit": the thread keeps only the checkpoint the run stops at (LangGraph's
    # durability="exit"); "sync"/"async" (or None) keep every step's, as always.
    durability: str | None = None


class SubgraphUpdate(_Wire):
    """The `update_subgraph_state` update: `update_state`/`bulk_update_state` on the
    thread of the subgraph at `checkpoint_ns` (a subgraph snapshot's config)."""

    values: Any = None  # typed JSON: the values, or the supersteps when `bulk`
    as_node: str | None = None
    bulk: bool = False
    checkpoint_ns: str
    checkpoint_id: str | None = None
    checkpoint_map: dict[str, str] = {}


class WebhookCall(_Wire):
    """The send_webhook activity's input: where to, and the finished run."""

    url: str
    graph: str
    thread_id: str
    run: dict[str, Any] = {}  # the run's record
    values: Any = None  # typed JSON of the thread's values
    error: dict[str, str] | None = None
    options: dict[str, Any] = {}  # InvokeRequest.webhook_options


class RunResult(_Wire):
    """What `invoke` returns: the state, the questions asked, and how the run ended."""

    status: str  # running | interrupted | done | failed | cancelled
    values: Any = None  # typed JSON of the output dict
    interrupts: list[dict[str, Any]] = []
    error: dict[str, Any] | None = None  # type, message, and what else its kind says
    events: Any = None  # typed JSON list of (stream mode, chunk), for astream
    # The workflow run that keeps the run's callback events: its `relayed` query has them
    # (for a caller with handlers that did not read the run live).
    relayed_in: str = ""


class StartRequest(_Wire):
    """GraphWorkflow's input; also what continue-as-new carries."""

    graph: str
    thread_id: str
    thread: dict[str, Any] | None = None  # a seeded thread (previous run, continue-as-new)
    max_history: int = 100
    history_event_limit: int = 10_000
    search_attributes: bool = True  # keep GraphStatus/GraphName current (must be registered)
    # The start itself set GraphStatus and GraphName (graphrun's client does), so the
    # workflow upserts only values that change. False in histories from before it.
    upsert_changes_only: bool = False
    deadlines: dict[str, str] = {}  # interrupt id -> ISO expiry, carried by continue-as-new
    # The live stream's chunks and publishers, carried by continue-as-new.
    stream: WorkflowStreamState | None = None
    runs: list[dict[str, Any]] = []  # the run records (see InvokeRequest.run), carried on
    # How the thread lives (graphrun.lifetime): its TTL ({"strategy", "ttl" minutes}) and
    # when it expires (ISO, "" for none), the metadata keys its GraphMetadata search
    # attribute indexes (None: all), and `keep`: made before its first run (POST
    # /threads), so it stays even if that run is refused.
    ttl: dict[str, Any] | None = None
    expires_at: str = ""
    index_metadata: list[str] | None = None
    keep: bool = False
    # Started by a client that knows threads live (the `graphrun-thread-lives` patch):
    # the workflow needs no patch marker to tell, which would cost each new thread a
    # marker and a TemporalChangeVersion upsert. False in histories from before it.
    lives: bool = False


class RecordStart(_Wire):
    """ThreadRecord's input: a thread made before its first run (POST /threads)."""

    thread_id: str = ""  # its snapshots' configs name it (the workflow id, without a prefix)
    ttl: dict[str, Any] | None = None
    expires_at: str = ""
    index_metadata: list[str] | None = None
    search_attributes: bool = True
    lives: bool = False  # as StartRequest.lives


class ThreadResult(_Wire):
    """GraphWorkflow's result when a graph run ends: its final thread state."""

    graph: str
    thread: dict[str, Any]
    values: Any = None
    runs: list[dict[str, Any]] = []  # the run records, for the thread's next workflow run
