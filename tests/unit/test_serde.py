"""Typed JSON: decoding builds only declared classes; values keep their types and values."""

from __future__ import annotations

import enum
import math
import operator
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, TypedDict

import pytest
from pydantic import BaseModel

from graphrun import START, StateGraph
from graphrun.declared import DeclaredTypes, reachable
from graphrun.errors import InputLimitError, UndeclaredTypeError
from graphrun.serde import TAG, InputLimits, depth_of, dumps, loads, thread_from_json

TAGS = ("enum", "model", "dataclass", "namedtuple")
TARGETS = ("os:system", "subprocess:call", "subprocess:Popen", "subprocess:run",
           "subprocess:check_output", "builtins:eval", "builtins:exec",
           "tests.unit.test_serde:Undeclared")


class Undeclared(BaseModel):
    x: int = 0


def attack(tag: str, target: str, marker: Path) -> dict[str, Any]:
    """A tagged value naming `target`, with arguments that would create `marker`."""
    command = f"touch {marker}"
    arg: Any = {"enum": command, "model": command,
                "dataclass": {"args": command, "shell": True},
                "namedtuple": [command]}[tag]
    if target.startswith("builtins:"):
        arg = {"enum": f"__import__('os').system('{command}')",
               "model": f"__import__('os').system('{command}')",
               "dataclass": {"source": f"__import__('os').system('{command}')"},
               "namedtuple": [f"__import__('os').system('{command}')"]}[tag]
    return {TAG: tag, "cls": target, "v": arg}


def all_attacks(marker: Path) -> list[dict[str, Any]]:
    return [attack(tag, target, marker) for tag in TAGS for target in TARGETS]


