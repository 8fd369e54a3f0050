"""A thread as typed JSON keeps each checkpoint's changes only, and reads back whole."""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

from graphrun import END, START, Command, InMemorySaver, Send, StateGraph, interrupt, serde


class S(TypedDict, total=False):
    log: Annotated[list[str], operator.add]
    big: str
    n: int


def _roundtrip(app: Any, tid: str) -> None:
    thread = app.checkpointer.thread(tid)
    data = json.loads(json.dumps(serde.thread_to_json(thread)))  # as history holds it
    back = serde.thread_from_json(data, app.spec.types)
    assert back == thread


def test_threads_of_many_shapes_read_back_equal() -> None:
    b = StateGraph(S)
    b.add_node("a", lambda s: {"log": ["a"], "n": s.get("n", 0) + 1})
    b.add_node("ask", lambda s: {"log": [f"ask:{interrupt('ok?')}"]})
    b.add_node("fan", lambda s: {"log": [f"fan:{s['n']}"]})
    b.add_node("join", lambda s: {"log": ["join"]})
    b.add_edge(START, "a")
    b.add_conditional_edges("a", lambda s: [Send("fan", {"n": i}) for i in range(3)] + ["ask"])
    b.add_edge(["ask"], "join")
    b.add_edge("fan", "join")
    b.add_edge("join", END)
    app = b.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    app.invoke({"log": [], "big": "x"}, cfg)
    _roundtrip(app, "t")  # paused, with pending writes
    app.invoke(Command(resume="yes"), cfg)
    past = next(s for s in app.get_state_history(cfg) if s.next == ("a",))
    app.update_state(past.config, {"log": ["forked"]}, as_node="a")  # a fork off an old one
    app.update_state(cfg, None, as_node="__copy__")
    app.invoke({"log": ["again"]}, cfg)
    _roundtrip(app, "t")


def test_a_long_thread_over_a_big_state_carries_its_changes_not_copies() -> None:
    b = StateGraph(S)
    b.add_node("step", lambda s: {"n": s["n"] + 1})
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: "step" if s["n"] < 100 else END)
    app = b.compile(checkpointer=InMemorySaver())
    big = "x" * 100_000
    app.invoke({"big": big, "n": 0}, {"configurable": {"thread_id": "long"},
                                      "recursion_limit": 200})
    thread = app.checkpointer.thread("long")
    assert len(thread.checkpoints) > 100
    size = serde.size_of(serde.thread_to_json(thread))
    # the 100 KB state once, plus ~100 small steps (full copies would be 10 MB)
    assert 100_000 < size < 250_000
    _roundtrip(app, "long")
