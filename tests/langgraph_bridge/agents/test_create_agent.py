"""Tests for create_agent functionality.

Ported from langchain-ai/langchain:
libs/langchain_v1/tests/unit_tests/agents/test_create_agent.py, stored blob at
commit 54e507f3312d54648d13eae4101ab0532be6c00c (read_file id 1436253820).
Test bodies unchanged; graphs run on graphrun via tests/langgraph_bridge/routing.py.
Import changes only: `ToolNode` (from langchain.tools), `_get_state_args`,
`_infer_handled_types` (from langchain.tools.tool_node) and `ToolStrategy`/`AnyStr`
are not imported (gone in langchain 1.5.2 / unused by ported tests);
`InjectedToolCallId, ToolException` are imported (upstream used them without an
import at this commit, a NameError there).

Not ported (each fails on plain LangGraph + langchain 1.5.2 too):
- test_no_prompt: KeyError 'thread_model_call_count' (pre-1.0 state key, gone).
- test_no_prompt_async: same KeyError 'thread_model_call_count'.
- test__infer_handled_types: `_infer_handled_types` no longer exists in langchain/langgraph.
- test_agent_with_structured_response: `FakeToolCallingModel[...]` -- helper is not generic.
- test_create_agent_inject_vars: `ToolNode` no longer exported by langchain.tools.
- test_return_direct: 3rd case yields an extra final AIMessage in 1.5.2 (return_direct drift).
- test__get_state_args: `_get_state_args` no longer exists.
- test_agent_with_subgraph_tools: `ToolNode` no longer exported by langchain.tools.
"""

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import InjectedToolCallId, ToolException
from langchain_core.tools import tool as dec_tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command
from pydantic import BaseModel, Field
from typing_extensions import Annotated

from langchain.agents import (
    create_agent,
)
from langchain.agents.middleware.types import AgentMiddleware, AgentState
from langchain.tools import (
    InjectedState,
    InjectedStore,
)

from .messages import _AnyIdHumanMessage, _AnyIdToolMessage
from .model import FakeToolCallingModel

pytestmark = pytest.mark.anyio


def test_system_message_prompt() -> None:
    """Test agent with system message prompt."""
    system_prompt = "Foo"
    agent = create_agent(FakeToolCallingModel(), [], system_prompt=system_prompt)
    inputs = [HumanMessage("hi?")]
    response = agent.invoke({"messages": inputs})
    expected_response = {"messages": [*inputs, AIMessage(content="Foo-hi?", id="0", tool_calls=[])]}
    assert response == expected_response


def test_string_prompt() -> None:
    """Test agent with string system prompt."""
    system_prompt = "Foo"
    agent = create_agent(FakeToolCallingModel(), [], system_prompt=system_prompt)
    inputs = [HumanMessage("hi?")]
    response = agent.invoke({"messages": inputs})
    expected_response = {"messages": [*inputs, AIMessage(content="Foo-hi?", id="0", tool_calls=[])]}
    assert response == expected_response


class CustomState(AgentState):
    """Custom state for testing."""

    user_name: str