@pytest.mark.parametrize("tag", TAGS)
@pytest.mark.parametrize("target", TARGETS)
def test_a_tag_naming_any_undeclared_class_is_refused(tag: str, target: str,
                                                      tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    for payload in (attack(tag, target, marker), {"deep": [attack(tag, target, marker)]},
                    {TAG: "command", "graph": None, "update": None, "goto": [],
                     "resume": attack(tag, target, marker)}):
        with pytest.raises(UndeclaredTypeError, match="compile\\(types=") as err:
            loads(payload, DeclaredTypes([Undeclared.__base__]))  # BaseModel is not enough
        assert err.value.path == target
    assert not marker.exists()


def test_decoding_never_imports_the_module_data_names() -> None:
    assert "this" not in sys.modules  # importing it prints the Zen of Python
    with pytest.raises(UndeclaredTypeError):
        loads({TAG: "model", "cls": "this:s", "v": {}})
    assert "this" not in sys.modules


def test_a_declared_class_of_the_wrong_kind_is_refused() -> None:
    types = DeclaredTypes([Color])
    with pytest.raises(UndeclaredTypeError):  # an enum is not a dataclass
        loads({TAG: "dataclass", "cls": "tests.unit.test_serde:Color", "v": {}}, types)


def test_a_dict_that_looks_like_a_tag_stays_a_dict(tmp_path: Path) -> None:
    for payload in all_attacks(tmp_path / "pwned"):
        assert loads(dumps(payload)) == payload
        assert loads(dumps({"answer": payload})) == {"answer": payload}


# -- declared types ---------------------------------------------------------------
class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(enum.Enum):
    S = 1


class Point(NamedTuple):
    x: int
    y: int


@dataclass
class Receipt:
    number: int
    issued: datetime
    point: Point


class Line(BaseModel):
    sku: str
    color: Color
    receipt: Receipt | None = None


class Order(BaseModel):
    lines: list[Line]
    size: Literal[Size.S] = Size.S


class Extra(BaseModel):
    note: str


class Inner(TypedDict):
    order: Order


class State(TypedDict):
    inner: Inner
    tags: Annotated[list[str], operator.add]
    anything: Any


def test_types_reachable_from_the_state_schema() -> None:
    assert set(reachable(State)) == {Order, Line, Color, Receipt, Point, Size}


class NodeInput(TypedDict):
    extra: Extra


def node(state: NodeInput) -> dict:
    return {}


def test_a_graph_declares_its_schemas_node_inputs_and_registered_types() -> None:
    graph = (StateGraph(State).add_node("n", node).add_edge(START, "n")
             .compile(types=[Point]))
    assert {Order, Extra, Point} <= set(graph.spec.types)
    with pytest.raises(Exception, match="takes classes"):
        StateGraph(State).add_node("n", node).add_edge(START, "n").compile(types=["os:system"])


def test_declared_values_round_trip() -> None:
    types = DeclaredTypes(reachable(State))
    order = Order(lines=[Line(sku="gpu", color=Color.BLUE, receipt=Receipt(
        7, datetime(2026, 1, 2, tzinfo=UTC), Point(1, 2)))])
    value = {"inner": {"order": order}, "colors": {Color.RED}, "point": Point(3, 4),
             "pair": (1, 2), 3: "int key"}
    assert loads(dumps(value), types) == value


def test_an_undeclared_class_is_refused_where_it_is_written() -> None:
    with pytest.raises(UndeclaredTypeError, match="store"):
        dumps({"x": Extra(note="n")}, DeclaredTypes(reachable(State)))


def test_langchain_messages_are_declared_by_default() -> None:
    messages = pytest.importorskip("langchain_core.messages")
    value = [messages.HumanMessage(content="hi"), messages.AIMessage(content="yo")]
    assert loads(dumps(value)) == value


# -- values are not changed -------------------------------------------------------
def test_nan_and_infinities_come_back_as_themselves() -> None:
    class M(BaseModel):
        x: float
        d: dict[str, Any]

    data = dumps({"nan": math.nan, "inf": math.inf, "-inf": -math.inf,
                  "m": M(x=math.nan, d={"y": math.inf})})
    assert "NaN" not in str(data)  # plain JSON, readable by any language
    out = loads(data, DeclaredTypes([M]))
    assert math.isnan(out["nan"]) and out["inf"] == math.inf and out["-inf"] == -math.inf
    assert math.isnan(out["m"].x) and out["m"].d == {"y": math.inf}


# -- malformed and oversized data ---------------------------------------------------
@pytest.mark.parametrize("payload", [
    {TAG: "dict", "items": 5}, {TAG: "float", "v": "1e999"}, {TAG: "nope"},
    {TAG: "tuple"}, {TAG: "datetime", "v": "yesterday"},
])
def test_malformed_data_is_a_value_error(payload: Any) -> None:
    with pytest.raises(ValueError):
        loads(payload)


def test_very_deep_data_is_a_value_error_not_a_crash() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper"):
        loads(deep)
    assert depth_of(deep) == 5001


def test_a_malformed_thread_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="malformed"):
        thread_from_json({"thread_id": "t", "seq": 0, "checkpoints": [{"nope": 1}]})


def test_input_limits_say_what_is_too_big_and_what_to_do() -> None:
    limits = InputLimits(max_bytes=100, max_depth=3)
    limits.check({"a": [1, 2]}, "the input")
    with pytest.raises(InputLimitError, match="nested 4 levels deep; the limit is 3"):
        limits.check({"a": [[[1]]]}, "the input")
    with pytest.raises(InputLimitError, match="bytes as JSON; the limit is 100"):
        limits.check("x" * 200, "the resume value")


def test_graphrun_classes_stored_under_their_old_module_still_decode() -> None:
    """Task, Thread and Checkpoint lived in graphrun.engine: data stored then names them
    `graphrun.engine:...`, and decodes to today's classes; other paths stay refused."""
    from graphrun.checkpoint import Task

    task = Task(id="t1", name="n", path=("__pregel_pull", "n"), triggers=("a",),
                input={"x": 1}, ns="n:t1", step=2)
    stored = dumps(task)
    assert stored["cls"] == "graphrun.checkpoint:Task"
    old = {**stored, "cls": "graphrun.engine:Task"}
    assert loads(old) == task
    with pytest.raises(UndeclaredTypeError):
        loads({**stored, "cls": "graphrun.engine:Run"})
