"""`get_graph()`: graphrun draws a graph as LangGraph draws the same graph.

Each shape is built twice, with LangGraph's `StateGraph` and with graphrun's, and the
drawings must be identical: `draw_mermaid()` text (with its styles and node metadata)
and `to_json()` (a node's `data.id` aside, which names each library's own node class).
Then graphs made at random (fixed seeds), graphs converted with `from_langgraph`, the
Functional API, and what a drawing is for: `draw_ascii()`, `draw_mermaid_png()`,
`RemoteGraph.get_graph()` and the error without langchain-core.
"""

from __future__ import annotations

import base64
import http.server
import operator
import random
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

import pytest
from typing_extensions import TypedDict

import graphrun
import graphrun.func
from graphrun import types as gr_types
from graphrun.errors import GraphNotFoundError

lg_graph = pytest.importorskip("langgraph.graph")
lg_types = pytest.importorskip("langgraph.types")
lg_func = pytest.importorskip("langgraph.func")

LIBS = {"langgraph": (lg_graph, lg_types), "graphrun": (graphrun, gr_types)}


class State(TypedDict):
    log: Annotated[list, operator.add]
    market: str


def _json(graph: Any) -> dict[str, Any]:
    """`to_json()` with each node's class (`data.id`) left out."""
    out = graph.to_json()
    for node in out["nodes"]:
        if isinstance(node.get("data"), dict):
            node["data"].pop("id", None)
    return out


def assert_same_drawing(build: Callable[[Any, Any], Any], *, xray: Any = False) -> str:
    """Build with each library (`build(graph_module, types_module)`), compare drawings."""
    ours = build(graphrun, gr_types).get_graph(xray=xray)
    theirs = build(lg_graph, lg_types).get_graph(xray=xray)
    assert ours.draw_mermaid() == theirs.draw_mermaid()
    assert ours.draw_mermaid(with_styles=False) == theirs.draw_mermaid(with_styles=False)
    assert _json(ours) == _json(theirs)
    return str(ours.draw_mermaid(with_styles=False))


def node(name: str = "node", returns: Any = None) -> Callable[[Any], Any]:
    def fn(state: Any) -> Any:
        return {}
    fn.__name__ = name
    if returns is not None:
        fn.__annotations__ = {"return": returns}
    return fn


# -- shapes ------------------------------------------------------------------------
def test_linear() -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_sequence([("a", node()), ("b", node()), ("c", node())])
        b.add_edge(m.START, "a")
        b.add_edge("c", m.END)
        return b.compile()

    assert assert_same_drawing(build) == (
        "graph TD;\n\t__start__ --> a;\n\ta --> b;\n\tb --> c;\n\tc --> __end__;\n")


def test_conditional_edges_with_labelled_path_map() -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_node("agent", node())
        b.add_node("tools", node())
        b.add_edge(m.START, "agent")
        b.add_conditional_edges("agent", lambda s: "continue",
                                {"continue": "tools", "end": m.END})
        b.add_edge("tools", "agent")
        return b.compile()

    assert assert_same_drawing(build) == (
        "graph TD;\n\t__start__ --> agent;\n"
        "\tagent -. &nbsp;end&nbsp; .-> __end__;\n"
        "\tagent -. &nbsp;continue&nbsp; .-> tools;\n"
        "\ttools --> agent;\n")


def test_conditional_edges_with_list_and_literal_return() -> None:
    def route(state: Any) -> Literal["b", "c", "__end__"]:
        return "b"

    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        for n in "abcd":
            b.add_node(n, node())
        b.add_edge(m.START, "a")
        b.add_conditional_edges("a", route)  # targets from the annotation
        b.add_conditional_edges("b", lambda s: "d", ["c", "d"])
        return b.compile()

    drawn = assert_same_drawing(build)
    assert "\ta -.-> __end__;\n" in drawn and "\tb -.-> d;\n" in drawn


