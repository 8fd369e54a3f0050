"""Tracing on Temporal: LangSmith runs (to a fake LangSmith endpoint) and OpenTelemetry
spans (the SDK's InMemorySpanExporter) of a graph with a chat model, a tool, an
interrupt and a resume; the same graph traced by LangGraph in-process for comparison.

Workers here keep no workflow in cache (max_cached_workflows=0): every workflow task
replays the thread's history first, so a run sent twice on replay would show.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import timedelta
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langsmith")
pytest.importorskip("opentelemetry.sdk")

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import graphrun
from graphrun import START, Command, StateGraph, registry
from graphrun.client import GraphClient
from graphrun.messages import add_messages
from graphrun.tracing import (
    LANGSMITH_HEADER,
    OTEL_HEADER,
    GraphTracing,
    LangSmithTracing,
    OpenTelemetryTracing,
    resolve,
    tracing_from_env,
)
from graphrun.worker import create_replayer, create_worker
from tests.temporal.fake_langsmith import FakeLangSmith

lg_message = pytest.importorskip("langgraph.graph.message")

NODE_KEYS = {"thread_id", "graph", "langgraph_node", "langgraph_step", "langgraph_path",
             "langgraph_checkpoint_ns", "langgraph_triggers", "checkpoint_id", "task_id"}


@tool
def lookup(vendor: str) -> str:
    """Look a vendor up."""
    return f"{vendor}: ok"


def _nodes(interrupt: Any) -> tuple[Any, Any, Any]:
    """The same three nodes for LangGraph and graphrun: a chat model, a tool, a question."""
    model = FakeMessagesListChatModel(responses=[AIMessage(content="", tool_calls=[
        {"name": "lookup", "args": {"vendor": "acme"}, "id": "call-1"}])])

    def agent(state: dict) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    def tools(state: dict) -> dict:
        return {"messages": [lookup.invoke(state["messages"][-1].tool_calls[0])]}

    def approve(state: dict) -> dict:
        return {"approved": bool(interrupt({"question": "Pay acme?"}))}

    return agent, tools, approve


class State(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    approved: bool


class LGState(TypedDict, total=False):
    messages: Annotated[list, lg_message.add_messages]
    approved: bool


def after_tools(state: dict) -> str:
    """A routing function: LangGraph traces it as a chain run under its node."""
    return "approve"


def _graphrun_graph(name: str) -> Any:
    agent, tools, approve = _nodes(graphrun.interrupt)
    graph = (StateGraph(State).add_node("agent", agent).add_node("tools", tools)
             .add_node("approve", approve).add_edge(START, "agent").add_edge("agent", "tools")
             .add_conditional_edges("tools", after_tools, ["approve"]).compile(name=name))
    registry.register(name, graph)
    return graph


def _langgraph_trees(ls: FakeLangSmith, client: Any) -> list[list[tuple[int, str, str]]]:
    """The same graph under LangGraph in-process, traced by LangChain's own tracer."""
    from langchain_core.tracers.langchain import LangChainTracer
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import StateGraph as LGStateGraph
    from langgraph.types import Command as LGCommand
    from langgraph.types import interrupt as lg_interrupt

    agent, tools, approve = _nodes(lg_interrupt)
    graph = (LGStateGraph(LGState).add_node("agent", agent).add_node("tools", tools)
             .add_node("approve", approve).add_edge(START, "agent").add_edge("agent", "tools")
             .add_conditional_edges("tools", after_tools, ["approve"])
             .compile(checkpointer=InMemorySaver(), name="purchase"))
    tracer = LangChainTracer(client=client, project_name="langgraph")
    config = {"configurable": {"thread_id": "lg-1"}, "callbacks": [tracer]}
    before = set(ls.snapshot())
    graph.invoke({"messages": [("user", "pay acme")]}, config)
    graph.invoke(LGCommand(resume=True), config)
    tracer.wait_for_futures()
    client.flush()
    runs = ls.wait_for(lambda r: sum(1 for k, v in r.items() if k not in before
                                     and v.get("end_time")) >= 9)
    mine = {k: v for k, v in runs.items() if k not in before}
    return [ls.tree(mine, str(r["id"])) for r in ls.roots(mine)]


