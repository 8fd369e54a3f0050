"""LangChain callbacks in-process: the run tree and the event streams LangGraph reports.

Each scenario builds the same graph with LangGraph's API and graphrun's (one builder,
the library passed in), runs both with a tracer (or `astream_events`) and compares what
the callbacks saw: run names, types, tags, `langgraph_*` metadata, nesting, inputs,
outputs and errors. Ids, timings and interrupt ids are left out.
"""

from __future__ import annotations

import asyncio
import operator
from collections.abc import Callable
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tracers.base import BaseTracer

import graphrun
from graphrun.callbacks import GraphCallbackHandler, GraphInterruptEvent, GraphResumeEvent
from graphrun.func import entrypoint as gr_entrypoint
from graphrun.func import task as gr_task


def graphrun_api() -> SimpleNamespace:
    return SimpleNamespace(StateGraph=graphrun.StateGraph, START=graphrun.START,
                           END=graphrun.END, Send=graphrun.Send, Command=graphrun.Command,
                           interrupt=graphrun.interrupt, InMemorySaver=graphrun.InMemorySaver,
                           RetryPolicy=graphrun.RetryPolicy, entrypoint=gr_entrypoint,
                           task=gr_task, lib="graphrun")


def langgraph_api() -> SimpleNamespace:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.func import entrypoint, task
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, RetryPolicy, Send, interrupt

    return SimpleNamespace(StateGraph=StateGraph, START=START, END=END, Send=Send,
                           Command=Command, interrupt=interrupt, InMemorySaver=InMemorySaver,
                           RetryPolicy=RetryPolicy, entrypoint=entrypoint, task=task,
                           lib="langgraph")


APIS = [langgraph_api, graphrun_api]


class Tracer(BaseTracer):
    def __init__(self) -> None:
        super().__init__()
        self.runs: list[Any] = []

    def _persist_run(self, run: Any) -> None:
        self.runs.append(run)


METADATA = ("langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path",
            "thread_id", "ls_integration")


