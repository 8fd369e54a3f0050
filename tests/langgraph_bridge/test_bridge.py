"""from_langgraph on hand-written LangGraph graphs: each compared with LangGraph itself.

These run outside the routing of ported tests (`unrouted`), so the LangGraph side is
LangGraph's own loop and the graphrun side is the bridge.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.channels import Topic
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.managed import IsLastStep, RemainingSteps
from langgraph.types import Command, Send, interrupt
from pydantic import BaseModel

import graphrun
from graphrun import InvalidResumeError, InvalidUpdateError, from_langgraph
from graphrun.bridge import _langgraph
from tests.langgraph_bridge.routing import unrouted


@pytest.fixture(autouse=True)
def _langgraph_compile() -> Any:
    with unrouted():
        yield


def _both(builder: StateGraph, *inputs: Any, **config: Any) -> tuple[list[Any], list[Any]]:
    """Each input in turn on one thread: on LangGraph, and bridged."""
    out = []
    for graph in (builder.compile(checkpointer=InMemorySaver()),
                  from_langgraph(builder.compile(checkpointer=InMemorySaver()))):
        cfg = {"configurable": {"thread_id": "t"}, **config}
        out.append([_plain(graph.invoke(i, cfg)) for i in inputs])
    return out[0], out[1]


def _plain(value: Any) -> Any:
    """Interrupts as (value, response schema): ids differ by design (graphrun's are
    unique across threads)."""
    if isinstance(value, dict):
        return {k: ([(i.value, i.response_schema) for i in v] if k == "__interrupt__"
                    else _plain(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]
    x: int


def test_interrupts_commands_and_sends_match_langgraph() -> None:
    def ask(s: S) -> dict[str, Any]:
        first = interrupt("first?")
        second = interrupt({"then": first})
        return {"log": [f"ask:{first}:{second}"]}

    def fan(s: S) -> Command[Any]:
        return Command(update={"x": 2}, goto=[Send("work", {"x": i}) for i in range(3)])

    def work(s: S) -> dict[str, Any]:
        get_stream_writer()({"working": s["x"]})
        return {"log": [f"work:{s['x']}"]}

    b = StateGraph(S)
    b.add_node("ask", ask)
    b.add_node("fan", fan)
    b.add_node("work", work)
    b.add_edge(START, "ask")
    b.add_edge("ask", "fan")
    lg, gr = _both(b, {"log": []}, Command(resume="a"), Command(resume="b"))
    assert gr == lg
    assert lg[-1] == {"log": ["ask:a:b", "work:0", "work:1", "work:2"], "x": 2}


def test_managed_values_count_steps_as_langgraph() -> None:
    class M(TypedDict, total=False):
        log: Annotated[list, operator.add]
        remaining_steps: RemainingSteps
        last: IsLastStep

    def step(s: M) -> dict[str, Any]:
        return {"log": [[s["remaining_steps"], s["last"]]]}

    b = StateGraph(M)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: END if s["last"] else "step")
    lg, gr = _both(b, {"log": []}, recursion_limit=5)
    assert gr == lg == [{"log": [[4, False], [3, False], [2, False], [1, True]]}]


def test_an_answer_the_response_schema_refuses_keeps_the_question() -> None:
    class Answer(BaseModel):
        ok: bool

    def ask(s: S) -> dict[str, Any]:
        return {"x": int(interrupt("ok?", response_schema=Answer).ok)}

    b = StateGraph(S)
    b.add_node("ask", ask)
    b.add_edge(START, "ask")
    graph = from_langgraph(b.compile(checkpointer=InMemorySaver()))
    cfg = {"configurable": {"thread_id": "t"}}
    asked = graph.invoke({"log": []}, cfg)["__interrupt__"]
    assert asked[0].response_schema["properties"] == {"ok": {"title": "Ok", "type": "boolean"}}
    with pytest.raises(InvalidResumeError, match="response_schema"):
        graph.invoke(Command(resume={"ok": "not a bool"}), cfg)
    assert [i.id for i in graph.get_state(cfg).interrupts] == [asked[0].id]
    assert graph.invoke(Command(resume={"ok": True}), cfg) == {"log": [], "x": 1}


def test_the_langgraph_saver_keeps_the_thread() -> None:
    def ask(s: S) -> dict[str, Any]:
        return {"log": [f"asked:{interrupt('x?')}"]}

    sub = StateGraph(S)
    sub.add_node("ask", ask)
    sub.add_edge(START, "ask")
    b = StateGraph(S)
    b.add_node("first", lambda s: {"log": ["first"]})
    b.add_node("sub", sub.compile())
    b.add_edge(START, "first")
    b.add_edge("first", "sub")
    saver = InMemorySaver()
    cfg = {"configurable": {"thread_id": "t", "user": "ann"}}
    paused = from_langgraph(b.compile(checkpointer=saver)).invoke({"log": []}, cfg)
    saved = list(saver.list(cfg))
    assert {t.config["configurable"]["checkpoint_ns"].partition(":")[0] for t in saved} == {
        "", "sub"}  # the subgraph's own checkpoints, under its namespace
    assert all(t.metadata["user"] == "ann" for t in saved)  # the call's keys, as LangGraph's

    # Another process: a new bridged graph reads the paused thread back from the saver.
    again = from_langgraph(b.compile(checkpointer=saver))
    state = again.get_state(cfg, subgraphs=True)
    assert state.next == ("sub",) and state.interrupts == tuple(paused["__interrupt__"])
    assert state.tasks[0].state.next == ("ask",)
    done = again.invoke(Command(resume="yes"), cfg)
    lg = b.compile(checkpointer=saver)  # LangGraph itself reads what graphrun wrote
    assert lg.get_state(cfg).values == done == {"log": ["first", "first", "asked:yes"]}
    assert [s.next for s in lg.get_state_history(cfg)] == [
        (), ("sub",), ("first",), ("__start__",)]


def test_a_stateful_langgraph_graph_a_node_invokes_is_the_tasks_subgraph() -> None:
    class Sub(TypedDict, total=False):
        bar: str
        baz: str

    def s1(s: Sub) -> dict[str, Any]:
        return {"baz": interrupt("baz?")}

    sb = StateGraph(Sub)
    sb.add_node("s1", s1)
    sb.add_node("s2", lambda s: {"bar": s["bar"] + s["baz"]})
    sb.add_edge(START, "s1")
    sb.add_edge("s1", "s2")
    subgraph = sb.compile(checkpointer=True)  # its state is its parent's to keep

    class P(TypedDict):
        foo: str

    def node(s: P) -> dict[str, Any]:
        return {"foo": subgraph.invoke({"bar": s["foo"]})["bar"]}

    b = StateGraph(P)
    b.add_node("node", node)
    b.add_edge(START, "node")
    lg, gr = _both(b, {"foo": "foo"}, Command(resume="baz"), {"foo": "again"})
    assert gr == lg
    assert lg[1] == {"foo": "foobaz"}

    graph = from_langgraph(b.compile(checkpointer=InMemorySaver()))
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"foo": "foo"}, cfg)
    assert graph.get_state(cfg, subgraphs=True).tasks[0].state.values == {"bar": "foo"}


def test_a_langgraph_subgraph_node_is_bridged_and_its_question_surfaces() -> None:
    def inner(s: S) -> dict[str, Any]:
        return {"x": interrupt("inner?")}

    sub = StateGraph(S)
    sub.add_node("inner", inner)
    sub.add_edge(START, "inner")
    b = StateGraph(S)
    b.add_node("sub", sub.compile())
    b.add_node("after", lambda s: {"log": [f"after:{s['x']}"]})
    b.add_edge(START, "sub")
    b.add_edge("sub", "after")
    lg, gr = _both(b, {"log": []}, Command(resume=7))
    assert gr == lg == [{"log": [], "__interrupt__": [("inner?", None)]},
                        {"log": ["after:7"], "x": 7}]


def test_a_langgraph_graph_in_a_graphrun_graph() -> None:
    def ask(s: S) -> dict[str, Any]:
        return {"x": interrupt("x?")}

    lg = StateGraph(S)
    lg.add_node("ask", ask)
    lg.add_edge(START, "ask")
    agent = lg.compile()
    cfg = {"configurable": {"thread_id": "t"}}

    as_node = graphrun.StateGraph(S).add_node("agent", agent).add_edge(graphrun.START, "agent")
    graph = as_node.compile(checkpointer=graphrun.InMemorySaver())
    assert graph.invoke({"log": []}, cfg)["__interrupt__"][0].value == "x?"
    assert graph.invoke(graphrun.Command(resume=3), cfg) == {"log": [], "x": 3}

    called = graphrun.StateGraph(S).add_node("agent", lambda s: agent.invoke(s))
    graph = called.add_edge(graphrun.START, "agent").compile(
        checkpointer=graphrun.InMemorySaver())
    with pytest.raises(InvalidUpdateError, match="from_langgraph"):  # never dropped
        graph.invoke({"log": []}, cfg)


def test_recursion_limit_and_name_carry_over() -> None:
    b = StateGraph(S)
    b.add_node("n", lambda s: {"x": 1})
    b.add_edge(START, "n")
    graph = from_langgraph(b.compile(name="mine").with_config({"recursion_limit": 9999}))
    assert graph.name == "mine"
    assert graph.spec.recursion_limit == 9999


def test_errors_are_langgraphs_classes_and_graphruns() -> None:
    from langgraph import errors as lg_errors

    b = StateGraph(S)
    b.add_node("loop", lambda s: {"x": 1})
    b.add_edge(START, "loop")
    b.add_edge("loop", "loop")
    graph = from_langgraph(b.compile())
    with pytest.raises(lg_errors.GraphRecursionError) as caught:
        graph.invoke({"x": 0}, {"recursion_limit": 3})
    assert isinstance(caught.value, graphrun.errors.GraphRecursionError)

    b = StateGraph(S)
    b.add_node("a", lambda s: {"x": 1})
    b.add_node("b", lambda s: {"x": 2})
    b.add_edge(START, "a")
    b.add_edge(START, "b")
    with pytest.raises(lg_errors.InvalidUpdateError) as bad:
        from_langgraph(b.compile()).invoke({"x": 0})
    assert isinstance(bad.value, InvalidUpdateError) and bad.value.channel == "x"

    b = StateGraph(S)
    b.add_node("up", lambda s: Command(graph=Command.PARENT, goto="elsewhere"))
    b.add_edge(START, "up")
    with pytest.raises(lg_errors.ParentCommand) as up:
        from_langgraph(b.compile()).invoke({"x": 0})
    assert up.value.args[0] == Command(goto="elsewhere")  # as LangGraph raises it
    assert isinstance(up.value, graphrun.errors.ParentCommand)


def test_unsupported_channels_and_versions_are_refused_by_name(monkeypatch: Any) -> None:
    class T(TypedDict):
        items: Annotated[list, Topic(int, accumulate=True)]

    b = StateGraph(T)
    b.add_node("n", lambda s: {})
    b.add_edge(START, "n")
    with pytest.raises(graphrun.GraphValidationError, match="Topic"):
        from_langgraph(b)
    monkeypatch.setattr(_langgraph, "version", lambda _: "1.3.0")
    with pytest.raises(ImportError, match=r"langgraph>=1.2,<1.3.*1\.3\.0"):
        _langgraph._check()


def test_a_send_task_routes_on_the_state_as_langgraph() -> None:
    """create_agent's edge after its tools reads the whole state (the AI message that
    called them) after a Send task: a return_direct tool ends the run."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from tests.langgraph_bridge.agents.model import FakeToolCallingModel

    @tool(return_direct=True)
    def direct(x: str) -> str:
        """Answer directly."""
        return "direct " + x

    def run(convert: Any) -> list[str]:
        model = FakeToolCallingModel(tool_calls=[[{"args": {"x": "a"}, "id": "1",
                                                   "name": "direct"}], []])
        out = convert(create_agent(model, [direct])).invoke({"messages": [("user", "go")]})
        return [m.type for m in out["messages"]]

    assert run(from_langgraph) == run(lambda g: g) == ["human", "ai", "tool"]