def _metadata(run: dict[str, Any]) -> dict[str, Any]:
    return (run.get("extra") or {}).get("metadata") or {}


def _without_workflow(tree: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    """A graphrun trace with its workflow level taken out: LangGraph has none."""
    return [(d - 1 if d > 1 else d, n, t) for d, n, t in tree if n != "GraphWorkflow"]


def test_tracing_from_env_and_resolve() -> None:
    assert tracing_from_env({}) == ()
    assert tracing_from_env({"LANGSMITH_TRACING": "true"}) == ("langsmith",)
    assert tracing_from_env({"LANGCHAIN_TRACING_V2": "1",
                             "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}) == (
        "langsmith", "otel")
    assert resolve(None) is None and resolve("off") is None
    chosen = resolve("langsmith,otel")
    assert [b.name for b in chosen.backends] == ["langsmith", "otel"]
    assert resolve(chosen) is chosen
    with pytest.raises(ValueError, match="unknown tracing backend"):
        resolve("zipkin")


async def test_langsmith_trace_of_a_graph_on_temporal(temporal_client: Any,
                                                      task_queue: str) -> None:
    name = f"purchase-{uuid.uuid4().hex[:8]}"
    graph = _graphrun_graph(name)
    with FakeLangSmith() as ls:
        client = ls.client()
        traced = GraphTracing(LangSmithTracing(client=client))
        worker = create_worker(temporal_client, {name: graph}, task_queue=task_queue,
                               tracing=traced, max_cached_workflows=0)
        gc = GraphClient(temporal_client, task_queue=task_queue, tracing=traced)
        tid = f"t-{uuid.uuid4().hex[:8]}"
        config = {"configurable": {"thread_id": tid}}
        async with worker:
            out = await gc.graph(name).ainvoke({"messages": [("user", "pay acme")]}, config)
            assert out["__interrupt__"][0].value == {"question": "Pay acme?"}
            out = await gc.graph(name).ainvoke(Command(resume=True), config)
            assert out["approved"] is True
            history = await gc.client.get_workflow_handle(tid).fetch_history()
        traced.flush()
        # 2 client runs, 2 workflow runs, 4 nodes, a chat model and a tool: all ended.
        runs = ls.wait_for(lambda r: sum(1 for v in r.values() if v.get("end_time")) >= 11)

        # One trace per invocation, each a tree under the client's run.
        roots = ls.roots(runs)
        assert [r["name"] for r in roots] == [name, name]
        first, second = (ls.tree(runs, str(r["id"])) for r in roots)
        assert first == [(0, name, "chain"), (1, "GraphWorkflow", "chain"),
                         (2, "agent", "chain"), (3, "FakeMessagesListChatModel", "llm"),
                         (2, "tools", "chain"), (3, "lookup", "tool"),
                         (3, "after_tools", "chain"), (2, "approve", "chain")]
        assert second == [(0, name, "chain"), (1, "GraphWorkflow", "chain"),
                          (2, "approve", "chain")]
        for root in roots:
            trace = {str(r["trace_id"]) for _, r in ls.walk(runs, str(root["id"]))}
            assert trace == {str(root["id"])}
        # Replaying every workflow task sent no run twice, and left none unended.
        assert all(n == 1 for n in ls.posts.values()), ls.posts
        assert all(r.get("end_time") for r in runs.values())

        by_name: dict[str, list[dict[str, Any]]] = {}
        for r in runs.values():
            by_name.setdefault(r["name"], []).append(r)
        assert _metadata(roots[0])["thread_id"] == tid
        assert _metadata(roots[0])["graph"] == name
        workflow = _metadata(by_name["GraphWorkflow"][0])
        assert workflow["temporalWorkflowID"] == tid and workflow["thread_id"] == tid
        for node in ("agent", "tools", "approve"):
            md = _metadata(by_name[node][0])
            assert set(md) >= NODE_KEYS, (node, md)
            assert md["langgraph_node"] == node and md["graph"] == name
        steps = [_metadata(by_name[n][0])["langgraph_step"] for n in ("agent", "tools", "approve")]
        assert steps == sorted(steps) and len(set(steps)) == 3
        # What a node calls carries the node's metadata and its attempt.
        llm = _metadata(by_name["FakeMessagesListChatModel"][0])
        assert llm["langgraph_node"] == "agent" and llm["attempt"] == 1
        assert llm["checkpoint_id"] == _metadata(by_name["agent"][0])["checkpoint_id"]
        # The question is the paused node's output, not an error (LangGraph raises it).
        paused = next(r for r in by_name["approve"] if "__interrupt__" in (r["outputs"] or {}))
        assert paused["outputs"]["__interrupt__"][0]["value"] == {"question": "Pay acme?"}
        assert not paused.get("error")
        assert roots[0]["outputs"]["status"] == "interrupted"
        assert roots[1]["outputs"]["status"] == "done" and roots[1]["outputs"]["approved"]

        # Headers carry trace context only: a dotted order, no metadata, no state.
        carried = []
        for event in history.events:
            if event.HasField("activity_task_scheduled_event_attributes"):
                fields = event.activity_task_scheduled_event_attributes.header.fields
                assert set(fields) == {LANGSMITH_HEADER}
                carried.append(json.loads(fields[LANGSMITH_HEADER].data))
        assert len(carried) == 4
        assert all(set(c) == {"langsmith-trace"} for c in carried), carried

        # LangGraph in-process, same nodes: the same trees but for the workflow level.
        langgraph = _langgraph_trees(ls, client)
    assert [_without_workflow(t) for t in (first, second)] == [
        [(d, name if n == "purchase" else n, t) for d, n, t in tree] for tree in langgraph]


async def test_a_node_trace_policy_holds_for_the_workers_runs(temporal_client: Any,
                                                               task_queue: str) -> None:
    # The node's run is opened by the workflow and sent by the worker: what it records
    # is what the TracePolicy makes of the node's input and output, as in-process.
    name = f"scrubbed-{uuid.uuid4().hex[:8]}"

    class Card(TypedDict):
        card: str
        charged: bool

    policy = graphrun.types.TracePolicy(
        process_inputs=lambda s: {**s, "card": "****"},
        process_outputs=lambda out: {"charged": out["charged"], "card": "****"})
    graph = (StateGraph(Card).add_node("charge", lambda s: {"charged": True,
                                                            "card": s["card"]},
                                       trace_policy=policy)
             .add_edge(START, "charge").compile(name=name))
    registry.register(name, graph)
    with FakeLangSmith() as ls:
        traced = GraphTracing(LangSmithTracing(client=ls.client()))
        gc = GraphClient(temporal_client, task_queue=task_queue, tracing=traced)
        async with create_worker(temporal_client, {name: graph}, task_queue=task_queue,
                                 tracing=traced):
            out = await gc.graph(name).ainvoke({"card": "4242", "charged": False},
                                               {"configurable": {"thread_id": name}})
        assert out == {"card": "4242", "charged": True}
        traced.flush()
        runs = ls.wait_for(lambda r: any(v.get("name") == "charge" and v.get("end_time")
                                         for v in r.values()))
    [charge] = [r for r in runs.values() if r["name"] == "charge"]
    assert charge["inputs"] == {"card": "****", "charged": False}
    assert charge["outputs"] == {"charged": True, "card": "****"}


def _flaky_graph(name: str, calls: list[int]) -> Any:
    """A node whose first attempt goes silent past its heartbeat timeout, as a lost
    worker would: Temporal runs it again."""
    model = FakeMessagesListChatModel(responses=[AIMessage(content="first"),
                                                 AIMessage(content="second")])

    def flaky(state: dict) -> dict:
        calls.append(1)
        reply = model.invoke("hello")
        if len(calls) == 1:
            time.sleep(1.5)  # no heartbeat: the attempt is lost
        return {"messages": [reply]}

    graph = (StateGraph(State).add_node("flaky", flaky, heartbeat_timeout=timedelta(seconds=0.5))
             .add_edge(START, "flaky").compile(name=name))
    registry.register(name, graph)
    return graph


async def test_langsmith_node_run_again_is_a_second_attempt(temporal_client: Any,
                                                            task_queue: str) -> None:
    name = f"flaky-{uuid.uuid4().hex[:8]}"
    calls: list[int] = []
    graph = _flaky_graph(name, calls)
    with FakeLangSmith() as ls:
        client = ls.client()
        traced = GraphTracing(LangSmithTracing(client=client))
        worker = create_worker(temporal_client, {name: graph}, task_queue=task_queue,
                               tracing=traced)
        gc = GraphClient(temporal_client, task_queue=task_queue, tracing=traced)
        async with worker:
            out = await gc.graph(name).ainvoke(
                {"messages": [("user", "hi")]}, {"configurable": {"thread_id": uuid.uuid4().hex}})
        assert out["messages"][-1].content == "second" and len(calls) == 2
        traced.flush()
        runs = ls.wait_for(lambda r: sum(1 for v in r.values() if v.get("end_time")) >= 6)
    nodes = [r for r in runs.values() if r["name"] == "flaky"]
    assert len(nodes) == 1  # one node, not one per attempt
    tree = ls.tree(runs, str(nodes[0]["id"]))
    assert tree == [(0, "flaky", "chain"), (1, "FakeMessagesListChatModel", "llm"),
                    (1, "attempt 2", "chain"), (1, "FakeMessagesListChatModel", "llm")]
    kids = ls.children(runs, str(nodes[0]["id"]))
    assert [_metadata(k)["attempt"] for k in kids] == [1, 2, 2]
    assert nodes[0]["outputs"]["messages"][0]["content"] == "second"


async def test_otel_spans_parent_child_across_workflow_and_activities(
        temporal_client: Any, task_queue: str) -> None:
    name = f"purchase-{uuid.uuid4().hex[:8]}"
    graph = _graphrun_graph(name)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    traced = GraphTracing(OpenTelemetryTracing(tracer_provider=provider))
    worker = create_worker(temporal_client, {name: graph}, task_queue=task_queue,
                           tracing=traced, max_cached_workflows=0)
    gc = GraphClient(temporal_client, task_queue=task_queue, tracing=traced)
    tid = f"t-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": tid}}
    async with worker:
        await gc.graph(name).ainvoke({"messages": [("user", "pay acme")]}, config)
        await gc.graph(name).ainvoke(Command(resume=True), config)
        history = await gc.client.get_workflow_handle(tid).fetch_history()
    traced.flush()
    spans = exporter.get_finished_spans()
    ids = [s.context.span_id for s in spans]
    assert len(ids) == len(set(ids)), "a span was sent twice"
    by_id = {s.context.span_id: s for s in spans}

    def shape(root: Any, depth: int = 0) -> list[tuple[int, str]]:
        kids = sorted((s for s in spans if s.parent is not None
                       and s.parent.span_id == root.context.span_id), key=lambda s: s.start_time)
        return [(depth, root.name)] + [x for k in kids for x in shape(k, depth + 1)]

    roots = sorted((s for s in spans if s.parent is None), key=lambda s: s.start_time)
    assert [shape(r) for r in roots] == [
        [(0, name), (1, "GraphWorkflow"), (2, "agent"), (3, "RunActivity:run_node"),
         (2, "tools"), (3, "RunActivity:run_node"), (4, "after_tools"), (2, "approve"),
         (3, "RunActivity:run_node")],
        [(0, name), (1, "GraphWorkflow"), (2, "approve"), (3, "RunActivity:run_node")]]
    assert len({r.context.trace_id for r in roots}) == 2  # one trace per invocation
    for s in spans:
        root = s
        while root.parent is not None:
            assert root.context.trace_id == root.parent.trace_id
            root = by_id[root.parent.span_id]
    agent = next(s for s in spans if s.name == "agent")
    attrs = dict(agent.attributes)
    assert attrs["graphrun.node"] == "agent" and attrs["graphrun.thread_id"] == tid
    assert attrs["graphrun.graph"] == name and attrs["graphrun.checkpoint_id"]
    assert isinstance(attrs["graphrun.step"], int) and attrs["temporalWorkflowID"] == tid
    activity = next(s for s in spans if s.parent and s.parent.span_id == agent.context.span_id)
    assert dict(activity.attributes)["graphrun.attempt"] == 1
    assert dict(roots[1].attributes)["graphrun.status"] == "done"
    carried = [e.activity_task_scheduled_event_attributes.header.fields
               for e in history.events if e.HasField("activity_task_scheduled_event_attributes")]
    assert all(set(f) == {OTEL_HEADER} for f in carried)
    assert all(set(json.loads(f[OTEL_HEADER].data)) == {"traceparent"} for f in carried)


