"""StateGraph: compile-time errors with helpful messages, and schema -> channel types."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

import pydantic
import pytest
from langgraph.channels.ephemeral_value import EphemeralValue as LGEphemeral
from langgraph.channels.untracked_value import UntrackedValue as LGUntracked

from graphrun import END, START, GraphValidationError, InMemorySaver, StateGraph, UntrackedValue
from graphrun.channels import (
    BinaryOperatorAggregate,
    EphemeralValue,
    LastValue,
    NamedBarrierValue,
    Topic,
)
from graphrun.errors import GraphrunError
from graphrun.types import TASKS


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def a(state: Any) -> dict[str, Any]:
    return {"log": ["a"]}


def b(state: Any) -> dict[str, Any]:
    return {"log": ["b"]}


def _two_nodes() -> StateGraph:
    return StateGraph(State).add_node("a", a).add_node("b", b)


# -- compile errors ------------------------------------------------------------------
BAD_GRAPHS: list[tuple[str, Callable[[], Any], list[str]]] = [
    ("no-entry-point",
     lambda: _two_nodes().add_edge("a", "b").compile(),
     ["no entry point", "add_edge(START"]),
    ("edge-to-unknown-node",
     lambda: _two_nodes().add_edge(START, "a").add_edge("a", "c").compile(),
     ["unknown node 'c'", "Known nodes", "'a'", "'b'"]),
    ("edge-from-unknown-node",
     lambda: _two_nodes().add_edge(START, "a").add_edge("zzz", "b").compile(),
     ["unknown node 'zzz'"]),
    ("edge-from-END",
     lambda: _two_nodes().add_edge(START, "a").add_edge(END, "a").compile(),
     ["END cannot be the start of an edge"]),
    ("join-from-END",
     lambda: _two_nodes().add_edge(START, "a").add_edge(["a", END], "b").compile(),
     ["END cannot be the start"]),
    ("join-unknown-node",
     lambda: _two_nodes().add_edge(START, "a").add_edge(["a", "q"], "b").compile(),
     ["unknown node 'q'"]),
    ("edge-to-START",
     lambda: _two_nodes().add_edge(START, "a").add_edge("a", START).compile(),
     ["START cannot be the end of an edge"]),
    ("duplicate-node",
     lambda: _two_nodes().add_node("a", b),
     ["node 'a' is already present"]),
    ("reserved-START",
     lambda: StateGraph(State).add_node(START, a),
     ["reserved"]),
    ("reserved-END",
     lambda: StateGraph(State).add_node(END, a),
     ["reserved"]),
    ("reserved-char-pipe",
     lambda: StateGraph(State).add_node("a|b", a),
     ["reserved", "'|'"]),
    ("reserved-char-colon",
     lambda: StateGraph(State).add_node("a:b", a),
     ["reserved", "':'"]),
    ("node-without-function",
     lambda: StateGraph(State).add_node("a"),
     ["node 'a' has no function"]),
    ("not-a-node",
     lambda: StateGraph(State).add_node("a", "a"),  # type: ignore[arg-type]
     ["node 'a'", "is not a function, a graph or a Runnable"]),
    ("interrupt-before-unknown",
     lambda: _two_nodes().add_edge(START, "a").compile(interrupt_before=["nope"]),
     ["interrupt_before", "unknown node 'nope'", "Known nodes"]),
    ("interrupt-after-unknown",
     lambda: _two_nodes().add_edge(START, "a").compile(interrupt_after="nope"),
     ["unknown node 'nope'"]),
    ("path-map-to-unknown",
     lambda: _two_nodes().add_edge(START, "a")
     .add_conditional_edges("a", lambda s: "x", {"x": "b", "y": "ghost"}).compile(),
     ["conditional edge from 'a'", "unknown node 'ghost'"]),
    ("path-map-list-to-unknown",
     lambda: _two_nodes().add_edge(START, "a")
     .add_conditional_edges("a", lambda s: "b", ["b", "ghost"]).compile(),
     ["unknown node 'ghost'"]),
    ("conditional-from-unknown",
     lambda: _two_nodes().add_edge(START, "a")
     .add_conditional_edges("ghost", lambda s: "b").compile(),
     ["conditional edge from unknown node 'ghost'"]),
    ("conditional-from-END",
     lambda: _two_nodes().add_conditional_edges(END, lambda s: "a"),
     ["END cannot have outgoing edges"]),
    ("empty-sequence",
     lambda: StateGraph(State).add_sequence([]),
     ["at least one node"]),
    ("unreadable-schema",
     lambda: StateGraph(42),
     ["state schema", "TypedDict"]),
]


@pytest.mark.parametrize("build, fragments", [(b_, f) for _, b_, f in BAD_GRAPHS],
                         ids=[i for i, _, _ in BAD_GRAPHS])
def test_bad_graph_is_a_helpful_validation_error(build: Callable[[], Any],
                                                 fragments: list[str]) -> None:
    with pytest.raises(GraphValidationError) as info:
        build()
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, GraphrunError)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_join_edge_to_START_is_rejected() -> None:
    with pytest.raises(GraphValidationError, match="START"):
        _two_nodes().add_edge(START, "a").add_edge(START, "b").add_edge(["a", "b"], START)


def test_valid_graph_compiles_with_wildcard_interrupt() -> None:
    g = _two_nodes().add_edge(START, "a").compile(interrupt_before="*")
    assert g.spec.interrupt_before == ("*",)


def test_entry_point_via_conditional_entry_or_join_counts() -> None:
    _two_nodes().set_conditional_entry_point(lambda s: "a", ["a", "b"]).compile()
    _two_nodes().add_edge(["__start__"], "a").compile()
    _two_nodes().set_entry_point("a").set_finish_point("b").compile()


# -- building ------------------------------------------------------------------------
def test_add_node_with_a_function_names_it_after_the_function() -> None:
    builder = StateGraph(State).add_node(a)
    assert list(builder.nodes) == ["a"]
    assert builder.nodes["a"].fn is a
    assert builder.nodes["a"].injects == ()


def test_add_node_detects_injected_parameters_by_name_and_async() -> None:
    def with_config(state: Any, config: Any, *, runtime: Any, writer: Any) -> None: ...

    def two_args(state: Any, other: Any = None) -> None: ...

    async def anode(state: Any) -> None: ...

    builder = StateGraph(State).add_node(with_config).add_node(anode).add_node(two_args)
    assert builder.nodes["with_config"].injects == ("config", "runtime", "writer")
    assert builder.nodes["two_args"].injects == ()  # as LangGraph: by name only
    assert builder.nodes["anode"].is_async
    assert not builder.nodes["with_config"].is_async


def test_a_callable_object_is_named_after_its_class_as_in_langgraph() -> None:
    class Approve:
        def __call__(self, state: Any) -> dict:
            return {}

    assert "Approve" in StateGraph(State).add_node(Approve()).nodes


def test_a_join_into_end_compiles_and_ends() -> None:
    graph = _two_nodes().add_edge(START, "a").add_edge(START, "b").add_edge(["a", "b"], END)
    graph.compile().invoke({})  # runs a and b, then ends


def test_add_sequence_adds_nodes_and_chains_them() -> None:
    def c(state: Any) -> None: ...

    builder = StateGraph(State).add_sequence([a, ("middle", b), c])
    assert list(builder.nodes) == ["a", "middle", "c"]
    assert builder.edges == [("a", "middle"), ("middle", "c")]
    graph = builder.add_edge(START, "a").compile()
    assert graph.invoke({"x": 0, "log": []}) == {"x": 0, "log": ["a", "b"]}


def test_compiled_topology() -> None:
    g = (_two_nodes().add_edge(START, "a").add_edge(START, "b")
         .add_edge(["a", "b"], "a").compile(name="g"))
    spec = g.spec
    assert g.name == "g"
    assert list(spec.nodes) == [START, "a", "b"]
    assert spec.edges == {START: ("a", "b")}
    assert isinstance(spec.channels[START], EphemeralValue)
    assert isinstance(spec.channels[TASKS], Topic)
    assert isinstance(spec.channels["branch:to:a"], EphemeralValue)
    assert isinstance(spec.channels["join:a+b:a"], NamedBarrierValue)
    assert spec.triggers["a"] == ("branch:to:a", "join:a+b:a")
    assert spec.joins == {"a": ("join:a+b:a",), "b": ("join:a+b:a",)}
    assert spec.strict_resume is True


# -- state schemas ---------------------------------------------------------------------
def keep_right(old: Any, new: Any) -> Any:
    return new


class TDState(TypedDict):
    plain: int
    items: Annotated[list[str], operator.add]
    doc_only: Annotated[str, "just a note"]
    custom: Annotated[dict, keep_right]


class PydState(pydantic.BaseModel):
    plain: int = 0
    items: Annotated[list[str], operator.add] = []
    doc_only: Annotated[str, pydantic.Field(description="x")] = ""
    custom: Annotated[dict, keep_right] = {}


@dataclass
class DCState:
    plain: int = 0
    items: Annotated[list[str], operator.add] = field(default_factory=list)
    doc_only: Annotated[str, "just a note"] = ""
    custom: Annotated[dict, keep_right] = field(default_factory=dict)


@pytest.mark.parametrize("schema", [TDState, PydState, DCState],
                         ids=["typeddict", "pydantic", "dataclass"])
def test_schema_gives_the_right_channel_types(schema: Any) -> None:
    builder = StateGraph(schema)
    assert list(builder.fields) == ["plain", "items", "doc_only", "custom"]
    spec = builder.add_node("n", lambda s: None).add_edge(START, "n").compile().spec
    ch = spec.channels
    assert type(ch["plain"]) is LastValue
    assert type(ch["doc_only"]) is LastValue
    assert type(ch["items"]) is BinaryOperatorAggregate
    assert ch["items"].reducer is operator.add
    assert ch["items"].restore().get() == []  # list[str] -> list() as the zero value
    assert type(ch["custom"]) is BinaryOperatorAggregate
    assert ch["custom"].reducer is keep_right
    assert spec.state_keys == ("plain", "items", "doc_only", "custom")


@pytest.mark.parametrize("schema", [TDState, PydState, DCState],
                         ids=["typeddict", "pydantic", "dataclass"])
def test_schema_state_reaches_nodes_as_its_own_type(schema: Any) -> None:
    seen: list[Any] = []

    def n(state: Any) -> dict[str, Any]:
        seen.append(state)
        return {"items": ["n"], "plain": 1}

    graph = StateGraph(schema).add_node(n).add_edge(START, "n").compile()
    out = graph.invoke({"plain": 0, "items": ["in"], "doc_only": "", "custom": {}})
    assert out["items"] == ["in", "n"]
    assert out["plain"] == 1
    expected = dict if schema is TDState else schema
    assert isinstance(seen[0], expected)


def test_input_and_output_schemas_restrict_keys() -> None:
    class In(TypedDict):
        x: int

    class Out(TypedDict):
        log: Annotated[list, operator.add]

    builder = StateGraph(State, input_schema=In, output_schema=Out)
    assert builder.input_keys == ["x"]
    assert builder.output_keys == ["log"]
    graph = builder.add_node(a).add_edge(START, "a").compile()
    assert graph.invoke({"x": 1, "log": ["ignored"]}) == {"log": ["a"]}


# -- channel classes and Runnables as LangGraph takes them -------------------------------
class WithLGEphemeral(TypedDict):
    x: Annotated[int, LGEphemeral]


class WithUntracked(TypedDict):
    n: int
    session: Annotated[str, UntrackedValue]


class WithLGUntracked(TypedDict):
    n: int
    session: Annotated[str, LGUntracked]


def test_langgraph_channel_classes_other_than_untracked_value_are_refused_by_name() -> None:
    with pytest.raises(GraphValidationError, match="channel class EphemeralValue"):
        StateGraph(WithLGEphemeral)


def test_untracked_value_is_shared_in_a_run_and_kept_in_no_checkpoint() -> None:
    for schema in (WithUntracked, WithLGUntracked):
        g = StateGraph(schema)
        g.add_node("open", lambda s: {"session": "s-1"})
        g.add_node("use", lambda s: {"n": len(s["session"])})
        g.add_edge(START, "open")
        g.add_edge("open", "use")
        app = g.compile(checkpointer=InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        assert app.invoke({"n": 0}, cfg) == {"n": 3, "session": "s-1"}
        assert app.get_state(cfg).values == {"n": 3}


def test_a_langchain_runnable_is_a_node_called_with_state_and_config() -> None:
    from langchain_core.runnables import RunnableLambda

    seen: list[Any] = []

    def body(state: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
        seen.append(config["configurable"]["thread_id"])
        return {"x": state["x"] + 1}

    g = StateGraph(State)
    g.add_node("inc", RunnableLambda(body) | RunnableLambda(lambda d: d))
    g.add_edge(START, "inc")
    app = g.compile(checkpointer=InMemorySaver())
    assert app.invoke({"x": 1}, {"configurable": {"thread_id": "r"}})["x"] == 2
    assert seen == ["r"]


def test_an_object_that_is_neither_function_graph_nor_runnable_is_refused() -> None:
    g = StateGraph(State)
    with pytest.raises(GraphValidationError, match="is not a function"):
        g.add_node("n", 42)  # type: ignore[arg-type]