def test_error_handler_and_retry_policy_carry_over() -> None:
    from langgraph.errors import NodeError
    from langgraph.types import RetryPolicy

    tries: list[int] = []

    def bad(s: S) -> dict[str, Any]:
        tries.append(1)
        raise ValueError("boom")

    def handler(s: S, error: NodeError) -> dict[str, Any]:
        return {"log": [f"recovered from {error.node}: {error.error}"]}

    b = StateGraph(S)
    b.add_node("bad", bad, error_handler=handler,
               retry_policy=RetryPolicy(max_attempts=2, initial_interval=0.01,
                                        retry_on=ValueError))
    b.add_edge(START, "bad")
    lg, gr = _both(b, {"log": []})
    assert gr == lg == [{"log": ["recovered from bad: boom"]}]
    assert len(tries) == 4  # two tries each


def test_trace_policy_carries_over() -> None:
    from langchain_core.tracers.base import BaseTracer
    from langgraph.types import TracePolicy

    class Recording(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.runs: list[Any] = []

        def _persist_run(self, run: Any) -> None:
            pass

        def _on_chain_end(self, run: Any) -> None:
            self.runs.append(run)

    def recorded(graph: Any) -> dict[str, Any]:
        tracer = Recording()
        assert graph.invoke({"log": []}, {"callbacks": [tracer]}) == {"log": ["ran"]}
        [run] = [r for r in tracer.runs if r.name == "node"]
        return {"inputs": run.inputs, "outputs": run.outputs}

    b = StateGraph(S)
    b.add_node("node", lambda s: {"log": ["ran"]}, trace_policy=TracePolicy(
        process_inputs=lambda _: {"hidden": "in"}, process_outputs=lambda _: {"hidden": "out"}))
    b.add_edge(START, "node")
    lg = recorded(b.compile())
    assert lg == {"inputs": {"hidden": "in"}, "outputs": {"hidden": "out"}}
    assert recorded(from_langgraph(b.compile())) == lg


def test_cache_policy_and_cache_carry_over() -> None:
    from langgraph.cache.memory import InMemoryCache
    from langgraph.types import CachePolicy

    runs: list[str] = []

    def double(s: S) -> dict[str, Any]:
        runs.append("double")
        return {"log": [s["x"] * 2]}

    def triple(s: S) -> dict[str, Any]:  # another graph's node of the same name
        runs.append("triple")
        return {"log": [s["x"] * 3]}

    def built(fn: Any, cache: InMemoryCache) -> Any:
        b = StateGraph(S)
        b.add_node("work", fn, cache_policy=CachePolicy(key_func=lambda s: str(s["x"])))
        b.add_edge(START, "work")
        return from_langgraph(b.compile(cache=cache))

    cache = InMemoryCache()
    gr = built(double, cache)
    assert gr.cache is cache
    assert [*gr.stream({"x": 2, "log": []})] == [{"work": {"log": [4]}}]
    assert [*gr.stream({"x": 2, "log": []})] == [
        {"work": {"log": [4]}, "__metadata__": {"cached": True}}]
    assert gr.invoke({"x": 3, "log": []}) == {"x": 3, "log": [6]}
    assert runs == ["double", "double"]
    # the same node name and input in another graph on the same cache: its own entry
    assert built(triple, cache).invoke({"x": 2, "log": []}) == {"x": 2, "log": [6]}
    assert runs == ["double", "double", "triple"]
    gr.clear_cache()
    assert gr.invoke({"x": 2, "log": []}) == {"x": 2, "log": [4]}
    assert runs[-1] == "double" and len(runs) == 4


def test_a_graph_streamed_inside_a_node() -> None:
    """A node that streams a graph gets its chunks, as under LangGraph."""
    inner = StateGraph(S)
    inner.add_node("i", lambda s: {"x": s["x"] + 1})
    inner.add_edge(START, "i")

    def outer(sub: Any) -> StateGraph:
        def node(s: S, config) -> dict[str, Any]:  # type: ignore[no-untyped-def]
            chunks = list(sub.stream(s, config, stream_mode="values"))
            return {"x": chunks[-1]["x"], "log": [len(chunks)]}

        b = StateGraph(S)
        b.add_node("o", node)
        b.add_edge(START, "o")
        return b

    expected = outer(inner.compile()).compile().invoke({"x": 1, "log": []})
    bridged = from_langgraph(outer(from_langgraph(inner.compile())).compile())
    assert bridged.invoke({"x": 1, "log": []}) == expected == {"x": 2, "log": [2]}


def _names(ns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part.split(":")[0] for part in ns)  # task ids differ by design


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_langgraph_graph_a_node_invokes_streams_under_its_namespace(kind: str) -> None:
    """A LangGraph graph that a node invokes itself (deepagents' subagent in a tool, say),
    not bridged: with subgraphs=True its updates, values and custom chunks come under its
    namespace, as into LangGraph's own parent stream."""
    def step(s: S) -> dict[str, Any]:
        get_stream_writer()({"inner": s["x"]})
        return {"x": s["x"] + 1}

    inner_b = StateGraph(S)
    inner_b.add_node("i", step)
    inner_b.add_edge(START, "i")
    inner = inner_b.compile()  # LangGraph's own, in both graphs below

    def node(s: S) -> dict[str, Any]:
        get_stream_writer()({"outer": s["x"]})
        return {"x": inner.invoke({"x": s["x"]})["x"]}

    async def anode(s: S) -> dict[str, Any]:
        get_stream_writer()({"outer": s["x"]})
        return {"x": (await inner.ainvoke({"x": s["x"]}))["x"]}

    b = StateGraph(S)
    b.add_node("o", node if kind == "sync" else anode)
    b.add_edge(START, "o")
    modes = ["updates", "values", "custom"]

    async def chunks(graph: Any, subgraphs: bool) -> list[Any]:
        if kind == "sync":
            return list(graph.stream({"x": 1}, stream_mode=modes, subgraphs=subgraphs))
        return [c async for c in graph.astream({"x": 1}, stream_mode=modes,
                                               subgraphs=subgraphs)]

    expected, bridged = [[(_names(ns), mode, payload)
                          for ns, mode, payload in await chunks(graph, True)]
                         for graph in (b.compile(), from_langgraph(b.compile()))]
    assert (("o",), "custom", {"inner": 1}) in expected
    assert (("o",), "updates", {"i": {"x": 2}}) in expected
    assert bridged == expected
    # Without subgraphs=True, none of them (LangGraph streams the root only).
    assert (await chunks(from_langgraph(b.compile()), False)
            == await chunks(b.compile(), False))


async def test_an_async_savers_threads_under_the_async_api() -> None:
    # LangGraph's async savers are bound to the event loop: a synchronous call made on it
    # is refused (InvalidStateError), so every async entry point reaches it off the loop.
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    def ask(s: S) -> dict[str, Any]:
        return {"log": [f"asked:{interrupt('ok?')}"]}

    b = StateGraph(S)
    b.add_node("ask", ask)
    b.add_edge(START, "ask")
    async with AsyncSqliteSaver.from_conn_string(":memory:") as saver:
        graph = from_langgraph(b.compile(checkpointer=saver))
        cfg = {"configurable": {"thread_id": "t"}}
        [asked] = (await graph.ainvoke({"log": []}, cfg))["__interrupt__"]
        assert [i.id for i in (await graph.aget_state(cfg)).interrupts] == [asked.id]
        chunks = [c async for c in graph.astream(Command(resume="yes"), cfg)]
        assert chunks == [{"ask": {"log": ["asked:yes"]}}]
        await graph.aupdate_state(cfg, {"log": ["noted"]})
        history = [s async for s in graph.aget_state_history(cfg)]
        assert history[0].values == {"log": ["asked:yes", "noted"]}
        # The saver holds the thread, as LangGraph's own graph reads it.
        saved = [c async for c in saver.alist(cfg)]
        assert len(saved) == len(history)
        assert (await b.compile(checkpointer=saver).aget_state(cfg)).values == {
            "log": ["asked:yes", "noted"]}
