"""The Temporal interceptors: the client's run around a call and the headers it sends,
the workflow's runs (one per invocation, one per node activity) and the activity's scope
that a node's user code runs in."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import temporalio.activity
import temporalio.client
import temporalio.converter
import temporalio.worker
import temporalio.workflow
from temporalio.api.common.v1 import Payload
from temporalio.exceptions import ActivityError, ApplicationError

from graphrun import registry
from graphrun.runner import ROUTE_SCOPE
from graphrun.serde import TAG
from graphrun.tracing.base import Backend, Later, status_of

# Activities that run a graph's user code: a node (run_node) or the routing of an
# update_state (route_update). Others (webhooks, crons) are not traced as nodes.
NODE_ACTIVITIES = frozenset({"run_node", "route_update"})
WORKFLOW_TYPE = "GraphWorkflow"
_payloads = temporalio.converter.PayloadConverter.default


@dataclasses.dataclass
class _Span:
    """A run or span opened by workflow code: its backend object, kept until it ends."""

    backend: Backend
    handle: Any
    graph: str = ""  # a node's: its graph and name, for its TracePolicy
    node: str = ""


class GraphTracing(temporalio.client.Interceptor, temporalio.worker.Interceptor):
    """Client and worker interceptor: traces invocations, the workflow, nodes and what
    nodes call, with each of `backends` (LangSmithTracing, OpenTelemetryTracing)."""

    def __init__(self, *backends: Backend) -> None:
        if not backends:
            raise ValueError("GraphTracing needs a backend: LangSmithTracing() or "
                             "OpenTelemetryTracing().")
        self.backends: tuple[Backend, ...] = tuple(backends)

    def __repr__(self) -> str:
        return f"GraphTracing({', '.join(b.name for b in self.backends)})"

    # client
    def intercept_client(self, next: temporalio.client.OutboundInterceptor
                         ) -> temporalio.client.OutboundInterceptor:
        return _ClientOutbound(next, self)

    @contextlib.contextmanager
    def invocation(self, graph: str, thread_id: str, inputs: Any, *, what: str = "invoke"
                   ) -> Iterator[Callable[[Any, str | None], None]]:
        """The client's run around one call to a thread: `finish(outputs, error)` records
        how it ended. Headers sent inside carry its context."""
        metadata = {"thread_id": thread_id, "graph": graph, "call": what}
        with contextlib.ExitStack() as stack:
            finishers = [stack.enter_context(b.client_scope(graph, metadata, inputs))
                         for b in self.backends]

            def finish(outputs: Any, error: str | None = None) -> None:
                if hasattr(outputs, "status"):  # a RunResult
                    outputs = _run_outputs(outputs)
                    error = error or _failure(outputs)
                for f in finishers:
                    f(outputs, error)

            yield finish

    def headers(self, headers: Mapping[str, Payload]) -> Mapping[str, Payload]:
        """`headers` with the current context of each backend (a header already there,
        from another tracing interceptor, is left as it is)."""
        out = dict(headers)
        for b in self.backends:
            if b.header in out:
                continue
            carrier = b.current_carrier()
            if carrier:
                out[b.header] = _payload(carrier)
        return out

    def flush(self) -> None:
        """Send what is buffered (call before a process exits)."""
        for b in self.backends:
            b.flush()

    # worker
    def intercept_activity(self, next: temporalio.worker.ActivityInboundInterceptor
                           ) -> temporalio.worker.ActivityInboundInterceptor:
        return _ActivityInbound(next, self)

    def workflow_interceptor_class(self, input: temporalio.worker.WorkflowInterceptorClassInput
                                   ) -> type[temporalio.worker.WorkflowInboundInterceptor]:
        return type("GraphTracingWorkflowInbound", (_WorkflowInbound,), {"_tracing": self})


_JSON_PLAIN = b"json/plain"


def _payload(carrier: Mapping[str, str]) -> Payload:
    """A carrier as a header, in JSON as temporalio's default converter writes a dict (what
    its OpenTelemetry and LangSmith interceptors read), without trying its other
    converters first."""
    return Payload(metadata={"encoding": _JSON_PLAIN},
                   data=json.dumps(carrier, separators=(",", ":")).encode())


def _carrier(headers: Mapping[str, Payload], key: str) -> dict[str, str] | None:
    payload = headers.get(key)
    if not payload:
        return None
    try:
        if payload.metadata.get("encoding") == _JSON_PLAIN:
            value = json.loads(payload.data)
        else:
            value = _payloads.from_payloads([payload])[0]
    except Exception:  # a header we cannot read is no parent, never an error
        return None
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in value.items()}


# The calls that start an invocation of a thread: only these carry the caller's context
# (not the live stream's publish signals a node sends, nor queries).
TRACED_UPDATES = frozenset({"invoke", "update_state", "bulk_update_state"})
TRACED_SIGNALS = frozenset({"resume"})


class _ClientOutbound(temporalio.client.OutboundInterceptor):
    def __init__(self, next: temporalio.client.OutboundInterceptor, root: GraphTracing) -> None:
        super().__init__(next)
        self.root = root

    async def signal_workflow(self, input: temporalio.client.SignalWorkflowInput) -> None:
        if input.signal in TRACED_SIGNALS:
            input.headers = self.root.headers(input.headers)
        await super().signal_workflow(input)

    async def start_workflow_update(self, input: temporalio.client.StartWorkflowUpdateInput
                                    ) -> Any:
        if input.update in TRACED_UPDATES:
            input.headers = self.root.headers(input.headers)
        return await super().start_workflow_update(input)

    async def start_update_with_start_workflow(
            self, input: temporalio.client.StartWorkflowUpdateWithStartInput) -> Any:
        if input.update_workflow_input.update in TRACED_UPDATES:
            input.update_workflow_input.headers = self.root.headers(
                input.update_workflow_input.headers)
        return await super().start_update_with_start_workflow(input)


def node_metadata(call: Any, name: str) -> dict[str, Any]:
    """What a node's run says about it: LangGraph's keys (so LangSmith groups and filters
    as for LangGraph) and graphrun's (graph, checkpoint id, task id)."""
    task = getattr(call, "task", None) or {}
    node = getattr(call, "node", name)
    out: dict[str, Any] = {
        "thread_id": getattr(call, "thread_id", None),
        "graph": getattr(call, "graph", None),
        "langgraph_node": name,
        "langgraph_step": task.get("step"),
        "langgraph_path": task.get("path"),
        "langgraph_checkpoint_ns": task.get("ns") or (f"{node}:{task['id']}"
                                                      if "id" in task else None),
        "checkpoint_id": getattr(call, "checkpoint_id", None) or None,
        "task_id": task.get("id"),
    }
    triggers = task.get("triggers")
    if triggers is None and "path" in task:  # the usual ones are not sent: the graph knows
        with contextlib.suppress(Exception):
            path = task["path"] or [""]
            triggers = list(registry.lookup(str(out["graph"])).spec.usual_triggers(node,
                                                                                   path[0]))
    if triggers:
        out["langgraph_triggers"] = list(triggers)
    return {k: v for k, v in out.items() if v is not None}


