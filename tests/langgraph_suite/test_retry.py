"""Ported from LangGraph's libs/langgraph/tests/test_retry.py.

Upstream: langchain-ai/langgraph, commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f.
Imports switched to graphrun; bodies as upstream. The graph-API tests are
ported: retry policies on StateGraph nodes, node timeouts, error handlers,
set_node_defaults, cancellation. Tests of LangGraph's retry/timeout internals
(run_with_retry, arun_with_retry, PregelExecutableTask, the timed-attempt
observer, NodeBuilder/Pregel, the functional API) are not: see README.md.

`_should_retry_on(policy, exc)` is LangGraph's private helper; here it is a
one-line shim over graphrun's public `RetryPolicy.should_retry(exc)`, so the
upstream assertions on which exceptions a policy retries run unchanged.
All ported tests pass in-process (error handlers are nodes of their own,
`__error_handler__<node>`, as in LangGraph); the error handlers on Temporal are tested in
tests/temporal/test_error_handlers.py.
"""

import asyncio
import operator
import sys
import threading
from typing import Annotated, Any
from unittest.mock import Mock, patch
from uuid import uuid4

import httpx
import pytest
import requests
from langchain_core.runnables import RunnableConfig
from typing_extensions import TypedDict

from graphrun import (
    END,
    START,
    Command,
    InMemorySaver,
    MemorySaver,
    NodeCancelledError,
    NodeError,
    NodeTimeoutError,
    RetryPolicy,
    Runtime,
    Send,
    StateGraph,
    TimeoutPolicy,
    interrupt,
)
from graphrun.func import entrypoint, task

pytestmark = pytest.mark.anyio


# graphrun: the error-handler tests run on Temporal too. Their graphs are served by the
# suite's worker (tests/langgraph_suite/temporal_driver.py), each run without a thread
# id on a thread of its own; where Temporal differs on purpose, ON_TEMPORAL says why (a
# crashed handler's resume on Temporal: tests/temporal/test_error_handlers.py). A node's
# built-in exception (RuntimeError, ValueError) reaches a Temporal client as a
# NodeFailedError that is that class too, so the upstream `pytest.raises` hold.
ON_TEMPORAL: dict[str, str] = {}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "error_handler" in metafunc.function.__name__:
        metafunc.parametrize("driver", ["memory", "temporal"], indirect=True)


@pytest.fixture(autouse=True)
def driver(request: pytest.FixtureRequest) -> str:
    where = getattr(request, "param", "memory")
    if where == "temporal":
        name = request.function.__name__
        if name in ON_TEMPORAL:
            request.applymarker(pytest.mark.xfail(strict=True, reason=ON_TEMPORAL[name]))
        from tests.langgraph_suite.temporal_driver import serve_every_graph

        serve_every_graph(request)
    return where


def _should_retry_on(policy: RetryPolicy, exc: BaseException) -> bool:
    return policy.should_retry(exc)


# `asyncio.Task.cancelling()` is Python 3.11+. The LSD-1507 fix in
# `langgraph/pregel/_retry.py` falls back to a no-op on 3.10 (preserves the
# existing CancelledError-as-silent-tear-down behaviour) because there is no
# reliable way to distinguish user-raised from framework-initiated
# cancellation without that API. Tests for the converted behaviour gate on
# the same Python version boundary.
NEEDS_CONTEXTVARS = pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="Python 3.11+ is required for async contextvars support",
)

NEEDS_TASK_CANCELLING = pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="LSD-1507 user-cancellation conversion requires Python 3.11+ "
    "(asyncio.Task.cancelling)",
)


def test_should_retry_on_single_exception():
    """Test retry with a single exception type."""
    policy = RetryPolicy(retry_on=ValueError)

    # Should retry on ValueError
    assert _should_retry_on(policy, ValueError("test error")) is True

    # Should not retry on other exceptions
    assert _should_retry_on(policy, TypeError("test error")) is False
    assert _should_retry_on(policy, Exception("test error")) is False


def test_should_retry_on_sequence_of_exceptions():
    """Test retry with a sequence of exception types."""
    policy = RetryPolicy(retry_on=(ValueError, KeyError))

    # Should retry on listed exceptions
    assert _should_retry_on(policy, ValueError("test error")) is True
    assert _should_retry_on(policy, KeyError("test error")) is True

    # Should not retry on other exceptions
    assert _should_retry_on(policy, TypeError("test error")) is False
    assert _should_retry_on(policy, Exception("test error")) is False


def test_should_retry_on_subclass_of_exception():
    """Test retry on subclass of specified exception."""

    class CustomError(ValueError):
        pass

    policy = RetryPolicy(retry_on=ValueError)

    # Should retry on subclass of specified exception
    assert _should_retry_on(policy, CustomError("test error")) is True


def test_should_retry_on_callable():
    """Test retry with a callable predicate."""

    # Only retry on ValueError with message containing 'retry'
    def should_retry(exc: Exception) -> bool:
        return isinstance(exc, ValueError) and "retry" in str(exc)

    policy = RetryPolicy(retry_on=should_retry)

    # Should retry when predicate returns True
    assert _should_retry_on(policy, ValueError("please retry this")) is True

    # Should not retry when predicate returns False
    assert _should_retry_on(policy, ValueError("other error")) is False
    assert _should_retry_on(policy, TypeError("please retry this")) is False


def test_should_retry_on_invalid_type():
    """Test retry with an invalid retry_on type."""
    policy = RetryPolicy(retry_on=123)  # type: ignore

    with pytest.raises(TypeError, match="retry_on must be an Exception class"):
        _should_retry_on(policy, ValueError("test error"))


def test_should_retry_on_empty_sequence():
    """Test retry with an empty sequence."""
    policy = RetryPolicy(retry_on=())

    # Should not retry when sequence is empty
    assert _should_retry_on(policy, ValueError("test error")) is False


