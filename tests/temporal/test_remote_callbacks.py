"""LangChain callbacks on Temporal: the caller's handlers hear the nodes' runs, which run
on workers (graphrun.relay), with the tree graphrun (and LangGraph) report in-process.

The graphs and the comparison are tests/unit/test_callbacks.py's: the same graph is run
in-process and through `RemoteGraph`, each with a tracer, and the trees compared (names,
run types, tags, LangGraph's metadata, nesting, inputs, outputs, errors); in-process
they are LangGraph's (that file). So are a `GraphCallbackHandler`'s pause and resume
events. The events travel once, batched per task (graphrun.relay_wire).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler

from graphrun import Command, registry
from graphrun.callbacks import GraphInterruptEvent
from graphrun.client import GraphClient
from graphrun.worker import create_worker
from tests.unit.test_callbacks import (
    METADATA,
    Lifecycle,
    Seen,
    Tracer,
    _plain,
    breakpoints,
    functional,
    graphrun_api,
    retry_and_fail,
    routing_graph,
    tree,
)


def _served(build: Any, temporal_client: Any, task_queue: str) -> tuple[Any, Any, Any]:
    """The graph in-process, the same graph served on Temporal, and its worker."""
    local = build(graphrun_api())
    name = f"cb-{uuid.uuid4().hex[:8]}"
    served = build(graphrun_api())
    registry.register(name, served)
    worker = create_worker(temporal_client, {name: served}, task_queue=task_queue)
    remote = GraphClient(temporal_client, task_queue=task_queue, tracing=None).graph(name)
    return local, remote, worker


def _config(tracer: Any) -> dict[str, Any]:
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}, "tags": ["mine"],
            "metadata": {"m": 1}, "callbacks": [tracer]}


def _trees_without_thread(trees: list[Any]) -> list[Any]:
    """Trees with the thread id taken out of the metadata (each side has its own)."""
    def strip(node: tuple[Any, ...]) -> tuple[Any, ...]:
        kind, name, tags, md, error, inputs, outputs, children = node
        md = tuple((k, v) for k, v in md if k != "thread_id")
        return (kind, name, tags, md, error, inputs, outputs,
                tuple(strip(c) for c in children))

    return [strip(t) for t in trees]


async def _local_trees(graph: Any, inputs: list[Any], how: str) -> list[Any]:
    config = _config(None)
    trees: list[Any] = []
    for inp in inputs:
        tracer = Tracer()
        cfg = {**config, "callbacks": [tracer]}
        try:
            if how == "ainvoke":
                await graph.ainvoke(inp, cfg)
            else:
                async for _ in graph.astream(inp, cfg, stream_mode=["updates", "values"]):
                    pass
        except Exception as exc:
            trees.append(("raised", type(exc).__name__))
        trees += [tree(r) for r in tracer.runs]
    return trees


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
async def test_run_tree_as_in_process(temporal_client: Any, task_queue: str, how: str
                                      ) -> None:
    local, remote, worker = _served(routing_graph, temporal_client, task_queue)
    inputs = [{"x": []}, Command(resume="yes")]
    async with worker:
        expected = await _local_trees(local, inputs, how)
        got = await _local_trees(remote, inputs, how)
    assert _trees_without_thread(got) == _trees_without_thread(expected)
    first = got[0]
    assert first[1] == "LangGraph" and first[2] == ("mine",)
    assert [c[1] for c in first[-1]] == ["__start__", "a", "b", "sub", "fn", "ask"]
    a = first[-1][1]
    assert [c[0] for c in a[-1]] == ["llm", "chain"]  # the chat model, then the route
    assert first[-1][-1][4] == "GraphInterrupt"  # the node that asked


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
async def test_functional_api_as_in_process(temporal_client: Any, task_queue: str, how: str
                                            ) -> None:
    """An @entrypoint's @task calls run as activities of their own, in rounds; their
    runs are children of the entrypoint's one run, as in-process (and in LangGraph)."""
    local, remote, worker = _served(functional, temporal_client, task_queue)
    async with worker:
        expected = await _local_trees(local, [3, Command(resume=5)], how)
        got = await _local_trees(remote, [3, Command(resume=5)], how)
    assert _trees_without_thread(got) == _trees_without_thread(expected)
    first, second = got
    assert [c[1] for c in first[-1]] == ["wf"]
    assert [c[1] for c in first[-1][0][-1]] == ["double"]  # the call, under its caller
    assert first[-1][0][4] == "GraphInterrupt"
    assert [c[1] for c in second[-1][0][-1]] == ["double"]  # the first call's is kept