class _ActivityInbound(temporalio.worker.ActivityInboundInterceptor):
    def __init__(self, next: temporalio.worker.ActivityInboundInterceptor,
                 root: GraphTracing) -> None:
        super().__init__(next)
        self.root = root

    async def execute_activity(self, input: temporalio.worker.ExecuteActivityInput) -> Any:
        info = temporalio.activity.info()
        if info.activity_type not in NODE_ACTIVITIES or not input.args:
            return await super().execute_activity(input)
        call = input.args[0]
        name = str(getattr(call, "node", info.activity_type))
        metadata = {**node_metadata(call, name), "attempt": info.attempt}
        with contextlib.ExitStack() as stack:
            for b in self.root.backends:
                stack.enter_context(b.activity_scope(_carrier(input.headers, b.header), name,
                                                     metadata, info.attempt))
            token = ROUTE_SCOPE.set(self._route_scope)
            try:
                return await super().execute_activity(input)
            finally:
                ROUTE_SCOPE.reset(token)

    @contextlib.contextmanager
    def _route_scope(self, name: str, inputs: Any, tags: list[str]
                     ) -> Iterator[Callable[[Any], None]]:
        with contextlib.ExitStack() as stack:
            ends = [stack.enter_context(b.route_scope(name, inputs, tags))
                    for b in self.root.backends]

            def finish(outputs: Any) -> None:
                for end in ends:
                    end(outputs)

            yield finish