def test_should_retry_default_retry_on():
    """Test the default retry_on function."""

    # Create a RetryPolicy with default_retry_on
    policy = RetryPolicy()

    # Should retry on ConnectionError
    assert _should_retry_on(policy, ConnectionError("connection refused")) is True

    # Should not retry on common programming errors
    assert _should_retry_on(policy, ValueError("invalid value")) is False
    assert _should_retry_on(policy, TypeError("invalid type")) is False
    assert _should_retry_on(policy, ArithmeticError("division by zero")) is False
    assert _should_retry_on(policy, ImportError("module not found")) is False
    assert _should_retry_on(policy, LookupError("key not found")) is False
    assert _should_retry_on(policy, NameError("name not defined")) is False
    assert _should_retry_on(policy, SyntaxError("invalid syntax")) is False
    assert _should_retry_on(policy, RuntimeError("runtime error")) is False
    assert _should_retry_on(policy, ReferenceError("weak reference")) is False
    assert _should_retry_on(policy, StopIteration()) is False
    assert _should_retry_on(policy, StopAsyncIteration()) is False
    assert _should_retry_on(policy, OSError("file not found")) is False

    # Should retry on httpx.HTTPStatusError with 5xx status code
    response_5xx = Mock()
    response_5xx.status_code = 503
    http_error_5xx = httpx.HTTPStatusError(
        "server error", request=Mock(), response=response_5xx
    )
    assert _should_retry_on(policy, http_error_5xx) is True

    # Should not retry on httpx.HTTPStatusError with 4xx status code
    response_4xx = Mock()
    response_4xx.status_code = 404
    http_error_4xx = httpx.HTTPStatusError(
        "not found", request=Mock(), response=response_4xx
    )
    assert _should_retry_on(policy, http_error_4xx) is False

    # Should retry on requests.HTTPError with 5xx status code
    response_req_5xx = Mock()
    response_req_5xx.status_code = 502
    req_error_5xx = requests.HTTPError("bad gateway")
    req_error_5xx.response = response_req_5xx
    assert _should_retry_on(policy, req_error_5xx) is True

    # Should not retry on requests.HTTPError with 4xx status code
    response_req_4xx = Mock()
    response_req_4xx.status_code = 400
    req_error_4xx = requests.HTTPError("bad request")
    req_error_4xx.response = response_req_4xx
    assert _should_retry_on(policy, req_error_4xx) is False

    # Should retry on requests.HTTPError with no response
    req_error_no_resp = requests.HTTPError("connection error")
    req_error_no_resp.response = None
    assert _should_retry_on(policy, req_error_no_resp) is True

    # NodeTimeoutError should be retryable by default
    assert (
        _should_retry_on(
            policy,
            NodeTimeoutError("node", 1.0, kind="run", run_timeout=0.5),
        )
        is True
    )

    # Should retry on other exceptions by default
    class CustomException(Exception):
        pass

    assert _should_retry_on(policy, CustomException("custom error")) is True


def test_graph_with_single_retry_policy():
    """Test a simple graph with a single RetryPolicy for a node."""

    class State(TypedDict):
        foo: str

    attempt_count = 0
    attempt_numbers: list[int] = []
    first_attempt_times: list[float | None] = []

    def failing_node(state: State, runtime: Runtime):
        nonlocal attempt_count
        attempt_count += 1
        assert runtime.execution_info.node_attempt == attempt_count
        attempt_numbers.append(runtime.execution_info.node_attempt)
        first_attempt_times.append(runtime.execution_info.node_first_attempt_time)
        if attempt_count < 3:  # Fail the first two attempts
            raise ValueError("Intentional failure")
        return {"foo": "success"}

    def other_node(state: State):
        return {"foo": "other_node"}

    # Create a retry policy with specific parameters
    retry_policy = RetryPolicy(
        max_attempts=3,
        initial_interval=0.01,  # Short interval for tests
        backoff_factor=2.0,
        jitter=False,  # Disable jitter for predictable timing
        retry_on=ValueError,
    )

    # Create and compile the graph
    graph = (
        StateGraph(State)
        .add_node("failing_node", failing_node, retry_policy=retry_policy)
        .add_node("other_node", other_node)
        .add_edge(START, "failing_node")
        .add_edge("failing_node", "other_node")
        .compile()
    )

    with patch("time.sleep") as mock_sleep:
        result = graph.invoke({"foo": ""})

    # Verify retry behavior
    assert attempt_count == 3  # The node should have been tried 3 times
    assert attempt_numbers == [1, 2, 3]
    assert len(first_attempt_times) == 3
    assert first_attempt_times[0] is not None
    assert first_attempt_times[1] == first_attempt_times[0]
    assert first_attempt_times[2] == first_attempt_times[0]
    assert result["foo"] == "other_node"  # Final result should be from other_node

    # Verify the sleep intervals
    call_args_list = [args[0][0] for args in mock_sleep.call_args_list]
    assert call_args_list == [0.01, 0.02]


def test_runtime_execution_info_defaults_without_retry():
    """Test execution_info defaults when no retry and no config are provided."""

    class State(TypedDict):
        foo: str

    captured = {}

    def node(state: State, runtime: Runtime):
        captured["node_attempt"] = runtime.execution_info.node_attempt
        captured["node_first_attempt_time"] = (
            runtime.execution_info.node_first_attempt_time
        )
        return {"foo": "ok"}

    graph = StateGraph(State).add_node("node", node).add_edge(START, "node").compile()

    result = graph.invoke({"foo": ""})

    assert result["foo"] == "ok"
    assert captured["node_attempt"] == 1
    assert isinstance(captured["node_first_attempt_time"], float)