async def test_temporal_otel_interceptor_client_joins_the_trace(temporal_client: Any,
                                                               task_queue: str) -> None:
    """A service calling with temporalio's own TracingInterceptor: the thread's workflow
    continues that service's trace (the same header)."""
    from temporalio.client import Client
    from temporalio.contrib.opentelemetry import TracingInterceptor

    name = f"purchase-{uuid.uuid4().hex[:8]}"
    graph = _graphrun_graph(name)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    worker = create_worker(temporal_client, {name: graph}, task_queue=task_queue,
                           tracing=OpenTelemetryTracing(tracer_provider=provider))
    config = temporal_client.config()
    config["interceptors"] = [TracingInterceptor(provider.get_tracer("service"))]
    plain = GraphClient(Client(**config), task_queue=task_queue, tracing=None)
    async with worker:
        await plain.graph(name).ainvoke({"messages": [("user", "pay acme")]},
                                        {"configurable": {"thread_id": uuid.uuid4().hex}})
    spans = exporter.get_finished_spans()
    start = next(s for s in spans if s.name == "StartUpdateWithStartWorkflow:GraphWorkflow")
    workflow = next(s for s in spans if s.name == "GraphWorkflow")
    assert workflow.parent.span_id == start.context.span_id
    assert {s.context.trace_id for s in spans} == {start.context.trace_id}