@dataclasses.dataclass
class _Invocation:
    spans: list[_Span]
    closed: bool = False


class _WorkflowInbound(temporalio.worker.WorkflowInboundInterceptor):
    """Opens a run per invocation of the thread (from its update's or signal's header),
    and a run per node activity under the invocation it runs for."""

    _tracing: ClassVar[GraphTracing]

    def init(self, outbound: temporalio.worker.WorkflowOutboundInterceptor) -> None:
        self._invocations: dict[Any, _Invocation] = {}
        self._rng: random.Random | None = None
        self._graph: bool | None = None
        self._waiting: set[asyncio.Future[None]] = set()
        super().init(_WorkflowOutbound(outbound, self))

    @property
    def traced(self) -> bool:
        """Only graph threads are traced (not the Server API's record workflows)."""
        if self._graph is None:
            self._graph = temporalio.workflow.info().workflow_type == WORKFLOW_TYPE
        return self._graph

    def rng(self) -> random.Random:
        if self._rng is None:  # its own stream: the workflow's random is left as it is
            self._rng = temporalio.workflow.new_random("graphrun-tracing")
        return self._rng

    def _metadata(self) -> dict[str, Any]:
        info = temporalio.workflow.info()
        inst = temporalio.workflow.instance()
        graph, thread_id = (inst.graph_and_thread() if hasattr(inst, "graph_and_thread")
                            else (None, None))
        return {"thread_id": thread_id, "graph": graph,
                "temporalWorkflowID": info.workflow_id, "temporalRunID": info.run_id}

    def _open(self, key: Any, headers: Mapping[str, Payload] | None, how: str,
              inputs: Any = None) -> _Invocation:
        metadata = {**self._metadata(), "trigger": how}
        if isinstance(key, str):
            metadata["run_id"] = key
        spans = []
        for b in self._tracing.backends:
            parent = _carrier(headers, b.header) if headers else None
            spans.append(_Span(b, b.wf_open(WORKFLOW_TYPE, parent, metadata, inputs,
                                            self.rng())))
        inv = _Invocation(spans)
        self._invocations[key] = inv
        return inv

    def _close(self, key: Any, outputs: Any, error: str | None) -> None:
        inv = self._invocations.pop(key, None)
        if inv is None or inv.closed:
            return
        inv.closed = True
        error = error or _failure(outputs)
        for s in inv.spans:
            s.backend.wf_close(s.handle, outputs, error)

    def _close_when_done(self, key: Any, number: int) -> None:
        """A run no handler waits for (a resume signal, an expired deadline) ends when the
        thread records its result."""
        inst = temporalio.workflow.instance()

        async def wait() -> None:
            await temporalio.workflow.wait_condition(
                lambda: inst.result_of(number) is not None)
            self._close(key, _run_outputs(inst.result_of(number)), None)

        task = asyncio.ensure_future(wait())
        self._waiting.add(task)  # kept until done (the loop holds tasks weakly)
        task.add_done_callback(self._waiting.discard)

    async def handle_update_handler(self, input: temporalio.worker.HandleUpdateInput) -> Any:
        if not self.traced or input.update not in ("invoke", "update_state", "bulk_update_state"):
            return await super().handle_update_handler(input)
        self._open(input.id, input.headers, input.update)
        try:
            result = await super().handle_update_handler(input)
        except BaseException as exc:
            self._close(input.id, None, _error_text(exc))
            raise
        self._close(input.id, _run_outputs(result), None)
        return result

    async def handle_signal(self, input: temporalio.worker.HandleSignalInput) -> None:
        if not self.traced or input.signal != "resume":
            await super().handle_signal(input)
            return
        inst = temporalio.workflow.instance()
        before = inst.invocations_taken()
        await super().handle_signal(input)
        number = inst.invocations_taken()
        if number != before:  # the resume was taken in
            key = ("n", number)
            self._open(key, input.headers, "signal")
            self._close_when_done(key, number)

    def node_parent(self, activity: str) -> _Invocation | None:
        """The invocation a node activity starts for: the thread's current run, or for
        update_state's routing, the update being handled."""
        if activity == "route_update":
            update = temporalio.workflow.current_update_info()
            return self._invocations.get(update.id) if update is not None else None
        current = temporalio.workflow.instance().current_invocation()
        if current is None:
            return None
        number, run_id = current
        inv = self._invocations.get(run_id or None)
        if inv is None:
            key = ("n", number)
            inv = self._invocations.get(key)
            if inv is None:  # no header brought it (an expired question's default)
                inv = self._open(key, None, "workflow")
                self._close_when_done(key, number)
        return inv