def _plain(value: Any) -> Any:
    """Inputs/outputs without what differs by design (interrupt ids, message ids)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    if type(value).__name__ == "Interrupt":
        return ("Interrupt", value.value)
    if type(value).__name__ in ("Send", "Command"):
        return repr(value)
    if isinstance(value, AIMessage):
        return ("AIMessage", value.content)
    return value


def tree(run: Any) -> tuple[Any, ...]:
    md = run.extra.get("metadata") or {}
    error = run.error.split("(", 1)[0].strip() if run.error else None
    outputs = None if run.error else _plain(run.outputs)
    if run.run_type == "llm":  # the generations' details are the model's, not ours
        outputs = None
    return (run.run_type, run.name, tuple(run.tags or ()),
            tuple((k, md[k]) for k in METADATA if k in md), error, _plain(run.inputs),
            outputs, tuple(tree(c) for c in run.child_runs))


def traced(build: Callable[[SimpleNamespace], Any], inputs: list[Any],
           config: dict[str, Any], *, mode: str = "invoke") -> dict[str, Any]:
    """The run trees of each input, per library."""
    out = {}
    for api_fn in APIS:
        api = api_fn()
        graph = build(api)
        trees = []
        for inp in inputs:
            inp = inp(api) if callable(inp) else inp
            tracer = Tracer()
            cfg = {**config, "callbacks": [tracer]}
            try:
                if mode == "invoke":
                    graph.invoke(inp, cfg)
                elif mode == "stream":
                    list(graph.stream(inp, cfg, stream_mode=["updates", "values"]))
                elif mode == "ainvoke":
                    asyncio.run(graph.ainvoke(inp, cfg))
                else:
                    async def consume(g: Any = graph, i: Any = inp, c: Any = cfg) -> None:
                        async for _ in g.astream(i, c):
                            pass
                    asyncio.run(consume())
            except Exception as exc:
                trees.append(("raised", type(exc).__name__))
            trees += [tree(r) for r in tracer.runs]
        out[api.lib] = trees
    return out


class S(TypedDict):
    x: Annotated[list, operator.add]


def routing_graph(api: SimpleNamespace) -> Any:
    """START routes with a Send, a node calls a chat model and routes, a subgraph node,
    a function node that invokes the subgraph, and a node that asks a question."""
    model = GenericFakeChatModel(messages=iter([AIMessage("hi there")] * 4))

    def a(s: S) -> dict[str, Any]:
        model.invoke("hello")  # no config: found in LangChain's context
        return {"x": ["a"]}

    def b(s: S) -> dict[str, Any]:
        return {"x": ["b"]}

    def route(s: S) -> str:
        return "b"

    def start_route(s: S) -> list[Any]:
        return [api.Send("a", s)]

    def ask(s: S) -> dict[str, Any]:
        return {"x": [api.interrupt("q?")]}

    sub = api.StateGraph(S)
    sub.add_node("s1", b)
    sub.add_edge(api.START, "s1")
    subgraph = sub.compile(name="subby")

    def fn(s: S) -> Any:
        return subgraph.invoke(s)

    g = api.StateGraph(S)
    for name, node in (("a", a), ("b", b), ("ask", ask), ("sub", subgraph), ("fn", fn)):
        g.add_node(name, node)
    g.add_conditional_edges(api.START, start_route, ["a"])
    g.add_conditional_edges("a", route, ["b"])
    g.add_edge("b", "sub")
    g.add_edge("sub", "fn")
    g.add_edge("fn", "ask")
    return g.compile(checkpointer=api.InMemorySaver())


THREAD = {"configurable": {"thread_id": "t1"}, "tags": ["mine"], "metadata": {"m": 1}}


@pytest.mark.parametrize("mode", ["invoke", "stream", "ainvoke", "astream"])
def test_run_tree_as_langgraph(mode: str) -> None:
    resume = [{"x": []}, lambda api: api.Command(resume="yes")]
    trees = traced(routing_graph, resume, THREAD, mode=mode)
    assert trees["graphrun"] == trees["langgraph"]
    first = trees["graphrun"][0]
    assert first[1] == "LangGraph" and first[2] == ("mine",)
    names = [c[1] for c in first[-1]]
    assert names == ["__start__", "a", "b", "sub", "fn", "ask"]
    assert first[-1][-1][4] == "GraphInterrupt"  # the node that asked


def retry_and_fail(api: SimpleNamespace) -> Any:
    attempts = {"n": 0}

    def flaky(s: S) -> dict[str, Any]:
        attempts["n"] += 1
        if attempts["n"] < 2:
            raise ConnectionError("try again")
        return {"x": ["ok"]}

    def boom(s: S) -> dict[str, Any]:
        raise ValueError("boom")

    g = api.StateGraph(S)
    g.add_node("flaky", flaky, retry_policy=api.RetryPolicy(initial_interval=0.01,
                                                             jitter=False))
    g.add_node("boom", boom)
    g.add_edge(api.START, "flaky")
    g.add_edge("flaky", "boom")
    return g.compile()


def test_retries_and_errors_as_langgraph() -> None:
    trees = traced(retry_and_fail, [{"x": []}], {})
    assert trees["graphrun"] == trees["langgraph"]
    raised, root = trees["graphrun"]
    assert raised == ("raised", "ValueError")
    assert root[4] == "ValueError"  # the graph's run ends with the node's error
    assert [(c[1], c[4]) for c in root[-1]] == [
        ("flaky", "ConnectionError"), ("flaky", None), ("boom", "ValueError")]


def functional(api: SimpleNamespace) -> Any:
    @api.task
    def double(x: int) -> int:
        return 2 * x

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def wf(x: int) -> int:
        y = double(x).result()
        z = api.interrupt("ok?")
        return y + double(z).result()

    return wf


def test_functional_api_as_langgraph() -> None:
    trees = traced(functional, [3, lambda api: api.Command(resume=5)],
                   {"configurable": {"thread_id": "t"}})
    assert trees["graphrun"] == trees["langgraph"]
    root = trees["graphrun"][0]
    assert (root[1], root[-1][0][1]) == ("LangGraph", "wf")  # LangGraph's names


def breakpoints(api: SimpleNamespace) -> Any:
    g = api.StateGraph(S)
    g.add_node("one", lambda s: {"x": [1]})
    g.add_node("two", lambda s: {"x": [2]})
    g.add_edge(api.START, "one")
    g.add_edge("one", "two")
    return g.compile(checkpointer=api.InMemorySaver(), interrupt_before=["two"])


def test_breakpoint_runs_as_langgraph() -> None:
    trees = traced(breakpoints, [{"x": []}, None], {"configurable": {"thread_id": "t"}})
    assert trees["graphrun"] == trees["langgraph"]


def parallel(api: SimpleNamespace) -> Any:
    g = api.StateGraph(S)
    for name in ("p", "q", "r"):
        g.add_node(name, lambda s, n=name: {"x": [n]})
        g.add_edge(api.START, name)
    return g.compile()


def test_parallel_tasks_as_langgraph() -> None:
    trees = traced(parallel, [{"x": []}], {})
    for lib in ("graphrun", "langgraph"):  # threads finish in any order
        root = trees[lib][0]
        trees[lib] = [(*root[:-1], tuple(sorted(root[-1], key=lambda c: c[1])))]
    assert trees["graphrun"] == trees["langgraph"]


# -- astream_events and astream_log ------------------------------------------------------
def events(build: Callable[[SimpleNamespace], Any], inputs: list[Any], config: dict[str, Any],
           version: str) -> dict[str, list[Any]]:
    out = {}
    for api_fn in APIS:
        api = api_fn()
        graph = build(api)

        async def run(g: Any = graph, a: Any = api) -> list[Any]:
            seen = []
            for inp in inputs:
                inp = inp(a) if callable(inp) else inp
                async for ev in g.astream_events(inp, config, version=version):
                    md = ev.get("metadata", {})
                    seen.append((ev["event"], ev["name"], tuple(ev.get("tags", ())),
                                 tuple((k, md[k]) for k in METADATA if k in md),
                                 _plain(ev["data"]) if "chat_model" not in ev["event"]
                                 and "llm" not in ev["event"] else None,
                                 len(ev.get("parent_ids", ()))))
            return seen

        out[api.lib] = asyncio.run(run())
    return out


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_astream_events_as_langgraph(version: str) -> None:
    resume = [{"x": []}, lambda api: api.Command(resume="yes")]
    seen = events(routing_graph, resume, THREAD, version)
    assert seen["graphrun"] == seen["langgraph"]
    kinds = {e[0] for e in seen["graphrun"]}
    assert {"on_chain_start", "on_chain_stream", "on_chain_end", "on_chat_model_start",
            "on_chat_model_stream", "on_chat_model_end"} <= kinds


def test_astream_log_as_langgraph() -> None:
    from langchain_core.tracers.log_stream import RunLog

    out = {}
    for api_fn in APIS:
        api = api_fn()
        graph = routing_graph(api)

        async def run(g: Any = graph) -> Any:
            log = None
            async for patch in g.astream_log({"x": []}, THREAD):
                log = patch if log is None else log + patch
            return log

        log = asyncio.run(run())
        assert isinstance(log, RunLog)
        out[api.lib] = (_plain(log.state["final_output"]),
                        _plain(log.state["streamed_output"]), sorted(log.state["logs"]))
    assert out["graphrun"] == out["langgraph"]


# -- GraphCallbackHandler, handlers that raise, nesting under LangChain ---------------------
class Lifecycle(GraphCallbackHandler):
    def __init__(self) -> None:
        self.events: list[Any] = []

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        self.events.append(event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        self.events.append(event)


def test_lifecycle_events_name_the_breakpoint() -> None:
    graph = breakpoints(graphrun_api())
    handler = Lifecycle()
    config = {"configurable": {"thread_id": "b"}, "callbacks": [handler]}
    graph.invoke({"x": []}, config)
    graph.invoke(None, config)
    paused, resumed = handler.events
    assert isinstance(paused, GraphInterruptEvent) and paused.status == "interrupt_before"
    assert paused.interrupts == () and paused.checkpoint_ns == ()
    assert isinstance(resumed, GraphResumeEvent) and resumed.checkpoint_id == (
        paused.checkpoint_id)


def test_langgraphs_own_graph_handler_is_called() -> None:
    from langgraph.callbacks import GraphCallbackHandler as LGHandler

    class Mine(LGHandler):
        def __init__(self) -> None:
            self.statuses: list[str] = []

        def on_interrupt(self, event: Any) -> None:
            self.statuses.append(event.status)

    graph = routing_graph(graphrun_api())
    handler = Mine()
    graph.invoke({"x": []}, {"configurable": {"thread_id": "lg"}, "callbacks": [handler]})
    assert handler.statuses == ["pending"]


def test_graph_nests_under_a_langchain_runnable() -> None:
    """A graph invoked inside a Runnable's function (no config passed) is its child."""
    graph = parallel(graphrun_api())
    outer = RunnableLambda(lambda x: graph.invoke(x), name="outer")
    tracer = Tracer()
    outer.invoke({"x": []}, {"callbacks": [tracer]})
    (root,) = tracer.runs
    assert root.name == "outer"
    assert [c.name for c in root.child_runs] == ["LangGraph"]
    assert sorted(c.name for c in root.child_runs[0].child_runs) == ["p", "q", "r"]