def test_graph_with_jitter_retry_policy():
    """Test a graph with a RetryPolicy that uses jitter."""

    class State(TypedDict):
        foo: str

    attempt_count = 0

    def failing_node(state):
        nonlocal attempt_count
        attempt_count += 1
        if attempt_count < 2:  # Fail the first attempt
            raise ValueError("Intentional failure")
        return {"foo": "success"}

    # Create a retry policy with jitter enabled
    retry_policy = RetryPolicy(
        max_attempts=3,
        initial_interval=0.01,
        jitter=True,  # Enable jitter for randomized backoff
        retry_on=ValueError,
    )

    # Create and compile the graph
    graph = (
        StateGraph(State)
        .add_node("failing_node", failing_node, retry_policy=retry_policy)
        .add_edge(START, "failing_node")
        .compile()
    )

    # Test graph execution with mocked random and sleep
    with (
        patch("random.uniform", return_value=0.05) as mock_random,
        patch("time.sleep") as mock_sleep,
    ):
        result = graph.invoke({"foo": ""})

    # Verify retry behavior
    assert attempt_count == 2  # The node should have been tried twice
    assert result["foo"] == "success"

    # Verify jitter was applied
    mock_random.assert_called_with(0, 1)  # Jitter should use random.uniform(0, 1)
    mock_sleep.assert_called_with(0.01 + 0.05)  # Sleep should include jitter


def test_graph_with_multiple_retry_policies():
    """Test a graph with multiple retry policies for a node."""

    class State(TypedDict):
        foo: str
        error_type: str

    attempt_counts = {"value_error": 0, "key_error": 0}

    def failing_node(state):
        error_type = state["error_type"]

        if error_type == "value_error":
            attempt_counts["value_error"] += 1
            if attempt_counts["value_error"] < 2:
                raise ValueError("Value error")
        elif error_type == "key_error":
            attempt_counts["key_error"] += 1
            if attempt_counts["key_error"] < 3:
                raise KeyError("Key error")

        return {"foo": f"recovered_from_{error_type}"}

    # Create multiple retry policies
    value_error_policy = RetryPolicy(
        max_attempts=2,
        initial_interval=0.01,
        jitter=False,
        retry_on=ValueError,
    )

    key_error_policy = RetryPolicy(
        max_attempts=3,
        initial_interval=0.02,
        jitter=False,
        retry_on=KeyError,
    )

    # Create and compile the graph with a list of retry policies
    graph = (
        StateGraph(State)
        .add_node(
            "failing_node",
            failing_node,
            retry_policy=(value_error_policy, key_error_policy),
        )
        .add_edge(START, "failing_node")
        .compile()
    )

    # Test ValueError scenario
    with patch("time.sleep"):
        result_value_error = graph.invoke({"foo": "", "error_type": "value_error"})

    assert attempt_counts["value_error"] == 2
    assert result_value_error["foo"] == "recovered_from_value_error"

    # Reset attempt counts
    attempt_counts = {"value_error": 0, "key_error": 0}

    # Test KeyError scenario
    with patch("time.sleep"):
        result_key_error = graph.invoke({"foo": "", "error_type": "key_error"})

    assert attempt_counts["key_error"] == 3
    assert result_key_error["foo"] == "recovered_from_key_error"


def test_graph_with_max_attempts_exceeded():
    """Test a graph where max_attempts is exceeded."""

    class State(TypedDict):
        foo: str

    def always_failing_node(state):
        raise ValueError("Always fails")

    # Create a retry policy with limited attempts
    retry_policy = RetryPolicy(
        max_attempts=2,
        initial_interval=0.01,
        jitter=False,
        retry_on=ValueError,
    )

    # Create and compile the graph
    graph = (
        StateGraph(State)
        .add_node("always_failing", always_failing_node, retry_policy=retry_policy)
        .add_edge(START, "always_failing")
        .compile()
    )

    # Test graph execution
    with (
        patch("time.sleep") as mock_sleep,
        pytest.raises(ValueError, match="Always fails"),
    ):
        graph.invoke({"foo": ""})

    mock_sleep.assert_called_with(0.01)


def test_execution_info_identity_fields_populated_on_retry():
    """Test that thread_id, task_id, run_id, etc. are populated in execution_info during retries."""

    class State(TypedDict):
        foo: str

    attempt_count = 0
    captured_infos: list[dict] = []

    def failing_node(state: State, runtime: Runtime):
        nonlocal attempt_count
        attempt_count += 1
        info = runtime.execution_info
        captured_infos.append(
            {
                "thread_id": info.thread_id,
                "run_id": info.run_id,
                "node_attempt": info.node_attempt,
                "node_first_attempt_time": info.node_first_attempt_time,
                "checkpoint_ns": info.checkpoint_ns,
            }
        )
        if attempt_count < 2:
            raise ValueError("Intentional failure")
        return {"foo": "success"}

    retry_policy = RetryPolicy(
        max_attempts=3,
        initial_interval=0.01,
        jitter=False,
        retry_on=ValueError,
    )

    graph = (
        StateGraph(State)
        .add_node("failing_node", failing_node, retry_policy=retry_policy)
        .add_edge(START, "failing_node")
        .compile(checkpointer=MemorySaver())
    )

    with patch("time.sleep"):
        result = graph.invoke(
            {"foo": ""},
            config={"configurable": {"thread_id": "retry-thread"}},
        )

    assert result["foo"] == "success"
    assert len(captured_infos) == 2

    # Both attempts should have the same thread_id and first_attempt_time
    assert captured_infos[0]["thread_id"] == "retry-thread"
    assert captured_infos[1]["thread_id"] == "retry-thread"
    assert (
        captured_infos[0]["node_first_attempt_time"]
        == captured_infos[1]["node_first_attempt_time"]
    )

    # node_attempt should increment
    assert captured_infos[0]["node_attempt"] == 1
    assert captured_infos[1]["node_attempt"] == 2


class _TimeoutState(TypedDict):
    x: int


def test_timeout_validation_is_eager_across_apis():
    with pytest.raises(ValueError, match="greater than 0"):
        task(timeout=0)

    with pytest.raises(ValueError, match="greater than 0"):
        entrypoint(timeout=0)

    # graphrun: NodeBuilder().set_timeout(0) and PregelNode(..., timeout=0) dropped
    # (LangGraph's low-level Pregel API, which graphrun does not have).

    with pytest.raises(ValueError, match="greater than 0"):
        Send("slow", {}, timeout=0)

    builder = StateGraph(_TimeoutState)
    with pytest.raises(ValueError, match="greater than 0"):
        builder.add_node("slow", lambda state: state, timeout=0)


