# ruff: noqa: SIM105  (upstream code kept as is)
"""Ported from LangGraph's libs/langgraph/tests/test_pregel_stream_events_v3.py.

Upstream: langchain-ai/langgraph, commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f.
`stream_events(version="v3")` / `astream_events(version="v3")` on graphrun's compiled
graphs: LangGraph's run streams (`GraphRunStream`, `StreamChannel`, transformers, kept
from `langgraph.stream` as upstream: graphrun returns LangGraph's run streams) fed by
graphrun's own v2 stream. Imports switched to graphrun (`StateGraph`, `START`, `END`,
`InMemorySaver`, `interrupt`); `StreamWriter` is LangGraph's (typing only: graphrun has
none). Bodies as upstream; every test that runs a graph is ported (the `TestMemoryBounds`
ones read the run stream's private buffers, which are LangGraph's, fed by graphrun).

Not ported: the tests that drive LangGraph's own stream classes by hand, with no graph
(LangGraph internals): `TestStreamChannelLocal`, `TestStreamChannelNamed`,
`TestConvertToProtocolEvent`, `TestStreamMux`, `TestValuesTransformer`,
`TestOutputWithoutValuesTransformer`, `TestMessagesTransformer`,
`TestStreamMuxResilience`, `TestStreamTransformerSchedule`, `TestDrainOnConsume`, all of
`TestAsyncTransformerLane` but `test_handler_astream_with_scheduled_work`, all of
`TestStreamChannelAutoLifecycle` but `test_transformer_without_finalize_works`, and
`TestCustomTransformer::test_stream_channel_seq_ordering`. See README.md.
"""

from __future__ import annotations

import asyncio
import operator
import sys
from typing import Annotated, Any

import pytest
from langgraph.stream import (
    StreamChannel,
    StreamTransformer,
)
from langgraph.stream._types import ProtocolEvent
from langgraph.types import StreamWriter  # graphrun: typing only, graphrun has none
from typing_extensions import TypedDict

from graphrun import END, START, InMemorySaver, StateGraph, interrupt

NEEDS_CONTEXTVARS = pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="Python 3.11+ is required for async contextvars support",
)

# ---------------------------------------------------------------------------
# Shared graph builders
# ---------------------------------------------------------------------------


class SimpleState(TypedDict):
    value: str
    items: Annotated[list[str], operator.add]


def _build_simple_graph():
    def node_a(state: SimpleState) -> dict:
        return {"value": state["value"] + "A", "items": ["a"]}

    def node_b(state: SimpleState) -> dict:
        return {"value": state["value"] + "B", "items": ["b"]}

    builder = StateGraph(SimpleState)
    builder.add_node("node_a", node_a)
    builder.add_node("node_b", node_b)
    builder.add_edge(START, "node_a")
    builder.add_edge("node_a", "node_b")
    builder.add_edge("node_b", END)
    return builder.compile()


def _build_interrupt_graph():
    def node_a(state: SimpleState) -> dict:
        return {"value": state["value"] + "A", "items": ["a"]}

    def node_b(state: SimpleState) -> dict:
        interrupt("need approval")
        return {"value": state["value"] + "B", "items": ["b"]}

    builder = StateGraph(SimpleState)
    builder.add_node("node_a", node_a)
    builder.add_node("node_b", node_b)
    builder.add_edge(START, "node_a")
    builder.add_edge("node_a", "node_b")
    builder.add_edge("node_b", END)
    return builder.compile(checkpointer=InMemorySaver())


def _build_error_graph():
    def node_a(state: SimpleState) -> dict:
        return {"value": state["value"] + "A", "items": ["a"]}

    def node_b(state: SimpleState) -> dict:
        raise ValueError("boom")

    builder = StateGraph(SimpleState)
    builder.add_node("node_a", node_a)
    builder.add_node("node_b", node_b)
    builder.add_edge(START, "node_a")
    builder.add_edge("node_a", "node_b")
    builder.add_edge("node_b", END)
    return builder.compile()


