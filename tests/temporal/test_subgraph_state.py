"""On Temporal, a subgraph's own config reads its state and history, as in-process."""

from __future__ import annotations

import uuid
from typing import Any, TypedDict

import pytest

from graphrun import (
    END,
    START,
    Command,
    InMemorySaver,
    InvalidUpdateError,
    StateGraph,
    interrupt,
    registry,
)
from graphrun.client import GraphClient


class S(TypedDict):
    log: str


def _graph() -> Any:
    inner = StateGraph(S)
    inner.add_node("i1", lambda s: {"log": s["log"] + " i1"})
    inner.add_node("i2", lambda s: {"log": s["log"] + " i2"})
    inner.add_edge(START, "i1")
    inner.add_edge("i1", "i2")
    outer = StateGraph(S)
    outer.add_node("o1", lambda s: {"log": s["log"] + " o1"})
    outer.add_node("sub", inner.compile(interrupt_before=["i2"]))
    outer.add_edge(START, "o1")
    outer.add_edge("o1", "sub")
    outer.add_edge("sub", END)
    return outer


def _shape(snap: Any) -> Any:
    cfg = snap.config["configurable"]
    return (snap.values, snap.next, sorted(cfg), sorted(cfg.get("checkpoint_map") or {}) != [],
            sorted(snap.metadata["parents"]))


async def test_subgraph_config_reads_state_and_history_on_both_drivers(
        temporal_client: Any, graph_worker: str) -> None:
    name = f"subcfg-{uuid.uuid4().hex[:8]}"
    registry.register(name, _graph().compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    local = _graph().compile(checkpointer=InMemorySaver())
    seen = []
    for g in (local, remote):
        cfg = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
        await g.ainvoke({"log": "go"}, cfg)
        outer = await g.aget_state(cfg, subgraphs=True)
        sub = outer.tasks[0].state
        assert sub.values == {"log": "go o1 i1"} and sub.next == ("i2",)
        cmap = sub.config["configurable"]["checkpoint_map"]
        assert cmap[""] == outer.config["configurable"]["checkpoint_id"]
        # the task's plain pointer reads the same snapshot
        plain = (await g.aget_state(cfg)).tasks[0].state
        assert (await g.aget_state(plain)).values == sub.values
        history = [s async for s in g.aget_state_history(plain)]
        assert history[0].values == sub.values
        # An update there is a new checkpoint of the subgraph's own; a run from the config
        # it answers goes on from it, and the parent from where the subgraph was.
        forked = await g.aupdate_state(sub.config, {"log": "x"}, as_node="i1")
        assert forked["configurable"]["checkpoint_ns"] == sub.config["configurable"][
            "checkpoint_ns"]
        assert (await g.aget_state(forked)).values == {"log": "x"}
        out = await g.ainvoke(None, forked)
        seen.append((_shape(sub), [h.values for h in history], out))
    assert seen[0] == seen[1]
    assert seen[0][2] == {"log": "x i2"}


async def test_subgraph_config_of_unknown_namespace_is_refused(
        temporal_client: Any, graph_worker: str) -> None:
    name = f"subcfg-{uuid.uuid4().hex[:8]}"
    registry.register(name, _graph().compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    local = _graph().compile(checkpointer=InMemorySaver())
    for g in (local, remote):
        cfg = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
        await g.ainvoke({"log": "go"}, cfg)
        wrong = {"configurable": {**cfg["configurable"], "checkpoint_ns": "o1:abc"}}
        with pytest.raises(InvalidUpdateError, match="no subgraph at checkpoint_ns"):
            await g.aupdate_state(wrong, {"log": "x"})


async def test_a_finished_subgraph_keeps_its_history_and_is_not_run_again(
        temporal_client: Any, graph_worker: str) -> None:
    """A node calls a subgraph, then asks a question. On resume the node runs again and
    reads the finished subgraph back (its node does not run twice); afterwards the
    subgraph's history is readable from the parent's history entry, on both drivers."""
    ran: list[str] = []

    def build() -> Any:
        inner = (StateGraph(S).add_node("i1", lambda s: (ran.append("i1"),
                                                          {"log": s["log"] + " i1"})[1])
                 .add_edge(START, "i1").compile())

        def node(state: S) -> dict:
            out = inner.invoke(state)
            return {"log": out["log"] + " " + interrupt("ok?")}

        return StateGraph(S).add_node("n", node).add_edge(START, "n")

    name = f"subhist-{uuid.uuid4().hex[:8]}"
    registry.register(name, build().compile(name=name))
    remote = GraphClient(temporal_client, task_queue=graph_worker).graph(name)
    local = build().compile(checkpointer=InMemorySaver())
    seen = []
    for g in (local, remote):
        ran.clear()
        cfg = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
        await g.ainvoke({"log": "go"}, cfg)
        out = await g.ainvoke(Command(resume="yes"), cfg)
        history = [s async for s in g.aget_state_history(cfg)]
        entry = next(s for s in history if s.next == ("n",))
        sub = [s.values async for s in g.aget_state_history(entry.tasks[0].state)]
        seen.append((out, list(ran), sub))
    assert seen[0] == seen[1]
    assert seen[0] == ({"log": "go i1 yes"}, ["i1"], [{"log": "go i1"}, {"log": "go"}, {}])
