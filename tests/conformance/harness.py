"""Differential-test harness: one scenario, several drivers, equal transcripts.

A *scenario* is ``async def fn(driver) -> list``. It builds its graph only with
``driver.api.*`` (StateGraph, START, END, Command, Send, interrupt,
InMemorySaver), compiles it with ``driver.compile(builder, **compile_kwargs)``,
gets thread configs from ``driver.config("t1")`` and drives the compiled graph
only through the async surface below. It appends normalised, JSON-able results
(see ``norm_*``) and its side-effect counters to the transcript it returns.

Driver protocol (see ``LangGraphDriver``)::

    driver.name                       -> str
    driver.api                        -> Api
    driver.config(thread, **extra)    -> {"configurable": {"thread_id": ...}}
    driver.compile(builder, **kw)     -> graph with async methods:
        ainvoke(input, config)                      -> dict (values + "__interrupt__")
        aget_state(config)                          -> StateSnapshot-like
        aupdate_state(config, values, as_node=None) -> config
        aget_state_history(config)                  -> list of StateSnapshot-like
        astream(input, config, stream_mode=...)     -> list of chunks

``driver.config`` exists so that a driver whose threads outlive the test (a
Temporal workflow id = thread_id) can make thread ids unique per run; the
thread id never enters the transcript.

To add a driver: write a class with the attributes above (subclass
``Driver``), then register it in ``test_conformance.DRIVER_FACTORIES``.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import pprint
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

# ---------------------------------------------------------------------------
# Api namespaces
# ---------------------------------------------------------------------------


@dataclass
class Api:
    StateGraph: Any
    START: Any
    END: Any
    Command: Any
    Send: Any
    interrupt: Any
    InMemorySaver: Any


def langgraph_api() -> Api:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, Send, interrupt

    return Api(
        StateGraph=StateGraph,
        START=START,
        END=END,
        Command=Command,
        Send=Send,
        interrupt=interrupt,
        InMemorySaver=InMemorySaver,
    )


def graphrun_api() -> Api:
    import graphrun as g  # lazy: graphrun may not exist yet

    return Api(
        StateGraph=g.StateGraph,
        START=g.START,
        END=g.END,
        Command=g.Command,
        Send=g.Send,
        interrupt=g.interrupt,
        InMemorySaver=g.InMemorySaver,
    )


# ---------------------------------------------------------------------------
# Drivers
# ---------------------------------------------------------------------------

_UNSET = object()


class Driver:
    """Base class. Subclasses set ``name`` and ``api`` and implement compile."""

    name = "abstract"
    api: Api

    def config(self, thread: str, **configurable: Any) -> dict:
        return {"configurable": {"thread_id": thread, **configurable}}

    def compile(self, builder: Any, **compile_kwargs: Any) -> Any:  # pragma: no cover
        raise NotImplementedError


class AsyncGraph:
    """Wraps an in-process compiled graph (LangGraph's or graphrun's local one)
    into the driver surface: lists instead of async iterators."""

    def __init__(self, graph: Any):
        self.graph = graph

    async def ainvoke(self, input: Any, config: dict | None = None, **kw: Any) -> Any:
        return await self.graph.ainvoke(input, config, **kw)

    async def aget_state(self, config: dict, **kw: Any) -> Any:
        return await self.graph.aget_state(config, **kw)

    async def aupdate_state(self, config: dict, values: Any, as_node: str | None = None) -> Any:
        return await self.graph.aupdate_state(config, values, as_node=as_node)

    async def aget_state_history(self, config: dict, **kw: Any) -> list:
        return [s async for s in self.graph.aget_state_history(config, **kw)]

    async def astream(
        self, input: Any, config: dict | None = None, stream_mode: Any = "values", **kw: Any
    ) -> list:
        return [c async for c in self.graph.astream(input, config, stream_mode=stream_mode, **kw)]


class InProcessDriver(Driver):
    """Compiles with the api's StateGraph and an InMemorySaver by default
    (unless the scenario passes ``checkpointer=...`` explicitly, e.g. None)."""

    def compile(self, builder: Any, **compile_kwargs: Any) -> AsyncGraph:
        if "checkpointer" not in compile_kwargs:
            compile_kwargs["checkpointer"] = self.api.InMemorySaver()
        return AsyncGraph(builder.compile(**compile_kwargs))


class LangGraphDriver(InProcessDriver):
    name = "langgraph"

    def __init__(self) -> None:
        self.api = langgraph_api()


class GraphrunLocalDriver(InProcessDriver):
    """graphrun's in-process driver; importing graphrun is deferred to here."""

    name = "graphrun"

    def __init__(self) -> None:
        self.api = graphrun_api()