def _build_custom_stream_graph():
    def node_a(state: SimpleState, *, writer: StreamWriter) -> dict:
        writer({"step": "start"})
        writer({"step": "end"})
        return {"value": state["value"] + "A", "items": ["a"]}

    builder = StateGraph(SimpleState)
    builder.add_node("node_a", node_a)
    builder.add_edge(START, "node_a")
    builder.add_edge("node_a", END)
    return builder.compile()


class _CustomPassthroughTransformer(StreamTransformer):
    """Opts a run into the `custom` stream mode without building a projection.

    `stream_events(version="v3")` requests only the modes that registered transformers
    declare via `required_stream_modes`. Custom events are raw user
    emissions from `StreamWriter`, so tests that want them visible on
    the main event log register this pass-through transformer.
    """

    required_stream_modes = ("custom",)

    def init(self) -> dict[str, Any]:
        return {}

    def process(self, event: ProtocolEvent) -> bool:
        return True


# ---------------------------------------------------------------------------
# stream_events(version="v3") sync tests
# ---------------------------------------------------------------------------


class TestStreamV2Sync:
    def test_values_projection(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        snapshots = list(run.values)
        assert len(snapshots) >= 1
        last = snapshots[-1]
        assert "A" in last["value"] and "B" in last["value"]

    def test_output(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        output = run.output
        assert output == {"value": "xAB", "items": ["a", "b"]}

    def test_raw_event_iteration(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        events = list(run)
        assert len(events) > 0
        for event in events:
            assert event["type"] == "event"
            assert "method" in event
            assert "seq" in event
            assert isinstance(event["params"]["timestamp"], int)

    def test_extensions_has_native_keys(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        _ = run.output
        assert "values" in run.extensions and "messages" in run.extensions
        assert run.values is run.extensions["values"]
        assert run.messages is run.extensions["messages"]

    def test_extensions_is_read_only(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(TypeError):
            run.extensions["new_key"] = object()  # type: ignore[index]
        with pytest.raises(TypeError):
            del run.extensions["values"]  # type: ignore[attr-defined]

    def test_custom_stream_events(self) -> None:
        run = _build_custom_stream_graph().stream_events(
            {"value": "x", "items": []},
            version="v3",
            transformers=[_CustomPassthroughTransformer],
        )
        custom_events = [e for e in run if e["method"] == "custom"]
        assert len(custom_events) == 2
        assert custom_events[0]["params"]["data"] == {"step": "start"}
        assert custom_events[1]["params"]["data"] == {"step": "end"}

    def test_custom_events_suppressed_without_transformer(self) -> None:
        """Without a transformer declaring `"custom"`, no custom events flow.

        `stream_events(version="v3")` asks the graph only for the modes that registered
        transformers require. Built-ins cover `values` / `messages`;
        consumers that want raw custom events surface them by
        registering a transformer whose `required_stream_modes`
        includes `"custom"`.
        """
        run = _build_custom_stream_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        custom_events = [e for e in run if e["method"] == "custom"]
        assert custom_events == []

    def test_interleave_values_and_messages(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        tagged = list(run.interleave("values", "messages"))
        names = [name for name, _ in tagged]
        assert set(names).issubset({"values", "messages"})
        assert names.count("values") >= 1
        # interleave releases its subscription on completion.
        assert run.extensions["values"]._subscribed is False
        assert run.extensions["messages"]._subscribed is False

    def test_abort_marks_exhausted_and_closes_mux(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        values_iter = iter(run.values)
        _ = next(values_iter)
        run.abort()
        list(values_iter)
        assert run._exhausted is True
        run.abort()  # idempotent

    def test_context_manager_calls_abort_on_exit(self) -> None:
        with _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        ) as run:
            _ = next(iter(run.values))
        assert run._exhausted is True

    def test_interleave_unknown_projection(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(KeyError):
            list(run.interleave("values", "does_not_exist"))


class TestStreamV2SyncErrors:
    def test_error_propagation_output(self) -> None:
        run = _build_error_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            _ = run.output

    def test_error_propagation_values(self) -> None:
        run = _build_error_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            list(run.values)

    def test_error_propagation_raw_events(self) -> None:
        run = _build_error_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            list(run)

    def test_error_propagation_interrupted(self) -> None:
        run = _build_error_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            _ = run.interrupted

    def test_error_propagation_interrupts(self) -> None:
        run = _build_error_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            _ = run.interrupts


class TestStreamV2SyncInterrupt:
    def test_interrupted(self) -> None:
        run = _build_interrupt_graph().stream_events(
            {"value": "x", "items": []},
            {"configurable": {"thread_id": "t1"}},
            version="v3",
        )
        _ = run.output
        assert run.interrupted is True
        assert len(run.interrupts) > 0


# ---------------------------------------------------------------------------
# astream_events(version="v3") async tests
# ---------------------------------------------------------------------------


@pytest.mark.anyio
@NEEDS_CONTEXTVARS
class TestStreamV2Async:
    async def test_values_projection(self) -> None:
        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        snapshots = [s async for s in run.values]
        assert len(snapshots) >= 1
        last = snapshots[-1]
        assert "A" in last["value"] and "B" in last["value"]

    async def test_output(self) -> None:
        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        output = await run.output()
        assert output == {"value": "xAB", "items": ["a", "b"]}

    async def test_raw_event_iteration(self) -> None:
        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        events = [e async for e in run]
        assert len(events) > 0
        for event in events:
            assert event["type"] == "event"

    async def test_abort_marks_exhausted_and_closes_mux(self) -> None:
        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        values_iter = aiter(run.values)
        _ = await anext(values_iter)
        await run.abort()
        async for _item in values_iter:
            pass
        assert run._exhausted is True
        await run.abort()  # idempotent

    async def test_context_manager_calls_abort_on_exit(self) -> None:
        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        async with run:
            _ = await anext(aiter(run.values))
        assert run._exhausted is True

    async def test_abort_cancels_running_subgraph(self) -> None:
        class CountState(TypedDict):
            count: int

        runs: list[int] = []

        async def sub_node(state: CountState) -> dict:
            runs.append(state["count"] + 1)
            await asyncio.sleep(0.05)
            return {"count": state["count"] + 1}

        sub_graph = (
            StateGraph(CountState)
            .add_node("sub_node", sub_node)
            .set_entry_point("sub_node")
            .add_conditional_edges(
                "sub_node",
                lambda s: END if s["count"] >= 10 else "sub_node",
            )
            .compile()
        )

        async def main_node(state: CountState) -> None:
            await sub_graph.ainvoke({"count": 0})

        main_graph = (
            StateGraph(CountState)
            .add_node("main_node", main_node)
            .set_entry_point("main_node")
            .compile()
        )

        run = await main_graph.astream_events({"count": 0}, version="v3")
        async for e in run:
            if (
                e["method"] == "values"
                and e["params"]["namespace"]
                and e["params"]["data"]["count"] >= 2
            ):
                break
        await run.abort()
        runs_at_abort = len(runs)
        # Give the (now-cancelled) subgraph a chance to keep looping.
        await asyncio.sleep(0.3)
        assert len(runs) == runs_at_abort
        assert len(runs) < 10

    async def test_abort_cancels_deeply_nested_subgraph(self) -> None:
        class CountState(TypedDict):
            count: int

        runs: list[int] = []

        async def deep_node(state: CountState) -> dict:
            runs.append(state["count"] + 1)
            await asyncio.sleep(0.05)
            return {"count": state["count"] + 1}

        # Deepest graph loops until count >= 10.
        graph = (
            StateGraph(CountState)
            .add_node("deep_node", deep_node)
            .set_entry_point("deep_node")
            .add_conditional_edges(
                "deep_node",
                lambda s: END if s["count"] >= 10 else "deep_node",
            )
            .compile()
        )

        # Wrap it three times: graph -> subgraph -> subgraph -> subgraph.
        for _ in range(3):

            async def caller(state: CountState, _child: Any = graph) -> dict:
                return await _child.ainvoke({"count": 0})

            graph = (
                StateGraph(CountState)
                .add_node("caller", caller)
                .set_entry_point("caller")
                .compile()
            )

        run = await graph.astream_events({"count": 0}, version="v3")
        async for e in run:
            if (
                e["method"] == "values"
                and e["params"]["namespace"]
                and e["params"]["data"]["count"] >= 2
            ):
                break
        await run.abort()
        runs_at_abort = len(runs)
        # Give the (now-cancelled) nested subgraph a chance to keep looping.
        await asyncio.sleep(0.3)
        assert len(runs) == runs_at_abort
        assert len(runs) < 10

    async def test_abort_cancels_subgraph_during_inflight_pump(self) -> None:
        class CountState(TypedDict):
            count: int

        started = asyncio.Event()
        cancelled = asyncio.Event()

        async def sub_node(state: CountState) -> dict:
            started.set()
            try:
                # Long-running node: still in flight when abort fires.
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return {"count": state["count"] + 1}

        sub_graph = (
            StateGraph(CountState)
            .add_node("sub_node", sub_node)
            .set_entry_point("sub_node")
            .compile()
        )

        async def main_node(state: CountState) -> None:
            await sub_graph.ainvoke({"count": 0})

        main_graph = (
            StateGraph(CountState)
            .add_node("main_node", main_node)
            .set_entry_point("main_node")
            .compile()
        )

        run = await main_graph.astream_events({"count": 0}, version="v3")

        # A consumer task drives the pump. Once the subgraph node is
        # running, no further event is produced, so the consumer parks
        # inside _apump_next awaiting graph_aiter.__anext__() — the
        # generator is "running" and a plain aclose() would raise.
        async def consume() -> None:
            async for _e in run:
                pass

        consumer = asyncio.create_task(consume())
        try:
            await asyncio.wait_for(started.wait(), timeout=2.0)
            # Let the consumer drain and park in __anext__.
            await asyncio.sleep(0.05)
            # Abort from a different task while the consumer is in __anext__.
            await run.abort()
            # The in-flight subgraph node must observe cancellation.
            await asyncio.wait_for(cancelled.wait(), timeout=2.0)
        finally:
            consumer.cancel()
            try:
                await consumer
            except asyncio.CancelledError:
                pass

    async def test_extensions_has_native_keys(self) -> None:
        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        _ = await run.output()
        assert "values" in run.extensions and "messages" in run.extensions
        assert run.values is run.extensions["values"]
        assert run.messages is run.extensions["messages"]

    async def test_custom_stream_events(self) -> None:
        run = await _build_custom_stream_graph().astream_events(
            {"value": "x", "items": []},
            version="v3",
            transformers=[_CustomPassthroughTransformer],
        )
        events = [e async for e in run]
        custom_events = [e for e in events if e["method"] == "custom"]
        assert len(custom_events) == 2
        assert custom_events[0]["params"]["data"] == {"step": "start"}
        assert custom_events[1]["params"]["data"] == {"step": "end"}


@pytest.mark.anyio
@NEEDS_CONTEXTVARS
class TestStreamV2AsyncErrors:
    async def test_error_propagation_output(self) -> None:
        run = await _build_error_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            await run.output()

    async def test_error_propagation_values(self) -> None:
        run = await _build_error_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            async for _ in run.values:
                pass

    async def test_error_propagation_raw_events(self) -> None:
        run = await _build_error_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            async for _ in run:
                pass

    async def test_error_propagation_interrupted(self) -> None:
        run = await _build_error_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            await run.interrupted()

    async def test_error_propagation_interrupts(self) -> None:
        run = await _build_error_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        with pytest.raises(ValueError, match="boom"):
            await run.interrupts()


@pytest.mark.anyio
@NEEDS_CONTEXTVARS
class TestStreamV2AsyncInterrupt:
    async def test_interrupted(self) -> None:
        run = await _build_interrupt_graph().astream_events(
            {"value": "x", "items": []},
            {"configurable": {"thread_id": "t2"}},
            version="v3",
        )
        _ = await run.output()
        assert await run.interrupted() is True
        assert len(await run.interrupts()) > 0


# ---------------------------------------------------------------------------
# Custom transformer tests
# ---------------------------------------------------------------------------


class TestCustomTransformer:
    def test_extension_transformer_with_stream_channel(self) -> None:
        class CounterTransformer(StreamTransformer):
            def __init__(self, scope: tuple[str, ...] = ()) -> None:
                super().__init__(scope)
                self._channel: StreamChannel[int] = StreamChannel("counter")
                self._count = 0

            def init(self) -> dict[str, Any]:
                return {"counter": self._channel}

            def process(self, event: ProtocolEvent) -> bool:
                if event["method"] == "values":
                    self._count += 1
                    self._channel.push(self._count)
                return True

        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3", transformers=[CounterTransformer]
        )
        assert "counter" in run.extensions
        counter_iter = iter(run.extensions["counter"])
        _ = run.output
        counts = list(counter_iter)
        assert len(counts) > 0
        assert not hasattr(run, "counter")  # non-native: no direct attribute

    def test_native_transformer_gets_direct_attr(self) -> None:
        class FooTransformer(StreamTransformer):
            _native = True

            def __init__(self, scope: tuple[str, ...] = ()) -> None:
                super().__init__(scope)
                self._log: StreamChannel[str] = StreamChannel()

            def init(self) -> dict[str, Any]:
                return {"foo": self._log}

            def process(self, event: ProtocolEvent) -> bool:
                if event["method"] == "values":
                    self._log.push("saw_values")
                return True

        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3", transformers=[FooTransformer]
        )
        foo_iter = iter(run.foo)
        _ = run.output
        assert "foo" in run.extensions and run.foo is run.extensions["foo"]
        assert "saw_values" in list(foo_iter)

    def test_stream_events_v3_rejects_transformer_instances(self) -> None:
        class InstanceTransformer(StreamTransformer):
            def init(self) -> dict[str, Any]:
                return {}

            def process(self, event: ProtocolEvent) -> bool:
                return True

        with pytest.raises(TypeError, match="pre-built instance"):
            _build_simple_graph().stream_events(
                {"value": "x", "items": []},
                version="v3",
                transformers=[InstanceTransformer()],
            )

    def test_stream_channel_auto_forward(self) -> None:
        """StreamChannel pushes inject ProtocolEvents into the main log."""

        class EmitterTransformer(StreamTransformer):
            def __init__(self, scope: tuple[str, ...] = ()) -> None:
                super().__init__(scope)
                self._channel: StreamChannel[str] = StreamChannel("emitter")

            def init(self) -> dict[str, Any]:
                return {"emitter": self._channel}

            def process(self, event: ProtocolEvent) -> bool:
                if event["method"] == "values":
                    self._channel.push("emitted")
                return True

        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3", transformers=[EmitterTransformer]
        )
        custom_events = [e for e in run if e["method"] == "custom:emitter"]
        assert len(custom_events) > 0
        assert custom_events[0]["params"]["data"] == "emitted"

    def test_projection_key_conflict_raises(self) -> None:
        class ConflictTransformer(StreamTransformer):
            def __init__(self, scope: tuple[str, ...] = ()) -> None:
                super().__init__(scope)
                self._log: StreamChannel[str] = StreamChannel()

            def init(self) -> dict[str, Any]:
                return {"values": self._log}

            def process(self, event: ProtocolEvent) -> bool:
                return True

        with pytest.raises(ValueError, match=r"conflict.*'values'.*ValuesTransformer"):
            _build_simple_graph().stream_events(
                {"value": "x", "items": []},
                version="v3",
                transformers=[ConflictTransformer],
            )


# ---------------------------------------------------------------------------
# StreamChannel auto-lifecycle via StreamMux
# ---------------------------------------------------------------------------


class TestStreamChannelAutoLifecycle:
    def test_transformer_without_finalize_works(self) -> None:
        class MinimalTransformer(StreamTransformer):
            def __init__(self, scope: tuple[str, ...] = ()) -> None:
                super().__init__(scope)
                self._log: StreamChannel[str] = StreamChannel()

            def init(self) -> dict[str, Any]:
                return {"minimal": self._log}

            def process(self, event: ProtocolEvent) -> bool:
                if event["method"] == "values":
                    self._log.push("got_it")
                return True

        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3", transformers=[MinimalTransformer]
        )
        minimal_iter = iter(run.extensions["minimal"])
        _ = run.output
        assert len(list(minimal_iter)) > 0


# ---------------------------------------------------------------------------
# Async transformer lane
# ---------------------------------------------------------------------------


@pytest.mark.anyio
class TestAsyncTransformerLane:
    async def test_handler_astream_with_scheduled_work(self) -> None:
        class Scorer(StreamTransformer):
            requires_async = True

            def __init__(self, scope: tuple[str, ...] = ()) -> None:
                super().__init__(scope)
                self._log: StreamChannel[int] = StreamChannel()

            def init(self) -> dict[str, Any]:
                return {"scores": self._log}

            def process(self, event: ProtocolEvent) -> bool:
                if event["method"] == "values":

                    async def work() -> None:
                        await asyncio.sleep(0.01)
                        self._log.push(42)

                    self.schedule(work())
                return True

            async def afinalize(self) -> None:
                self._log.close()

        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3", transformers=[Scorer]
        )
        scores_cursor = aiter(run.extensions["scores"])
        _ = await run.output()
        scores = [x async for x in scores_cursor]
        assert scores and all(s == 42 for s in scores)


# ---------------------------------------------------------------------------
# Memory bounds: drain-on-consume semantics
# ---------------------------------------------------------------------------


@NEEDS_CONTEXTVARS
class TestMemoryBounds:
    def test_sync_subscribed_buffer_stays_at_most_one_between_yields(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        events_iter = iter(run)
        max_buffered = 0
        count = 0
        for _ in events_iter:
            max_buffered = max(max_buffered, len(run._mux._events._items))
            count += 1
        assert count > 0
        assert max_buffered == 0, (
            f"drain-on-consume violated, observed max {max_buffered}"
        )

    def test_unsubscribed_projections_never_accumulate(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        list(run)
        values_log = run.extensions["values"]
        messages_log = run.extensions["messages"]
        assert len(values_log._items) == 0 and not values_log._subscribed
        assert len(messages_log._items) == 0 and not messages_log._subscribed

    def test_output_path_does_not_retain_values(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        _ = run.output
        values_log = run.extensions["values"]
        assert len(values_log._items) == 0 and not values_log._subscribed

    def test_drained_subscriber_buffer_returns_to_empty(self) -> None:
        run = _build_simple_graph().stream_events(
            {"value": "x", "items": []}, version="v3"
        )
        list(run.values)
        assert len(run.extensions["values"]._items) == 0

    @pytest.mark.anyio
    async def test_async_single_consumer_buffer_stays_at_most_one(self) -> None:
        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        max_buffered = 0
        count = 0
        async for _ in run:
            max_buffered = max(max_buffered, len(run._mux._events._items))
            count += 1
        assert count > 0
        assert max_buffered == 0

    @pytest.mark.anyio
    async def test_async_unsubscribed_projections_never_accumulate(self) -> None:
        run = await _build_simple_graph().astream_events(
            {"value": "x", "items": []}, version="v3"
        )
        _ = await run.output()
        values_log = run.extensions["values"]
        messages_log = run.extensions["messages"]
        assert len(values_log._items) == 0 and not values_log._subscribed
        assert len(messages_log._items) == 0 and not messages_log._subscribed
