"""LangGraph's tutorial "Add human-in-the-loop controls", as written, but for its
chat model: a deterministic stand-in (no network) that asks for human assistance
once, then answers with what the human said. The tool calls `interrupt()` inside
LangGraph's `ToolNode`."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import interrupt
from typing_extensions import TypedDict


class TutorialModel(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "tutorial"

    def bind_tools(self, tools: Any, **kwargs: Any) -> TutorialModel:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            reply = AIMessage(content="", id=f"ai-{len(messages)}", tool_calls=[{
                "id": "call_1", "name": "human_assistance",
                "args": {"query": f"Guidance needed: {last.content}"}}])
        else:
            said = last.content if isinstance(last, ToolMessage) else ""
            reply = AIMessage(content=f"The experts say: {said}", id=f"ai-{len(messages)}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


llm = TutorialModel()


class State(TypedDict):
    messages: Annotated[list, add_messages]


graph_builder = StateGraph(State)


@tool
def human_assistance(query: str) -> str:
    """Request assistance from a human."""
    human_response = interrupt({"query": query})
    return human_response["data"]


tools = [human_assistance]
llm_with_tools = llm.bind_tools(tools)


def chatbot(state: State):
    message = llm_with_tools.invoke(state["messages"])
    # Because we will be interrupting during tool execution,
    # we disable parallel tool calling to avoid repeating any
    # tool invocations when we resume.
    assert len(message.tool_calls) <= 1
    return {"messages": [message]}


graph_builder.add_node("chatbot", chatbot)

tool_node = ToolNode(tools=tools)
graph_builder.add_node("tools", tool_node)

graph_builder.add_conditional_edges(
    "chatbot",
    tools_condition,
)
graph_builder.add_edge("tools", "chatbot")
graph_builder.add_edge(START, "chatbot")

USER_INPUT = ("I need some expert guidance for building an AI agent. "
              "Could you request assistance for me?")
HUMAN_RESPONSE = ("We, the experts are here to help! We'd recommend you check out "
                  "LangGraph to build your agent. It's much more reliable and extensible "
                  "than simple autonomous agents.")


def compile(checkpointer: Any = None) -> Any:
    return graph_builder.compile(checkpointer=checkpointer)


def memory() -> InMemorySaver:
    return InMemorySaver()