def test_agent_update_state(
    sync_checkpointer: BaseCheckpointSaver,
) -> None:
    """Test agent that updates custom state."""

    @dec_tool
    def get_user_name(tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Retrieve user name"""
        user_name = "interrupt"  # Simplified - in real test this would use interrupt()
        return Command(
            update={
                "user_name": user_name,
                "messages": [
                    ToolMessage("Successfully retrieved user name", tool_call_id=tool_call_id)
                ],
            }
        )

    class CustomMiddleware(AgentMiddleware[CustomState]):
        """Middleware to add custom state."""

        state_schema = CustomState

        def modify_model_request(self, request, state, runtime):
            """Add user name to system prompt if available."""
            user_name = state.get("user_name")
            if user_name:
                system_msg = f"User name is {user_name}"
                if request.system_prompt:
                    request.system_prompt = f"{request.system_prompt}\n\n{system_msg}"
                else:
                    request.system_prompt = system_msg
            return request

    tool_calls = [[{"args": {}, "id": "1", "name": "get_user_name"}], []]
    model = FakeToolCallingModel(tool_calls=tool_calls)
    agent = create_agent(
        model,
        [get_user_name],
        middleware=[CustomMiddleware()],
        checkpointer=sync_checkpointer,
    )
    config = {"configurable": {"thread_id": "1"}}
    # Run until tool is called
    response = agent.invoke({"messages": [("user", "what's my name")]}, config)
    # confirm that the state was updated
    assert response["user_name"] == "interrupt"
    assert len(response["messages"]) == 4
    tool_message: ToolMessage = response["messages"][-2]
    assert tool_message.content == "Successfully retrieved user name"
    assert tool_message.tool_call_id == "1"
    assert tool_message.name == "get_user_name"


def test_agent_parallel_tool_calls(
    sync_checkpointer: BaseCheckpointSaver,
) -> None:
    """Test agent with parallel tool calls."""
    human_assistance_execution_count = 0

    @dec_tool
    def human_assistance(query: str) -> str:
        """Request assistance from a human."""
        nonlocal human_assistance_execution_count
        human_assistance_execution_count += 1
        return "Hello"

    get_weather_execution_count = 0

    @dec_tool
    def get_weather(location: str) -> str:
        """Use this tool to get the weather."""
        nonlocal get_weather_execution_count
        get_weather_execution_count += 1
        return "It's sunny!"

    tool_calls = [
        [
            {"args": {"location": "sf"}, "id": "1", "name": "get_weather"},
            {"args": {"query": "request help"}, "id": "2", "name": "human_assistance"},
        ],
        [],
    ]
    model = FakeToolCallingModel(tool_calls=tool_calls)
    agent = create_agent(
        model,
        [human_assistance, get_weather],
        checkpointer=sync_checkpointer,
    )
    config = {"configurable": {"thread_id": "1"}}
    query = "Get user assistance and also check the weather"
    message_types = []
    for event in agent.stream({"messages": [("user", query)]}, config, stream_mode="values"):
        if messages := event.get("messages"):
            message_types.append([m.type for m in messages])

    assert message_types == [
        ["human"],
        ["human", "ai"],
        ["human", "ai", "tool", "tool"],
        ["human", "ai", "tool", "tool", "ai"],
    ]

    assert human_assistance_execution_count == 1
    assert get_weather_execution_count == 1


class AgentStateExtraKey(AgentState):
    """Agent state with extra key."""

    foo: int


def test_agent_subgraph_streaming_sync() -> None:
    """Test React agent streaming when used as a subgraph node sync version."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import START, MessagesState, StateGraph

    @dec_tool
    def get_weather(city: str) -> str:
        """Get the weather of a city."""
        return f"The weather of {city} is sunny."

    # Create a React agent
    model = FakeToolCallingModel(
        tool_calls=[
            [{"args": {"city": "Tokyo"}, "id": "1", "name": "get_weather"}],
            [],
        ]
    )

    agent = create_agent(
        model,
        tools=[get_weather],
        system_prompt="You are a helpful travel assistant.",
    )

    # Create a subgraph that uses the React agent as a node
    def react_agent_node(state: MessagesState, config: RunnableConfig) -> MessagesState:
        """Node that runs the React agent and collects streaming output."""
        collected_content = ""

        # Stream the agent output and collect content
        for msg_chunk, _msg_metadata in agent.stream(
            {"messages": [("user", state["messages"][-1].content)]},
            config,
            stream_mode="messages",
        ):
            if hasattr(msg_chunk, "content") and msg_chunk.content:
                collected_content += msg_chunk.content

        return {"messages": [("assistant", collected_content)]}

    # Create the main workflow with the React agent as a subgraph node
    workflow = StateGraph(MessagesState)
    workflow.add_node("react_agent", react_agent_node)
    workflow.add_edge(START, "react_agent")
    workflow.add_edge("react_agent", "__end__")
    compiled_workflow = workflow.compile()

    # Test the streaming functionality
    result = compiled_workflow.invoke({"messages": [("user", "What is the weather in Tokyo?")]})

    # Verify the result contains expected structure
    assert len(result["messages"]) == 2
    assert result["messages"][0].content == "What is the weather in Tokyo?"
    assert "assistant" in str(result["messages"][1])

    # Test streaming with subgraphs = True
    result = compiled_workflow.invoke(
        {"messages": [("user", "What is the weather in Tokyo?")]},
        subgraphs=True,
    )
    assert len(result["messages"]) == 2

    events = []
    for event in compiled_workflow.stream(
        {"messages": [("user", "What is the weather in Tokyo?")]},
        stream_mode="messages",
        subgraphs=False,
    ):
        events.append(event)

    assert len(events) == 0

    events = []
    for event in compiled_workflow.stream(
        {"messages": [("user", "What is the weather in Tokyo?")]},
        stream_mode="messages",
        subgraphs=True,
    ):
        events.append(event)

    assert len(events) == 3
    namespace, (msg, metadata) = events[0]
    # FakeToolCallingModel returns a single AIMessage with tool calls
    # The content of the AIMessage reflects the input message
    assert msg.content.startswith("You are a helpful travel assistant")
    namespace, (msg, metadata) = events[1]  # ToolMessage
    assert msg.content.startswith("The weather of Tokyo is sunny.")


async def test_agent_subgraph_streaming() -> None:
    """Test React agent streaming when used as a subgraph node (async)."""
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import START, MessagesState, StateGraph

    @dec_tool
    def get_weather(city: str) -> str:
        """Get the weather of a city."""
        return f"The weather of {city} is sunny."

    # Create a React agent
    model = FakeToolCallingModel(
        tool_calls=[
            [{"args": {"city": "Tokyo"}, "id": "1", "name": "get_weather"}],
            [],
        ]
    )

    agent = create_agent(
        model,
        tools=[get_weather],
        system_prompt="You are a helpful travel assistant.",
    )

    # Create a subgraph that uses the React agent as a node
    async def react_agent_node(state: MessagesState, config: RunnableConfig) -> MessagesState:
        """Node that runs the React agent and collects streaming output."""
        collected_content = ""

        # Stream the agent output and collect content
        async for msg_chunk, _msg_metadata in agent.astream(
            {"messages": [("user", state["messages"][-1].content)]},
            config,
            stream_mode="messages",
        ):
            if hasattr(msg_chunk, "content") and msg_chunk.content:
                collected_content += msg_chunk.content

        return {"messages": [("assistant", collected_content)]}

    # Create the main workflow with the React agent as a subgraph node
    workflow = StateGraph(MessagesState)
    workflow.add_node("react_agent", react_agent_node)
    workflow.add_edge(START, "react_agent")
    workflow.add_edge("react_agent", "__end__")
    compiled_workflow = workflow.compile()

    # Test the streaming functionality
    result = await compiled_workflow.ainvoke(
        {"messages": [("user", "What is the weather in Tokyo?")]}
    )

    # Verify the result contains expected structure
    assert len(result["messages"]) == 2
    assert result["messages"][0].content == "What is the weather in Tokyo?"
    assert "assistant" in str(result["messages"][1])

    # Test streaming with subgraphs = True
    result = await compiled_workflow.ainvoke(
        {"messages": [("user", "What is the weather in Tokyo?")]},
        subgraphs=True,
    )
    assert len(result["messages"]) == 2

    events = []
    async for event in compiled_workflow.astream(
        {"messages": [("user", "What is the weather in Tokyo?")]},
        stream_mode="messages",
        subgraphs=False,
    ):
        events.append(event)

    assert len(events) == 0

    events = []
    async for event in compiled_workflow.astream(
        {"messages": [("user", "What is the weather in Tokyo?")]},
        stream_mode="messages",
        subgraphs=True,
    ):
        events.append(event)

    assert len(events) == 3
    namespace, (msg, metadata) = events[0]
    # FakeToolCallingModel returns a single AIMessage with tool calls
    # The content of the AIMessage reflects the input message
    assert msg.content.startswith("You are a helpful travel assistant")
    namespace, (msg, metadata) = events[1]  # ToolMessage
    assert msg.content.startswith("The weather of Tokyo is sunny.")