class _WorkflowOutbound(temporalio.worker.WorkflowOutboundInterceptor):
    def __init__(self, next: temporalio.worker.WorkflowOutboundInterceptor,
                 root: _WorkflowInbound) -> None:
        super().__init__(next)
        self.root = root

    def _open_node(self, input: Any) -> list[_Span] | None:
        if input.activity not in NODE_ACTIVITIES or not input.args or not self.root.traced:
            return None
        inv = self.root.node_parent(input.activity)
        if inv is None:
            return None
        call = input.args[0]
        name = input.summary or str(getattr(call, "node", input.activity))
        info = temporalio.workflow.info()
        metadata = {**node_metadata(call, name), "temporalWorkflowID": info.workflow_id,
                    "temporalRunID": info.run_id}
        task = getattr(call, "task", None) or {}
        graph, node = str(getattr(call, "graph", "")), str(getattr(call, "node", ""))
        inputs = (Later(functools.partial(_node_inputs, graph, node), task.get("input"))
                  if "input" in task else None)
        spans = []
        headers = dict(input.headers)
        for parent in inv.spans:
            b = parent.backend
            handle = b.wf_open(name, parent.handle, metadata, inputs, self.root.rng())
            headers[b.header] = _payload(b.wf_carrier(handle))
            spans.append(_Span(b, handle, graph, node))
        input.headers = headers
        return spans

    def _watch(self, handle: Any, spans: list[_Span] | None) -> Any:
        if spans:
            handle.add_done_callback(lambda h: _node_done(h, spans))
        return handle

    def start_activity(self, input: temporalio.worker.StartActivityInput) -> Any:
        spans = self._open_node(input)
        return self._watch(super().start_activity(input), spans)

    def start_local_activity(self, input: temporalio.worker.StartLocalActivityInput) -> Any:
        spans = self._open_node(input)
        return self._watch(super().start_local_activity(input), spans)


def _node_done(handle: Any, spans: list[_Span]) -> None:
    outputs, error = None, None
    if handle.cancelled():
        error = "cancelled"
    elif handle.exception() is not None:
        error = _error_text(handle.exception())
    else:
        outputs = Later(functools.partial(_node_outputs, spans[0].graph, spans[0].node),
                        handle.result())
    for s in spans:
        s.backend.wf_close(s.handle, outputs, error)


def _error_text(exc: BaseException) -> str:
    cause = exc.cause if isinstance(exc, ActivityError) else exc
    if isinstance(cause, ApplicationError):
        return f"{cause.type or 'Error'}: {cause.message}"
    return f"{type(cause).__name__}: {cause}"


