"""Route every LangGraph compiled graph through `from_langgraph`, for ported tests.

LangGraph's tests build graphs with LangGraph's imports (and `create_agent` /
`create_react_agent` compile their own). `route_compiled_graphs()` patches
`langgraph.graph.state.StateGraph.compile` so the compiled object's run, state and
cache methods are graphrun's: the test body runs unchanged, the graph runs on graphrun.
The LangGraph object itself is kept (it can still be added as a node of another
LangGraph graph, which `from_langgraph` then bridges recursively).

What graphrun returns is shown as LangGraph shows it: graphrun's `Interrupt` is
compared as LangGraph's (same value, id and response schema), so upstream assertions hold.

`route_compiled_graphs(host)` with a `TemporalHost` (tests/langgraph_suite/
temporal_driver.py) serves the bridged graph on Temporal instead: it is registered
with the host's worker and the compiled object's methods go through `RemoteGraph`
to a GraphWorkflow (`TemporalGraph`), with LangGraph's `Command`/`Send` given as
graphrun's first, since they travel as data.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langgraph import types as lg_types
from langgraph.graph.state import CompiledStateGraph as LGCompiled
from langgraph.graph.state import StateGraph as LGStateGraph

from graphrun import types as gr_types
from graphrun.bridge import from_langgraph
from graphrun.bridge.run import to_graphrun
from tests.langgraph_suite.temporal_driver import TemporalGraph, TemporalHost

ROUTED = ("invoke", "ainvoke", "stream", "astream", "get_state", "aget_state",
          "get_state_history", "aget_state_history", "update_state", "aupdate_state",
          "bulk_update_state", "abulk_update_state", "clear_cache", "aclear_cache")


def _as_langgraph(value: Any) -> Any:
    if isinstance(value, gr_types.Interrupt):
        return lg_types.Interrupt(value=_as_langgraph(value.value), id=value.id,
                                  response_schema=value.response_schema)
    if isinstance(value, dict):
        return {k: _as_langgraph(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_langgraph(v) for v in value]
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # StateSnapshot, PregelTask
        return type(value)._make(_as_langgraph(v) for v in value)
    if isinstance(value, tuple):
        return tuple(_as_langgraph(v) for v in value)
    return value


class _BridgedOnTemporal(TemporalGraph):
    """A bridged graph served on Temporal; LangGraph's Command/Send in, as graphrun's."""

    def invoke(self, input: Any, config: Any = None, **kw: Any) -> Any:
        return super().invoke(to_graphrun(input), config, **kw)

    async def ainvoke(self, input: Any, config: Any = None, **kw: Any) -> Any:
        return await super().ainvoke(to_graphrun(input), config, **kw)

    def stream(self, input: Any, config: Any = None, **kw: Any) -> Iterator[Any]:
        return super().stream(to_graphrun(input), config, **kw)

    def astream(self, input: Any, config: Any = None, **kw: Any) -> AsyncIterator[Any]:
        return super().astream(to_graphrun(input), config, **kw)

    def update_state(self, config: Any, values: Any, as_node: str | None = None) -> Any:
        return super().update_state(config, to_graphrun(values), as_node)

    async def aupdate_state(self, config: Any, values: Any, as_node: str | None = None) -> Any:
        return await super().aupdate_state(config, to_graphrun(values), as_node)


def _bridge(compiled: Any, host: TemporalHost | None = None) -> None:
    graph = from_langgraph(compiled)
    if host is not None:
        graph = _BridgedOnTemporal(graph, host)
    for name in ROUTED:
        method = getattr(graph, name, None)
        if method is None:
            continue
        if name in ("stream", "get_state_history"):
            def gen(*a: Any, __m: Any = method, **kw: Any) -> Iterator[Any]:
                for chunk in __m(*a, **kw):
                    yield _as_langgraph(chunk)
            setattr(compiled, name, gen)
        elif name in ("astream", "aget_state_history"):
            async def agen(*a: Any, __m: Any = method, **kw: Any) -> Any:
                async for chunk in __m(*a, **kw):
                    yield _as_langgraph(chunk)
            setattr(compiled, name, agen)
        elif name.startswith("a"):
            async def acall(*a: Any, __m: Any = method, **kw: Any) -> Any:
                return _as_langgraph(await __m(*a, **kw))
            setattr(compiled, name, acall)
        else:
            def call(*a: Any, __m: Any = method, **kw: Any) -> Any:
                return _as_langgraph(__m(*a, **kw))
            setattr(compiled, name, call)
    compiled.graphrun = graph


@contextlib.contextmanager
def route_compiled_graphs(host: TemporalHost | None = None) -> Iterator[None]:
    """In-process (no host), or on Temporal through `host`'s client and worker."""
    original, original_with_config = LGStateGraph.compile, LGCompiled.with_config

    def compile(self: Any, *args: Any, **kwargs: Any) -> Any:
        compiled = original(self, *args, **kwargs)
        _bridge(compiled, host)
        return compiled

    def with_config(self: Any, *args: Any, **kwargs: Any) -> Any:
        compiled = original_with_config(self, *args, **kwargs)
        _bridge(compiled, host)  # a copy: bridged again, with its config
        return compiled

    LGStateGraph.compile = compile  # type: ignore[method-assign]
    LGCompiled.with_config = with_config  # type: ignore[method-assign]
    try:
        yield
    finally:
        LGStateGraph.compile = original  # type: ignore[method-assign]
        LGCompiled.with_config = original_with_config  # type: ignore[method-assign]


@contextlib.contextmanager
def unrouted() -> Iterator[None]:
    """LangGraph's own compile, for the reference run of a comparison."""
    patched, patched_with_config = LGStateGraph.compile, LGCompiled.with_config
    LGStateGraph.compile, LGCompiled.with_config = _ORIGINAL  # type: ignore[method-assign]
    try:
        yield
    finally:
        LGStateGraph.compile = patched  # type: ignore[method-assign]
        LGCompiled.with_config = patched_with_config  # type: ignore[method-assign]


_ORIGINAL = (LGStateGraph.compile, LGCompiled.with_config)