def test_with_config_names_the_run_and_messages_mode_still_streams() -> None:
    api = graphrun_api()
    graph = routing_graph(api).with_config(run_name="agent", tags=["bound"])
    tracer = Tracer()
    chunks = list(graph.stream({"x": []}, {"configurable": {"thread_id": "w"},
                                           "callbacks": [tracer]}, stream_mode="messages"))
    assert [m.content for m, _ in chunks if m.content] == ["hi", " ", "there"]
    (root,) = tracer.runs
    assert root.name == "agent" and root.tags == ["bound"]
    a = next(c for c in root.child_runs if c.name == "a")
    assert [c.run_type for c in a.child_runs] == ["llm", "chain"]


def test_no_handlers_no_runs() -> None:
    """Without callbacks nothing is started (and a handler that raises is LangChain's
    business: it is logged unless it sets raise_error)."""

    class Raises(BaseCallbackHandler):
        def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
            raise RuntimeError("handler failed")

    graph = parallel(graphrun_api())
    assert graph.invoke({"x": []}) == graph.invoke({"x": []}, {"callbacks": [Raises()]})


def test_bridged_langgraph_graph_as_langgraph() -> None:
    """A LangGraph graph given to from_langgraph reports the tree LangGraph reports."""
    from graphrun import from_langgraph

    def build(api: SimpleNamespace) -> Any:
        graph = routing_graph(langgraph_api())
        return graph if api.lib == "langgraph" else from_langgraph(graph)

    resume = [{"x": []}, lambda api: api.Command(resume="yes")]
    trees = traced(build, resume, THREAD)
    # One difference: the bridge names a LangGraph subgraph node after its node ("sub"),
    # the name it is registered under; LangGraph's run has the subgraph's own ("subby").
    # (The one `fn` invokes is LangGraph's own, run by LangGraph inside the node.)
    assert repr(trees["graphrun"]) == repr(trees["langgraph"]).replace(
        "'subby'", "'sub'", 1)