def test_timeout_rejects_sync_functional_apis_at_declaration_time():
    with pytest.raises(ValueError, match="only supported for async nodes"):

        @task(timeout=TimeoutPolicy(idle_timeout=0.05))
        def sync_task(value: int) -> int:
            return value

    with pytest.raises(ValueError, match="only supported for async nodes"):

        @entrypoint(timeout=TimeoutPolicy(idle_timeout=0.05))
        def sync_entrypoint(value: int) -> int:
            return value


async def test_entrypoint_timeout_allows_pre_timeout_child_task_to_run():
    child_started = threading.Event()

    @task()
    def child(value: int) -> int:
        child_started.set()
        return value + 1

    @entrypoint(timeout=TimeoutPolicy(idle_timeout=0.05))
    async def parent(value: int) -> int:
        child(value)
        await asyncio.sleep(0.2)
        return value

    with pytest.raises(NodeTimeoutError):
        await parent.ainvoke(1)
    assert child_started.wait(timeout=1.0)


@NEEDS_CONTEXTVARS
async def test_task_decorator_timeout_e2e():
    @task(timeout=TimeoutPolicy(idle_timeout=0.05))
    async def slow_task(x: int) -> int:
        await asyncio.sleep(0.2)
        return x + 1

    @entrypoint()
    async def workflow(x: int) -> int:
        return await slow_task(x)

    with pytest.raises(NodeTimeoutError):
        await workflow.ainvoke(1)


@NEEDS_CONTEXTVARS
async def test_task_decorator_preserves_user_idle_timeout_kwarg():
    @task(timeout=TimeoutPolicy(idle_timeout=1.0))
    async def echo_idle_timeout(*, idle_timeout: int) -> int:
        await asyncio.sleep(0)
        return idle_timeout

    @entrypoint()
    async def workflow(x: int) -> int:
        return await echo_idle_timeout(idle_timeout=x)

    assert await workflow.ainvoke(5) == 5


@NEEDS_CONTEXTVARS
async def test_task_decorator_preserves_user_timeout_kwarg():
    @task(timeout=1.0)
    async def echo_timeout(*, timeout: int) -> int:
        await asyncio.sleep(0)
        return timeout

    @entrypoint()
    async def workflow(x: int) -> int:
        return await echo_timeout(timeout=x)

    assert await workflow.ainvoke(5) == 5


async def test_entrypoint_timeout_e2e():
    @entrypoint(timeout=TimeoutPolicy(idle_timeout=0.05))
    async def slow_workflow(x: int) -> int:
        await asyncio.sleep(0.2)
        return x

    with pytest.raises(NodeTimeoutError):
        await slow_workflow.ainvoke(1)


def test_state_graph_compile_rejects_sync_node_timeout():
    def slow(state: _TimeoutState) -> _TimeoutState:
        return {"x": state["x"] + 1}

    builder = StateGraph(_TimeoutState)
    builder.add_node("slow", slow, timeout=TimeoutPolicy(idle_timeout=0.05))
    builder.add_edge(START, "slow")
    builder.add_edge("slow", END)

    with pytest.raises(ValueError, match="only supported for async nodes"):
        builder.compile()


@pytest.mark.anyio
async def test_state_graph_add_node_timeout_e2e():
    async def slow(state: _TimeoutState) -> _TimeoutState:
        await asyncio.sleep(1.0)
        return {"x": state["x"] + 1}

    builder = StateGraph(_TimeoutState)
    builder.add_node("slow", slow, timeout=TimeoutPolicy(idle_timeout=0.05))
    builder.add_edge(START, "slow")
    builder.add_edge("slow", END)
    graph = builder.compile()
    with pytest.raises(NodeTimeoutError):
        await graph.ainvoke({"x": 1})


@pytest.mark.anyio
async def test_send_timeout_overrides_target_node_timeout():
    async def slow(state: _TimeoutState) -> _TimeoutState:
        await asyncio.sleep(0.2)
        return {"x": state["x"] + 1}

    def route(state: _TimeoutState) -> list[Send]:
        return [Send("slow", state, timeout=TimeoutPolicy(idle_timeout=0.05))]

    builder = StateGraph(_TimeoutState)
    builder.add_node("slow", slow, timeout=TimeoutPolicy(idle_timeout=1.0))
    builder.add_conditional_edges(START, route)
    builder.add_edge("slow", END)
    graph = builder.compile()

    with pytest.raises(NodeTimeoutError) as excinfo:
        await graph.ainvoke({"x": 1})
    assert excinfo.value.node == "slow"
    assert excinfo.value.kind == "idle"
    assert excinfo.value.idle_timeout == 0.05


@pytest.mark.anyio
async def test_state_graph_add_node_timeout_composes_with_retry():
    """add_node(..., timeout=TimeoutPolicy(...)) retries then succeeds."""

    attempts: list[int] = []

    async def flaky(state: _TimeoutState) -> _TimeoutState:
        attempts.append(len(attempts))
        if len(attempts) < 2:
            await asyncio.sleep(1.0)
        return {"x": state["x"] + 1}

    builder = StateGraph(_TimeoutState)
    builder.add_node(
        "flaky",
        flaky,
        timeout=TimeoutPolicy(idle_timeout=0.3),
        retry_policy=RetryPolicy(
            max_attempts=3,
            initial_interval=0.0,
            jitter=False,
            retry_on=NodeTimeoutError,
        ),
    )
    builder.add_edge(START, "flaky")
    builder.add_edge("flaky", END)
    graph = builder.compile()
    result = await graph.ainvoke({"x": 0})
    assert result == {"x": 1}
    assert len(attempts) == 2