# ---------------------------------------------------------------------------
# Normalisers -> JSON-able data
# ---------------------------------------------------------------------------


def norm(x: Any) -> Any:
    """Plain JSON-able data: models/dataclasses to dicts, tuples to lists,
    Interrupt objects to their value (never their id)."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if _is_interrupt(x):
        return {"interrupt": norm(x.value)}
    if hasattr(x, "model_dump") and callable(x.model_dump):
        return norm(x.model_dump())
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return norm({f.name: getattr(x, f.name) for f in dataclasses.fields(x)})
    if isinstance(x, dict):
        return {str(k): norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    if isinstance(x, (set, frozenset)):
        return sorted(norm(v) for v in x)
    return {"repr": type(x).__name__}


def _is_interrupt(x: Any) -> bool:
    return type(x).__name__ == "Interrupt" and hasattr(x, "value") and hasattr(x, "id")


def interrupt_values(interrupts: Any) -> list:
    return [norm(i.value) for i in (interrupts or ())]


def norm_result(result: Any) -> dict:
    """ainvoke result -> {"values": ..., "interrupts": [values]}."""
    if isinstance(result, dict):
        values = {k: norm(v) for k, v in result.items() if k != "__interrupt__"}
        return {"values": values, "interrupts": interrupt_values(result.get("__interrupt__"))}
    return {"values": norm(result), "interrupts": []}


def norm_snapshot(snap: Any, *, step: bool = False) -> dict:
    out = {
        "values": norm(snap.values),
        "next": list(snap.next),
        "interrupts": interrupt_values(getattr(snap, "interrupts", ())),
        "tasks": [
            [t.name, interrupt_values(t.interrupts), t.error is not None] for t in snap.tasks
        ],
    }
    if step:
        md = snap.metadata or {}
        out["step"] = md.get("step")
        out["source"] = md.get("source")
    return out


def norm_chunk(chunk: Any) -> Any:
    """A stream chunk (updates or values mode)."""
    if isinstance(chunk, dict):
        out = {}
        for k, v in chunk.items():
            out[k] = interrupt_values(v) if k == "__interrupt__" else norm(v)
        return out
    if isinstance(chunk, tuple) and len(chunk) == 2 and isinstance(chunk[0], str):
        return [chunk[0], norm_chunk(chunk[1])]  # multi-mode ("mode", chunk)
    return norm(chunk)


def norm_stream(chunks: list) -> list:
    return [norm_chunk(c) for c in chunks]


def error_category(e: BaseException) -> str:
    """Coarse, implementation-neutral: graphrun's error classes subclass the
    builtins LangGraph raises."""
    for cls in (RuntimeError, ValueError, TypeError, KeyError):
        if isinstance(e, cls):
            return cls.__name__
    return "other"


def err(e: BaseException) -> list:
    return ["error", error_category(e)]


async def outcome(aw: Awaitable[Any], normaliser: Callable[[Any], Any] = norm_result) -> Any:
    """Await a call; return its normalised result or ["error", category]."""
    try:
        return normaliser(await aw)
    except Exception as e:
        return err(e)


# ---------------------------------------------------------------------------
# Scenario registry
# ---------------------------------------------------------------------------

Scenario = Callable[[Driver], Awaitable[list]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str) -> Callable[[Scenario], Scenario]:
    def deco(fn: Scenario) -> Scenario:
        if name in SCENARIOS:
            raise ValueError(f"duplicate scenario {name!r}")
        SCENARIOS[name] = fn
        fn.scenario_name = name  # type: ignore[attr-defined]
        return fn

    return deco


async def run_scenario(name_or_fn: str | Scenario, driver: Driver) -> list:
    fn = SCENARIOS[name_or_fn] if isinstance(name_or_fn, str) else name_or_fn
    transcript = await fn(driver)
    # Round-trip through JSON: the transcript must be JSON-able, and this
    # erases tuple/list differences.
    return json.loads(json.dumps(transcript))


def transcript_diff(expected: list, actual: list, a: str = "langgraph", b: str = "driver") -> str:
    ea = pprint.pformat(expected, width=100, sort_dicts=False).splitlines()
    eb = pprint.pformat(actual, width=100, sort_dicts=False).splitlines()
    return "\n".join(difflib.unified_diff(ea, eb, fromfile=a, tofile=b, lineterm=""))
