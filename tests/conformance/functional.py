"""Functional API scenarios (@entrypoint / @task) written once, run on LangGraph and on
graphrun (in-process here, on Temporal in tests/temporal), with equal transcripts.

A scenario is ``async def fn(d: FuncDriver) -> list``: it builds its entrypoint (or
graph) from ``d.api``, serves it with ``d.serve(graph)`` and drives it only through
``ainvoke`` / ``aget_state`` / ``astream``. The transcript holds the outputs, the
pending interrupts and how often each *leaf* task ran (a task that calls no other
task): a caller's body runs again on Temporal after each round of calls, by design
(graphrun.func), so only leaves are counted; they must run exactly as often as on
LangGraph (a finished call is never run again; an interrupted or failed one is).
"""

from __future__ import annotations

import asyncio
import operator
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from .harness import norm, transcript_diff

__all__ = [
    "FUNCTIONAL_SCENARIOS",
    "FuncApi",
    "FuncDriver",
    "InProcessFuncDriver",
    "graphrun_func_api",
    "langgraph_func_api",
    "run_functional",
    "transcript_diff",
]


@dataclass
class FuncApi:
    entrypoint: Any
    task: Any
    interrupt: Any
    Command: Any
    InMemorySaver: Any
    RetryPolicy: Any
    StateGraph: Any
    START: Any


def langgraph_func_api() -> FuncApi:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.func import entrypoint, task
    from langgraph.graph import START, StateGraph
    from langgraph.types import Command, RetryPolicy, interrupt

    return FuncApi(entrypoint, task, interrupt, Command, InMemorySaver, RetryPolicy,
                   StateGraph, START)


def graphrun_func_api() -> FuncApi:
    from graphrun import START, Command, InMemorySaver, RetryPolicy, StateGraph, interrupt
    from graphrun.func import entrypoint, task

    return FuncApi(entrypoint, task, interrupt, Command, InMemorySaver, RetryPolicy,
                   StateGraph, START)


class FuncDriver:
    """`api`, `serve(compiled)` -> the graph to drive, `config(thread)`."""

    name = "abstract"
    api: FuncApi

    def serve(self, graph: Any) -> Any:
        return graph

    def config(self, thread: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread}}


class InProcessFuncDriver(FuncDriver):
    def __init__(self, name: str, api: FuncApi) -> None:
        self.name, self.api = name, api


Scenario = Callable[[FuncDriver], Awaitable[list[Any]]]
FUNCTIONAL_SCENARIOS: dict[str, Scenario] = {}


def scenario(fn: Scenario) -> Scenario:
    FUNCTIONAL_SCENARIOS[fn.__name__] = fn
    return fn


async def run_functional(name: str, driver: FuncDriver) -> list[Any]:
    import json

    return json.loads(json.dumps(await FUNCTIONAL_SCENARIOS[name](driver)))


def out(result: Any) -> Any:
    """An output: its values, or the values of the interrupts it stopped at (sorted:
    LangGraph lists those of parallel tasks in the order the tasks happened to end)."""
    if isinstance(result, dict) and "__interrupt__" in result:
        return {"interrupts": sorted(norm(i.value) for i in result["__interrupt__"])}
    return {"values": norm(result)}


async def answer_each(d: FuncDriver, g: Any, cfg: dict[str, Any], result: Any,
                      log: list[Any], ran: Counter[str], rounds: int = 4) -> None:
    """Answer the interrupts shown, by id, until the run ends; log each output."""
    for _ in range(rounds):
        if "__interrupt__" not in result:
            return
        answers = {i.id: f"ans-{i.value}" for i in result["__interrupt__"]}
        result = await g.ainvoke(d.api.Command(resume=answers), cfg)
        log.append([out(result), dict(sorted(ran.items()))])


def doubling(api: FuncApi, ran: Counter[str]) -> Any:
    """The task `inner`: twice its input, counting its runs in `ran`."""

    @api.task
    def inner(x: int) -> int:
        ran["inner"] += 1
        return x * 2

    return inner


async def ran_with(g: Any, given: Any, cfg: dict[str, Any], ran: Counter[str]) -> list[Any]:
    """One invocation: its output, and how often each task has run so far."""
    return [out(await g.ainvoke(given, cfg)), dict(sorted(ran.items()))]