def test_routing_function_that_declares_nothing_draws_no_edges() -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        for n in "abc":
            b.add_node(n, node())
        b.add_edge(m.START, "a")
        b.add_conditional_edges("a", lambda s: "b")
        b.add_edge("b", m.END)
        return b.compile()

    assert assert_same_drawing(build) == "graph TD;\n\t__start__ --> a;\n\ta --> __end__;\n"


def test_send_fan_out() -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_node("plan", node())
        b.add_node("work", node())
        b.add_node("other", node())
        b.add_node("reduce", node())
        b.add_edge(m.START, "plan")
        b.add_conditional_edges("plan", lambda s: [t.Send("work", {}), t.Send("work", {})],
                                ["work"])
        b.add_conditional_edges("work", lambda s: [t.Send("other", {})])  # declares nothing
        b.add_edge("work", "reduce")
        return b.compile()

    assert assert_same_drawing(build) == (
        "graph TD;\n\t__start__ --> plan;\n\tplan -.-> work;\n\twork --> reduce;\n"
        "\treduce --> __end__;\n")


def test_send_from_command_annotation() -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_node("agent", node("agent", t.Command[Literal["tool", "__end__"]]))
        b.add_node("tool", node())
        b.add_edge(m.START, "agent")
        b.add_edge("tool", "agent")
        return b.compile()

    assert assert_same_drawing(build) == (
        "graph TD;\n\t__start__ --> agent;\n\tagent -.-> __end__;\n\tagent -.-> tool;\n"
        "\ttool --> agent;\n")


@pytest.mark.parametrize("defer", [False, True])
def test_waiting_edge(defer: bool) -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        for n in ("fetch", "left", "right"):
            b.add_node(n, node())
        b.add_node("join", node(), defer=defer)
        b.add_edge(m.START, "fetch")
        b.add_edge("fetch", "left")
        b.add_edge("fetch", "right")
        b.add_edge(["left", "right"], "join")
        b.add_edge("join", m.END)
        return b.compile()

    assert "\tleft --> join;\n\tright --> join;\n" in assert_same_drawing(build)


def _subgraph(m: Any, **compile_args: Any) -> Any:
    inner = m.StateGraph(State)
    inner.add_node("slow", node())
    inner.add_node("fast", node())
    inner.add_conditional_edges(m.START, lambda s: "fast", ["slow", "fast"])
    return inner.compile(**compile_args)


@pytest.mark.parametrize("xray", [False, True, 1])
def test_subgraph_node(xray: Any) -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_node("tool_one", node())
        b.add_node("tool_two", _subgraph(m))
        b.add_edge(m.START, "tool_one")
        b.add_edge("tool_one", "tool_two")
        return b.compile()

    drawn = assert_same_drawing(build, xray=xray)
    assert ("subgraph tool_two" in drawn) is bool(xray)


@pytest.mark.parametrize("xray", [True, 1, 2])
def test_nested_subgraphs_and_a_function_calling_one(xray: Any) -> None:
    def build(m: Any, t: Any) -> Any:
        child = _subgraph(m)
        middle = m.StateGraph(State)
        middle.add_node("c_one", node())
        middle.add_node("c_two", child)
        middle.add_edge(m.START, "c_one")
        middle.add_edge("c_one", "c_two")
        middle = middle.compile()

        def calls_child(state: Any) -> Any:
            return child.invoke(state)

        b = m.StateGraph(State)
        b.add_node("p_one", middle)
        b.add_node("p_two", calls_child)
        b.add_edge(m.START, "p_one")
        b.add_conditional_edges("p_one", lambda s: "1", {"0": "p_two", "1": m.END})
        return b.compile()

    assert_same_drawing(build, xray=xray)


def test_subgraph_without_checkpointing_is_not_expanded() -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_node("sub", _subgraph(m, checkpointer=False))
        b.add_edge(m.START, "sub")
        return b.compile()

    assert "subgraph" not in assert_same_drawing(build, xray=True)