def test_graph_error_handler_runs_after_retry_exhaustion():
    class State(TypedDict):
        foo: str

    attempts = 0
    captured: dict[str, object] = {}

    def always_failing_node(state: State) -> State:
        nonlocal attempts
        attempts += 1
        raise ValueError("Always fails")

    def err_handler_node(state: State, error: NodeError) -> Command:
        captured["from_node_name"] = error.node
        captured["from_node_error"] = error.error
        return Command(update={"foo": "handled"}, goto="after_handler")

    def after_handler(state: State) -> State:
        return {"foo": f"{state['foo']}_after"}

    retry_policy = RetryPolicy(
        max_attempts=2,
        initial_interval=0.01,
        jitter=False,
        retry_on=ValueError,
    )

    graph = (
        StateGraph(State)
        .add_node(
            "always_failing",
            always_failing_node,
            retry_policy=retry_policy,
            error_handler=err_handler_node,
        )
        .add_node("after_handler", after_handler)
        .add_edge(START, "always_failing")
        .compile()
    )

    with patch("time.sleep"):
        result = graph.invoke({"foo": ""})

    assert attempts == 2
    assert result["foo"] == "handled_after"
    assert captured["from_node_name"] == "always_failing"
    assert isinstance(captured["from_node_error"], BaseException)


def test_graph_error_handler_can_route_with_command():
    class State(TypedDict):
        foo: str

    attempts = 0

    def always_failing_node(state: State) -> State:
        nonlocal attempts
        attempts += 1
        raise ValueError("Always fails")

    def err_handler_node(state: State) -> Command:
        return Command(update={"foo": "handled"}, goto="next_node")

    def next_node(state: State) -> State:
        return {"foo": f"{state['foo']}_next"}

    retry_policy = RetryPolicy(
        max_attempts=1,
        initial_interval=0.01,
        jitter=False,
        retry_on=ValueError,
    )

    graph = (
        StateGraph(State)
        .add_node(
            "always_failing",
            always_failing_node,
            retry_policy=retry_policy,
            error_handler=err_handler_node,
        )
        .add_node("next_node", next_node)
        .add_edge(START, "always_failing")
        .compile()
    )

    result = graph.invoke({"foo": ""})
    assert attempts == 1
    assert result["foo"] == "handled_next"


def test_graph_error_handler_failure_fails_run():
    class State(TypedDict):
        foo: str

    def always_failing_node(state: State) -> State:
        raise ValueError("Always fails")

    def err_handler_node(state: State) -> State:
        raise RuntimeError("handler failed")

    graph = (
        StateGraph(State)
        .add_node("always_failing", always_failing_node, error_handler=err_handler_node)
        .add_edge(START, "always_failing")
        .compile()
    )

    with pytest.raises(RuntimeError, match="handler failed"):
        graph.invoke({"foo": ""})


def test_graph_error_handler_handles_subgraph_internal_failure():
    class SubState(TypedDict):
        foo: str

    class ParentState(TypedDict):
        foo: str

    parent_handler_called = False
    captured: dict[str, object] = {}

    def sub_fail_node(state: SubState) -> SubState:
        raise ValueError("subgraph boom")

    def parent_handler(state: ParentState, error: NodeError) -> ParentState:
        nonlocal parent_handler_called
        parent_handler_called = True
        captured["from_node_name"] = error.node
        captured["from_node_error"] = error.error
        return {"foo": "handled_by_parent"}

    subgraph = (
        StateGraph(SubState)
        .add_node("sub_fail_node", sub_fail_node)
        .add_edge(START, "sub_fail_node")
        .compile()
    )

    parent_graph = (
        StateGraph(ParentState)
        .add_node("subgraph_node", subgraph, error_handler=parent_handler)
        .add_edge(START, "subgraph_node")
        .compile()
    )

    result = parent_graph.invoke({"foo": ""})
    assert result["foo"] == "handled_by_parent"
    assert parent_handler_called is True
    assert captured["from_node_name"] == "subgraph_node"
    assert isinstance(captured["from_node_error"], BaseException)


def test_graph_error_handler_error_context_survives_checkpoint_resume():
    class State(TypedDict):
        foo: str

    captured: dict[str, object] = {}

    def always_failing_node(state: State) -> State:
        raise RuntimeError("failed before handler")

    def err_handler_node(state: State, error: NodeError) -> State:
        captured["from_node_name"] = error.node
        captured["from_node_error"] = error.error
        return {"foo": "handled_after_resume"}

    checkpointer = InMemorySaver()
    config = {"configurable": {"thread_id": "graph-error-resume"}}
    graph = (
        StateGraph(State)
        .add_node("always_failing", always_failing_node, error_handler=err_handler_node)
        .add_edge(START, "always_failing")
        .compile(
            checkpointer=checkpointer,
            interrupt_before=["__error_handler__always_failing"],
        )
    )

    # First run pauses before handler, after failure context is checkpointed.
    graph.invoke({"foo": ""}, config)
    # Resume should execute handler and recover serialized error context.
    result = graph.invoke(None, config)

    assert result["foo"] == "handled_after_resume"
    assert captured["from_node_name"] == "always_failing"
    assert isinstance(captured["from_node_error"], BaseException)


def test_graph_error_handler_does_not_swallow_interrupt_concurrent():
    """When a graph error handler is configured and a node calls interrupt()
    concurrently with other nodes, the interrupt must still be raised — not
    silently swallowed."""

    class State(TypedDict):
        foo: str

    def node_a(state: State) -> State:
        # This node uses interrupt() which raises GraphInterrupt
        val = interrupt("need human input")
        return {"foo": f"a_{val}"}

    def node_b(state: State) -> State:
        return {}

    def err_handler(state: State) -> State:
        return {"foo": "handled"}

    checkpointer = InMemorySaver()
    graph = (
        StateGraph(State)
        .add_node("node_a", node_a, error_handler=err_handler)
        .add_node("node_b", node_b)
        # Fan-out: both node_a and node_b run concurrently
        .add_edge(START, "node_a")
        .add_edge(START, "node_b")
        .compile(checkpointer=checkpointer)
    )

    config = {"configurable": {"thread_id": "test-interrupt-concurrent"}}

    # First invoke should pause at the interrupt, not silently complete
    graph.invoke({"foo": ""}, config)

    # The graph should have an interrupt pending
    state = graph.get_state(config)
    assert len(state.tasks) > 0

    # There should be a pending interrupt from node_a
    interrupts = [t for t in state.tasks if hasattr(t, "interrupts") and t.interrupts]
    assert len(interrupts) > 0, (
        "GraphInterrupt was swallowed — interrupt() in node_a "
        "should have paused execution"
    )


