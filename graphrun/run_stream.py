"""`stream_events(version="v3")` / `astream_events(version="v3")`: LangGraph's run streams
(`langgraph.stream`: `run.values`, `run.messages`, `run.subgraphs`, `run.output`,
`run.interrupted`, `run.interrupts`, `run.extensions`, custom transformers) over graphrun's
own v2 stream.

As LangGraph builds them: a `StreamMux` of the built-in transformers (values, messages,
lifecycle, subgraphs), the graph's `compile(stream_transformers=...)` and the call's
`transformers=`, fed the graph's `stream(..., version="v2", subgraphs=True)` in exactly
the modes the transformers ask for, chat models streaming content-block events
(`message-start`, `content-block-delta`, ... : graphrun.stream_messages.StreamMessagesV2).
The run streams, the mux and the transformers are LangGraph's (the protocol is
LangGraph's, experimental, and moves with it), so this needs `graphrun[langgraph]`;
graphrun supplies the stream under them, in-process and on Temporal alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# Kwargs the v3 stream owns (LangGraph refuses them too).
_OWNED = ("stream_mode", "subgraphs")


def _mux(graph: Any, config: Any,
         transformers: Sequence[Callable[[tuple[str, ...]], Any]] | None,
         kwargs: dict[str, Any], *, is_async: bool) -> tuple[Any, dict[str, Any]]:
    """LangGraph's mux of the built-in transformers, the graph's and the call's, and the
    options of the graph's stream that feeds it (the modes the transformers need)."""
    owned = [k for k in _OWNED if k in kwargs]
    if owned:
        raise TypeError(f"stream_events(version='v3') / astream_events(version='v3') do not "
                        f"accept {', '.join(owned)}: v3 owns them (the modes are those its "
                        f"transformers need, and subgraphs always stream).")
    try:  # the supported LangGraph first, with how to install it
        from graphrun.bridge import _langgraph as lg
    except ImportError as exc:
        raise ImportError(f"stream_events(version='v3') streams through LangGraph's run "
                          f"streams: {exc}") from None
    from langgraph.stream.transformers import (
        LifecycleTransformer,
        MessagesTransformer,
        SubgraphTransformer,
        ValuesTransformer,
    )

    mux = lg.StreamMux(
        factories=[ValuesTransformer, MessagesTransformer, LifecycleTransformer,
                   SubgraphTransformer,
                   *lg.normalize_stream_transformers(getattr(graph, "stream_transformers", ())),
                   *lg.normalize_stream_transformers(transformers)],
        # Scoped as LangGraph's: a graph streamed inside a node shows, as its own, what
        # streams under the node's namespace (and a config's checkpoint_ns scopes a call).
        scope=graph.stream_scope(config), is_async=is_async)
    return mux, {**kwargs, "stream_mode": lg.collect_stream_modes(mux), "subgraphs": True,
                 "version": "v2", "messages_v2": True}


def stream_v3(graph: Any, input: Any, config: Any, *,
              transformers: Sequence[Callable[[tuple[str, ...]], Any]] | None = None,
              **kwargs: Any) -> Any:
    """A `langgraph.stream.GraphRunStream` of the graph's run; iterating it runs it."""
    mux, options = _mux(graph, config, transformers, kwargs, is_async=False)
    from langgraph.stream import GraphRunStream

    return GraphRunStream(iter(graph.stream(input, config, **options)), mux)


async def astream_v3(graph: Any, input: Any, config: Any, *,
                     transformers: Sequence[Callable[[tuple[str, ...]], Any]] | None = None,
                     **kwargs: Any) -> Any:
    """A `langgraph.stream.AsyncGraphRunStream` of the graph's run."""
    mux, options = _mux(graph, config, transformers, kwargs, is_async=True)
    from langgraph.stream import AsyncGraphRunStream

    return AsyncGraphRunStream(graph.astream(input, config, **options).__aiter__(), mux)