def test_metadata_breakpoints_and_loops() -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_node("ask", node(), metadata={"owner": "ops", "sla": 3})
        b.add_node("review", node())
        b.add_node("again", node())
        b.add_edge(m.START, "ask")
        b.add_edge("ask", "review")
        b.add_edge("review", "review")
        b.add_conditional_edges("review", lambda s: "again", ["again", "ask", m.END])
        b.add_edge("again", "ask")
        return b.compile(interrupt_before=["review", "again"], interrupt_after=["review"])

    assert_same_drawing(build)
    meta = {n.id: n.metadata for n in build(graphrun, gr_types).get_graph().nodes.values()}
    assert meta["ask"] == {"owner": "ops", "sla": 3}
    assert meta["review"] == {"__interrupt": "before,after"}
    assert meta["again"] == {"__interrupt": "before"}


def test_one_value_state() -> None:
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(Annotated[list, operator.add])
        b.add_node("one", node("one", t.Command[Literal["two"]]))
        b.add_node("two", node())
        b.add_edge(m.START, "one")
        return b.compile()

    assert_same_drawing(build)


def test_entrypoint() -> None:
    def body(numbers: list[int]) -> int:
        return sum(numbers)

    ours = graphrun.func.entrypoint()(body).get_graph()
    theirs = lg_func.entrypoint()(body).get_graph()
    assert ours.draw_mermaid() == theirs.draw_mermaid()
    assert _json(ours) == _json(theirs)
    assert ours.draw_mermaid(with_styles=False) == (
        "graph TD;\n\t__start__ --> body;\n\tbody -.-> __end__;\n")