def test_node_error_handlers_route_to_matching_handler():
    class State(TypedDict):
        route: str
        foo: Annotated[list[str], operator.add]

    def route_node(state: State) -> State:
        return {"foo": []}

    def choose_node(state: State) -> str:
        return state["route"]

    def fail_a(state: State) -> State:
        raise ValueError("a failed")

    def fail_b(state: State) -> State:
        raise RuntimeError("b failed")

    def handler_a(state: State, error: NodeError) -> State:
        assert error.node == "fail_a"
        return {"foo": ["handled_a"]}

    def handler_b(state: State, error: NodeError) -> State:
        assert error.node == "fail_b"
        return {"foo": ["handled_b"]}

    graph = (
        StateGraph(State)
        .add_node("route_node", route_node)
        .add_node("fail_a", fail_a, error_handler=handler_a)
        .add_node("fail_b", fail_b, error_handler=handler_b)
        .add_edge(START, "route_node")
        .add_conditional_edges("route_node", choose_node, path_map=["fail_a", "fail_b"])
        .compile()
    )

    result_a = graph.invoke({"route": "fail_a", "foo": []})
    result_b = graph.invoke({"route": "fail_b", "foo": []})
    assert result_a["foo"] == ["handled_a"]
    assert result_b["foo"] == ["handled_b"]


def test_node_without_error_handler_still_fails_run():
    class State(TypedDict):
        foo: str

    def fail_without_handler(state: State) -> State:
        raise ValueError("no handler")

    graph = (
        StateGraph(State)
        .add_node("fail_without_handler", fail_without_handler)
        .add_edge(START, "fail_without_handler")
        .compile()
    )

    with pytest.raises(ValueError, match="no handler"):
        graph.invoke({"foo": ""})


def test_set_node_defaults_error_handler_catches_all_nodes():
    class State(TypedDict):
        route: str
        foo: Annotated[list[str], operator.add]

    def route_node(state: State) -> Command:
        return Command(goto=state["route"])

    def fail_a(state: State) -> State:
        raise RuntimeError("a failed")

    def fail_b(state: State) -> State:
        raise RuntimeError("b failed")

    captured: dict[str, list[str]] = {"nodes": []}

    def default_handler(state: State, error: NodeError) -> State:
        captured["nodes"].append(error.node)
        return {"foo": [f"handled_{error.node}"]}

    graph = (
        StateGraph(State)
        .set_node_defaults(error_handler=default_handler)
        .add_node("route_node", route_node)
        .add_node("fail_a", fail_a)
        .add_node("fail_b", fail_b)
        .add_edge(START, "route_node")
        .add_conditional_edges(
            "route_node", lambda s: s["route"], path_map=["fail_a", "fail_b"]
        )
        .compile()
    )

    result_a = graph.invoke({"route": "fail_a", "foo": []})
    result_b = graph.invoke({"route": "fail_b", "foo": []})
    assert result_a["foo"] == ["handled_fail_a"]
    assert result_b["foo"] == ["handled_fail_b"]
    assert "fail_a" in captured["nodes"]
    assert "fail_b" in captured["nodes"]


def test_set_node_defaults_error_handler_overridden_by_node_handler():
    class State(TypedDict):
        route: str
        foo: Annotated[list[str], operator.add]

    def route_node(state: State) -> Command:
        return Command(goto=state["route"])

    def fail_a(state: State) -> State:
        raise RuntimeError("a failed")

    def fail_b(state: State) -> State:
        raise RuntimeError("b failed")

    captured: dict[str, list[str]] = {"handler": []}

    def node_handler(state: State, error: NodeError) -> State:
        captured["handler"].append(f"node:{error.node}")
        return {"foo": [f"node_handled_{error.node}"]}

    def default_handler(state: State, error: NodeError) -> State:
        captured["handler"].append(f"default:{error.node}")
        return {"foo": [f"default_handled_{error.node}"]}

    graph = (
        StateGraph(State)
        .set_node_defaults(error_handler=default_handler)
        .add_node("route_node", route_node)
        .add_node("fail_a", fail_a, error_handler=node_handler)
        .add_node("fail_b", fail_b)
        .add_edge(START, "route_node")
        .add_conditional_edges(
            "route_node", lambda s: s["route"], path_map=["fail_a", "fail_b"]
        )
        .compile()
    )

    result_a = graph.invoke({"route": "fail_a", "foo": []})
    assert result_a["foo"] == ["node_handled_fail_a"]
    assert "node:fail_a" in captured["handler"]
    assert "default:fail_a" not in captured["handler"]

    result_b = graph.invoke({"route": "fail_b", "foo": []})
    assert result_b["foo"] == ["default_handled_fail_b"]
    assert "default:fail_b" in captured["handler"]


def test_set_node_defaults_error_handler_skips_per_node_handler_nodes():
    """If a per-node error handler itself raises, the default handler must NOT
    catch it -- the run should fail."""

    class State(TypedDict):
        foo: str

    def always_failing(state: State) -> State:
        raise RuntimeError("node boom")

    def broken_handler(state: State, error: NodeError) -> State:
        raise RuntimeError("handler boom")

    def default_handler(state: State, error: NodeError) -> State:
        return {"foo": "default recovered"}

    graph = (
        StateGraph(State)
        .set_node_defaults(error_handler=default_handler)
        .add_node("always_failing", always_failing, error_handler=broken_handler)
        .add_edge(START, "always_failing")
        .compile()
    )

    with pytest.raises(RuntimeError, match="handler boom"):
        graph.invoke({"foo": ""})