async def test_replaying_saved_histories_sends_nothing() -> None:
    """Every recorded history replayed with both tracers on: no run, no span."""
    from tests.replay.graphs import GRAPHS
    from tests.replay.test_replay import GOOD, _load

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with FakeLangSmith() as ls:
        client = ls.client()
        traced = GraphTracing(LangSmithTracing(client=client),
                              OpenTelemetryTracing(tracer_provider=provider))
        replayer = create_replayer(graphs=GRAPHS, tracing=traced)
        for name in GOOD:
            result = await replayer.replay_workflow(_load(name))
            assert result.replay_failure is None, name
        traced.flush()
        time.sleep(0.3)
        assert ls.snapshot() == {}
    assert exporter.get_finished_spans() == ()


async def test_cli_worker_continues_the_callers_trace(dev_server: Any,
                                                      temporal_client: Any) -> None:
    """`graphrun worker --tracing langsmith` in a process of its own: the caller's trace
    goes on there, and the worker sends its runs before it exits."""
    from tests.cli.helpers import Background, run_cli

    bad = run_cli("worker", "--graph", "examples.purchase:graph", "--tracing", "zipkin")
    assert bad.code == 2 and "unknown tracing backend 'zipkin'" in bad.err
    with FakeLangSmith() as ls:
        tq = f"tracing-{uuid.uuid4()}"
        worker = Background.start(
            "worker", "--graph", "examples.purchase:graph", "--address", dev_server.address,
            "--task-queue", tq, "--tracing", "langsmith",
            env={"LANGSMITH_ENDPOINT": ls.url, "LANGSMITH_API_KEY": "lsv2-fake-key"})
        try:
            assert worker.wait_for("tracing:").endswith("tracing: langsmith")
            worker.wait_for("ready")
            traced = GraphTracing(LangSmithTracing(client=ls.client()))
            remote = GraphClient(temporal_client, task_queue=tq, tracing=traced).graph("purchase")
            config = {"configurable": {"thread_id": uuid.uuid4().hex}}
            await remote.ainvoke({"item": "GPU", "amount": 96.0, "status": "pending"}, config)
            out = await remote.ainvoke(Command(resume=True), config)
            assert out["status"] == "charged"
            traced.flush()
            code, _ = worker.interrupt()
            assert code == 0
        finally:
            worker.kill()
        runs = ls.wait_for(lambda r: sum(1 for v in r.values() if v.get("end_time")) >= 7)
    assert [ls.tree(runs, str(r["id"])) for r in ls.roots(runs)] == [
        [(0, "purchase", "chain"), (1, "GraphWorkflow", "chain"),
         (2, "request_approval", "chain")],
        [(0, "purchase", "chain"), (1, "GraphWorkflow", "chain"),
         (2, "request_approval", "chain"), (2, "charge_card", "chain")]]