def _plain(v: Any) -> Any:
    """graphrun's typed JSON as plain JSON, building no class (as the CLI's untag)."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if not isinstance(v, dict):
        return v
    tag = v.get(TAG)
    if tag is None:
        return {k: _plain(x) for k, x in v.items()}
    if tag == "dict":
        return {str(_plain(k)): _plain(x) for k, x in v["items"]}
    if tag == "interrupt":
        return {"id": v["id"], "value": _plain(v["value"])}
    if tag == "missing":
        return None
    if "v" in v:
        return _plain(v["v"])
    return {k: _plain(x) for k, x in v.items() if k != TAG}


def _processed(graph: str, node: str, which: str, typed: Any) -> tuple[bool, Any]:
    """(True, what node `node`'s TracePolicy records for `typed`, as plain JSON), or
    (False, None) without a processor. As in-process, the processor gets the value
    itself, of the graph's classes (here on the sending thread, never the workflow's)."""
    spec = getattr(registry.find(graph), "spec", None)  # the graph this worker serves
    policy = getattr(getattr(spec, "nodes", {}).get(node), "trace_policy", None)
    process = getattr(policy, which, None)
    if spec is None or process is None:
        return False, None
    from graphrun import callbacks, serde

    value = (serde.loads(typed, spec.types) if which == "process_inputs" else
             {str(c): serde.loads(v, spec.types) for c, v in typed if c in spec.state_keys})
    return True, _plain(serde.dumps(callbacks.recorded(value, process)))


def _node_inputs(graph: str, node: str, typed: Any) -> Any:
    processed, shown = _processed(graph, node, "process_inputs", typed)
    return shown if processed else _plain(typed)


def _node_outputs(graph: str, node: str, result: Any) -> dict[str, Any] | None:
    """A node's writes (channel: value, as plain JSON) and the questions it asked; with a
    TracePolicy's process_outputs, what it records of the node's state writes (the
    update, as a dict) instead."""
    writes = getattr(result, "writes", None)
    processed, shown = (_processed(graph, node, "process_outputs", writes)
                        if writes is not None and not getattr(result, "interrupts", None)
                        else (False, None))
    if processed:
        return shown if isinstance(shown, dict) else {"output": shown}
    if writes is None:
        return None
    out: dict[str, Any] = {}
    for w in writes:
        if isinstance(w, list | tuple) and len(w) == 2:
            out[str(w[0])] = _plain(w[1])
    interrupts = getattr(result, "interrupts", None)
    if interrupts:
        out["__interrupt__"] = _plain(list(interrupts))
    return out


def _failure(outputs: Any) -> str | None:
    """A failed run's error, as a run's error text."""
    if status_of(outputs) != "failed":
        return None
    error = (outputs.error if isinstance(outputs, Later) else outputs.get("error")) or {}
    return f"{error.get('type', 'Error')}: {error.get('message', '')}"


def _run_outputs(result: Any) -> Any:
    """An invocation's outcome, made plain when sent (see Later)."""
    status = getattr(result, "status", None)
    if status is None:
        return None if result is None else {"output": str(result)[:200]}
    return Later(_run_outputs_now, result, status=str(status),
                  error=getattr(result, "error", None))


def _run_outputs_now(result: Any) -> dict[str, Any] | None:
    """An invocation's outcome: its status, the values and the questions (plain JSON)."""
    status = getattr(result, "status", None)
    if status is None:
        return None if result is None else {"output": str(result)[:200]}
    out: dict[str, Any] = {"status": status}
    values = _plain(getattr(result, "values", None))
    if isinstance(values, dict):
        out.update(values)
    elif values is not None:
        out["values"] = values
    if getattr(result, "interrupts", None):
        out["__interrupt__"] = _plain(list(result.interrupts))
    if getattr(result, "error", None):
        out["error"] = result.error
    return out