def test_set_node_defaults_error_handler_failure_fails_run():
    """When the default handler itself raises, the run fails (no infinite
    recursion, no double-routing)."""

    class State(TypedDict):
        foo: str

    def always_failing(state: State) -> State:
        raise RuntimeError("node boom")

    def broken_default_handler(state: State, error: NodeError) -> State:
        raise RuntimeError("default handler boom")

    graph = (
        StateGraph(State)
        .set_node_defaults(error_handler=broken_default_handler)
        .add_node("always_failing", always_failing)
        .add_edge(START, "always_failing")
        .compile()
    )

    with pytest.raises(RuntimeError, match="default handler boom"):
        graph.invoke({"foo": ""})


def test_set_node_defaults_error_handler_receives_runnable_config():
    class State(TypedDict):
        foo: str

    def always_failing(state: State) -> State:
        raise RuntimeError("boom")

    captured: dict[str, Any] = {}

    def default_handler(
        state: State, error: NodeError, config: RunnableConfig
    ) -> State:
        captured["thread_id"] = config["configurable"].get("thread_id")
        return {"foo": "handled"}

    checkpointer = MemorySaver()
    graph = (
        StateGraph(State)
        .set_node_defaults(error_handler=default_handler)
        .add_node("always_failing", always_failing)
        .add_edge(START, "always_failing")
        .compile(checkpointer=checkpointer)
    )

    thread_id = str(uuid4())
    result = graph.invoke(
        {"foo": ""}, config={"configurable": {"thread_id": thread_id}}
    )
    assert result["foo"] == "handled"
    assert captured["thread_id"] == thread_id


def test_set_node_defaults_error_handler_collides_with_user_node():
    class State(TypedDict):
        foo: str

    def default_handler(state: State, error: NodeError) -> State:
        return {"foo": "handled"}

    builder = (
        StateGraph(State)
        .set_node_defaults(error_handler=default_handler)
        .add_node("__default_error_handler__", lambda s: s)
        .add_edge(START, "__default_error_handler__")
    )

    with pytest.raises(ValueError, match="__default_error_handler__"):
        builder.compile()


def test_set_node_defaults_retry_policy():
    class State(TypedDict):
        foo: str

    attempts = 0

    def flaky_node(state: State) -> State:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise ValueError("not yet")
        return {"foo": "ok"}

    graph = (
        StateGraph(State)
        .set_node_defaults(
            retry_policy=RetryPolicy(
                max_attempts=3, initial_interval=0.01, jitter=False, retry_on=ValueError
            )
        )
        .add_node("flaky", flaky_node)
        .add_edge(START, "flaky")
        .compile()
    )

    with patch("time.sleep"):
        result = graph.invoke({"foo": ""})

    assert result["foo"] == "ok"
    assert attempts == 3


def test_set_node_defaults_retry_policy_per_node_wins():
    class State(TypedDict):
        foo: str

    attempts = 0

    def flaky_node(state: State) -> State:
        nonlocal attempts
        attempts += 1
        if attempts < 2:
            raise ValueError("not yet")
        return {"foo": "ok"}

    graph = (
        StateGraph(State)
        .set_node_defaults(
            retry_policy=RetryPolicy(
                max_attempts=1, initial_interval=0.01, jitter=False, retry_on=ValueError
            )
        )
        .add_node(
            "flaky",
            flaky_node,
            retry_policy=RetryPolicy(
                max_attempts=3,
                initial_interval=0.01,
                jitter=False,
                retry_on=ValueError,
            ),
        )
        .add_edge(START, "flaky")
        .compile()
    )

    with patch("time.sleep"):
        result = graph.invoke({"foo": ""})

    assert result["foo"] == "ok"
    assert attempts == 2


@pytest.mark.anyio
async def test_set_node_defaults_timeout():
    class State(TypedDict):
        foo: str

    async def slow_node(state: State) -> State:
        await asyncio.sleep(10)
        return {"foo": "should-not-happen"}

    graph = (
        StateGraph(State)
        .set_node_defaults(timeout=TimeoutPolicy(run_timeout=0.05))
        .add_node("slow", slow_node)
        .add_edge(START, "slow")
        .compile()
    )

    with pytest.raises(NodeTimeoutError):
        await graph.ainvoke({"foo": ""})


@pytest.mark.anyio
async def test_set_node_defaults_timeout_per_node_wins():
    """Per-node timeout overrides the default; a generous per-node timeout
    allows a node to complete even when the builder default is very short."""

    class State(TypedDict):
        foo: str

    async def quick_node(state: State) -> State:
        await asyncio.sleep(0.05)
        return {"foo": "done"}

    graph = (
        StateGraph(State)
        .set_node_defaults(timeout=TimeoutPolicy(run_timeout=0.01))
        .add_node("quick", quick_node, timeout=TimeoutPolicy(run_timeout=5.0))
        .add_edge(START, "quick")
        .compile()
    )

    result = await graph.ainvoke({"foo": ""})
    assert result["foo"] == "done"


def test_set_node_defaults_chaining():
    """set_node_defaults() is chainable and can be called in any order relative to add_node."""

    class State(TypedDict):
        foo: str

    def always_failing(state: State) -> State:
        raise RuntimeError("boom")

    def handler(state: State, error: NodeError) -> State:
        return {"foo": "handled"}

    graph = (
        StateGraph(State)
        .add_node("a", always_failing)
        .add_edge(START, "a")
        .set_node_defaults(
            retry_policy=RetryPolicy(
                max_attempts=1, initial_interval=0.01, jitter=False
            ),
            error_handler=handler,
        )
        .compile()
    )

    result = graph.invoke({"foo": ""})
    assert result["foo"] == "handled"


def test_set_node_defaults_combined_retry_and_error_handler():
    """Retries are exhausted first, then the error handler runs."""

    class State(TypedDict):
        foo: str

    attempts = 0
    captured: dict[str, Any] = {}

    def always_failing(state: State) -> State:
        nonlocal attempts
        attempts += 1
        raise ValueError("Always fails")

    def handler(state: State, error: NodeError) -> State:
        captured["error"] = str(error.error)
        return {"foo": "handled"}

    graph = (
        StateGraph(State)
        .set_node_defaults(
            retry_policy=RetryPolicy(
                max_attempts=2,
                initial_interval=0.01,
                jitter=False,
                retry_on=ValueError,
            ),
            error_handler=handler,
        )
        .add_node("fail", always_failing)
        .add_edge(START, "fail")
        .compile()
    )

    with patch("time.sleep"):
        result = graph.invoke({"foo": ""})

    assert result["foo"] == "handled"
    assert attempts == 2
    assert captured["error"] == "Always fails"


