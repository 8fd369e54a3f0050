"""A compiled graph as a LangChain Runnable, and `version="v2"`, as LangGraph's Pregel.

The Runnable methods come from langchain-core's `Runnable` (graphrun subclasses it when
langchain-core is importable); these tests check they work on a graphrun graph and give
what LangGraph's give. The last test runs graphrun with langchain-core blocked.
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
import subprocess
import sys
import textwrap
from typing import Annotated, Any

import pytest
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from pydantic import BaseModel
from typing_extensions import TypedDict

from graphrun import START, Command, InMemorySaver, StateGraph, interrupt
from graphrun.func import entrypoint
from graphrun.runnable import GraphOutput


class S(TypedDict):
    x: Annotated[list, operator.add]
    y: str


def build(lib: str, state: Any = S, checkpointer: bool = False) -> Any:
    if lib == "langgraph":
        from langgraph.checkpoint.memory import InMemorySaver as LGSaver
        from langgraph.graph import START as LGSTART
        from langgraph.graph import StateGraph as LGStateGraph
        from langgraph.types import interrupt as lg_interrupt
        graph_cls, start, saver, ask = LGStateGraph, LGSTART, LGSaver, lg_interrupt
    else:
        graph_cls, start, saver, ask = StateGraph, START, InMemorySaver, interrupt

    def a(s: Any) -> dict[str, Any]:
        return {"x": ["a"]}

    def b(s: Any) -> dict[str, Any]:
        return {"y": ask("name?") if checkpointer else "b"}

    g = graph_cls(state)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(start, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=saver() if checkpointer else None)


LIBS = ["langgraph", "graphrun"]


def both(fn: Any) -> dict[str, Any]:
    return {lib: fn(build(lib)) for lib in LIBS}


def same(fn: Any) -> Any:
    out = both(fn)
    assert out["graphrun"] == out["langgraph"], out
    return out["graphrun"]


def test_is_a_runnable() -> None:
    graph = build("graphrun")
    assert isinstance(graph, Runnable)
    assert graph.get_name() == "LangGraph"


def test_batch_and_abatch() -> None:
    inputs = [{"x": []}, {"x": ["z"]}]
    assert same(lambda g: g.batch(inputs)) == [{"x": ["a"], "y": "b"}, {"x": ["z", "a"],
                                                                         "y": "b"}]
    same(lambda g: asyncio.run(g.abatch(inputs)))
    same(lambda g: sorted(g.batch_as_completed(inputs), key=lambda t: t[0]))

    async def collect(g: Any) -> list[Any]:
        return sorted([t async for t in g.abatch_as_completed(inputs)], key=lambda t: t[0])

    same(lambda g: asyncio.run(collect(g)))
    # return_exceptions: one bad input fails alone
    out = build("graphrun").batch([{"x": []}, "not a dict"], return_exceptions=True)
    assert out[0] == {"x": ["a"], "y": "b"} and isinstance(out[1], Exception)


def test_composition_and_with_retry() -> None:
    chain_out = same(lambda g: (g | RunnablePassthrough() | RunnableLambda(
        lambda d: d["x"])).invoke({"x": ["c"]}))
    assert chain_out == ["c", "a"]
    same(lambda g: list((RunnableLambda(lambda d: d) | g).stream({"x": []})))
    same(lambda g: g.with_retry(stop_after_attempt=2).invoke({"x": []}))


def test_with_config_is_a_graph_copy() -> None:
    graph = build("graphrun", checkpointer=True)
    bound = graph.with_config(configurable={"thread_id": "bound"}, recursion_limit=10)
    assert type(bound) is type(graph) and bound.config["recursion_limit"] == 10
    out = bound.invoke({"x": []})
    assert [i.value for i in out["__interrupt__"]] == ["name?"]
    assert bound.get_state({}).next == ("b",)  # the bound thread, through the copy
    assert bound.invoke(Command(resume="ann"))["y"] == "ann"
    assert graph.config is None  # the original is unchanged
    with pytest.raises(Exception, match="Recursion limit"):
        build("graphrun").with_config(recursion_limit=1).invoke({"x": []})


def test_schemas_as_langgraph() -> None:
    class T(TypedDict):  # typing_extensions.TypedDict: LangGraph's root model works
        x: Annotated[list, operator.add]
        y: str

    for state in (T,):
        out = {lib: build(lib, state) for lib in LIBS}
        for method in ("get_input_schema", "get_output_schema"):
            schemas = {lib: getattr(g, method)().model_json_schema() for lib, g in out.items()}
            assert schemas["graphrun"] == schemas["langgraph"], method
        assert out["graphrun"].input_schema.__name__ == "LangGraphInput"

    class P(BaseModel):
        x: list = []

    out = {lib: build(lib, P) for lib in LIBS}
    assert out["graphrun"].get_input_schema() is P is out["langgraph"].get_input_schema()
    assert (out["graphrun"].get_output_schema().model_json_schema()
            == out["langgraph"].get_output_schema().model_json_schema())


def test_astream_log_final_output() -> None:
    from langchain_core.tracers.log_stream import RunLog

    async def log(g: Any) -> Any:
        acc: RunLog | None = None
        async for patch in g.astream_log({"x": []}):
            acc = patch if acc is None else acc + patch
        assert acc is not None
        return acc.state["final_output"], acc.state["streamed_output"], sorted(
            acc.state["logs"])

    final, streamed, _ = same(lambda g: asyncio.run(log(g)))
    assert streamed == [{"a": {"x": ["a"]}}, {"b": {"y": "b"}}] and final == streamed[-1]


# -- version="v2" -----------------------------------------------------------------------
def test_stream_v2_as_langgraph() -> None:
    modes = ["values", "updates", "custom", "tasks"]

    def parts(g: Any) -> list[Any]:
        return [{**p, "data": {k: v for k, v in p["data"].items() if k != "id"}}
                if p["type"] == "tasks" else p
                for p in g.stream({"x": []}, stream_mode=modes, version="v2")]

    out = same(parts)
    assert out[0] == {"type": "values", "ns": (), "data": {"x": []}, "interrupts": ()}
    same(lambda g: g.invoke({"x": []}, stream_mode="updates", version="v2"))


def test_invoke_v2_interrupts_and_pydantic_output() -> None:
    config = {"configurable": {"thread_id": "v2"}}
    outs = {}
    for lib in LIBS:
        graph = build(lib, checkpointer=True)
        first = graph.invoke({"x": []}, config, version="v2")
        done = graph.invoke(Command(resume="z") if lib == "graphrun" else _lg_resume("z"),
                            config, version="v2")
        outs[lib] = (first.value, [i.value for i in first.interrupts], done.value,
                     done.interrupts)
    assert outs["graphrun"] == outs["langgraph"]
    assert outs["graphrun"][1] == ["name?"]

    class P(BaseModel):
        x: Annotated[list, operator.add] = []
        y: str = ""

    out = build("graphrun", P).invoke({"x": []}, version="v2")
    assert isinstance(out, GraphOutput) and out.value == P(x=["a"], y="b")

    @dataclasses.dataclass
    class D:
        x: Annotated[list, operator.add] = dataclasses.field(default_factory=list)
        y: str = ""

    parts = list(build("graphrun", D).stream({"x": []}, stream_mode="values", version="v2"))
    assert parts[-1]["data"] == D(x=["a"], y="b")


def _lg_resume(value: Any) -> Any:
    from langgraph.types import Command as LGCommand

    return LGCommand(resume=value)


async def test_entrypoint_is_a_runnable() -> None:
    @entrypoint()
    def double(x: int) -> int:
        return 2 * x

    assert isinstance(double, Runnable)
    assert double.batch([1, 2]) == [2, 4]
    assert await double.abatch([3]) == [6]
    assert (double | RunnableLambda(lambda v: v + 1)).invoke(5) == 11
    assert double.get_input_schema().model_json_schema()["type"] == "integer"
    assert double.invoke(2, version="v2") == GraphOutput(value=4)


def test_without_langchain_core() -> None:
    """langchain-core blocked (a meta path finder refuses it): graphs run, with the plain
    Runnable subset (batch, abatch, with_config, v2), and no callbacks."""
    code = textwrap.dedent('''
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("langchain_core", "langchain", "langgraph",
                                          "langsmith"):
                    raise ImportError(f"blocked {name}")

        sys.meta_path.insert(0, Block())
        import asyncio, operator
        from typing import Annotated, TypedDict
        from graphrun import START, StateGraph
        from graphrun.callbacks import AVAILABLE
        from graphrun.func import entrypoint
        from graphrun.runnable import HAS_LANGCHAIN, GraphOutput

        class S(TypedDict):
            x: Annotated[list, operator.add]

        g = StateGraph(S).add_node("a", lambda s: {"x": ["a"]}).add_edge(START, "a")
        graph = g.compile()
        assert not HAS_LANGCHAIN and not AVAILABLE
        assert graph.invoke({"x": []}) == {"x": ["a"]}
        assert list(graph.stream({"x": []})) == [{"a": {"x": ["a"]}}]
        assert graph.batch([{"x": []}, {"x": ["z"]}]) == [{"x": ["a"]}, {"x": ["z", "a"]}]
        assert asyncio.run(graph.abatch([{"x": []}])) == [{"x": ["a"]}]
        assert graph.invoke({"x": []}, version="v2") == GraphOutput(value={"x": ["a"]})
        assert graph.with_config(run_name="r").invoke({"x": []}, {"callbacks": None}) == {
            "x": ["a"]}
        assert graph.get_input_schema().model_json_schema()["title"] == "LangGraphInput"

        @entrypoint()
        def inc(x: int) -> int:
            return x + 1

        assert inc.batch([1, 2]) == [2, 3]
        # The Temporal side imports too: client, worker, the node activity, the relay.
        import activities.nodes, graphrun.client, graphrun.relay, graphrun.worker
        assert not graphrun.relay.AVAILABLE
        loaded = [m for m in sys.modules if m.split(".")[0] in ("langchain_core", "langsmith")]
        assert not loaded, loaded
        print("ok")
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