# -- at random ---------------------------------------------------------------------------
def random_shape(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    names = [f"n{i}" for i in range(rng.randint(1, 6))]
    targets = [*names, "__end__"]
    shape: dict[str, Any] = {"nodes": [], "edges": [], "branches": [], "joins": [],
                             "before": [], "after": []}
    for name in names:
        sub = random_shape(rng, depth + 1) if depth < 1 and rng.random() < 0.15 else None
        shape["nodes"].append({
            "name": name, "defer": rng.random() < 0.1, "sub": sub,
            "meta": {"k": name} if rng.random() < 0.2 else None,
            "goto": [] if sub or rng.random() > 0.15 else rng.sample(targets, 2)})
    if rng.random() < 0.25:
        shape["branches"].append(("__start__", rng.choice(["list", "dict", "literal"]),
                                  rng.sample(targets, min(2, len(names)))))
    else:
        shape["edges"] += [("__start__", t) for t in rng.sample(names, min(2, len(names)))]
    for name in names:
        r = rng.random()
        if r < 0.4:
            shape["edges"] += [(name, t) for t in rng.sample(targets, rng.randint(1, 2))]
        elif r < 0.75:
            shape["branches"].append((name, rng.choice(["list", "dict", "literal", "none"]),
                                      rng.sample(targets, rng.randint(1, min(3, len(targets))))))
        elif r < 0.85 and len(names) >= 3:
            shape["joins"].append((rng.sample(names, 2), rng.choice(targets)))
        shape["before"] += [name] if rng.random() < 0.1 else []
        shape["after"] += [name] if rng.random() < 0.1 else []
    return shape


def build_shape(m: Any, t: Any, shape: dict[str, Any]) -> Any:
    b = m.StateGraph(State)
    for n in shape["nodes"]:
        action = (build_shape(m, t, n["sub"]) if n["sub"] else
                  node(n["name"], t.Command[Literal[tuple(n["goto"])]] if n["goto"] else None))
        b.add_node(n["name"], action, **({"defer": True} if n["defer"] else {}),
                   **({"metadata": n["meta"]} if n["meta"] else {}))
    for a, z in shape["edges"]:
        b.add_edge(a, z)
    for src, kind, targets in shape["branches"]:
        route = node("route", Literal[tuple(targets)] if kind == "literal" else None)
        path_map = (list(targets) if kind == "list" else
                    {f"go_{x}": x for x in targets} if kind == "dict" else None)
        b.add_conditional_edges(src, route, path_map)
    for starts, end in shape["joins"]:
        b.add_edge(starts, end)
    return b.compile(interrupt_before=shape["before"] or None,
                     interrupt_after=shape["after"] or None)


def drawings(graph: Any, xray: Any) -> Any:
    try:
        drawn = graph.get_graph(xray=xray)
        return drawn.draw_mermaid(), _json(drawn)
    except Exception as exc:  # compared too: both fail alike, or one draws
        return type(exc).__name__


def random_cases(n: int) -> Iterator[tuple[int, dict[str, Any], Any]]:
    for seed in range(n):
        shape = random_shape(random.Random(seed))
        try:
            theirs = build_shape(lg_graph, lg_types, shape)
        except ValueError:  # LangGraph refuses it (e.g. an edge to a node no one reaches)
            continue
        yield seed, shape, theirs


def test_random_graphs_draw_as_langgraph_draws_them() -> None:
    compared = langgraph_sort_errors = 0
    for seed, shape, theirs in random_cases(50):
        ours = build_shape(graphrun, gr_types, shape)
        for xray in (False, True):
            expected, got = drawings(theirs, xray), drawings(ours, xray)
            if expected == "TypeError":
                # LangGraph sorts its edges as tuples and fails when two differ only by a
                # label that is None on one: graphrun sorts None first and draws them.
                langgraph_sort_errors += 1
                assert isinstance(got, tuple), (seed, xray, got)
                continue
            assert got == expected, (seed, xray, shape)
            compared += 1
    assert compared >= 80 and langgraph_sort_errors < compared


def test_graphs_converted_from_langgraph_draw_as_langgraph() -> None:
    compared = 0
    for seed, shape, theirs in random_cases(30):
        ours = graphrun.from_langgraph(theirs)
        for xray in (False, True):
            expected = drawings(theirs, xray)
            if expected != "TypeError":
                assert drawings(ours, xray) == expected, (seed, xray, shape)
                compared += 1
    assert compared >= 40


def test_converted_deferred_subgraph_node() -> None:
    """A LangGraph subgraph node with `defer=True` stays deferred once converted: drawn
    so, and run after the rest."""
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_node("a", lambda s: {"log": ["a"]})
        b.add_node("b", lambda s: {"log": ["b"]})
        b.add_node("c", lambda s: {"log": ["c"]})
        b.add_node("sub", _subgraph(m), defer=True)
        b.add_edge(m.START, "a")
        b.add_edge("a", "sub")
        b.add_edge(m.START, "b")
        b.add_edge("b", "c")
        return b.compile()

    theirs = build(lg_graph, lg_types)
    ours = graphrun.from_langgraph(theirs)
    assert drawings(ours, False) == drawings(theirs, False)
    for graph in (ours, theirs):  # "a" and "b" run at once: either may stream first
        steps = [list(c) for c in graph.stream({"log": [], "market": ""})]
        assert sorted(steps[:2]) == [["a"], ["b"]]
        assert steps[2:] == [["c"], ["sub"]]  # deferred: not beside "c"


def test_error_handler_nodes() -> None:
    """An error handler is a node of its own, drawn unconnected: `__error_handler__<node>`
    before its node, `__default_error_handler__` last."""
    def handler(state: Any, error: Any = None) -> Any:
        return {}

    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.set_node_defaults(error_handler=handler)
        b.add_node("a", node(), error_handler=handler)
        b.add_node("b", node())
        b.add_edge(m.START, "a")
        b.add_edge("a", "b")
        return b.compile()

    assert_same_drawing(build)


# -- what a drawing is for -------------------------------------------------------------
def purchase() -> Any:
    b = graphrun.StateGraph(State)
    b.add_node("ask", node())
    b.add_node("charge", node())
    b.add_edge(graphrun.START, "ask")
    b.add_conditional_edges("ask", lambda s: "yes", {"yes": "charge", "no": graphrun.END})
    return b.compile(name="purchase")


def test_graph_is_langchains_and_names_graphrun_nodes() -> None:
    from langchain_core.runnables.graph import Graph

    from graphrun.drawing import graph_node_class

    drawn = purchase().get_graph()
    assert isinstance(drawn, Graph)
    assert list(drawn.nodes) == ["__start__", "ask", "charge", "__end__"]
    ask = drawn.nodes["ask"].data
    assert isinstance(ask, graph_node_class()) and ask.node.name == "ask"
    assert drawn.to_json()["nodes"][1] == {
        "id": "ask", "type": "runnable",
        "data": {"id": ["graphrun", "drawing", "GraphNode"], "name": "ask"}}
    with pytest.raises(NotImplementedError, match="invoke the graph"):
        ask.invoke({})


async def test_aget_graph() -> None:
    graph = purchase()
    assert (await graph.aget_graph()).draw_mermaid() == graph.get_graph().draw_mermaid()


def test_draw_ascii() -> None:
    pytest.importorskip("grandalf")
    art = purchase().get_graph().draw_ascii()
    for name in ("__start__", "ask", "charge", "__end__"):
        assert f"| {name} |" in art


def test_draw_mermaid_png(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangChain renders the Mermaid text with mermaid.ink's API; a server on loopback
    stands in for it, and gets the graph's text."""
    png = b"\x89PNG\r\n\x1a\n-fake"
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()
            self.wfile.write(png)

        def log_message(self, *args: Any) -> None:
            pass

    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        graph = purchase().get_graph()
        got = graph.draw_mermaid_png(base_url=f"http://127.0.0.1:{server.server_port}")
    finally:
        server.shutdown()
        server.server_close()
    assert got == png
    encoded = asked[0].split("/img/", 1)[1].split("?", 1)[0]
    assert base64.b64decode(encoded).decode() == graph.draw_mermaid()


def test_remote_graph_draws_the_graph_served_here() -> None:
    from graphrun import registry
    from graphrun.client import RemoteGraph

    graph = purchase()
    registry.register("drawing-purchase", graph)
    try:
        remote = RemoteGraph(gc=None, name="drawing-purchase")  # type: ignore[arg-type]
        assert remote.get_graph().draw_mermaid() == graph.get_graph().draw_mermaid()
    finally:
        registry._GRAPHS.pop((None, "drawing-purchase"), None)
    with pytest.raises(GraphNotFoundError, match="not served in this process"):
        RemoteGraph(gc=None, name="drawing-elsewhere").get_graph()  # type: ignore[arg-type]


def test_without_langchain_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core.runnables.graph", None)
    with pytest.raises(ImportError, match=r"pip install 'graphrun\[messages\]'"):
        purchase().get_graph()


def test_edges_langgraph_cannot_sort() -> None:
    """A node that declares a destination twice, once with a label: LangGraph's drawing
    fails sorting its edges (None < str); graphrun draws the edge once."""
    def build(m: Any, t: Any) -> Any:
        b = m.StateGraph(State)
        b.add_node("agent", node("agent", t.Command[Literal["tool"]]))
        b.add_node("tool", node())
        b.add_edge(m.START, "agent")
        b.add_conditional_edges("agent", lambda s: "tool", ["tool"])
        return b.compile()

    with pytest.raises(TypeError, match="'<' not supported"):
        build(lg_graph, lg_types).get_graph()
    assert build(graphrun, gr_types).get_graph().draw_mermaid(with_styles=False) == (
        "graph TD;\n\t__start__ --> agent;\n\tagent -.-> tool;\n\ttool --> __end__;\n")