def test_error_handler_resumes_after_crash():
    """If the error handler crashes, resuming should re-schedule the handler
    (not re-execute the original failed node)."""

    class State(TypedDict):
        foo: str

    call_count = {"node": 0, "handler": 0}
    captured_errors: list[NodeError] = []

    def failing_node(state: State) -> State:
        call_count["node"] += 1
        raise RuntimeError("boom")

    handler_should_fail = [True]

    def handler(state: State, error: NodeError) -> State:
        call_count["handler"] += 1
        captured_errors.append(error)
        if handler_should_fail[0]:
            raise RuntimeError("handler crash")
        return {"foo": "recovered"}

    checkpointer = MemorySaver()
    graph = (
        StateGraph(State)
        .set_node_defaults(error_handler=handler)
        .add_node("fail", failing_node)
        .add_edge(START, "fail")
        .compile(checkpointer=checkpointer)
    )

    config = {"configurable": {"thread_id": "t1"}}

    # First invoke: node fails -> handler runs -> handler crashes -> run fails
    with pytest.raises(RuntimeError, match="handler crash"):
        graph.invoke({"foo": ""}, config)

    assert call_count["node"] == 1
    assert call_count["handler"] == 1
    assert captured_errors[0].node == "fail"
    assert isinstance(captured_errors[0].error, RuntimeError)
    assert str(captured_errors[0].error) == "boom"

    # Resume: handler should run again, NOT the original node
    handler_should_fail[0] = False
    result = graph.invoke(None, config)

    assert result["foo"] == "recovered"
    assert call_count["node"] == 1  # NOT re-executed
    assert call_count["handler"] == 2  # ran again on resume
    # on resume the error was round-tripped through the checkpointer, so it
    # may be deserialized as a string representation rather than the original
    # exception type — verify the node name and that the error content matches.
    assert captured_errors[1].node == "fail"
    assert "boom" in str(captured_errors[1].error)


def test_error_handler_resumes_after_crash_multiple_nodes():
    """When multiple nodes fail in the same superstep and all have error handlers:
    - error handlers start running while other nodes may still be in-flight
    - resuming re-schedules each handler (not re-executes the original nodes)
    """

    class State(TypedDict):
        results: Annotated[list[str], operator.add]

    call_count = {"a": 0, "b": 0, "handler_a": 0, "handler_b": 0}
    handler_a_started = threading.Event()

    def node_a(state: State) -> State:
        call_count["a"] += 1
        raise RuntimeError("a failed")

    def node_b(state: State) -> State:
        call_count["b"] += 1
        # Block until handler_a has started — proves the error handler runs
        # concurrently with in-flight nodes in the same superstep.
        assert handler_a_started.wait(timeout=5), "handler_a never started"
        raise RuntimeError("b failed")

    handler_should_fail = [True]

    def handler_a(state: State, error: NodeError) -> State:
        call_count["handler_a"] += 1
        assert error.node == "a"
        assert "a failed" in str(error.error)
        handler_a_started.set()
        if handler_should_fail[0]:
            raise RuntimeError("handler_a crash")
        return {"results": [f"recovered_a:{error.node}"]}

    def handler_b(state: State, error: NodeError) -> State:
        call_count["handler_b"] += 1
        assert error.node == "b"
        assert "b failed" in str(error.error)
        if handler_should_fail[0]:
            raise RuntimeError("handler_b crash")
        return {"results": [f"recovered_b:{error.node}"]}

    checkpointer = MemorySaver()
    graph = (
        StateGraph(State)
        .add_node("a", node_a, error_handler=handler_a)
        .add_node("b", node_b, error_handler=handler_b)
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile(checkpointer=checkpointer)
    )

    config = {"configurable": {"thread_id": "t1"}}

    # First invoke: node_a fails immediately -> handler_a starts (sets event) ->
    # node_b unblocks and fails -> handler_b starts -> both handlers crash
    with pytest.raises(RuntimeError):
        graph.invoke({"results": []}, config)

    assert call_count["a"] == 1
    assert call_count["b"] == 1
    assert call_count["handler_a"] == 1
    assert call_count["handler_b"] == 1

    # Resume: both handlers should run again, NOT the original nodes
    handler_should_fail[0] = False
    handler_a_started.clear()
    result = graph.invoke(None, config)

    assert call_count["a"] == 1  # NOT re-executed
    assert call_count["b"] == 1  # NOT re-executed
    assert call_count["handler_a"] == 2  # ran again on resume
    assert call_count["handler_b"] == 2  # ran again on resume
    assert "recovered_a:a" in result["results"]
    assert "recovered_b:b" in result["results"]


@NEEDS_TASK_CANCELLING
@pytest.mark.anyio
async def test_pregel_user_raised_cancellederror_fails_run():
    """End-to-end: a two-branch graph where one branch raises
    ``asyncio.CancelledError`` must fail the run instead of returning
    a partial-success state. This is the LSD-1507 customer scenario."""

    class _S(TypedDict, total=False):
        vals: Annotated[list[str], operator.add]

    async def ok(state: _S) -> _S:
        return {"vals": ["ok"]}

    async def boom(state: _S) -> _S:
        raise asyncio.CancelledError("user-raised in node body")

    graph = (
        StateGraph(_S)
        .add_node("ok", ok)
        .add_node("boom", boom)
        .add_edge(START, "ok")
        .add_edge(START, "boom")
        .add_edge("ok", END)
        .add_edge("boom", END)
        .compile()
    )

    with pytest.raises(NodeCancelledError) as excinfo:
        await graph.ainvoke({"vals": []})
    assert excinfo.value.node == "boom"