async def pending(g: Any, cfg: dict[str, Any]) -> list[Any]:
    snap = await g.aget_state(cfg)
    return [list(snap.next), [[t.name, [norm(i.value) for i in t.interrupts]]
                              for t in snap.tasks]]


# -- a call made inside a call keeps its result on resume ---------------------------------
@scenario
async def nested_call_kept_when_caller_resumes(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    inner = doubling(api, ran)

    @api.task
    def outer(x: int) -> int:
        v = inner(x).result()
        return v + api.interrupt("outer asks")

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def main(x: int) -> dict:
        return {"a": outer(x).result()}

    g, cfg = d.serve(main), d.config("nested-kept")
    log.append(await ran_with(g, 1, cfg, ran))
    log.append(await pending(g, cfg))
    log.append(await ran_with(g, api.Command(resume=10), cfg, ran))
    return log


@scenario
async def nested_call_unread_before_interrupt(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    inner = doubling(api, ran)

    @api.task
    def outer(x: int) -> int:
        future = inner(x)
        answer = api.interrupt("outer asks")
        return future.result() + answer

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def main(x: int) -> dict:
        return {"a": outer(x).result()}

    g, cfg = d.serve(main), d.config("nested-unread")
    log.append(await ran_with(g, 1, cfg, ran))
    log.append(await ran_with(g, api.Command(resume=10), cfg, ran))
    return log


@scenario
async def nested_async_calls_kept_twice(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    @api.task
    async def inner(x: int) -> int:
        ran[f"inner{x}"] += 1
        return x * 2

    @api.task
    async def outer(x: int) -> list[Any]:
        v = await inner(x)
        a = api.interrupt("first")
        w = await inner(x + 1)
        return [v, a, w, api.interrupt("second")]

    @api.entrypoint(checkpointer=api.InMemorySaver())
    async def main(x: int) -> dict:
        return {"a": await outer(x)}

    g, cfg = d.serve(main), d.config("nested-async")
    log.append(await ran_with(g, 1, cfg, ran))
    for answer in ("A", "B"):
        result = await g.ainvoke(api.Command(resume=answer), cfg)
        log.append([out(result), dict(sorted(ran.items()))])
    return log


@scenario
async def interrupt_two_calls_deep(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    @api.task
    def leaf(x: int) -> int:
        ran["leaf"] += 1
        return x + 1

    @api.task
    def inner(x: int) -> str:
        return f"{leaf(x).result()} {api.interrupt('inner asks')}"

    @api.task
    def outer(x: int) -> str:
        return inner(x).result() + "!"

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def main(x: int) -> dict:
        return {"a": outer(x).result()}

    g, cfg = d.serve(main), d.config("deep")
    result = await g.ainvoke(1, cfg)
    log.append([out(result), dict(ran)])
    await answer_each(d, g, cfg, result, log, ran)
    return log


@scenario
async def graph_node_calls_nested_tasks(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    class S(TypedDict):
        a: int

    inner = doubling(api, ran)

    @api.task
    def outer(x: int) -> int:
        return inner(x).result() + 1

    def node(s: S) -> dict:
        return {"a": outer(s["a"]).result() + api.interrupt("node asks")}

    b = api.StateGraph(S)
    b.add_node("node", node)
    b.add_edge(api.START, "node")
    g, cfg = d.serve(b.compile(checkpointer=api.InMemorySaver())), d.config("node")
    log.append(await ran_with(g, {"a": 1}, cfg, ran))
    log.append(await ran_with(g, api.Command(resume=100), cfg, ran))
    return log


# -- interrupts answered by id --------------------------------------------------------------
@scenario
async def nested_calls_answered_by_id(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    @api.task
    def ask(q: str) -> str:
        ran[q] += 1
        return api.interrupt(q)

    @api.task
    def pair(q: str) -> list[str]:
        first, second = ask(q + "-1"), ask(q + "-2")
        return [first.result(), second.result()]

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def main(x: int) -> list[str]:
        return pair("p").result()

    g, cfg = d.serve(main), d.config("nested-by-id")
    result = await g.ainvoke(1, cfg)
    log.append([out(result), dict(sorted(ran.items()))])
    await answer_each(d, g, cfg, result, log, ran)
    return log


@scenario
async def gathered_calls_answered_by_id(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    @api.task
    async def ask(q: str) -> str:
        ran[q] += 1
        return api.interrupt(q)

    @api.entrypoint(checkpointer=api.InMemorySaver())
    async def main(x: int) -> dict:
        return {"r": await asyncio.gather(ask("a"), ask("b"))}

    g, cfg = d.serve(main), d.config("gathered")
    result = await g.ainvoke(1, cfg)
    log.append([out(result), dict(sorted(ran.items()))])
    log.append(await pending(g, cfg))
    await answer_each(d, g, cfg, result, log, ran)
    return log


@scenario
async def entrypoint_and_call_answered_by_id(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    @api.task
    def ask(q: str) -> str:
        ran[q] += 1
        return api.interrupt(q)

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def main(x: int) -> dict:
        call = ask("call")
        own = api.interrupt("own")
        return {"call": call.result(), "own": own}

    g, cfg = d.serve(main), d.config("entry-and-call")
    result = await g.ainvoke(1, cfg)
    log.append([out(result), dict(ran)])
    log.append(await pending(g, cfg))
    await answer_each(d, g, cfg, result, log, ran)
    return log


@scenario
async def two_nodes_calls_answered_together_by_id(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    class S(TypedDict):
        out: Annotated[list, operator.add]

    @api.task
    def ask(q: str) -> str:
        ran[q] += 1
        return api.interrupt(q)

    @api.task
    def ask_twice(q: str) -> list[str]:
        ran[q] += 1
        return [api.interrupt(q + "-1"), api.interrupt(q + "-2")]

    def first(s: S) -> dict:
        return {"out": [ask("first").result()]}

    def second(s: S) -> dict:
        return {"out": [ask_twice("second").result()]}

    b = api.StateGraph(S)
    for node in (first, second):
        b.add_node(node.__name__, node)
        b.add_edge(api.START, node.__name__)
    g, cfg = d.serve(b.compile(checkpointer=api.InMemorySaver())), d.config("two-nodes")
    result = await g.ainvoke({"out": []}, cfg)
    log.append([out(result), dict(sorted(ran.items()))])
    await answer_each(d, g, cfg, result, log, ran)
    return log


# -- a call that failed runs again on resume ---------------------------------------------
@scenario
async def failed_call_runs_again_on_resume(d: FuncDriver) -> list[Any]:
    api, ran, log = d.api, Counter[str](), []

    inner = doubling(api, ran)

    @api.task
    def flaky(x: int) -> int:
        ran["flaky"] += 1
        raise ValueError("boom")

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def main(x: int) -> dict:
        try:
            flaky(x).result()
        except Exception as exc:  # graphrun on Temporal: a NodeFailedError naming it
            caught = "ValueError" in f"{type(exc).__name__}: {exc}"
        return {"caught": caught, "inner": inner(x).result(), "q": api.interrupt("q")}

    g, cfg = d.serve(main), d.config("failed")
    log.append(await ran_with(g, 1, cfg, ran))
    log.append(await ran_with(g, api.Command(resume="A"), cfg, ran))
    return log


# -- what a resumed run streams ---------------------------------------------------------------
@scenario
async def kept_calls_start_again_on_resume(d: FuncDriver) -> list[Any]:
    api, log = d.api, []

    @api.task
    def falsy() -> bool:
        return False

    @api.task
    def echo(x: int) -> int:
        return x

    @api.entrypoint(checkpointer=api.InMemorySaver())
    def main(x: dict) -> Any:
        falsy().result()
        echo(1).result()
        return api.interrupt("q")

    def chunk(c: Any) -> Any:
        mode, p = c
        if mode == "checkpoints":
            return [mode, p["metadata"]["step"], p["next"],
                    [[t["name"], [i["value"] for i in t["interrupts"]]] for t in p["tasks"]]]
        if "result" in p:
            return [mode, p["name"], norm(p["result"]), [i["value"] for i in p["interrupts"]]]
        return [mode, p["name"], norm(p["input"]) if p["name"] != "main" else None]

    g, cfg = d.serve(main), d.config("streams")
    for given in ({"a": 5}, api.Command(resume="123")):
        log.append([chunk(c) async for c in g.astream(
            given, cfg, stream_mode=["tasks", "checkpoints"])])
    return log