async def _lifecycle(graph: Any, how: str, runs: list[tuple[Any, dict[str, Any]]]
                     ) -> list[tuple[Any, ...]]:
    """A GraphCallbackHandler's events over `runs` (input, options), each with whether
    its checkpoint is the thread's latest when told, and its run the graph's run."""
    config = {"configurable": {"thread_id": f"l-{uuid.uuid4().hex[:8]}"}}
    handler, tracer = Lifecycle(), Tracer()
    cfg = {**config, "callbacks": [handler, tracer]}
    out: list[tuple[Any, ...]] = []
    for inp, options in runs:
        told = len(handler.events)
        if how == "ainvoke":
            await graph.ainvoke(inp, cfg, **options)
        else:
            async for _ in graph.astream(inp, cfg, **options):
                pass
        latest = (await graph.aget_state(config)).config["configurable"]["checkpoint_id"]
        for e in handler.events[told:]:
            out.append((type(e).__name__, e.status, e.checkpoint_ns,
                        tuple(i.value for i in getattr(e, "interrupts", ())),
                        e.run_id == tracer.runs[-1].id,
                        e.checkpoint_id == latest if isinstance(e, GraphInterruptEvent)
                        else e.checkpoint_id != latest))
    return out


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
async def test_graph_callback_handler_as_in_process(temporal_client: Any, task_queue: str,
                                                    how: str) -> None:
    """`on_interrupt` at each pause (an interrupt(), a breakpoint before or after a node)
    and `on_resume` when the run goes on, with the statuses, checkpoints and interrupts
    in-process gives: the workflow tells the caller, who calls its handlers."""
    cases = [(routing_graph, [({"x": []}, {}), (Command(resume="yes"), {})],
              ["pending", None]),
             (breakpoints, [({"x": []}, {"interrupt_after": ["one"]}), (None, {})],
              ["interrupt_after", None])]
    for build, runs, statuses in cases:
        local, remote, worker = _served(build, temporal_client, task_queue)
        async with worker:
            expected = await _lifecycle(local, how, runs)
            got = await _lifecycle(remote, how, runs)
        assert got == expected, build.__name__
        assert [e[1] if e[0] == "GraphInterruptEvent" else None for e in got] == statuses
        assert all(e[4] and e[5] for e in got)  # the graph's run; the checkpoint it names


async def test_events_travel_once(temporal_client: Any, task_queue: str) -> None:
    """A run with handlers costs its events once: in the node activities' results, read
    by query when the run stops. Nothing is signalled and no poll is made, so its
    workflow takes as many tasks as a run without handlers."""
    _, remote, worker = _served(breakpoints, temporal_client, task_queue)

    async def history(callbacks: list[Any]) -> Any:
        tid = f"o-{uuid.uuid4().hex[:8]}"
        await remote.ainvoke({"x": []}, {"configurable": {"thread_id": tid},
                                         "callbacks": callbacks})
        handle = temporal_client.get_workflow_handle(remote.gc.workflow_id(tid))
        return [e.WhichOneof("attributes") for e in (await handle.fetch_history()).events]

    tracer = Tracer()
    async with worker:
        plain, heard = await history([]), await history([tracer])
    assert [c.name for c in tracer.runs[0].child_runs] == ["one"]
    assert heard == plain
    assert not any("signal" in e for e in heard)


def big_state(api: Any) -> Any:
    from typing import TypedDict

    class Big(TypedDict, total=False):
        blob: str
        n: int

    return (api.StateGraph(Big).add_node("a", lambda s: {"blob": "x" * 700_000})
            .add_node("b", lambda s: {"n": 1}).add_node("c", lambda s: {"n": 2})
            .add_edge(api.START, "a").add_edge("a", "b").add_edge("b", "c")
            .compile(checkpointer=api.InMemorySaver()))