# -- TracePolicy ----------------------------------------------------------------------------
class Seen(BaseCallbackHandler):
    """A handler that is no tracer: it gets a node's real input and output."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        if kwargs.get("name") == "n":
            self.seen.append(("start", inputs))
            self.run_id = kwargs["run_id"]

    def on_chain_end(self, outputs: Any, **kwargs: Any) -> None:
        if kwargs["run_id"] == getattr(self, "run_id", None):
            self.seen.append(("end", outputs))


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_trace_policy_as_langgraph(mode: str) -> None:
    """A node's TracePolicy: tracers record what its processors return, a handler that is
    no tracer and astream_events get the real input and output; a processor that raises
    records the real value."""
    from langgraph.types import TracePolicy as LgTracePolicy

    from graphrun.types import TracePolicy

    class V(TypedDict):
        value: int

    def boom(_: Any) -> Any:
        raise RuntimeError("processor failed")

    def build(lib: str) -> Any:
        policy_class = TracePolicy if lib == "graphrun" else LgTracePolicy
        api = graphrun_api() if lib == "graphrun" else langgraph_api()
        return (api.StateGraph(V)
                .add_node("n", lambda s: {"value": s["value"] + 1},
                          trace_policy=policy_class(process_inputs=lambda v: {"in": 1},
                                                    process_outputs=lambda v: {"out": 1}))
                .add_node("m", lambda s: {"value": s["value"] * 2},
                          trace_policy=policy_class(process_inputs=boom))
                .add_edge(api.START, "n").add_edge("n", "m").compile())

    out = {}
    for lib in ("langgraph", "graphrun"):
        tracer, seen = Tracer(), Seen()
        graph, config = build(lib), {"callbacks": [tracer, seen]}
        result = (graph.invoke({"value": 1}, config) if mode == "invoke"
                  else asyncio.run(graph.ainvoke({"value": 1}, config)))

        async def stream(g: Any = graph) -> list[Any]:
            return [(e["event"], e["data"]) for e in [ev async for ev in g.astream_events(
                {"value": 1}, version="v2")] if e["name"] == "n"]

        (root,) = tracer.runs
        out[lib] = (result, [tree(r) for r in root.child_runs], seen.seen,
                    asyncio.run(stream()))
    assert out["graphrun"] == out["langgraph"]
    result, (n, m), seen, stream_events = out["graphrun"]
    assert result == {"value": 4}
    assert (n[5], n[6]) == ({"in": 1}, {"out": 1})
    assert (m[5], m[6]) == ({"value": 2}, {"value": 4})
    assert seen == [("start", {"value": 1}), ("end", {"value": 2})]
    assert ("on_chain_start", {"input": {"value": 1}}) in stream_events


def test_error_handler_run_as_langgraph() -> None:
    """An error handler is a node: its run is its node's (`__error_handler__<node>`),
    under the graph's, beside the failed node's."""
    def build(api: SimpleNamespace) -> Any:
        def fail(s: S) -> dict[str, Any]:
            raise ValueError("x")

        g = api.StateGraph(S)
        g.add_node("fail", fail, error_handler=lambda s: {"x": ["h"]})
        g.add_node("ok", lambda s: {"x": ["ok"]})
        g.add_edge(api.START, "fail")
        g.add_edge(api.START, "ok")
        return g.compile()

    def by_name(tree: tuple[Any, ...]) -> tuple[Any, ...]:  # the runs started in threads
        return (*tree[:-1], tuple(sorted(tree[-1], key=lambda c: c[1])))

    (theirs,), (ours,) = traced(build, [{"x": []}], {}).values()  # LangGraph first
    assert by_name(ours) == by_name(theirs)
    assert [c[1] for c in by_name(ours)[-1]] == ["__error_handler__fail", "fail", "ok"]
