"""Ported from LangGraph's libs/langgraph/tests/test_stream_messages_transformer.py.

Upstream: langchain-ai/langgraph, commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f.
The tests that run a graph: `stream_events(version="v3")` / `astream_events` and
`run.messages` on graphrun's compiled graphs (LangGraph's own run streams, fed by
graphrun), nodes that call a chat model's `stream_events(version="v3")` or `invoke`,
and a graph's direct `stream_mode="messages"` staying on LangChain's message chunks, also
when a node streams a graph itself under an outer v3 run. Imports switched to graphrun
(`StateGraph`, `START`, `END`, `MessagesState`); bodies as upstream. Not ported (they
drive LangGraph's `MessagesTransformer`, `StreamMux` or `StreamMessagesHandlerV2` by
hand, with no graph): see README.md.

Upstream's docstring:

Tests for MessagesTransformer: protocol event routing, whole-message fallback,
legacy v1 chunk filtering, and end-to-end via stream_events(version="v3") / astream_events(version="v3").
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.language_models.chat_model_stream import (
    AsyncChatModelStream,
    ChatModelStream,
)
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict

from graphrun import END, START, StateGraph
from graphrun.messages import MessagesState

# ---------------------------------------------------------------------------
# End-to-end: graph → stream_events(version="v3") → run.messages (node calls stream_events)
# ---------------------------------------------------------------------------


class TestEndToEnd:
    """stream_events(version="v3") path: node calls model.stream_events() explicitly."""

    def test_node_calling_stream_v2_populates_messages(self) -> None:
        model = GenericFakeChatModel(messages=iter(["hello world"]))

        def call_model(state: MessagesState) -> dict[str, Any]:
            stream = model.stream_events(state["messages"], version="v3")
            return {"messages": stream.output}

        graph = (
            StateGraph(MessagesState)
            .add_node("call_model", call_model)
            .add_edge(START, "call_model")
            .add_edge("call_model", END)
            .compile()
        )

        run = graph.stream_events({"messages": "hi"}, version="v3")
        (stream,) = list(run.messages)
        assert isinstance(stream, ChatModelStream)
        assert stream.output.text == "hello world"

    def test_node_stream_v2_text_deltas_iterate(self) -> None:
        """Consumer can iterate `.text` on the streamed message in real time."""
        model = GenericFakeChatModel(messages=iter(["streamed answer"]))

        def call_model(state: MessagesState) -> dict[str, Any]:
            stream = model.stream_events(state["messages"], version="v3")
            return {"messages": stream.output}

        graph = (
            StateGraph(MessagesState)
            .add_node("call_model", call_model)
            .add_edge(START, "call_model")
            .add_edge("call_model", END)
            .compile()
        )

        run = graph.stream_events({"messages": "go"}, version="v3")
        (stream,) = list(run.messages)
        assert "".join(stream.text) == "streamed answer"

    def test_non_llm_message_returned_from_node(self) -> None:
        """Whole-message fallback: node returns a finalized AIMessage directly."""

        def return_message(state: MessagesState) -> dict[str, Any]:
            return {"messages": AIMessage(content="hardcoded", id="msg-abc")}

        graph = (
            StateGraph(MessagesState)
            .add_node("return_message", return_message)
            .add_edge(START, "return_message")
            .add_edge("return_message", END)
            .compile()
        )

        run = graph.stream_events({"messages": "hi"}, version="v3")
        (stream,) = list(run.messages)
        assert stream.output.text == "hardcoded"

    @pytest.mark.anyio
    async def test_async_node_calling_astream_v2(self) -> None:
        model = GenericFakeChatModel(messages=iter(["async answer"]))

        async def call_model(state: MessagesState) -> dict[str, Any]:
            stream = await model.astream_events(state["messages"], version="v3")
            return {"messages": await stream}

        graph = (
            StateGraph(MessagesState)
            .add_node("call_model", call_model)
            .add_edge(START, "call_model")
            .add_edge("call_model", END)
            .compile()
        )

        run = await graph.astream_events({"messages": "hi"}, version="v3")
        streams = [s async for s in run.messages]
        assert len(streams) == 1
        assert isinstance(streams[0], AsyncChatModelStream)
        assert (await streams[0].output).text == "async answer"

    @pytest.mark.anyio
    async def test_nested_async_iteration_yields_text_deltas(self) -> None:
        """Inner stream.text drives the shared graph pump via the async pump binding."""

        model = GenericFakeChatModel(messages=iter(["hello world"]))

        async def call_model(state: MessagesState) -> dict[str, Any]:
            stream = await model.astream_events(state["messages"], version="v3")
            return {"messages": await stream}

        graph = (
            StateGraph(MessagesState)
            .add_node("call_model", call_model)
            .add_edge(START, "call_model")
            .add_edge("call_model", END)
            .compile()
        )

        run = await graph.astream_events({"messages": "hi"}, version="v3")

        async def consume() -> list[str]:
            collected: list[str] = []
            async for stream in run.messages:
                async for delta in stream.text:
                    collected.append(delta)
            return collected

        assert "".join(await asyncio.wait_for(consume(), timeout=2.0)) == "hello world"


# ---------------------------------------------------------------------------
# End-to-end: graph → stream_events(version="v3") → run.messages (node calls invoke)
# ---------------------------------------------------------------------------


class TestEndToEndV2Invoke:
    """Auto-routing path: stream_events(version="v3") injects CONFIG_KEY_STREAM_MESSAGES_V2,
    causing BaseChatModel to drive the v2 protocol event generator even for
    model.invoke()."""

    def _graph(self, model):
        def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": model.invoke(state["messages"])}

        return (
            StateGraph(MessagesState)
            .add_node("call_model", call_model)
            .add_edge(START, "call_model")
            .add_edge("call_model", END)
            .compile()
        )

    def test_invoke_populates_messages(self) -> None:
        run = self._graph(
            GenericFakeChatModel(messages=iter(["hello world"]))
        ).stream_events({"messages": "hi"}, version="v3")
        (stream,) = list(run.messages)
        assert isinstance(stream, ChatModelStream)
        assert stream.output.text == "hello world"

    def test_invoke_emits_protocol_events(self) -> None:
        """Iterating the stream yields the full v2 lifecycle, not v1 chunks."""
        run = self._graph(
            GenericFakeChatModel(messages=iter(["streamed answer"]))
        ).stream_events({"messages": "go"}, version="v3")
        (stream,) = list(run.messages)

        events = list(stream)
        event_types = [e.get("event") for e in events]
        assert "message-start" in event_types
        assert "content-block-start" in event_types
        assert "content-block-delta" in event_types
        assert "content-block-finish" in event_types
        assert "message-finish" in event_types
        # Sanity: every event is a dict carrying an "event" key — not an
        # AIMessageChunk tuple from the v1 path.
        for event in events:
            assert isinstance(event, dict)
            assert "event" in event
        # Typed projection still assembles the final text.
        assert stream.output.text == "streamed answer"

    def test_invoke_text_deltas_iterate(self) -> None:
        run = self._graph(
            GenericFakeChatModel(messages=iter(["delta streaming works"]))
        ).stream_events({"messages": "hi"}, version="v3")
        (stream,) = list(run.messages)
        assert "".join(stream.text) == "delta streaming works"

    def test_invoke_two_nodes_two_streams(self) -> None:
        model_a = GenericFakeChatModel(messages=iter(["alpha"]))
        model_b = GenericFakeChatModel(messages=iter(["beta"]))

        def node_a(state: MessagesState) -> dict[str, Any]:
            return {"messages": model_a.invoke(state["messages"])}

        def node_b(state: MessagesState) -> dict[str, Any]:
            return {"messages": model_b.invoke(state["messages"])}

        graph = (
            StateGraph(MessagesState)
            .add_node("node_a", node_a)
            .add_node("node_b", node_b)
            .add_edge(START, "node_a")
            .add_edge("node_a", "node_b")
            .add_edge("node_b", END)
            .compile()
        )

        streams = list(graph.stream_events({"messages": "hi"}, version="v3").messages)
        assert len(streams) == 2
        assert {s.output.text for s in streams} == {"alpha", "beta"}

    def test_invoke_plus_constructed_message_two_streams(self) -> None:
        """Live-streamed node + constructed-message node → two ChatModelStreams."""
        model = GenericFakeChatModel(messages=iter(["live stream"]))

        def streaming_node(state: MessagesState) -> dict[str, Any]:
            return {"messages": model.invoke(state["messages"])}

        def constructed_node(state: MessagesState) -> dict[str, Any]:
            return {"messages": [AIMessage(content="hardcoded", id="constructed-1")]}

        graph = (
            StateGraph(MessagesState)
            .add_node("streaming_node", streaming_node)
            .add_node("constructed_node", constructed_node)
            .add_edge(START, "streaming_node")
            .add_edge("streaming_node", "constructed_node")
            .add_edge("constructed_node", END)
            .compile()
        )

        run = graph.stream_events({"messages": "hi"}, version="v3")
        streams = list(run.messages)
        assert len(streams) == 2
        assert streams[0].node == "streaming_node"
        assert streams[0].output.text == "live stream"
        assert streams[1].node == "constructed_node"
        assert streams[1].output.text == "hardcoded"
        assert streams[1].message_id == "constructed-1"

    @pytest.mark.anyio
    async def test_ainvoke_populates_messages(self) -> None:
        model = GenericFakeChatModel(messages=iter(["async invoke"]))

        async def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": await model.ainvoke(state["messages"])}

        graph = (
            StateGraph(MessagesState)
            .add_node("call_model", call_model)
            .add_edge(START, "call_model")
            .add_edge("call_model", END)
            .compile()
        )

        run = await graph.astream_events({"messages": "hi"}, version="v3")
        streams = [s async for s in run.messages]
        assert len(streams) == 1
        assert isinstance(streams[0], AsyncChatModelStream)
        assert (await streams[0].output).text == "async invoke"


# ---------------------------------------------------------------------------
# Regression: direct stream_mode="messages" must stay v1
# ---------------------------------------------------------------------------


class TestDirectMessagesModeStaysV1:
    def test_direct_graph_stream_messages_yields_ai_message_chunks(self) -> None:
        """graph.stream(stream_mode="messages") must not leak v2 event dicts —
        the v2 flag is only injected by stream_events(version="v3") / astream_events(version="v3")."""
        model = GenericFakeChatModel(messages=iter(["legacy path"]))

        def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": model.invoke(state["messages"])}

        graph = (
            StateGraph(MessagesState)
            .add_node("call_model", call_model)
            .add_edge(START, "call_model")
            .add_edge("call_model", END)
            .compile()
        )

        parts = list(graph.stream({"messages": "hi"}, stream_mode="messages"))
        assert parts, "expected stream_mode='messages' to emit tuples"
        for payload, _metadata in parts:
            assert isinstance(payload, AIMessageChunk)
        assert (
            "".join(p[0].content for p in parts if isinstance(p[0].content, str))
            == "legacy path"
        )

    def test_nested_graph_stream_messages_stays_v1_under_outer_stream_events_v3(
        self,
    ) -> None:
        """An outer `stream_events(version="v3")` run must not flip an inner direct
        `stream_mode="messages"` call onto the v2 event protocol."""
        model = GenericFakeChatModel(messages=iter(["nested legacy path"]))

        def call_model(state: MessagesState) -> dict[str, Any]:
            return {"messages": model.invoke(state["messages"])}

        inner = (
            StateGraph(MessagesState)
            .add_node("call_model", call_model)
            .add_edge(START, "call_model")
            .add_edge("call_model", END)
            .compile()
        )

        class OuterState(TypedDict, total=False):
            saw_only_chunks: bool
            first_payload_type: str
            text: str

        def call_subgraph(state: OuterState, config: RunnableConfig) -> dict[str, Any]:
            parts = list(
                inner.stream(
                    {"messages": "hi"},
                    config,
                    stream_mode="messages",
                )
            )
            assert parts
            payloads = [payload for payload, _metadata in parts]
            return {
                "saw_only_chunks": all(
                    isinstance(payload, AIMessageChunk) for payload in payloads
                ),
                "first_payload_type": type(payloads[0]).__name__,
                "text": "".join(
                    payload.content
                    for payload in payloads
                    if isinstance(payload, AIMessageChunk)
                    and isinstance(payload.content, str)
                ),
            }

        outer = (
            StateGraph(OuterState)
            .add_node("call_subgraph", call_subgraph)
            .add_edge(START, "call_subgraph")
            .add_edge("call_subgraph", END)
            .compile()
        )

        result = outer.stream_events({}, version="v3").output

        assert result is not None
        assert result["saw_only_chunks"] is True
        assert result["first_payload_type"] == "AIMessageChunk"
        assert result["text"] == "nested legacy path"