async def test_large_runs_are_read_in_pages(temporal_client: Any, task_queue: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose events outgrow one query's answer is read page by page, whole."""
    from temporalio.client import WorkflowHandle

    pages: list[Any] = []
    query = WorkflowHandle.query

    async def counted(self: Any, name: Any, *args: Any, **kwargs: Any) -> Any:
        answer = await query(self, name, *args, **kwargs)
        if name == "relayed":
            pages.append(answer["next"])
        return answer

    monkeypatch.setattr(WorkflowHandle, "query", counted)
    local, remote, worker = _served(big_state, temporal_client, task_queue)
    async with worker:
        expected = await _local_trees(local, [{}], "ainvoke")
        got = await _local_trees(remote, [{}], "ainvoke")
    assert _trees_without_thread(got) == _trees_without_thread(expected)
    assert [c[1] for c in got[0][-1]] == ["a", "b", "c"]
    assert len(pages) > 1 and pages[-1] is None


async def test_failures_and_retries_as_in_process(temporal_client: Any, task_queue: str
                                                  ) -> None:
    local, remote, worker = _served(retry_and_fail, temporal_client, task_queue)
    async with worker:
        expected = await _local_trees(local, [{"x": []}], "ainvoke")
        got = await _local_trees(remote, [{"x": []}], "ainvoke")
    assert got[0] == ("raised", "NodeFailedError")
    # In-process the graph raises the node's own error; on Temporal a NodeFailedError
    # naming it, and the failed node's run records that too.
    names = [c[1] for c in got[1][-1]]
    assert names == [c[1] for c in expected[1][-1]] == ["flaky", "flaky", "boom"]
    assert [c[4] for c in got[1][-1]] == ["NodeFailedError", None, "NodeFailedError"]


async def test_astream_events_as_in_process(temporal_client: Any, task_queue: str) -> None:
    local, remote, worker = _served(routing_graph, temporal_client, task_queue)

    async def seen(graph: Any) -> list[Any]:
        out = []
        config = {"configurable": {"thread_id": f"e-{uuid.uuid4().hex[:8]}"}}
        for inp in ({"x": []}, Command(resume="yes")):
            async for ev in graph.astream_events(inp, config, version="v2"):
                md = ev.get("metadata", {})
                out.append((ev["event"], ev["name"], tuple(ev.get("tags", ())),
                            tuple((k, md[k]) for k in METADATA if k in md and k != "thread_id"),
                            _plain(ev["data"]) if "chat_model" not in ev["event"] else None,
                            len(ev.get("parent_ids", ()))))
        return out

    async with worker:
        expected = await seen(local)
        got = await seen(remote)
    # Events of tasks running at once interleave differently: compare each run's own.
    assert sorted(got, key=repr) == sorted(expected, key=repr)
    tokens = [e for e in got if e[0] == "on_chat_model_stream"]
    assert len(tokens) == 3  # "hi", " ", "there": the model streamed on the worker


async def test_no_callbacks_no_relay(temporal_client: Any, task_queue: str) -> None:
    """Without handlers the run is not read live for them: the invoke is one update."""
    local, remote, worker = _served(breakpoints, temporal_client, task_queue)
    config = {"configurable": {"thread_id": f"n-{uuid.uuid4().hex[:8]}"}}

    class Nothing(BaseCallbackHandler):
        pass

    async with worker:
        out = await remote.ainvoke({"x": []}, config)
        assert out == await local.ainvoke({"x": []}, config)
        out = await remote.ainvoke(None, {**config, "callbacks": [Nothing()]})
        assert out == await local.ainvoke(None, config)


async def test_sync_invoke_and_with_config(temporal_client: Any, task_queue: str) -> None:
    """`invoke` (sync) tells sync handlers; `with_config` names the run and tags it."""
    _, remote, worker = _served(routing_graph, temporal_client, task_queue)
    tracer = Tracer()
    bound = remote.with_config(run_name="agent", tags=["bound"])
    async with worker:
        await asyncio.to_thread(bound.invoke, {"x": []}, {
            "configurable": {"thread_id": f"s-{uuid.uuid4().hex[:8]}"},
            "callbacks": [tracer]})
    (root,) = tracer.runs
    assert root.name == "agent" and root.tags == ["bound"]
    assert all("bound" in c.tags for c in root.child_runs)


def trace_policy_graph(api: Any) -> Any:
    from typing import TypedDict

    from graphrun.types import TracePolicy

    class V(TypedDict):
        value: int

    policy = TracePolicy(process_inputs=lambda v: {"in": 1}, process_outputs=lambda v: {"out": 1})
    return (api.StateGraph(V).add_node("n", lambda s: {"value": s["value"] + 1},
                                       trace_policy=policy)
            .add_edge(api.START, "n").compile(checkpointer=api.InMemorySaver()))


async def test_trace_policy_as_in_process(temporal_client: Any, task_queue: str) -> None:
    """A node's TracePolicy runs on the worker; the caller's tracers record what it
    returns, its other handlers the node's real input and output."""
    local, remote, worker = _served(trace_policy_graph, temporal_client, task_queue)

    async def heard(graph: Any) -> tuple[Any, ...]:
        tracer, seen = Tracer(), Seen()
        await graph.ainvoke({"value": 1}, {**_config(tracer), "callbacks": [tracer, seen]})
        (root,) = tracer.runs
        (n,) = [c for c in root.child_runs if c.name == "n"]
        return n.inputs, n.outputs, seen.seen

    async with worker:
        expected = await heard(local)
        got = await heard(remote)
    assert got == expected == ({"in": 1}, {"out": 1},
                               [("start", {"value": 1}), ("end", {"value": 2})])
